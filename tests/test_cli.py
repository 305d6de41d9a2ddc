"""The command line end to end: every command and format, in-process (Typer's CliRunner) and as
a subprocess (``python -m depthwidth``), with the reference card's numbers as expected values.

The helpers (``run``, ``run_sub``, ``parse_json``...) live in conftest.py.
"""
from __future__ import annotations

import csv
import io
import json
import math
import os
import subprocess
import sys

import pytest

from conftest import FORMATS, ROOT, parse_csv, parse_json, parse_jsonl, run, run_sub  # noqa: F401 (shared helpers)
from depthwidth import __version__


# ---- plan ----------------------------------------------------------------------------------------

def test_plan_json_matches_reference_card():
    [record] = parse_json(run(["plan", "--params", "1e9", "--rule", "levine-fit", "--format", "json"]))
    assert record["budget"]["value"] == 10**9 and record["budget"]["count"] == "params_nonembedding"
    assert record["budget"]["source"] == "params"
    assert record["threshold"]["min_depth"] == 8
    assert record["threshold"]["min_depth_exact"] == pytest.approx(7.390, abs=5e-4)
    assert record["threshold"]["width"] == 3200
    assert record["threshold"]["width_exact"] == pytest.approx(3227.486, abs=5e-4)
    assert record["threshold"]["heads"] == 50
    assert record["threshold"]["params_nonembedding"] == record["threshold"]["params_12Ld2"] == 12 * 8 * 3200**2
    assert record["threshold"]["budget_deviation"] == pytest.approx(12 * 8 * 3200**2 / 1e9 - 1)
    assert record["rule"]["empirical_depth"] == pytest.approx(40.23, abs=0.01)
    assert record["rule"]["empirical_width"] == pytest.approx(1439, abs=1)
    # 8x3200's 50 heads cannot split 8 ways, and a 1B plan lists only shapes that can: 9x3072 is the shallowest listed
    assert record["candidates"][0]["depth"] == 9 and record["candidates"][0]["width"] == 3072
    assert {"depth", "width", "heads", "params_12Ld2", "params_nonembedding", "budget_deviation", "threshold_depth", "regime", "log3_sep_lower",
            "log3_sep_upper", "lower_vacuous", "notes", "aspect_ratio", "tp_sizes", "kv_heads", "ffn"} <= set(record["candidates"][0])
    # the valid shape nearest the fit's 40.2 layers is 35x1536 (8-way widths step by 512 at 1B); none deeper is listed
    assert max(c["depth"] for c in record["candidates"]) == record["recommended"]["depth"] == 35


@pytest.mark.parametrize("budget", ["1e9", "1_000_000_000", "1000M", "1B", "1b", "0.001T", "1000000K", " 1e9 "])
def test_plan_budget_spellings_agree(budget):
    assert run(["plan", "--params", budget, "--field", "budget.value"]).stdout == "1000000000\n"


def test_plan_other_reference_budgets():
    records = parse_json(run(["plan", "--params", "1e7", "--params", "1e12", "--format", "json"]))
    assert [r["threshold"]["min_depth"] for r in records] == [6, 11]
    assert records[0]["threshold"]["min_depth_exact"] == pytest.approx(5.434, abs=5e-4)
    assert records[0]["threshold"]["width_exact"] == pytest.approx(372.7, abs=0.05)
    assert records[1]["threshold"]["min_depth_exact"] == pytest.approx(10.380, abs=5e-4)
    assert records[1]["threshold"]["width_exact"] == pytest.approx(87038.8, abs=0.05)


def test_plan_repeated_params_is_one_array_in_order():
    records = parse_json(run(["plan", "--params", "1e9", "--params", "350M", "--format", "json"]))
    assert isinstance(records, list) and len(records) == 2
    assert [r["budget"]["value"] for r in records] == [10**9, 350 * 10**6]


def test_plan_single_budget_is_still_an_array():
    assert isinstance(parse_json(run(["plan", "-p", "1e9", "-f", "json"])), list)


def test_plan_flops_and_tokens_say_their_source():
    # 1e20, not 1.2e20: with flash attention by default (issue 41), 23x1792 and 24x1792 trade places at 1.2e20
    # as the length moves between the two lengths that would make each spend C, so no length makes the pick spend it
    [flops] = parse_json(run(["plan", "--flops", "1e20", "--format", "json"]))
    assert flops["budget"]["source"] == "flops"
    # sized with the FLOPs the costs count (attention and logits on top of 6·N): below sqrt(C/120) = 9.1e8
    # (C = 6ND, D = 20N), and the pick trained on its tokens spends C (issue 30)
    assert 0.85 * math.sqrt(1e20 / 120) < flops["budget"]["value"] < math.sqrt(1e20 / 120)
    assert flops["recommended"]["run"]["train_flops"] == pytest.approx(1e20, rel=1e-9)
    [tokens] = parse_json(run(["plan", "--tokens", "2e10", "--format", "json"]))
    assert tokens["budget"]["source"] == "tokens"
    assert tokens["budget"]["value"] == 10**9
    table = run(["plan", "--tokens", "2e10"])
    assert table.code == 0 and "tokens" in table.stdout


