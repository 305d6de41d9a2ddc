"""The performance model's error on the published-runs table, out of the box, out of sample and
calibrated (issue 41, "Done when"). The computation is benchmarks/perf_accuracy.py's, which prints the
tables docs/performance.md shows; the measured figures are the rows of tests/data/published_runs.json,
each with its paper, table and quote."""
from __future__ import annotations

import importlib.util
import json
import math
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("perf_accuracy", ROOT / "benchmarks" / "perf_accuracy.py")
accuracy = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(accuracy)
ROWS = json.loads(accuracy.TABLE.read_text())


@pytest.fixture(scope="module")
def report():
    return accuracy.report(ROWS)


def test_the_table_is_large_enough_and_every_row_has_a_source():
    assert len(ROWS) >= 30
    assert len({accuracy.source(r) for r in ROWS}) >= 6


def test_out_of_the_box_median_and_p90(report):
    """The issue's bound: median |error| <= 10%, 90th percentile <= 25%, with the shipped constants."""
    every = report["in_sample"]["all"]
    assert every["n"] == len(ROWS) and every["median"] <= 0.10 and every["p90"] <= 0.25, every


def test_leaving_a_source_out_keeps_the_bound(report):
    """Out of sample: STEP_EFFICIENCY refitted without a source predicts it; over every source the same bound."""
    every = report["leave_source_out"]["all"]
    assert every["n"] == len(ROWS) and every["median"] <= 0.10 and every["p90"] <= 0.25, every
    # the refitted constant moves little: no source carries the fit
    assert all(abs(e / report["efficiency"]["all"] - 1) < 0.05 for e in report["efficiency"].values()), report["efficiency"]


def test_the_error_the_screens_print_is_the_tables(report):
    """cost's and compare's notes state the model's error on the published runs: the run count, the median and the
    runs within 25%, recomputed here from the table (the median rounded to 0.1%)."""
    from depthwidth.output.compare_screen import MODEL_ERROR
    from depthwidth.output.costtable import MODEL_ERROR_NOTE

    every = report["in_sample"]["all"]
    within = sum(abs(e) <= 0.25 for _, _, e in report["rows"])
    runs, median = every["n"], f"{100 * every['median']:.1f}%"
    assert f"{runs} published runs: median {median}, {within} of {runs} within 25%" in MODEL_ERROR_NOTE, MODEL_ERROR_NOTE
    assert f"{median} on {runs} published runs" in MODEL_ERROR, MODEL_ERROR


def test_calibrated_on_one_run_median(report):
    """Calibrated on one run of a source (on its accelerator), that source's other runs: median |error| <= 5%,
    and likewise for a stack profile fitted on a source's other runs (leave one run out)."""
    assert report["calibrated_one_run"]["all"]["median"] <= 0.05, report["calibrated_one_run"]["all"]
    assert report["stack_profile"]["all"]["median"] <= 0.05, report["stack_profile"]["all"]


# The (source, accelerator) groups whose calibrated maximum is over the 15%, each with why (docs/performance.md,
# "Measured error on published runs"); the test below fails when one of them comes under it (drop it from here) or
# when any other group goes over.
CALIBRATED_MAX_OVER = {
    ("Narayanan et al. 2021, DeepSpeed ZeRO-3 (Table 2)", "a100-80gb"):
        "the step is the same on 768 and 1536 GPUs (and 1120, 2240) at one batch: bound by the weight gathers, so those "
        "runs carry no information on compute speed, while the ones on 384 and 640 GPUs are bound by compute (read as "
        "Table 2 shows it, gathers overlapped, they run at an efficiency of 0.59 and 0.54 where Megatron-LM's runs reach "
        "0.85): one measured run fixes one factor, and the source needs two "
        "(test_the_deepspeed_zero3_group_is_over_because_its_step_is_flat_in_the_gpus)",
    ("MosaicML 2023, llm-foundry FSDP (benchmark README)", "h100"):
        "its runs without activation checkpointing (MPT-1B, 7B at 2k) are over-predicted by 22-28%, its runs with it "
        "(7B at 4k, 30B, 70B) by 4-8%: calibrated within either setting, max 4%; the model charges checkpointing one more "
        "forward, which llm-foundry's own tables measure as cheaper "
        "(test_the_llm_foundry_h100_group_is_over_by_its_checkpointing_split)",
}


