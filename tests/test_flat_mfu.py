"""`--mfu` has one meaning in every command (cost, plan, sweep, compare, inspect): the layout given, none searched
(the fields not given at the run options' defaults: tp 1, pp 1, ZeRO 1, selective recomputation, micro-batch 1),
timed at that flat model-FLOPs utilization, the pipeline's most loaded stage setting the pace; the step time and the
throughput follow from it, and `run.mfu` is the utilization the run achieves.

Before the 0.5.0 sixth session `cost --mfu` searched a layout (memory and layout of another run than compare's, plan's and sweep's) and
left the uneven pipeline out of its days, while `compare`'s screen printed the searched layout under a footnote
saying "in the layout given". The expected values here are the flat formula written out: the vanilla block's
training FLOPs per token 72·L·d² + 12·L·T·d (Megatron-LM's count without a vocabulary: 6 x the 12·L·d² weights,
and the attention scores and values, Narayanan et al. 2021 eq. 3 without its 1/16 term) over the H100's 989.5
TFLOP/s dense BF16 (its datasheet), times p·ceil(L/p)/L."""
from __future__ import annotations

import math
import re

import pytest

from conftest import assert_bad_input, parse_json, run

H100_BF16 = 989.5e12
GIVEN = {"tp": 1, "pp": 1, "zero": 1, "recompute": "selective", "micro_batch": 1}  # the run options' defaults

# (shape, run options): pipelines that divide the depth and do not, ZeRO stages, recomputation, micro-batches, clusters
CASES = [
    ("30x2048", ["--gpus", "64", "--pp", "4", "--mfu", "0.4", "--tokens", "2e10"]),
    ("24x2048", ["--gpus", "8", "--mfu", "0.35", "--tokens", "4e10", "--global-batch", "256"]),
    ("32x4096", ["--gpus", "128", "--tp", "4", "--pp", "2", "--zero", "3", "--recompute", "full", "--micro-batch", "2",
                 "--mfu", "0.5", "--tokens", "1e11", "--global-batch", "1024"]),
    ("45x1536", ["--gpus", "32", "--pp", "8", "--micro-batch", "4", "--context", "4096", "--mfu", "0.3", "--tokens", "3e10"]),
    ("12x768", ["--gpus", "8", "--zero", "2", "--recompute", "none", "--mfu", "0.25", "--tokens", "1e9"]),
]


def _options(options: list) -> dict:
    pairs = dict(zip(options[::2], options[1::2]))
    return {k.lstrip("-").replace("-", "_"): v for k, v in pairs.items()}