def test_plan_table_shows_the_key_numbers():
    out = run(["plan", "--params", "1e9", "--explain"])
    assert out.code == 0 and out.stderr == ""
    for text in ("minimal depth", "7.390", "8x3200x50", "3,227.5", "50", "40.2", "1,439", "Candidate shapes",
                 "depth-inefficient", "Kaplan"):
        assert text in out.stdout, text


def test_plan_jsonl_csv_and_field():
    budgets = ["--params", "1e9", "--params", "1e12"]
    lines = parse_jsonl(run(["plan", *budgets, "--format", "jsonl"]))
    assert [r["threshold"]["min_depth"] for r in lines] == [8, 11]
    rows = parse_csv(run(["plan", *budgets, "--format", "csv"]))
    assert [r["threshold.min_depth"] for r in rows] == ["8", "11"]
    assert rows[0]["threshold.width"] == "3200" and "candidates" not in rows[0]  # lists of records are left to JSON
    assert float(rows[0]["threshold.min_depth_exact"]) == pytest.approx(7.3903, abs=1e-4)
    assert run(["plan", *budgets, "--field", "threshold.min_depth"]).stdout == "8\n11\n"
    assert run(["plan", *budgets, "--field", "budget.source"]).stdout == "params\nparams\n"


def test_plan_align_and_head_dim():
    [record] = parse_json(run(["plan", "--params", "1e9", "--align", "128", "--head-dim", "128", "--format", "json"]))
    assert record["threshold"]["width"] % 128 == 0
    assert record["threshold"]["heads"] == round(record["threshold"]["width"] / 128)


def test_plan_budgets_from_stdin():
    stdin = "# budgets\n1e9\r\n\n   \n350M  # comment\n"
    records = parse_json(run(["plan", "--params", "-", "--format", "json"], input=stdin))
    assert [r["budget"]["value"] for r in records] == [10**9, 350 * 10**6]


# ---- compare -------------------------------------------------------------------------------------

def test_compare_json_matches_reference_card():
    out = run(["compare", "--deep", "12x768", "--shallow", "6x1086", "--format", "json"])
    record = parse_json(out)
    assert isinstance(record, dict)
    deep, shallow = record["deep"], record["shallow"]
    assert (deep["depth"], deep["width"], deep["heads"]) == (12, 768, 12)
    assert deep["regime"] == "depth-inefficient"
    assert deep["log3_sep_lower"] == pytest.approx(1681.565, abs=5e-4)
    assert deep["log3_sep_upper"] == pytest.approx(11206.654, abs=5e-4)  # consistent c2 reading (card)
    assert deep["c2_reading"] == record["c2_reading"] == "consistent"
    assert (shallow["depth"], shallow["width"], shallow["heads"]) == (6, 1086, 17)
    assert shallow["regime"] == "depth-efficient"
    assert shallow["log3_sep_lower"] == pytest.approx(139.119, abs=5e-4)
    assert shallow["log3_sep_upper"] == pytest.approx(2321.208, abs=5e-4)
    assert shallow["threshold_depth"] == pytest.approx(6.363, abs=5e-4)
    assert record["verdict"] == "no-provable-separation"
    assert record["shallow_respects_threshold"] is False
    assert record["deep_respects_threshold"] is True
    assert record["params_ratio"] == pytest.approx(12 * 768**2 / (6 * 1086**2))
    assert {"log3_gap", "replicate_width", "surpass_width"} <= set(record)
    # 1086 heads-not-dividing warning: on stderr, never in the data
    assert "not divisible" in out.stderr and "warning" not in out.stdout


