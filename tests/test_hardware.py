"""Shapes you can train (issue 12): tensor-parallel degrees, constraint checks, and the planner's
snap over a grid of budgets, presets and tp degrees. Expected values are worked out here by hand
or by brute force over divisors, never read from the code under test."""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import run
from depthwidth.arch.blocks import Architecture
from depthwidth.arch.presets import preset
from depthwidth.arch.hardware import Constraints, is_prime, tp_sizes, violations
from depthwidth.advice.planner import PlanOptions, plan
from depthwidth.arch.spending import Spending


def arch(depth=12, width=768, heads=12, kv_heads=None, ffn=None, experts=None, expert_ffn=None, dense_layers=0):
    return Architecture(depth, width, heads, kv_heads or heads, width // heads, ffn or 4 * width, False,
                        experts=experts, top_k=2 if experts else None, expert_ffn=expert_ffn, dense_layers=dense_layers)


def brute_tp(heads, kv, ffn, experts=None, expert_ffn=None, dense=True):
    """Every t in 1..128 satisfying the card's rules, by brute force."""
    out = []
    for t in range(1, 129):
        ok = heads % t == 0 and (kv % t == 0 or t % kv == 0)
        if dense:
            ok = ok and ffn % t == 0
        if experts:
            ok = ok and (experts % t == 0 or expert_ffn % t == 0)
        if ok:
            out.append(t)
    return tuple(out)


def test_gpt2_xl_shards_1_5_25():
    """GPT-2 XL: 48 layers, width 1600, 25 heads, ffn 6400 (the card's example)."""
    assert tp_sizes(arch(48, 1600, 25)) == (1, 5, 25) == brute_tp(25, 25, 6400)


@pytest.mark.parametrize("heads, kv, ffn", [(32, 8, 11008), (32, 32, 11008), (64, 8, 28672), (40, 40, 13824),
                                            (96, 96, 49152), (71, 1, 18176), (52, 52, 17920), (24, 8, 8192)])
def test_tp_sizes_match_brute_force(heads, kv, ffn):
    a = Architecture(1, heads * 128, heads, kv, 128, ffn, True)
    assert tp_sizes(a) == brute_tp(heads, kv, ffn)


def test_experts_split_by_count_or_size():
    """Mixtral: 8 experts of 14336, 32 heads, 8 KV heads; t | 8 or t | 14336 for the experts."""
    mixtral = arch(32, 4096, 32, kv_heads=8, ffn=14336, experts=8, expert_ffn=14336)
    assert tp_sizes(mixtral) == brute_tp(32, 8, 14336, 8, 14336, dense=False)
    odd = arch(2, 1536, 12, experts=6, expert_ffn=1000)  # t | 6 or t | 1000; heads 12
    assert tp_sizes(odd) == tuple(t for t in (1, 2, 3, 4, 6, 12) if 6 % t == 0 or 1000 % t == 0)


def test_kv_heads_replicate_when_fewer_than_tp():
    """MQA (G = 1): any t dividing H works, the single KV head is replicated."""
    falcon = Architecture(32, 4544, 71, 1, 64, 18176, False)
    assert tp_sizes(falcon) == (1, 71)  # 71 heads is prime


@pytest.mark.parametrize("n, prime", [(1, False), (2, True), (3, True), (9, False), (23, True), (25, False), (97, True)])
def test_is_prime(n, prime):
    assert is_prime(n) == prime


def test_violations_name_each_rule():
    bad = Architecture(40, 1472, 23, 23, 64, 5888, False)  # depthwidth 0.1's recommendation for 1e9
    found = violations(bad, Constraints(multiple=128, tp=2))
    assert any("not a multiple of 128" in v for v in found)
    assert any("23 heads is a prime" in v for v in found)
    assert any("not divisible by tp 2" in v for v in found)
    assert violations(Architecture(42, 1408, 22, 22, 64, 5632, False), Constraints(multiple=128, tp=2)) == []


