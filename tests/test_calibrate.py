"""Issue 41: `depthwidth calibrate` fits the stack's efficiency to a measured run and writes a profile;
`--profile` on plan, cost, sweep, compare and inspect applies it and says what it was calibrated on.

Expected values come from the measurement itself: the step time given, or the step times the log
fixtures were written from (tests/fixtures/steplogs/make_steplogs.py's STEPS, the real Hugging Face
trainer_state.json's train_runtime and global_step)."""
from __future__ import annotations

import importlib.util
import json
import pathlib
import statistics

import pytest

from conftest import parse_json, run

ROOT = pathlib.Path(__file__).resolve().parents[1]
LOGS = ROOT / "tests" / "fixtures" / "steplogs"
ACCEPTANCE = ["--arch", "llama", "--gpu", "h100", "--gpus", "64", "--tp", "2", "--pp", "1", "--zero", "1", "--micro-batch", "2",
              "--global-batch", "512", "--context", "4096", "--recompute", "selective"]
SMALL = ["--arch", "llama", "--gpus", "8", "--global-batch", "256", "--context", "2048"]  # the run the log fixtures describe


def _fixture_steps():
    spec = importlib.util.spec_from_file_location("make_steplogs", LOGS / "make_steplogs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _calibrate(tmp_path, shape, options, *measurement):
    profile = tmp_path / "profile.json"
    [record] = parse_json(run(["calibrate", shape, *options, *measurement, "--out", str(profile), "--format", "json"]))
    return record, profile


def _cost(shape, options, profile):
    [record] = parse_json(run(["cost", shape, *options, "--profile", str(profile), "--format", "json"]))
    return record["run"]


def test_the_issue_acceptance_run_reproduces_its_step(tmp_path):
    record, profile = _calibrate(tmp_path, "32x4096", ACCEPTANCE, "--step-seconds", "2.0")
    cost = _cost("32x4096", ACCEPTANCE, profile)
    assert cost["step_seconds"] == pytest.approx(2.0, rel=0.01)
    assert cost["layout"] == record["layout"] and record["layout"]["tp"] == 2 and record["layout"]["micro_batch"] == 2
    assert "32x4096" in cost["calibrated_on"] and "--step-seconds 2.0" in cost["calibrated_on"]
    saved = json.loads(profile.read_text())
    assert saved["accelerator"] == "h100" and saved["training"]["measurement"]["source"] == "--step-seconds 2.0"
    assert saved["training"]["efficiency_low"] is None and "one measurement" in saved["training"]["interval_note"]
    # the fitted efficiency is a share of the model's compute time: the step out of the box scaled to 2.0 s
    assert (record["efficiency"] > record["default_efficiency"]) == (record["step_seconds_before"] > 2.0)


def test_tokens_per_second_is_the_whole_clusters(tmp_path):
    rate = 512 * 4096 / 3.1  # tokens per second of 64 GPUs: a step of 3.1 s
    record, profile = _calibrate(tmp_path, "32x4096", ACCEPTANCE, "--tokens-per-second", repr(rate))
    assert record["measured_step_seconds"] == pytest.approx(3.1, rel=1e-12)
    assert _cost("32x4096", ACCEPTANCE, profile)["step_seconds"] == pytest.approx(3.1, rel=0.01)


@pytest.mark.parametrize("name,fmt,skipped,steps,tolerance", [
    ("megatron.log", "megatron", 1, 99, 1e-4),  # iteration 1 (initialization), then iterations 2-100 in 10 lines
    ("torchtitan.log", "torchtitan", 1, 99, 1e-4),  # tps rounded to whole tokens per second per GPU
    ("nanogpt.log", "nanogpt", 5, 10, 1e-4),  # 5 iterations with mfu -100%, then iterations 5-14
    ("composer.log", "composer", 1, 100, 1e-3),  # batches_per_sec at 4 decimals; batches 100 -> 200
])
def test_each_log_format_gives_its_median_step(tmp_path, name, fmt, skipped, steps, tolerance):
    expected = statistics.median(_fixture_steps().STEPS)
    record, profile = _calibrate(tmp_path, "24x2048", SMALL, "--log", str(LOGS / name))
    m = record["measurement"]
    assert (m["log_format"], m["warmup_skipped"], m["steps_read"]) == (fmt, skipped, steps)
    assert record["measured_step_seconds"] == pytest.approx(expected, rel=tolerance)
    low, high = record["efficiency_low"], record["efficiency_high"]
    assert low < record["efficiency"] < high  # the 90th percentile step is slower: a lower efficiency
    assert _cost("24x2048", SMALL, profile)["step_seconds"] == pytest.approx(expected, rel=0.01)


def test_more_warmup_skips_more_readings(tmp_path):
    record, _ = _calibrate(tmp_path, "24x2048", SMALL, "--log", str(LOGS / "megatron.log"), "--warmup", "3")
    steps = _fixture_steps().STEPS
    assert record["measurement"]["warmup_skipped"] == 3 and record["measurement"]["steps_read"] == 100 - 20
    assert record["measured_step_seconds"] == pytest.approx(statistics.median(steps[2:]), rel=1e-4)


def test_trainer_state_json_gives_the_runs_mean_step(tmp_path):
    state = json.loads((LOGS / "trainer_state.json").read_text())
    summary = state["log_history"][-1]
    record, profile = _calibrate(tmp_path, "24x2048", SMALL, "--log", str(LOGS / "trainer_state.json"))
    assert record["measured_step_seconds"] == pytest.approx(summary["train_runtime"] / state["global_step"], rel=1e-12)
    assert record["measurement"]["steps_read"] == state["global_step"] and record["measurement"]["warmup_skipped"] == 0
    assert record["efficiency_low"] is None


def test_a_real_trainer_state_is_read():
    """tests/fixtures/trainer_runs holds trainer_state.json files that transformers.Trainer wrote."""
    from depthwidth.loop.steplogs import read_log

    path = ROOT / "tests" / "fixtures" / "trainer_runs" / "1e6-01-1x288x18-s0" / "trainer_state.json"
    state = json.loads(path.read_text())
    readings = read_log(path.read_text(), str(path))
    assert readings.format == "hf-trainer" and readings.steps == state["global_step"]
    assert readings.values[0] == pytest.approx(state["log_history"][-1]["train_runtime"] / state["global_step"], rel=1e-12)


@pytest.mark.parametrize("command", [
    ["plan", "--params", "1.2e9", "--arch", "llama", "--gpus", "8", "--tokens", "2e10"],
    ["sweep", "--params", "1.2e9", "--arch", "llama", "--gpus", "8", "--tokens", "2e10", "--count", "2"],
    ["compare", "--deep", "24x2048", "--shallow", "12x2944", "--gpus", "8", "--tokens", "2e10"],
    ["inspect", "tests/configs/llama-7b.json", "--gpus", "8", "--tokens", "2e10"],
])
def test_every_command_that_shows_time_applies_a_profile_and_says_so(tmp_path, command):
    _, profile = _calibrate(tmp_path, "24x2048", SMALL, "--log", str(LOGS / "megatron.log"))
    plain = json.loads(run([*command, "--format", "json"]).stdout)
    calibrated = parse_json(run([*command, "--profile", str(profile), "--format", "json"]))
    label = json.loads(profile.read_text())["calibrated_on"]
    said = json.dumps(calibrated)
    assert label in said and label not in json.dumps(plain)
    assert said != json.dumps(plain)  # the times changed with the efficiency


def _one_error_line(out, *words):
    assert out.code == 2 and out.stdout == "", (out.code, out.stdout[:200])
    [line] = out.stderr.strip().splitlines()
    assert line.startswith("depthwidth: error: ") and all(w in line for w in words), line
    return line


def test_a_log_with_no_timing_is_one_line(tmp_path):
    log = tmp_path / "train.log"
    log.write_text("step 0: train loss 10.98, val loss 10.99\nsaving checkpoint to out\n")
    _one_error_line(run(["calibrate", "24x2048", *SMALL, "--log", str(log)]), "--log", "no step timing")
    state = tmp_path / "trainer_state.json"
    state.write_text(json.dumps({"global_step": 5, "log_history": [{"loss": 3.0, "step": 5}]}))
    _one_error_line(run(["calibrate", "24x2048", *SMALL, "--log", str(state)]), "--log", "train_runtime")


def test_a_profile_from_another_accelerator_or_unknown_is_one_line(tmp_path):
    _, profile = _calibrate(tmp_path, "24x2048", SMALL, "--log", str(LOGS / "nanogpt.log"))
    _one_error_line(run(["cost", "24x2048", *SMALL, "--gpu", "a100-80gb", "--profile", str(profile)]), "--profile", "h100", "a100-80gb")
    _one_error_line(run(["plan", "--params", "1e9", "--profile", str(tmp_path / "missing.json")]), "--profile")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"format": "depthwidth-rule/2"}))
    _one_error_line(run(["inspect", "tests/configs/llama-7b.json", "--profile", str(bad)]), "--profile", "format")
    typo = json.loads(profile.read_text())
    typo["training"]["efficency"] = 0.5
    bad.write_text(json.dumps(typo))
    _one_error_line(run(["sweep", "--params", "1e9", "--tokens", "2e10", "--profile", str(bad)]), "--profile", "efficency")
    assert not (tmp_path / "never.json").exists()