def test_compare_table_and_field():
    table = run(["compare", "--deep", "12x768", "--shallow", "6x1086", "--explain"])  # issue 45: the bounds behind --explain
    assert table.code == 0
    for text in ("12x768x12", "6x1086x17", "1,681.565", "11,206.654", "139.119", "2,321.208", "no-provable-separation",
                 "sits below the threshold"):
        assert text in table.stdout, text
    assert "warning" not in table.stdout and "not divisible by 17 heads" in table.stderr
    nested = run(["compare", "--deep", "12x768", "--shallow", "6x1086", "--field", "deep"])
    assert json.loads(nested.stdout)["log3_sep_lower"] == pytest.approx(1681.565, abs=5e-4)  # JSON, not Python's repr
    field = run(["compare", "--deep", "12x768", "--shallow", "6x1086", "--field", "deep.regime"])
    assert field.stdout == "depth-inefficient\n"
    assert run(["compare", "--deep", "12x768", "--shallow", "6x1086", "--field", "verdict"]).stdout == "no-provable-separation\n"


def test_compare_jsonl_is_one_line_and_csv_one_row():
    args = ["compare", "--deep", "24x1024x16", "--shallow", "6x1000x16"]
    [line] = parse_jsonl(run([*args, "--format", "jsonl"]))
    assert line["deep"]["log3_sep_lower"] == pytest.approx(8148.015, abs=5e-4)
    assert line["shallow"]["log3_sep_lower"] == pytest.approx(133.010, abs=5e-4)
    [row] = parse_csv(run([*args, "--format", "csv"]))
    assert row["deep.regime"] == "depth-inefficient" and row["shallow.regime"] == "depth-efficient"
    assert float(row["deep.log3_sep_upper"]) == pytest.approx(38988.163, abs=5e-4)
    [literal] = parse_csv(run([*args, "--format", "csv", "--c2-reading", "Literal"]))
    assert float(literal["deep.log3_sep_upper"]) == pytest.approx(36117.861, abs=5e-4) and literal["c2_reading"] == "literal"


# ---- bounds --------------------------------------------------------------------------------------

def test_bounds_stdin_csv_header_and_two_rows():
    out = run(["bounds", "-", "--format", "csv"], input="12x768\n24x1024x16\n")
    assert out.code == 0
    lines = out.stdout.splitlines()
    assert len(lines) == 3 and lines[0].startswith("depth,width,heads,params")
    rows = parse_csv(out)
    assert [(r["depth"], r["width"], r["heads"]) for r in rows] == [("12", "768", "12"), ("24", "1024", "16")]
    assert float(rows[1]["log3_sep_lower"]) == pytest.approx(8148.015, abs=5e-4)


def test_bounds_json_contract_and_values():
    records = parse_json(run(["bounds", "12x768", "6x1000x16", "24x1024x16", "6x729", "--format", "json"]))
    keys = {"depth", "width", "heads", "params_12Ld2", "threshold_depth", "regime", "log3_sep_lower", "log3_sep_upper",
            "lower_vacuous", "notes"}
    assert all(keys <= set(r) for r in records)
    assert records[1]["log3_sep_lower"] == pytest.approx(133.010, abs=5e-4)
    assert records[1]["log3_sep_upper"] == pytest.approx(2293.986, abs=5e-4)
    assert records[2]["log3_sep_upper"] == pytest.approx(38988.163, abs=5e-4)
    literal = parse_json(run(["bounds", "12x768", "24x1024x16", "--format", "json", "--c2-reading", "literal"]))
    assert [round(r["log3_sep_upper"], 3) for r in literal] == [9053.928, 36117.861]
    assert {r["c2_reading"] for r in literal} == {"literal"}
    threshold = records[3]
    assert threshold["regime"] == "threshold"
    assert threshold["log3_sep_lower"] is None and threshold["log3_sep_upper"] is None and threshold["notes"]


def test_bounds_negative_upper_is_null_with_a_note():
    """Only the literal reading of c2 gives 6x704 a negative upper bound (null, with a note)."""
    [record] = parse_json(run(["bounds", "6x704", "--format", "json", "--c2-reading", "literal"]))
    assert record["log3_sep_upper"] is None and any("unavailable" in n for n in record["notes"])
    [consistent] = parse_json(run(["bounds", "6x704", "--format", "json"]))
    assert consistent["log3_sep_upper"] > 0 and consistent["lower_vacuous"] is True


def test_compare_no_false_verdict_for_a_tiny_deep_network():
    args = ["compare", "--deep", "10x4827x16", "--shallow", "10x53600x16", "--field", "verdict"]
    assert run(args).stdout == "no-provable-separation\n"
    assert run([*args, "--c2-reading", "literal"]).stdout == "deep-more-expressive\n"
    bad = run([*args, "--c2-reading", "loose"])
    assert bad.code == 2 and "--c2-reading" in bad.stderr and bad.stdout == ""


def test_bounds_heads_option_and_catalogue_name():
    [record] = parse_json(run(["bounds", "12x768", "--heads", "4", "--format", "json"]))
    assert record["heads"] == 4
    [named] = parse_json(run(["bounds", "bert-base", "--format", "json"]))
    assert (named["depth"], named["width"], named["heads"]) == (12, 768, 12)