GRID = [(arch_name, tp, budget) for arch_name in ("vanilla", "llama") for tp in (1, 2, 4, 8)
        for budget in (10**8, 10**9, 10**10, 10**11, 10**12)]


def _count(arch_name: str, depth: int, width: int, heads: int, kv: int, ffn: int) -> int:
    """The counting convention, written out: q and o are d x d, k and v d x G·h, plain 2·d·f or gated 3·d·f."""
    head_dim = width // heads
    attention = 2 * width * width + 2 * width * kv * head_dim
    return depth * (attention + (3 if arch_name == "llama" else 2) * width * ffn)


@pytest.mark.parametrize("arch_name, tp, budget", GRID)
def test_every_printed_shape_is_valid(arch_name, tp, budget):
    """Issue 12: recommended shape and candidates: width % 128, width = heads·head_dim, tp | heads,
    KV heads compatible, ffn % its multiple, within 5% of the budget, counts by the convention."""
    block = Spending(arch_name).at_budget(budget).block  # the preset at this budget's size (issue 33)
    p = plan(budget, PlanOptions(spending=Spending(arch_name), constraints=Constraints(tp=tp)))
    shapes = [(p.recommended.depth, p.recommended.width, p.recommended.heads, p.recommended.kv_heads, p.recommended.ffn,
               p.recommended.params_nonembedding, p.recommended.budget_deviation)]
    shapes += [(c.depth, c.width, c.heads, c.kv_heads, c.ffn, c.params_nonembedding, c.budget_deviation) for c in p.candidates]
    for depth, width, heads, kv, ffn, count, deviation in shapes:
        assert width % 128 == 0 and width == heads * block.head_dim
        assert heads % tp == 0 and (kv % tp == 0 or tp % kv == 0)
        assert ffn % block.ffn_multiple == 0
        assert heads <= 2 or not is_prime(heads)
        assert count == _count(arch_name, depth, width, heads, kv, ffn)
        assert abs(deviation) <= 0.05 and deviation == pytest.approx(count / budget - 1)
    assert p.recommended.depth >= p.threshold.min_depth
    assert [c.depth for c in p.candidates] == sorted({c.depth for c in p.candidates})


def test_llama_plan_fields_reproduce_its_count_and_min_depth():
    """Issue 11: the reported fields reproduce params_nonembedding (the count the budget limits) by the convention; min_depth is the
    smallest L with 3^L >= the planned width."""
    block = preset("llama")
    p = plan(7 * 10**9, PlanOptions(spending=Spending("llama"), constraints=Constraints(
        head_dim=block.head_dim, ffn_multiple=block.ffn_multiple)))
    assert p.gated and p.threshold.experts is None and p.threshold.width == p.threshold.heads * p.threshold.head_dim
    assert p.threshold.params_nonembedding == _count("llama", p.threshold.min_depth, p.threshold.width, p.threshold.heads, p.threshold.kv_heads, p.threshold.ffn)
    smallest = next(L for L in range(1, 60) if 3**L >= p.threshold.width)
    assert p.threshold.min_depth == smallest


# The CLI checks below run in-process (conftest.run: stdout and stderr apart, as a real process keeps
# them; test_cli and test_errors check that a real process prints the same).

def test_tp_conflict_exits_2_naming_it():
    """8 KV heads cannot split 3 ways, nor be replicated onto 3 (neither 3 | 8 nor 8 | 3)."""
    proc = run(["plan", "--params", "1e9", "--arch", "llama", "--kv-heads", "8", "--tp", "3"])
    assert proc.code == 2 and proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "--tp" in lines[0] and "key/value heads and tp 3" in lines[0]


def test_bounds_field_tp_sizes_for_gpt2_xl():
    proc = run(["bounds", "gpt2-xl", "--format", "json"])
    assert proc.code == 0, proc.stderr
    assert json.loads(proc.stdout)[0]["tp_sizes"] == [1, 5, 25]