def test_calibrated_on_one_run_max(report):
    """The issue's other calibrated bound, max |error| <= 15%, computed from the table for every source and accelerator:
    held by each group but the ones CALIBRATED_MAX_OVER names, each still over it (so the list stays the truth)."""
    groups = {key: c for key, c in report["calibrated_one_run"].items() if key != "all"}
    assert set(CALIBRATED_MAX_OVER) <= set(groups)
    for key, c in groups.items():
        if key in CALIBRATED_MAX_OVER:
            assert c["max"] > 0.15, (key, c, "now within the bound: drop it from CALIBRATED_MAX_OVER")
        else:
            assert c["max"] <= 0.15, (key, c)
    assert report["calibrated_one_run"]["all"]["max"] == max(c["max"] for c in groups.values())


def test_the_deepspeed_zero3_group_is_over_because_its_step_is_flat_in_the_gpus():
    """CALIBRATED_MAX_OVER's reason, from the table: at one global batch, doubling the GPUs halves each GPU's compute and
    leaves the measured step where it was (768 -> 1536 GPUs within 1%, 1120 -> 2240 within 3%), while the 174.6B run
    with four sequences a GPU (384 GPUs) takes over 20% longer: two regimes, so the efficiencies one factor calibrates on
    each run (the rows' reading, gathers not hidden) disagree by more than 3x."""
    zero3 = [r for r in ROWS if accuracy.source(r) == "Narayanan et al. 2021, DeepSpeed ZeRO-3 (Table 2)"]
    step = {r["gpus"]: accuracy.measured_step(r) for r in zero3}
    assert abs(step[1536] / step[768] - 1) < 0.01 and abs(step[2240] / step[1120] - 1) < 0.03, step
    assert step[384] > 1.2 * step[768], step
    efficiencies = [accuracy.calibrated_efficiency(accuracy.step_line(r), r) for r in zero3]
    assert max(efficiencies) > 3 * min(efficiencies), efficiencies


def test_the_llm_foundry_h100_group_is_over_by_its_checkpointing_split():
    """CALIBRATED_MAX_OVER's reason, from the table: every llm-foundry H100 run without activation checkpointing is
    over-predicted by over 10 points more than every run with it, and calibrated within either setting the group holds
    5%: its calibrated maximum is the split between the settings (the same sign on A100-80GB: without, more)."""
    split = accuracy.recomputation_split(ROWS)
    for gpu, gap in (("h100", 0.10), ("a100-80gb", 0.0)):
        settings = split["MosaicML 2023, llm-foundry FSDP (benchmark README)", gpu]
        assert set(settings) == {"none", "full"}, settings
        assert min(settings["none"]["errors"]) - max(settings["full"]["errors"]) > gap, (gpu, settings)
        assert all(part["calibrated"]["max"] <= 0.05 for part in settings.values()), (gpu, settings)


def test_a_calibrated_run_is_reproduced_and_the_step_is_linear_in_one_over_efficiency():
    """step = a + b / efficiency in a held layout (communication is not scaled): a third efficiency's step
    lies on the line through two, and the efficiency calibrated on a run gives its measured step."""
    row = next(r for r in ROWS if r["id"] == "narayanan2021-t1-18.4B")
    line = accuracy.step_line(row)
    fixed = {k: row[k] for k in accuracy.FIXED if row.get(k) is not None}
    _, layout = accuracy._step(row, fixed, 0.82)
    held = dict(fixed, **{k: layout[k] for k in accuracy.FIXED if k in layout and layout[k] is not None})
    step, _ = accuracy._step(row, held, 1.1)
    assert math.isclose(step, line[0] + line[1] / 1.1, rel_tol=1e-9)
    efficiency = accuracy.calibrated_efficiency(line, row)
    assert math.isclose(accuracy.error(line, row, efficiency), 0.0, abs_tol=1e-12)


