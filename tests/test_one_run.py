"""Issue 41, "one model, one answer": every command that shows time (plan, cost, sweep, compare, inspect)
times a run by the one performance model and layout search, so that the same shape, cluster, layout,
batch and tokens give the same step time and days in each.

The reference is `cost` on the same shape and options; every other command must agree with it within
0.5% on step time and days. The cases cover presets (vanilla, gpt2, llama, mistral), accelerators and
cluster sizes, contexts, and fixed and searched layouts."""
from __future__ import annotations

import json

import pytest

from conftest import parse_json, run

TOLERANCE = 0.005


def _cost(shape: str, options: list, *extra) -> dict:
    [record] = parse_json(run(["cost", shape, *extra, *options, "--format", "json"]))
    return record


def _run(record: dict) -> dict:
    """The ``run`` record of a cost row, plan candidate, sweep row or compare side (issue 42: one Run in every command)."""
    return record["run"]


def _agree(record: dict, reference: dict, what: str, step: str = "step_seconds", days: str = "train_days") -> None:
    """Step time and days within TOLERANCE of the reference, and a wall-clock time at all."""
    reference = _run(reference)
    assert record[step] == pytest.approx(reference["step_seconds"], rel=TOLERANCE), what
    assert reference["train_days"] is not None and record[days] == pytest.approx(reference["train_days"], rel=TOLERANCE), what


# (label, preset, budget, run options): every case gives --gpus and --tokens (days need both)
PLANNED = [
    ("llama 7B, 64 H100, searched", "llama", "7e9", ["--gpu", "h100", "--gpus", "64", "--tokens", "2e12"]),
    ("llama 7B, 64 H100, fixed tp/pp/zero/micro-batch", "llama", "7e9",
     ["--gpus", "64", "--tp", "2", "--pp", "1", "--zero", "1", "--micro-batch", "2", "--global-batch", "512", "--context", "4096",
      "--recompute", "selective", "--tokens", "2e12"]),
    ("llama 1B, one A100 node, context 8192", "llama", "1e9", ["--gpu", "a100-80gb", "--gpus", "8", "--context", "8192", "--tokens", "2e10"]),
    ("mistral 7B, 256 H200, pipeline 2", "mistral", "7e9", ["--gpu", "h200", "--gpus", "256", "--pp", "2", "--tokens", "1e12"]),
    ("gpt2 350M, 16 A100-40GB, unfused attention", "gpt2", "3.5e8",
     ["--gpu", "a100-40gb", "--gpus", "16", "--attention", "unfused", "--tokens", "7e9"]),
    ("vanilla 1.3B, 32 H100, ZeRO 3 full recompute", "vanilla", "1.3e9",
     ["--gpus", "32", "--zero", "3", "--recompute", "full", "--global-batch", "256", "--tokens", "2.6e10"]),
    ("llama 13B, 128 B200, context 2048, global batch 1024", "llama", "1.3e10",
     ["--gpu", "b200", "--gpus", "128", "--global-batch", "1024", "--tokens", "3e11"]),
    ("llama 70B, 512 H100, tp 8", "llama", "7e10", ["--gpus", "512", "--tp", "8", "--tokens", "1.5e12"]),
]


def _plan_options(options: list) -> list:
    """plan's spelling of the run options: --tp is the degree every shape shards by (and trains at)."""
    return options


def _shape(record: dict, prefix: str = "") -> str:
    return f"{record[prefix + 'depth']}x{record[prefix + 'width']}x{record[prefix + 'heads']}"


@pytest.mark.parametrize("label,arch,budget,options", PLANNED, ids=[case[0] for case in PLANNED])
def test_plan_sweep_and_compare_agree_with_cost(label, arch, budget, options):
    [plan] = parse_json(run(["plan", "--params", budget, "--arch", arch, *_plan_options(options), "--format", "json"]))
    shape = _shape(plan["recommended"], "")
    reference = _cost(shape, options, "--arch", arch, "--kv-heads", str(plan["recommended"]["kv_heads"]))
    assert reference["params_nonembedding"] == plan["recommended"]["params_nonembedding"], label  # the same block
    _agree(plan["recommended"]["run"], reference, f"plan: {label}")
    assert plan["recommended"]["run"]["layout"] == _run(reference)["layout"], label
    for candidate in plan["candidates"][:2]:  # the candidates are timed as the pick is
        alike = _cost(_shape(candidate), options, "--arch", arch, "--kv-heads", str(candidate["kv_heads"]))
        if alike["params_nonembedding"] == candidate["params_nonembedding"]:  # a candidate's snapped ffn: cost has no --ffn
            _agree(candidate["run"], alike, f"plan candidate {_shape(candidate)}: {label}")

    rows = parse_json(run(["sweep", "--params", budget, "--arch", arch, "--count", "2", *options, "--format", "json"]))
    for row in rows:
        alike = _cost(_shape(row), options, "--arch", arch, "--kv-heads", str(row["kv_heads"]))
        assert alike["params_nonembedding"] == row["params_nonembedding"], label
        _agree(_run(row), alike, f"sweep row {row['id']}: {label}")

    if arch == "vanilla":  # compare reads bare shapes as the paper's block
        deep = run(["compare", "--deep", shape, "--shallow", shape, *options, "--format", "json"])
        _agree(_run(parse_json(deep)["deep"]), reference, f"compare: {label}")