SERVE = ["--arch", "llama", "--gpu", "a100", "--tp", "1", "--context", "2048"]


def _decode(shape, options, profile=None, batch=1):
    extra = [] if profile is None else ["--profile", str(profile)]
    [record] = parse_json(run(["cost", shape, *options, "--serve", "--batch", str(batch), *extra, "--format", "json"]))
    return record


def test_a_measured_time_per_output_token_is_reproduced_by_cost_serve(tmp_path):
    record, profile = _calibrate(tmp_path, "32x4096", SERVE, "--time-per-output-token", "0.0125")
    assert json.loads(profile.read_text())["serving"]["efficiency"] == pytest.approx(record["serving_efficiency"])
    assert _decode("32x4096", SERVE, profile)["serve"]["decode_seconds_per_token"] == pytest.approx(0.0125, rel=0.01)


def test_a_measured_decode_rate_is_the_whole_batchs(tmp_path):
    _, profile = _calibrate(tmp_path, "32x4096", SERVE, "--decode-tokens-per-second", "1200", "--batch", "16")
    assert _decode("32x4096", SERVE, profile, batch=16)["serve"]["decode_tokens_per_second"] == pytest.approx(1200, rel=0.01)


def test_a_vllm_serving_log_gives_its_median_tpot(tmp_path):
    """vLLM benchmarks/benchmark_serving.py (vllm-project/vllm @8668d7c0, benchmark()): each figure a label
    padded to 40 columns and its value; the median time per output token is the decode step measured."""
    log = tmp_path / "serving.txt"
    log.write_text("============ Serving Benchmark Result ============\n"
                   + "".join(f"{label + ':':<40}{value:<10}\n" for label, value in (
                       ("Successful requests", "1000"), ("Output token throughput (tok/s)", "2104.33"),
                       ("Mean TTFT (ms)", "61.20"), ("Median TTFT (ms)", "55.71"),
                       ("Mean TPOT (ms)", "17.02"), ("Median TPOT (ms)", "16.40")))
                   + "==================================================\n")
    record, profile = _calibrate(tmp_path, "32x4096", SERVE, "--serving-log", str(log))
    assert "vLLM" in record["measurement"]["source"]
    assert record["decode_seconds_per_token"] == pytest.approx(0.01640, rel=0.01)


