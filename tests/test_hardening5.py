"""Hardening, round five (issue 40): one regression test per finding of the outside stress test,
each a variant of the reported command. Expected values come from formulas written here, the
issue's own numbers, published figures (cited) or the tool's documented limits."""
from __future__ import annotations

import io
import json
import math
import re

import pytest

from conftest import ROOT, assert_bad_input, parse_json, parse_jsonl, run, run_sub

LLAMA_7B = str(ROOT / "tests" / "configs" / "llama-7b.json")
H100_BF16 = 989.5e12  # NVIDIA H100 SXM dense BF16 FLOP/s (arch/hardware.py's row and its source)


def first(records):
    return records[0] if isinstance(records, list) else records


def warnings_of(out) -> list[str]:
    return [line for line in out.error_lines if line.startswith("depthwidth: warning:")]


# ---- HIGH: the same figures in every format ----------------------------------------------------------

def test_cost_at_an_absurd_mfu_is_refused():
    """`cost 12x768 --tokens 1e40 --mfu 1e-300` printed days inf and tokens/s 0 where its JSON said null."""
    assert_bad_input(run(["cost", "12x768", "--tokens", "1e40", "--mfu", "1e-300"]), "from 0.001 to 1")


def test_cost_table_shows_the_figures_its_json_holds():
    """At the edge of what is accepted (--mfu 0.001, --tokens 1e50) the table shows the JSON's
    numbers: tokens/s 1.1e-06, not 0; days and GPU-hours as numbers, never inf."""
    args = ["cost", "100000x1000000", "--tokens", "1e50", "--mfu", "0.001", "--gpus", "8"]
    r = first(parse_json(run([*args, "--format", "json"])))
    L, d, T = 100_000, 1_000_000, 2048
    flops_per_token = 6 * 12 * L * d**2 + 12 * L * T * d  # 6·N + attention over T (run.py; no vocabulary)
    rate = 0.001 * H100_BF16 * 8 / flops_per_token
    r = r["run"]
    assert r["tokens_per_second"] == pytest.approx(rate, rel=1e-9)
    assert r["train_days"] == pytest.approx(1e50 / rate / 86400, rel=1e-9)
    table = run([*args, "--wide"]).stdout
    assert "inf" not in table and f"{rate:.3g}" in table
    assert f"{r['train_days']:.3g}" in table and f"{r['train_gpu_hours']:.3g}" in table


def test_a_figure_past_the_float_range_is_null_with_its_reason():
    """predict's guard: inf, NaN or an underflow to 0 becomes null and a note names the fields."""
    from depthwidth.cost.perf.predict import overflowed

    record = {"train_days": math.inf, "tokens_per_second": 0.0, "step_seconds": 2.0, "train_gpu_hours": math.nan}
    notes = overflowed(record)
    assert record == {"train_days": None, "tokens_per_second": None, "step_seconds": 2.0, "train_gpu_hours": None}
    assert len(notes) == 1 and all(name in notes[0] for name in ("train_days", "tokens_per_second", "train_gpu_hours"))
    assert overflowed({"train_days": 3.0}) == []


# ---- HIGH: more pipeline stages than layers -------------------------------------------------------------

@pytest.mark.parametrize("args, needle", [
    (["compare", "--deep", "12x768", "--shallow", "6x1024", "--pp", "4096"], "12 layers of --deep 12x768"),
    (["compare", "--deep", "12x768", "--shallow", "6x1024", "--pp", "16"], "12 layers of --deep 12x768"),
    (["compare", "--deep", "12x768", "--shallow", "6x1024", "--pp", "7"], "6 layers of --shallow 6x1024"),
    (["inspect", LLAMA_7B, "--pp", "4096"], "32 layers"),
    (["cost", "12x768", "--pp", "16"], "12 layers of 12x768"),
    (["sweep", "-p", "1e8", "--pp", "4096"], "--depths from 4096"),
    (["plan", "--params", "1e8", "--pp", "4096"], "deepest shape this plan considers"),
])
def test_more_stages_than_layers_is_an_input_error(args, needle):
    line = assert_bad_input(run(args), "bad --pp")
    assert needle in line