@pytest.mark.parametrize("args, name, rule", [
    (["bounds", "gpt2-xl", "--tp", "8"], "gpt2-xl", "25 attention heads are not divisible by tp 8"),
    (["bounds", "12x1600x25", "--multiple", "128"], "12x1600x25", "width 1600 is not a multiple of 128"),
    (["models", "--filter", "gpt2-xl", "--tp", "2"], "gpt2-xl", "25 attention heads are not divisible by tp 2"),
    (["compare", "--deep", "12x768", "--shallow", "6x1086", "--tp", "2"], "6x1086", "its 17 heads do not divide the width 1086"),
    (["inspect", "tests/configs/llama-7b.json", "--tp", "3"], "llama-7b.json", "feed-forward size 11008 is not divisible by tp 3"),
])
def test_shapes_breaking_what_was_asked_get_a_warning_naming_the_rule(args, name, rule, monkeypatch):
    monkeypatch.chdir(Path(__file__).resolve().parents[1])  # the config's path is relative to the checkout
    proc = run([*args, "--format", "json"])
    assert proc.code == 0 and json.loads(proc.stdout)
    warnings = [line for line in proc.stderr.splitlines() if "breaks what you asked for" in line]
    assert len(warnings) == 1 and name in warnings[0] and rule in warnings[0]


def test_no_warning_for_shapes_that_shard():
    proc = run(["bounds", "24x2048x16", "--tp", "8", "--multiple", "128"])
    assert proc.code == 0 and "breaks" not in proc.stderr


def test_equiv_records_carry_the_deep_networks_tp_sizes():
    proc = run(["equiv", "--deep", "gpt2-xl", "--depth", "2,3", "--format", "json"])
    assert proc.code == 0, proc.stderr
    assert [r["deep_tp_sizes"] for r in json.loads(proc.stdout)] == [[1, 5, 25]] * 2


# ---- the accelerator table (issue 23) ---------------------------------------------------------
# Expected figures are the vendors' datasheets as cited in each row (dense = half the "with
# sparsity" figure NVIDIA prints); the test holds them apart from the table it checks.

from depthwidth.core.errors import InputError  # noqa: E402
from depthwidth.arch.hardware import ACCELERATORS, accelerator  # noqa: E402

DATASHEETS = {  # name: (dense BF16 FLOP/s, dense FP8 FLOP/s or None, HBM bytes, HBM bytes/s)
    "a100-80gb": (312e12, None, 80e9, 2.039e12),          # NVIDIA A100 datasheet: 312 TFLOPS BF16, 80GB, 2,039 GB/s
    "a100-40gb": (312e12, None, 40e9, 1.555e12),          # NVIDIA A100 datasheet: 40GB HBM2, 1,555 GB/s
    "h100": (1979e12 / 2, 3958e12 / 2, 80e9, 3.35e12),    # H100 SXM datasheet: 1,979 / 3,958 with sparsity
    "h100-pcie": (1513e12 / 2, 3026e12 / 2, 80e9, 2.0e12),  # H100 PCIe datasheet: 1,513 BF16 with sparsity, 2.0 TB/s
    "h200": (1979e12 / 2, 3958e12 / 2, 141e9, 4.8e12),    # H200 datasheet: same compute, 141GB HBM3e, 4.8 TB/s
    "b200": (2.25e15, 4.5e15, 180e9, 8e12),               # HGX B200 (1000 W): 2.25 / 4.5 PFLOPS dense
    "mi300x": (1307.4e12, 2614.9e12, 192e9, 5.3e12),      # AMD MI300X data sheet
    "tpu-v5p": (459e12, None, 95e9, 2765e9),              # cloud.google.com/tpu/docs/v5p: 459 TFLOPs bf16, 95GB, 2765 GBps
}