INSPECTED = [
    ("llama-7b.json", ["--gpu", "h100", "--gpus", "64", "--tp", "2", "--pp", "1", "--zero", "1", "--micro-batch", "2",
                       "--global-batch", "512", "--context", "4096", "--recompute", "selective", "--tokens", "2e12"]),
    ("llama-7b.json", ["--gpus", "512", "--tokens", "1.5e13"]),
    ("mistral-7b.json", ["--gpu", "a100-80gb", "--gpus", "128", "--context", "8192", "--tokens", "1e12"]),
    ("gpt2.json", ["--gpus", "8", "--tokens", "1e10", "--attention", "unfused", "--micro-batch", "8"]),
    ("gemma-3-4b.json", ["--gpu", "h200", "--gpus", "32", "--pp", "2", "--tokens", "4e11"]),
]


@pytest.mark.parametrize("config,options", INSPECTED, ids=[f"{c} {' '.join(o[:4])}" for c, o in INSPECTED])
def test_inspect_agrees_with_cost(config, options):
    path = f"tests/configs/{config}"
    [record] = parse_json(run(["inspect", path, *options, "--format", "json"]))
    [reference] = parse_json(run(["cost", "--config", path, *options, "--format", "json"]))
    _agree(_run(record), reference, f"inspect {config}")
    assert _run(record)["layout"] == _run(reference)["layout"]
    assert _run(record)["train_gpu_hours"] == pytest.approx(_run(reference)["train_gpu_hours"], rel=TOLERANCE)


def test_the_issue_acceptance_run_gives_one_answer():
    """The issue's check: cost --config and inspect of Llama 7B on 64 H100 in one fixed layout."""
    options = ["--gpu", "h100", "--gpus", "64", "--tp", "2", "--pp", "1", "--zero", "1", "--micro-batch", "2", "--global-batch", "512",
               "--context", "4096", "--recompute", "selective", "--tokens", "2e12", "--format", "json"]
    [cost] = json.loads(run(["cost", "--config", "tests/configs/llama-7b.json", *options]).stdout)
    [inspected] = json.loads(run(["inspect", "tests/configs/llama-7b.json", *options]).stdout)
    cost, inspected = cost["run"], inspected["run"]
    assert inspected["train_days"] == pytest.approx(cost["train_days"], rel=TOLERANCE)
    # the layout is the one given, and the days are the tokens at the step's pace
    assert cost["layout"] == {"tp": 2, "pp": 1, "dp": 32, "cp": 1, "micro_batch": 2, "recompute": "selective", "zero": 1,
                              "accumulation": 512 // (32 * 2)}
    assert cost["train_days"] == pytest.approx(2e12 / (512 * 4096) * cost["step_seconds"] / 86400, rel=1e-9)


@pytest.mark.parametrize("shape,options", [
    ("12x768", ["--gpus", "8"]), ("24x2048", ["--arch", "llama", "--gpus", "48"]), ("32x4096", ["--arch", "llama", "--gpus", "64"]),
    ("80x8192", ["--arch", "llama", "--gpus", "512", "--context", "8192"]), ("24x1024", ["--gpus", "96", "--global-batch", "384"]),
])
def test_the_batch_arithmetic_is_exact_and_default_batches_are_powers_of_two(shape, options):
    """Issue 41: GPT-3's token batch turned into 244, 488 or 977 sequences forced a micro-batch of 1 or 31."""
    record = _run(_cost(shape, options))
    lay = record["layout"]
    assert lay["dp"] * lay["micro_batch"] * lay["accumulation"] == record["global_batch"]
    if "--global-batch" not in options:
        assert record["global_batch"] & (record["global_batch"] - 1) == 0


def test_every_preset_defaults_to_flash_attention():
    """The README's first plan ran the vanilla block unfused (MFU 0.23); flash unless --attention unfused."""
    flash = _run(_cost("24x2048", ["--gpus", "8", "--tokens", "1e10"]))
    unfused = _run(_cost("24x2048", ["--gpus", "8", "--tokens", "1e10", "--attention", "unfused"]))
    assert (flash["attention"], unfused["attention"]) == ("flash", "unfused")
    assert flash["mfu"] > unfused["mfu"] and flash["train_days"] < unfused["train_days"]


def test_a_small_model_on_one_node_keeps_a_simpler_zero_stage():
    """Issue 41: ZeRO-3 hid its gathers behind compute and won every tie on memory, so a 125M model on one
    node got ZeRO-3; on equal step times the simpler stage is kept."""
    record = _run(_cost("12x768", ["--gpus", "8", "--tokens", "2.5e9"]))
    assert record["layout"]["zero"] < 3
    fixed = _run(_cost("12x768", ["--gpus", "8", "--tokens", "2.5e9", "--zero", "3"]))
    assert fixed["step_seconds"] >= record["step_seconds"] * (1 - 1e-12)  # ZeRO-3 is never faster


def test_without_gpus_a_model_one_node_cannot_hold_gets_the_smallest_cluster_that_fits():
    row = _cost("80x8192", ["--arch", "llama", "--tokens", "1.5e13"])
    record = _run(row)
    smaller = _run(_cost("80x8192", ["--arch", "llama", "--gpus", str(record["gpus"] // 2), "--tokens", "1.5e13"]))
    assert record["gpus"] > 8 and any(f"{record['gpus']:,} GPUs" in n for n in row["notes"])
    assert record["memory_per_gpu_bytes"] <= 80e9 and smaller["memory_per_gpu_bytes"] > 80e9
    assert record["fits"] and not smaller["fits"]