def _expected(shape: str, options: list) -> dict:
    """The flat run written out (module docstring)."""
    depth, width = map(int, shape.split("x")[:2])
    o = _options(options)
    gpus, mfu, context = int(o["gpus"]), float(o["mfu"]), int(o.get("context", 2048))
    given = {k: (v if k == "recompute" else int(v)) for k, v in {**GIVEN, **o}.items() if k in GIVEN}
    pp, tp = given["pp"], given["tp"]
    imbalance = pp * math.ceil(depth / pp) / depth
    per_token = 72 * depth * width ** 2 + 12 * depth * context * width
    rate = mfu / imbalance * H100_BF16 * gpus / per_token
    return {"mfu": mfu / imbalance, "tokens_per_second": rate, "train_days": float(o["tokens"]) / rate / 86400,
            "layout": {**given, "dp": gpus // (tp * pp), "cp": 1}, "per_token": per_token}


def _cost(shape: str, options: list) -> dict:
    [record] = parse_json(run(["cost", shape, *options, "--format", "json"]))
    return record["run"]


def _same_run(record: dict, reference: dict, what: str) -> None:
    """The same run, field for field: the layout, memory, step time, throughput, MFU and days."""
    for name in ("step_seconds", "tokens_per_second", "mfu", "train_days", "memory_per_gpu_bytes"):
        assert record[name] == pytest.approx(reference[name], rel=1e-9), (what, name)
    assert record["layout"] == reference["layout"], what


@pytest.mark.parametrize("shape,options", CASES, ids=[f"{s} {' '.join(o)}" for s, o in CASES])
def test_cost_times_the_layout_given_at_the_flat_utilization(shape, options):
    cost, want = _cost(shape, options), _expected(shape, options)
    assert cost["train_flops_per_token"] == want["per_token"]
    assert {k: cost["layout"][k] for k in want["layout"]} == want["layout"]
    assert cost["layout"]["dp"] * cost["layout"]["micro_batch"] * cost["layout"]["accumulation"] == cost["global_batch"]
    assert cost["mfu"] == pytest.approx(want["mfu"], rel=1e-12)
    assert cost["tokens_per_second"] == pytest.approx(want["tokens_per_second"], rel=1e-12)
    assert cost["train_days"] == pytest.approx(want["train_days"], rel=1e-12)
    assert cost["step_seconds"] == pytest.approx(cost["global_batch"] * cost["context"] / want["tokens_per_second"], rel=1e-12)
    assert cost["layouts_searched"] is None and cost["calibrated_on"] is None


@pytest.mark.parametrize("shape,options", CASES, ids=[f"{s} {' '.join(o)}" for s, o in CASES])
def test_compare_sweep_and_plan_give_cost_s_answer(shape, options):
    """compare's JSON and its screen, a sweep row and a plan candidate of the same shape: cost's run."""
    reference = _cost(shape, options)
    out = run(["compare", "--deep", shape, "--shallow", shape, *options, "--format", "json"])
    _same_run(parse_json(out)["deep"]["run"], reference, "compare JSON")
    screen = run(["compare", "--deep", shape, "--shallow", shape, *options]).stdout
    step = re.search(r"step time, MFU\s+([\d.]+) s, ([\d.]+)", screen)
    assert step and float(step[1]) == pytest.approx(reference["step_seconds"], rel=5e-3), screen
    assert step[2] == f"{reference['mfu']:.2f}", screen  # the screen's two decimals
    lay = reference["layout"]
    assert f"tp{lay['tp']} pp{lay['pp']} dp{lay['dp']} mb{lay['micro_batch']} z{lay['zero']}" in screen, screen
    memory = re.search(r"memory per GPU\s+([\d.]+) GB", screen)
    assert float(memory[1]) == pytest.approx(reference["memory_per_gpu_bytes"] / 1e9, rel=0.05), screen  # two or three digits

    depth, width = map(int, shape.split("x")[:2])
    rows = parse_json(run(["sweep", "--params", str(12 * depth * width ** 2), "--depths", str(depth), *options,
                           "--format", "json"]))
    row = next(r for r in rows if (r["depth"], r["width"]) == (depth, width))
    _same_run(row["run"], reference, "sweep")


def test_a_plan_s_candidates_are_cost_s_runs():
    options = ["--gpus", "64", "--pp", "4", "--mfu", "0.4", "--tokens", "2e10"]
    [plan] = parse_json(run(["plan", "--params", "1e9", *options, "--format", "json"]))
    for candidate in plan["candidates"][:3] + [plan["recommended"]]:
        shape = f"{candidate['depth']}x{candidate['width']}x{candidate['heads']}"
        cost = _cost(shape, options)
        _same_run(candidate["run"], cost, f"plan {shape}")
        assert cost["mfu"] == pytest.approx(_expected(shape, options)["mfu"], rel=1e-12)
    assert plan["setup"]["mfu"] == 0.4 and plan["setup"]["time_model"] == "mfu"


def test_inspect_gives_cost_s_answer():
    options = ["--gpus", "64", "--tp", "2", "--mfu", "0.45", "--tokens", "1e12", "--zero", "1"]
    [inspected] = parse_json(run(["inspect", "tests/configs/llama-7b.json", *options, "--format", "json"]))
    [cost] = parse_json(run(["cost", "--config", "tests/configs/llama-7b.json", *options, "--format", "json"]))
    _same_run(inspected["run"], cost["run"], "inspect")
    assert cost["run"]["mfu"] == pytest.approx(0.45, rel=1e-12)  # 32 layers, no pipeline: the MFU given


def test_the_plan_screen_says_the_flat_utilization_and_what_an_uneven_pipeline_leaves():
    screen = run(["plan", "--params", "1e9", "--gpus", "64", "--mfu", "0.4", "--tokens", "2e10"]).stdout
    assert ", MFU 0.4," in " ".join(screen.split()) and "performance model)" not in screen.split("billed")[0], screen


@pytest.mark.parametrize("command", [["cost", "24x2048"], ["compare", "--deep", "24x2048", "--shallow", "12x2896"]])
def test_context_parallelism_with_a_flat_utilization_is_refused(command):
    """The flat cost counts no context parallelism: --cp with --mfu would be a silently different run."""
    assert_bad_input(run([*command, "--gpus", "16", "--cp", "2", "--mfu", "0.4"]), "--cp")


@pytest.mark.parametrize("flat", [["--mfu", "0.4"], []], ids=["--mfu", "model"])
def test_the_global_batch_is_the_one_timed_when_the_layout_does_not_divide_it(flat):
    """24 GPUs and a batch of 100 sequences: with --mfu the layout given (dp 24) runs 5 micro-batches, the last partly
    filled; compare's record says 100 (it said dp x micro-batch x accumulation = 120), as cost does; likewise the
    default batch, 512, on 24 GPUs (it said 528)."""
    for batch in (["--global-batch", "100"], []):
        options = ["--gpus", "24", "--tokens", "1e10", *flat, *batch]
        [cost] = parse_json(run(["cost", "24x2048", *options, "--format", "json"]))
        deep = parse_json(run(["compare", "--deep", "24x2048", "--shallow", "12x2896x32", *options, "--format", "json"]))["deep"]
        assert deep["run"]["global_batch"] == cost["run"]["global_batch"] == (100 if batch else 512)
        rows = parse_json(run(["sweep", "--params", str(12 * 24 * 2048 ** 2), "--depths", "24", *options, "--format", "json"]))
        assert rows[0]["run"]["global_batch"] == cost["run"]["global_batch"]


def test_the_cost_table_gives_each_shape_its_own_batch():
    """Two shapes of different sizes have different default batches (GPT-3's, Brown et al. 2020 Table 2.1: 0.5M tokens
    for 85M parameters, 3.2M for 38.7B; in 2,048-token sequences 244 and 1,562, to the nearest power of two 256 and
    2,048). The title said "batch 256 = dp x micro-batch x accumulation" over both; each layout line now says its own,
    and a batch the layout does not divide says its last micro-batch is partly filled."""
    screen = " ".join(run(["cost", "12x768", "48x8192", "--gpus", "64"], env={"COLUMNS": "200"}).stdout.split())
    assert "batch 256 = dp" not in screen and ", batch 256" in screen and ", batch 2,048" in screen, screen
    screen = " ".join(run(["cost", "24x2048", "--gpus", "24", "--global-batch", "100", "--mfu", "0.4"], env={"COLUMNS": "200"}).stdout.split())
    assert "batch 100 (the last micro-batch partly filled)" in screen and "= dp x micro-batch" not in screen, screen
    screen = " ".join(run(["cost", "24x2048", "--gpus", "8", "--global-batch", "512"], env={"COLUMNS": "200"}).stdout.split())
    assert "batch 512 = dp x micro-batch x accumulation" in screen, screen