def test_the_acceptance_command_exits_2_as_a_process():
    """The public check runs `compare --deep 12x768 --shallow 6x1024 --pp 16` as a process."""
    out = run_sub(["compare", "--deep", "12x768", "--shallow", "6x1024", "--pp", "16"])
    assert out.code == 2 and "Traceback" not in out.stderr and len(out.error_lines) == 1


def test_plan_leaves_shapes_shallower_than_the_stages_out():
    """plan --params 1e8 --pp 16 (the minimal depth is 7): the pick and every candidate hold 16 layers or
    more; the minimal-depth shape keeps its theory, its costs are null with the reason."""
    p = first(parse_json(run(["plan", "--params", "1e8", "--pp", "16", "--format", "json"])))
    assert p["threshold"]["min_depth"] < 16 <= p["recommended"]["depth"]
    assert p["candidates"] and all(c["depth"] >= 16 for c in p["candidates"])
    assert "train_memory_per_gpu_bytes" not in p and any("fewer layers than --pp 16" in n for n in p["notes"])


def test_plan_deepens_a_rule_pick_shallower_than_the_stages():
    p = first(parse_json(run(["plan", "--params", "1e8", "--pp", "30", "--rule", "threshold", "--format", "json"])))
    assert p["recommended"]["depth"] >= 30 and all(c["depth"] >= 30 for c in p["candidates"])
    assert any(w.startswith("--pp 30: the recommended shape") for w in p["warnings"])


def test_sweep_rows_deep_enough_are_costed():
    rows = parse_json(run(["sweep", "-p", "1e8", "--pp", "16", "--depths", "16:24:4", "--tokens", "2e9", "--format", "json"]))
    assert [r["depth"] for r in rows] == [16, 20, 24] and all(r["run"]["train_gpu_hours"] for r in rows)


# ---- MEDIUM: one --mfu range ---------------------------------------------------------------------------

MFU_COMMANDS = [["cost", "12x768", "--tokens", "2e10"], ["plan", "-p", "1e8", "--tokens", "2e9"],
                ["sweep", "-p", "1e8", "--tokens", "2e9", "--count", "2"], ["compare", "--deep", "12x768", "--shallow", "6x1024"],
                ["inspect", LLAMA_7B]]


@pytest.mark.parametrize("args", MFU_COMMANDS, ids=lambda a: a[0])
def test_one_mfu_range_in_every_command(args):
    """cost took 0.0001 and 1e-300 while plan, sweep and compare refused below 0.001."""
    lines = {assert_bad_input(run([*args, "--mfu", value]), "--mfu").split("': ", 1)[1] for value in ("0.0001", "1e-300", "1.5")}
    assert lines == {"expected a model FLOPs utilization from 0.001 to 1, such as 0.4"}
    assert run([*args, "--mfu", "0.001", "--format", "json"]).code == 0
    assert "from 0.001 to 1" in " ".join(run([args[0], "--help"]).stdout.split())


# ---- MEDIUM: the warnings --help promises ------------------------------------------------------------------

def test_compare_warns_when_the_stages_do_not_divide_a_depth():
    """--pp's help: "one that does not divide a depth is warned about"; compare --pp 7 on 12 and 6
    layers said nothing (7 > 6 is now an error, above), --pp 5 divides neither."""
    assert "is warned about by cost, compare and inspect" in " ".join(run(["compare", "--help"]).stdout.split())
    out = run(["compare", "--deep", "12x768", "--shallow", "6x1024", "--pp", "5"])
    assert out.code == 0
    said = warnings_of(out)
    assert any("--pp 5 does not divide the 12 layers" in w and f"{math.ceil(12 / 5) * 5 / 12:.3f}x" in w for w in said)
    assert any("--pp 5 does not divide the 6 layers" in w and f"{math.ceil(6 / 5) * 5 / 6:.3f}x" in w for w in said)
    assert not warnings_of(run(["compare", "--deep", "12x768", "--shallow", "6x1024", "--pp", "3"]))