def test_each_section_applies_to_its_own_figures(tmp_path):
    """A serving profile leaves the training step alone, a training profile the decode step; a profile with
    both sections (written by hand from two calibrations) applies each."""
    plain = _decode("24x2048", SMALL)
    _, training = _calibrate(tmp_path, "24x2048", SMALL, "--step-seconds", "1.7")
    served_dir = tmp_path / "served"
    served_dir.mkdir()
    _, serving = _calibrate(served_dir, "24x2048", SMALL, "--time-per-output-token", "0.004")
    by_training, by_serving = _decode("24x2048", SMALL, training), _decode("24x2048", SMALL, serving)
    assert by_training["run"]["step_seconds"] == pytest.approx(1.7, rel=0.01)
    assert by_training["serve"]["decode_seconds_per_token"] == pytest.approx(plain["serve"]["decode_seconds_per_token"], rel=1e-9)
    assert by_serving["run"]["step_seconds"] == pytest.approx(plain["run"]["step_seconds"], rel=1e-9)
    assert by_serving["serve"]["decode_seconds_per_token"] == pytest.approx(0.004, rel=0.01)
    both = json.loads(training.read_text())
    both["serving"] = json.loads(serving.read_text())["serving"]
    training.write_text(json.dumps(both))
    record = _decode("24x2048", SMALL, training)
    assert (record["run"]["step_seconds"], record["serve"]["decode_seconds_per_token"]) == pytest.approx((1.7, 0.004), rel=0.01)


def test_a_profile_with_no_section_or_a_stray_key_is_one_line(tmp_path):
    _, profile = _calibrate(tmp_path, "24x2048", SMALL, "--time-per-output-token", "0.004")
    data = json.loads(profile.read_text())
    for broken in ({k: v for k, v in data.items() if k != "serving"}, {**data, "serving": {**data["serving"], "decode": 1}}):
        profile.write_text(json.dumps(broken))
        out = run(["cost", "24x2048", *SMALL, "--profile", str(profile)])
        assert out.code == 2 and len(out.error_lines) == 1 and "--profile" in out.stderr and not out.stdout


@pytest.mark.parametrize("args,words", [
    (["--step-seconds", "2", "--tokens-per-second", "1e5"], ["measurement", "one of"]),
    (["--step-seconds", "2", "--time-per-output-token", "0.01"], ["measurement", "serving"]),
    (["--time-per-output-token", "0"], ["--time-per-output-token"]),
    ([], ["measurement", "(none)"]),
    (["--step-seconds", "-2"], ["--step-seconds"]),
    (["--step-seconds", "0.001"], ["--step-seconds", "faster than the model"]),
    (["--step-seconds", "2", "--warmup", "2"], ["--warmup"]),
    (["--step-seconds", "2", "--mfu", "0.4"], ["--mfu"]),
])
def test_bad_measurements_are_one_line(tmp_path, args, words):
    out = tmp_path / "x.json"
    _one_error_line(run(["calibrate", "24x2048", *SMALL, *args, "--out", str(out)]), *words)
    assert not out.exists()