def test_the_named_profiles_are_the_tables():
    """Each named profile (loop/stack_profiles.py) is the median efficiency calibrated on its stack's runs on one
    accelerator, with its leave-one-run-out error, recomputed here from the table (figures rounded to 0.1%)."""
    from depthwidth.loop.stack_profiles import STACK_PROFILES

    fitted = accuracy.stack_profiles(ROWS)
    shipped = {(name, gpu): values for name, (_, _, per_gpu) in STACK_PROFILES.items() for gpu, values in per_gpu.items()}
    assert set(shipped) == set(fitted)
    for key, (efficiency, runs, median, most) in shipped.items():
        f = fitted[key]
        assert runs == f["runs"] >= 2, key
        assert math.isclose(efficiency, f["efficiency"], abs_tol=6e-4), (key, f["efficiency"])
        assert math.isclose(median, f["leave_one_out"]["median"], abs_tol=6e-4), (key, f["leave_one_out"])
        assert math.isclose(most, f["leave_one_out"]["max"], abs_tol=6e-4), (key, f["leave_one_out"])


def test_a_named_profile_times_the_run_at_its_efficiency_and_says_so(run):
    """`--profile NAME`: the run timed at the stack's efficiency (the same prediction as the table's), its line printed;
    an unknown name or another accelerator: one line, exit 2."""
    from conftest import assert_bad_input, parse_json
    from depthwidth.loop.stack_profiles import STACK_PROFILES

    row = next(r for r in ROWS if r["id"] == "narayanan2021-t1-18.4B")
    args = ["cost", f"{row['layers']}x{row['hidden']}x{row['heads']}", "--arch", "vanilla", "--vocab", str(row["vocab"]),
            "--gpu", row["gpu"], "--gpus", str(row["gpus"]), "--tp", str(row["tp"]), "--pp", str(row["pp"]),
            "--global-batch", str(row["global_batch"]), "--context", str(row["seq_len"]), "--recompute", row["recompute"],
            "--attention", "unfused", "--format", "json"]
    out = parse_json(run(args + ["--profile", "megatron-lm-2021"]))[0]["run"]
    assert out["calibrated_on"].startswith("named profile megatron-lm-2021")
    efficiency = STACK_PROFILES["megatron-lm-2021"][2]["a100-80gb"][0]
    plain = parse_json(run(args))[0]["run"]
    # the same layout, compute time divided by the efficiency instead of 0.82: the step is a + b / efficiency
    assert out["layout"] == plain["layout"]
    assert out["tokens_per_second"] > plain["tokens_per_second"] * (1 + 0.5 * (efficiency / 0.82 - 1))
    assert_bad_input(run(["cost", "12x768", "--profile", "megatron-lm-2021"]), "--profile")  # fitted on A100 only
    assert_bad_input(run(["cost", "12x768", "--profile", "no-such-stack"]), "--profile")


def _tokens_per_second(run, shape, *options):
    from conftest import parse_json

    record = parse_json(run(["cost", shape, "--arch", "vanilla", "--gpu", "a100-80gb", "--tp", "1", "--pp", "1",
                             "--context", "2048", *options, "--format", "json"]))[0]
    return record["run"]["tokens_per_second"]


def test_the_2021_megatron_run_is_timed_with_its_unfused_kernel(run):
    """Narayanan et al. 2021 Table 1's 1.7B run (24 x 2304, 24 heads, 32 A100s, batch 512, full recomputation):
    137 TFLOP/s per GPU, counted by the paper's eq. (3), F = 96 B s l h^2 (1 + s/(6h) + V/(16 l h)) per iteration.
    Megatron-LM 2021 had no fused attention, so `--attention unfused` times the run it measured: within 25%."""
    layers, width, context, vocab, gpus = 24, 2304, 2048, 51200, 32
    rate = _tokens_per_second(run, "24x2304x24", "--vocab", str(vocab), "--gpus", str(gpus), "--global-batch", "512",
                              "--recompute", "full", "--attention", "unfused")
    eq3_per_token = 96 * layers * width ** 2 * (1 + context / (6 * width) + vocab / (16 * layers * width))
    tflops = rate / gpus * eq3_per_token / 1e12
    assert abs(tflops / 137 - 1) <= 0.25, tflops