def test_inspect_warns_when_the_stages_do_not_divide_its_depth():
    assert any("--pp 5 does not divide the 32 layers" in w for w in warnings_of(run(["inspect", LLAMA_7B, "--pp", "5"])))


def test_compare_tp_and_multiple_warn_as_their_help_says():
    said = warnings_of(run(["compare", "--deep", "12x768", "--shallow", "6x1024", "--tp", "5", "--multiple", "100"]))
    assert len(said) == 2 and all("tp 5" in w and "multiple of 100" in w for w in said)


# ---- MEDIUM: the JSON carries the days the text prints -------------------------------------------------------

def test_recommended_time_to_target_is_in_the_json_without_tokens():
    """recommended_time_to_target_days was null unless --tokens was given, while `why` printed the days."""
    p = first(parse_json(run(["plan", "--params", "1e8", "--format", "json"])))
    days = p["recommended"]["run"]["time_to_target_days"]
    # where loss decides, why says "N days to the target loss"; where time decides, "N days of training": the same figure
    printed = float(re.search(r"([0-9.e+-]+) days (?:to the target loss|of training)", p["why"])[1])
    assert days is not None and days == pytest.approx(printed, rel=5e-3)  # why prints 3 significant digits
    assert p["setup"]["tokens_assumed"] is True  # and says the length is the assumed one, as for train_days


# ---- MEDIUM: layer-schedule keys against the layer count -------------------------------------------------------

def _inspect(tmp_path, config: dict):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    return run(["inspect", str(path), "--format", "json"])


DEEPSEEK_V3 = {"model_type": "deepseek_v3", "architectures": ["DeepseekV3ForCausalLM"], "num_hidden_layers": 61,
               "hidden_size": 7168, "num_attention_heads": 128}


def test_deepseek_v3_first_k_dense_replace_past_its_layers_is_refused(tmp_path):
    """first_k_dense_replace 1000 on 61 layers was read as all-dense: 35.6B for 669B."""
    line = assert_bad_input(_inspect(tmp_path, {**DEEPSEEK_V3, "first_k_dense_replace": 1000}), "first_k_dense_replace = 1000")
    assert "from 0 to 61" in line


def test_deepseek_v3_with_its_own_schedule_counts_its_experts(tmp_path):
    """DeepSeek-V3: 671B parameters in total (DeepSeek-AI 2024, arXiv 2412.19437, abstract), of which the
    embedding and the untied head are 2 x 129,280 x 7,168 (its config.json): ~669.1B non-embedding."""
    r = first(parse_json(_inspect(tmp_path, {**DEEPSEEK_V3, "first_k_dense_replace": 3})))
    assert r["params_nonembedding"] == pytest.approx(671e9 - 2 * 129_280 * 7_168, rel=5e-3)


@pytest.mark.parametrize("extra, key, accepted", [
    ({"moe_layer_freq": 100}, "moe_layer_freq", "from 1 to 61"),
    ({"moe_layer_freq": 0}, "moe_layer_freq", "from 1 to 61"),
    ({"first_k_dense_replace": -1}, "first_k_dense_replace", "from 0 to 61"),
    ({"layer_types": ["full_attention"] * 60}, "layer_types", "one entry per layer (61)"),
])
def test_other_schedule_keys_are_checked_against_the_layers(tmp_path, extra, key, accepted):
    assert accepted in assert_bad_input(_inspect(tmp_path, {**DEEPSEEK_V3, **extra}), key)


def test_qwen_and_llama4_schedule_keys_are_checked(tmp_path):
    qwen = {"model_type": "qwen2_moe", "num_hidden_layers": 24, "hidden_size": 2048, "num_attention_heads": 16}
    assert "from 1 to 24" in assert_bad_input(_inspect(tmp_path, {**qwen, "decoder_sparse_step": 100}), "decoder_sparse_step")
    assert "from 0 to 23" in assert_bad_input(_inspect(tmp_path, {**qwen, "mlp_only_layers": [24]}), "mlp_only_layers")
    llama4 = {"model_type": "llama4_text", "num_hidden_layers": 48, "hidden_size": 5120, "num_attention_heads": 40}
    assert "from 0 to 47" in assert_bad_input(_inspect(tmp_path, {**llama4, "moe_layers": [1, 3, 99]}), "moe_layers")