def test_bounds_every_format_agrees():
    shapes = ["12x768", "24x1024x16"]
    as_json = parse_json(run(["bounds", *shapes, "--format", "json"]))
    assert parse_jsonl(run(["bounds", *shapes, "--format", "jsonl"])) == as_json
    rows = parse_csv(run(["bounds", *shapes, "--format", "csv"]))
    assert [float(r["log3_sep_upper"]) for r in rows] == [r["log3_sep_upper"] for r in as_json]
    field = run(["bounds", *shapes, "--field", "log3_sep_lower"]).stdout.split()
    assert [float(v) for v in field] == [r["log3_sep_lower"] for r in as_json]
    table = run(["bounds", *shapes])
    assert "1,681.565" in table.stdout and "8,148.015" in table.stdout


def test_bounds_grid_mode_every_format():
    grid = ["bounds", "--depth", "1:3", "--width", "256:768:256"]
    records = parse_json(run([*grid, "--format", "json"]))
    assert [(r["depth"], r["width"]) for r in records] == [(d, w) for d in (1, 2, 3) for w in (256, 512, 768)]
    assert parse_jsonl(run([*grid, "--format", "jsonl"])) == records
    rows = parse_csv(run([*grid, "--format", "csv"]))
    assert len(rows) == 9 and rows[0]["regime"] == "depth-efficient"
    assert run([*grid, "--field", "width"]).stdout.split() == ["256", "512", "768"] * 3
    table = run(grid)
    assert table.code == 0 and "depth-efficient" in table.stdout


def test_bounds_grid_matches_scalar_bounds():
    grid = parse_json(run(["bounds", "--depth", "6,12", "--width", "729,768,1000", "--format", "json"]))
    scalar = parse_json(run(["bounds", "6x729", "6x768", "6x1000", "12x729", "12x768", "12x1000", "--format", "json"]))
    for g, s in zip(grid, scalar):
        assert g["regime"] == s["regime"]
        for key in ("log3_sep_lower", "log3_sep_upper"):
            assert (g[key] is None) == (s[key] is None)
            if s[key] is not None:
                assert g[key] == pytest.approx(s[key], rel=1e-12)


# ---- equiv ---------------------------------------------------------------------------------------

def test_equiv_json_matches_reference_card():
    records = parse_json(run(["equiv", "--deep", "6x1000x16", "--depth", "2,3", "--format", "json"]))
    assert [r["shallow_depth"] for r in records] == [2, 3]
    at2, at3 = records
    assert at2["replicate_width"] == 7336209056879055  # exact: below 2^53 (tests/test_solver.py checks it in integers)
    assert at2["replicate_log10_width"] == pytest.approx(15.8655, abs=1e-3)
    assert at3["replicate_width"] == 76137
    assert at3["replicate_basis"] == "Corollary 1" and at3["surpass_basis"] == "from the bounds" and at3["beta1"] is None
    for record in records:
        assert {"replicate_log10_width", "surpass_width", "surpass_log10_width"} <= set(record)


def test_equiv_surpass_reference_value():
    [record] = parse_json(run(["equiv", "--deep", "24x1024x16", "--depth", "12", "--format", "json"]))
    assert record["surpass_width"] == 531442


def test_equiv_formats_range_and_stdin():
    args = ["equiv", "--deep", "6x1000x16", "--depth", "1:3"]
    assert len(parse_jsonl(run([*args, "--format", "jsonl"]))) == 3
    rows = parse_csv(run([*args, "--format", "csv"]))
    assert [r["shallow_depth"] for r in rows] == ["1", "2", "3"] and rows[2]["replicate_width"] == "76137"
    assert rows[0]["replicate_width"] == ""  # null integer width (10^63): empty cell, log10 column present
    assert float(rows[0]["replicate_log10_width"]) == pytest.approx(63.4619, abs=1e-3)
    assert run([*args, "--field", "replicate_width"]).stdout.splitlines()[2] == "76137"
    table = run(args)
    assert "76,137" in table.stdout and "7,336,209,056,879,055" in table.stdout and "10^63.462" in table.stdout
    from_stdin = parse_json(run(["equiv", "--deep", "-", "--depth", "2", "--format", "json"], input="6x1000x16\n12x768\n"))
    assert [r["deep"] for r in from_stdin] == ["6x1000x16", "12x768x12"]


# ---- stdout/stderr discipline, version, help -----------------------------------------------------