@pytest.mark.parametrize("shape, published", [
    # Dao 2023, FlashAttention-2 (arXiv 2307.08691), Table 1, 8 x A100 80GB, TFLOP/s per GPU at 2k context:
    # GPT3-1.3B 142 without FlashAttention, 196 with FlashAttention-2; GPT3-2.7B 149 and 205
    ("24x2048x16", 196 / 142),
    ("32x2560x32", 205 / 149),
])
def test_flash_speeds_a_gpt_step_up_as_flashattention_2_measured(run, shape, published):
    """The model's flash/unfused throughput ratio against FlashAttention-2's end-to-end table (the same FLOP count
    on both sides, so its TFLOP/s ratio is the throughput ratio). The runs as the paper's training configs set them
    (Dao-AILab/flash-attention training/configs/experiment/pile/gpt3xl-flash.yaml and gpt3-2.7B-flash.yaml @edc7698f:
    8 GPUs, global batch 512, ZeRO-1, no activation checkpointing; GPT-2's 50,257-token vocabulary); the micro-batch
    searched (the unfused core needs more memory). Tolerance 10%: each prediction carries the model's per-run
    error (median 5% on the published table), and the ratio of two carries up to about twice that; a model with no
    flash gain (ratio 1) or twice the gain is far outside it."""
    options = ("--vocab", "50257", "--gpus", "8", "--global-batch", "512", "--recompute", "none", "--zero", "1")
    ratio = (_tokens_per_second(run, shape, *options, "--attention", "flash")
             / _tokens_per_second(run, shape, *options, "--attention", "unfused"))
    assert abs(ratio / published - 1) <= 0.10, (ratio, published)


def _calibrate_row(run, row, *extra):

    args = ["calibrate", f"{row['layers']}x{row['hidden']}x{row['heads']}", "--arch", "vanilla", "--vocab", str(row["vocab"]),
            "--gpu", row["gpu"], "--gpus", str(row["gpus"]), "--tp", str(row["tp"]), "--pp", str(row["pp"]),
            "--zero", str(row["zero"]), "--global-batch", str(row["global_batch"]), "--context", str(row["seq_len"]),
            "--recompute", row["recompute"], "--attention", row["attention"],
            "--step-seconds", f"{accuracy.measured_step(row):.6g}", *extra]
    if row["micro_batch"]:
        args += ["--micro-batch", str(row["micro_batch"])]
    return run(args + ["--format", "json"]), run(args)


def test_calibrate_says_when_the_run_is_bound_by_communication(run):
    """compute_share_before: the share of the modelled step the efficiency scales, about b / efficiency over
    a + b / efficiency of the row's step line (`calibrate` runs with gradients overlapped; within 0.05: the line is the
    secant over efficiencies 0.41-0.82, the share the tangent at 0.82, and the gradient reduction hidden behind the
    backward shrinks as the compute speeds up). Megatron-LM's 18.4B run is bound by compute; DeepSpeed ZeRO-3 on 1536
    GPUs by its weight gathers, and the screen says the fit is loose."""
    from conftest import parse_json

    for rid, bound in (("narayanan2021-t1-18.4B", "compute"), ("narayanan2021-t2-zero-3-174.6B-1536gpus", "communication")):
        row = dict(next(r for r in ROWS if r["id"] == rid), overlap=True)
        a, b = accuracy.step_line(row)
        expected = (b / 0.82) / (a + b / 0.82)
        as_json, screen = _calibrate_row(run, row)
        share = parse_json(as_json)[0]["compute_share_before"]
        assert abs(share - expected) <= 0.05, (rid, share, expected)
        assert (share > 0.5) == (bound == "compute"), (rid, share)
        assert ("fixes the efficiency loosely" in screen.stdout or "predicts runs bound by compute poorly" in screen.stdout) \
            == (bound == "communication"), screen.stdout