def test_a_family_default_past_a_small_depth_is_read_as_transformers_builds_it(tmp_path):
    """A two-layer DeepSeek-V3 that leaves first_k_dense_replace to its default (3): transformers builds
    two dense layers (DeepseekV3DecoderLayer: experts from layer_idx >= first_k_dense_replace), and so
    does depthwidth; only the keys a file gives are checked."""
    r = first(parse_json(_inspect(tmp_path, {**DEEPSEEK_V3, "num_hidden_layers": 2})))
    assert r["params_nonembedding"] == r["params_active"]  # no experts: every parameter is active


# ---- LOW: --field with --format json -----------------------------------------------------------------------

def test_field_with_json_prints_objects_of_the_named_fields():
    full = first(parse_json(run(["plan", "--params", "1e9", "--format", "json"])))
    cut = parse_json(run(["plan", "--params", "1e9", "--field", "recommended_depth", "--field", "run.gpus", "--format", "json"]))
    assert cut == [{"recommended.depth": full["recommended"]["depth"], "setup.gpus": full["setup"]["gpus"]}]  # old names: new paths
    lines = parse_jsonl(run(["plan", "--params", "1e9", "--field", "threshold.min_depth", "--format", "jsonl"]))
    assert lines == [{"threshold.min_depth": full["threshold"]["min_depth"]}]


def test_field_with_json_in_brief_columns_grids_and_single_records():
    brief = parse_json(run(["plan", "-p", "1e9", "-p", "1e12", "--brief", "--format", "json"]))
    cut = parse_json(run(["plan", "-p", "1e9", "-p", "1e12", "--brief", "--field", "min_depth", "--format", "json"]))
    assert cut == [{"min_depth": r["min_depth"]} for r in brief]
    grid = parse_jsonl(run(["bounds", "--depth", "3:4", "--width", "64", "--field", "depth", "--field", "regime", "--format", "jsonl"]))
    assert grid == [{"depth": 3, "regime": "depth-efficient"}, {"depth": 4, "regime": "depth-inefficient"}]  # 27 < 64 < 81
    one = parse_json(run(["compare", "--deep", "12x768", "--shallow", "6x1024", "--field", "deep.depth", "--format", "json"]))
    assert one == {"deep.depth": 12}
    bare = run(["bounds", "--depth", "3:4", "--width", "64", "--field", "depth", "--format", "csv"])
    assert bare.stdout == "3\n4\n"  # CSV and the table keep the bare values for $(...)


# ---- LOW: --tokens capped like --params -----------------------------------------------------------------------

@pytest.mark.parametrize("args", [["plan", "-p", "1e9", "--tokens", "1e60"], ["plan", "--tokens", "1e51"],
                                  ["cost", "12x768", "--tokens", "1e51"], ["sweep", "-p", "1e9", "--tokens", "1e51"],
                                  ["compare", "--deep", "12x768", "--shallow", "6x1024", "--tokens", "1e51"]],
                         ids=lambda a: " ".join(a))
def test_tokens_are_capped_at_1e50(args):
    assert "1e50" in assert_bad_input(run(args), None)


def test_tokens_at_the_cap_are_accepted():
    assert run(["cost", "12x768", "--tokens", "1e50", "--mfu", "0.4", "--format", "json"]).code == 0
    assert run(["plan", "-p", "1e9", "--tokens", "1e50", "--mfu", "0.4", "--format", "json"]).code == 0


# ---- LOW: progress on stderr, only on a terminal ------------------------------------------------------------

class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_draws_on_a_terminal_and_nowhere_else():
    from depthwidth.cli.progress import LateProgress, counted

    shown = Terminal()
    bar = LateProgress("plan: budgets", delay=0, stream=shown)
    bar(1, 3)
    bar.close()
    assert "plan: budgets" in shown.getvalue()
    quiet = io.StringIO()  # not a terminal: nothing, however long the work
    assert list(counted([1, 2, 3], "cost: shapes", stream=quiet)) == [1, 2, 3] and quiet.getvalue() == ""