@pytest.mark.parametrize("name", sorted(DATASHEETS))
def test_accelerator_rows_match_their_datasheets(name):
    a = accelerator(name)
    assert (a.bf16_flops, a.fp8_flops, a.hbm_bytes, a.hbm_bandwidth) == pytest.approx(DATASHEETS[name])
    assert a.source and a.verified and a.label


def test_accelerator_table_has_exactly_the_issue_names_and_lookup_is_case_insensitive():
    # issue 30 adds A100 40GB and H100 PCIe (and the aliases h100-sxm, h200-sxm, a100)
    assert list(ACCELERATORS) == ["a100-80gb", "a100-40gb", "h100", "h100-pcie", "h200", "b200", "mi300x", "tpu-v5p"]
    assert accelerator(" TPU-v5p ").name == "tpu-v5p" and accelerator("H100-SXM").name == "h100"
    for bad in ("v100", "", None, 3):
        with pytest.raises(InputError, match="expected one of a100-80gb, a100-40gb, h100, h100-pcie, h200, b200, mi300x, tpu-v5p"):
            accelerator(bad)


# ---- accelerators as data: one row is all a new accelerator needs ------------------------------

from dataclasses import replace  # noqa: E402

from depthwidth.arch import hardware  # noqa: E402
from depthwidth.arch.hardware import node_gpus  # noqa: E402

# a GB200 NVL72-like part: 4 GPUs per host (compute tray), 72 joined by one NVLink domain (the rack)
NVL72_LIKE = dict(name="test-nvl72", label="test part", chips_per_host=4, nvlink_domain=72, gpus_per_node=72, aliases=())


def test_a_node_is_one_nvlink_domain_or_one_host_without_one():
    assert node_gpus("h100") == 8 and node_gpus("mi300x") == 8
    assert node_gpus("tpu-v5p") == 4  # 4 chips per v5p host; its ICI slice (up to 6,144) is sized per job
    nvl72 = replace(accelerator("b200"), **NVL72_LIKE)
    assert node_gpus(nvl72) == 72  # not a 4-chip host because the row has more than 8 GPUs per node
    assert node_gpus(nvl72, 16) == 80 and node_gpus("tpu-v5p", 8) == 8 and node_gpus("h100", 3) == 9


def test_every_gpu_row_has_one_nvlink_domain_as_its_link_reach():
    for a in ACCELERATORS.values():
        assert a.nvlink_domain in (None, a.gpus_per_node), a.name
        assert (a.nvlink_domain or a.chips_per_host) <= a.gpus_per_node, a.name
        assert 0 < a.flash_efficiency < 1 and 0 < a.gemm_efficiency < 1
    assert hardware.ALIASES == {"a100": "a100-80gb", "a100-80gb-sxm": "a100-80gb", "h100-sxm": "h100", "h200-sxm": "h200"}


# run in a fresh interpreter: the table gets a row (an H100 renamed, with the fields in DEPTHWIDTH_TEST_ROW)
# before the CLI reads it, as a new row in arch/hardware.py would
_ADD_ROW = """
import json, os, sys
from dataclasses import replace
from depthwidth.arch import hardware
row = replace(hardware.ACCELERATORS["h100"], name="test-chip", label="test part", aliases=("test-alias",),
              **json.loads(os.environ["DEPTHWIDTH_TEST_ROW"]))
hardware.ACCELERATORS["test-chip"] = row
hardware.ALIASES["test-alias"] = "test-chip"
from depthwidth.cli.app import main
sys.argv = ["depthwidth", *sys.argv[1:]]
main()
"""
COST = ["cost", "32x4096", "--arch", "llama", "--tokens", "1e11", "--format", "json"]