def test_heads_warning_goes_to_stderr_not_stdout():
    out = run(["bounds", "12x1000x16", "--format", "json"])
    assert out.code == 0
    assert out.error_lines == ["depthwidth: warning: width 1000 is not divisible by 16 heads (head dimension 62.50)"]
    json.loads(out.stdout)


def test_warnings_are_printed_once_after_the_data():
    out = run(["compare", "--deep", "6x1000x16", "--shallow", "6x1000x16", "--format", "json"])
    assert out.code == 0 and len(out.error_lines) == 1 and "not divisible by 16 heads" in out.stderr


def test_version():
    for out in (run(["--version"]), run_sub(["--version"])):
        assert out.code == 0 and out.stdout == f"depthwidth {__version__}\n" and out.stderr == ""


def test_no_arguments_shows_help_and_exits_zero():
    for out in (run([]), run_sub([])):
        assert out.code == 0, out.stderr
        assert "Usage" in out.stdout and "plan" in out.stdout and out.stderr == ""


@pytest.mark.parametrize("command", ["plan", "compare", "bounds", "equiv"])
def test_help_has_an_example(command):
    out = run([command, "--help"])
    assert out.code == 0 and "Example" in out.stdout and f"depthwidth {command}" in out.stdout


# ---- subprocess: every command and format --------------------------------------------------------

COMMANDS = {
    "plan": ["plan", "--params", "1e9"],
    "compare": ["compare", "--deep", "12x768", "--shallow", "6x1086"],
    "bounds": ["bounds", "12x768", "24x1024x16"],
    "grid": ["bounds", "--depth", "1:4", "--width", "256:1024:256"],
    "equiv": ["equiv", "--deep", "6x1000x16", "--depth", "2,3"],
}


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_subprocess_matches_in_process_and_is_byte_identical_across_runs(name, fmt):
    """A real process prints what the in-process call prints, and a second process (another hash
    seed) prints the same bytes on stdout and stderr."""
    args = [*COMMANDS[name], "--format", fmt]
    sub, inproc = run_sub(args), run(args)
    assert sub.code == 0 and "Traceback" not in sub.stderr
    assert sub.stdout == inproc.stdout
    second = run_sub(args)
    assert second.code == 0
    assert second.stdout == sub.stdout and second.stderr == sub.stderr
    if fmt == "json":
        json.loads(sub.stdout)
    elif fmt == "jsonl":
        [json.loads(line) for line in sub.stdout.splitlines()]
    elif fmt == "csv":
        assert len(list(csv.reader(io.StringIO(sub.stdout)))) >= 2


def test_subprocess_stdin_and_field():
    out = run_sub(["bounds", "-", "--format", "csv"], input="12x768\n24x1024x16\n")
    assert out.code == 0 and len(out.stdout.splitlines()) == 3
    assert run_sub(["plan", "--params", "-", "--field", "min_depth"], input="1e9\n1e12\n").stdout == "8\n11\n"
    assert run_sub(["compare", "--deep", "12x768", "--shallow", "6x1086", "--field", "verdict"]).stdout == "no-provable-separation\n"


def test_subprocess_warning_on_stderr_only():
    out = run_sub(["compare", "--deep", "12x768", "--shallow", "6x1086", "--format", "json"])
    assert out.code == 0
    json.loads(out.stdout)
    assert out.stderr == "depthwidth: warning: width 1086 is not divisible by 17 heads (head dimension 63.88)\n"


# ---- determinism (every command and format: test_subprocess_matches_in_process_and_is_byte_identical_across_runs)

def test_field_output_byte_identical_across_runs():
    args = ["plan", "--params", "1e9", "--params", "1e30", "--field", "empirical_width"]
    assert run_sub(args).stdout == run_sub(args).stdout


# ---- pipes ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("args", [["plan", "--params", "1e9"],
                                  ["bounds", "--depth", "1:400", "--width", "256:8192:64", "--format", "csv"],
                                  ["bounds", "--depth", "1:400", "--width", "256:8192:64", "--format", "json"]])
def test_closed_pipe_is_quiet(args):
    """`depthwidth ... | head -1`: no BrokenPipe traceback, no error message."""
    env = {k: v for k, v in os.environ.items() if k != "DEPTHWIDTH_DEBUG"}
    env["PYTHONPATH"] = str(ROOT)
    proc = subprocess.Popen([sys.executable, "-m", "depthwidth", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=ROOT, env=env)
    proc.stdout.readline()
    proc.stdout.close()  # the reader goes away
    stderr = proc.stderr.read().decode()
    proc.wait(timeout=60)
    assert "Traceback" not in stderr and "BrokenPipe" not in stderr and "Exception ignored" not in stderr
    assert proc.returncode in (0, 1)