def test_late_status_draws_on_a_terminal_only():
    import time

    from depthwidth.cli.progress import late_status

    shown = Terminal()
    with late_status("fit: reading", delay=0, stream=shown):
        for _ in range(200):  # until the timer thread has drawn (a bounded wait, no assertion on time)
            if "fit: reading" in shown.getvalue():
                break
            time.sleep(0.05)
    assert "fit: reading" in shown.getvalue()
    quiet = io.StringIO()
    with late_status("fit: reading", delay=0, stream=quiet):
        pass
    assert quiet.getvalue() == ""


@pytest.mark.parametrize("args, data", [(["plan", "--params", "-", "--format", "csv"], "1e8\n2e8\n"),
                                        (["cost", "-", "--format", "csv"], "12x768\n24x1024\n"),
                                        (["certify", "2x8x1", "--format", "csv"], None)])
def test_nothing_extra_on_stderr_off_a_terminal(args, data):
    out = run_sub(args, input=data)
    assert out.code == 0
    assert all(line.startswith("depthwidth: warning:") for line in out.error_lines), out.stderr


# ---- LOW: one spelling of stdin, one smallest budget ---------------------------------------------------------

def test_standard_input_is_spelled_one_way():
    out = run(["inspect", "-"], input="not json")
    line = assert_bad_input(out, "'standard input'")
    assert "<stdin>" not in line
    r = first(parse_json(run(["inspect", "-", "--format", "json"], input=open(LLAMA_7B).read())))
    assert r["source"] == "standard input"
    from depthwidth.core.errors import InputError
    from depthwidth.core.userfile import read_bytes

    with pytest.raises(InputError, match="bad config 'standard input': larger than"):
        read_bytes("-", "config", limit=10, stdin=io.BytesIO(b"x" * 20))


def _smallest(out) -> float:
    return float(re.search(r"smallest budget it can plan is about ([0-9.e+]+)", assert_bad_input(out, "too small"))[1])


def test_one_smallest_budget_for_mixtral():
    """mixtral's smallest plannable budget was 3.9e7 in one message and 4.1e7 in another (a 10% ladder
    from each refused budget): every refused budget below it now names one figure, a budget that plans,
    while the grid point below it (10^(-1/50) lower) is refused."""
    figures = {_smallest(run(["plan", "-p", budget, "--arch", "mixtral"])) for budget in ("1e3", "1e5", "1e6", "1e7")}
    figures.add(_smallest(run(["plan", "-p", "1e5", "--brief", "--arch", "mixtral"])))
    [figure] = figures
    assert run(["plan", "-p", f"{figure * 1.005:.6g}", "--arch", "mixtral", "--format", "json"]).code == 0
    assert run(["plan", "-p", f"{figure * 10 ** (-1 / 50):.6g}", "--arch", "mixtral"]).code == 2


# ---- Many budgets: the full plan points to --brief ---------------------------------------------------------------

def test_the_full_plan_over_many_budgets_points_to_brief(monkeypatch):
    """Over BRIEF_HINT (1,000) budgets the full plan says once that --brief answers them all at once;
    the threshold is lowered here so that the test plans four budgets, not a thousand."""
    from depthwidth.cli.commands import plan as plan_command

    assert plan_command.BRIEF_HINT == 1000
    monkeypatch.setattr(plan_command, "BRIEF_HINT", 3)
    budgets = "1e8\n2e8\n3e8\n4e8\n"
    hinted = [w for w in warnings_of(run(["plan", "--params", "-", "--format", "csv"], input=budgets)) if "--brief" in w]
    assert len(hinted) == 1 and "4 budgets planned one at a time" in hinted[0]
    quiet = run(["plan", "--params", "-", "--format", "csv"], input=budgets[:12])
    assert not [w for w in warnings_of(quiet) if "--brief" in w]