def _with_row(fields, *args):
    out = subprocess.run([sys.executable, "-c", _ADD_ROW, *args], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "COLUMNS": "200", "NO_COLOR": "1", "DEPTHWIDTH_TEST_ROW": json.dumps(fields)})
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_a_new_row_reaches_gpu_help_docs_and_costing(monkeypatch):
    assert "test-chip" in " ".join(_with_row({}, "cost", "--help").split())
    # costing: an H100 under another name costs what the h100 row costs
    [new] = json.loads(_with_row({}, *COST, "--gpu", "test-alias"))
    h100 = run([*COST, "--gpu", "h100"])  # the shipped row, in-process
    assert h100.code == 0, h100.stderr
    [old] = json.loads(h100.stdout)
    new, old = new["run"], old["run"]
    assert new["gpu"] == "test-chip" and new["gpus"] == old["gpus"] == 8
    assert new["tokens_per_second_per_gpu"] == pytest.approx(old["tokens_per_second_per_gpu"], rel=1e-12)
    # and with a 72-GPU NVLink domain of 4-GPU hosts, a run without --gpus is on 72 GPUs, not on one host's 4
    [nvl72] = json.loads(_with_row({"chips_per_host": 4, "nvlink_domain": 72, "gpus_per_node": 72}, *COST, "--gpu", "test-chip"))
    assert nvl72["run"]["gpus"] == 72
    # docs: the generated table gains the row
    gen = importlib.util.spec_from_file_location("gen_hardware", Path(__file__).resolve().parents[1] / "docs" / "gen_hardware.py")
    module = importlib.util.module_from_spec(gen)
    gen.loader.exec_module(module)
    monkeypatch.setitem(ACCELERATORS, "test-nvl72", replace(accelerator("h100"), **NVL72_LIKE))
    assert "| `test-nvl72` | test part | 989.5 TFLOPS |" in module.table()
    assert "| 4 | 72 |" in module.render().split("`test-nvl72`")[1].splitlines()[0]


def test_gpu_help_names_every_row():
    from depthwidth.cli.options import Gpu

    help_text = Gpu.__metadata__[0].help
    assert help_text == ("Accelerator for memory and time: a100-80gb, a100-40gb, h100 (default), h100-pcie, h200, b200, "
                         "mi300x, tpu-v5p.")


def test_hardware_page_is_the_table():
    out = subprocess.run([sys.executable, "docs/gen_hardware.py", "--check"], capture_output=True, text=True,
                         cwd=Path(__file__).resolve().parents[1], timeout=120)
    assert out.returncode == 0, out.stderr


def test_heads_ok_refuses_only_shapes_that_violations_refuses():
    """``heads_ok`` is the planner's test before it builds an architecture (snapping.valid_arch): every
    head count it refuses must be one whose shape ``violations`` refuses too, for every preset, tensor-
    parallel degree and 8-way rule (``shard_from`` 0: every shape must split 8 ways), else a valid shape
    would be skipped. It must also refuse the 8-way rule's head counts there (what it is for)."""
    import random

    from depthwidth.arch.hardware import Constraints, heads_ok, violations
    from depthwidth.arch.spending import Spending
    from depthwidth.core.errors import InputError

    draw = random.Random(7)
    refused = 0
    for name in ("vanilla", "gpt2", "llama", "qwen2", "mixtral", "deepseek"):
        spending = Spending(name)
        for tp in (1, 2, 8):
            for shard_from in (0, None, 1e9):
                constraints = Constraints(tp=tp, shard_from=shard_from)
                for _ in range(60):
                    depth, width = draw.randint(1, 100), spending.head_dim * draw.randint(2, 200)
                    if heads_ok(width // spending.head_dim, constraints):
                        continue
                    refused += 1
                    try:
                        arch = spending.architecture(depth, width)
                    except InputError:
                        continue
                    assert violations(arch, constraints), (name, tp, shard_from, depth, width)
    assert refused > 100
    assert not heads_ok(12, Constraints(shard_from=0)) and heads_ok(16, Constraints(shard_from=0))
    assert heads_ok(12, Constraints(shard_from=None)) and heads_ok(12, Constraints(shard_from=1e9))  # 8-way rule by count: not here
