"""Hardening (issue 7): every bad input gets exit 2 and one clear stderr line naming the offending
value, with nothing on stdout and no traceback; every valid extreme input gets a finite, honest
answer (no NaN or Infinity anywhere, JSON that parses)."""
from __future__ import annotations

import json
import math
import re

import pytest

from depthwidth.core.errors import InputError
from conftest import Outcome, all_numbers_finite, assert_bad_input, assert_finite_json_text, parse_json, run, run_sub  # noqa: F401

LONG = 10**5
NON_FINITE = re.compile(r"\b(nan|inf|infinity)\b", re.IGNORECASE)




def shown(value: str) -> str:
    """The part of a value an error line is sure to contain (long values are shortened, escapes repr'd)."""
    return repr(value)[1:-1][:30]


# ---- the message format itself -----------------------------------------------------------------

def test_input_error_message_form():
    assert str(InputError("shape", "12x0", "width must be >= 2")) == "bad shape '12x0': width must be >= 2"
    assert str(InputError("--heads", 0, "expected >= 1")) == "bad --heads '0': expected >= 1"
    err = InputError("shape", "1" * LONG, "expected LxD")
    assert "\n" not in str(err) and len(str(err)) < 200 and f"({LONG} chars)" in str(err)
    path = "/a/rather/long/directory/name/that/goes/on/and/on/and/on/config.json"
    assert "config.json" in str(InputError("config", path, "expected a file"))  # the end of a long value is kept
    assert "(300 bytes)" in str(InputError("standard input", b"\xff" * 300, "expected UTF-8 text"))
    assert "(400 chars)" in str(InputError("--heads", 10**399, "expected >= 1"))
    assert "\n" not in str(InputError("shape", "12x768\nnext", "expected LxD"))
    err = InputError("standard input", b"\xff\xfe", "expected UTF-8 text")
    assert err.what == "standard input" and err.value == b"\xff\xfe" and err.accepted == "expected UTF-8 text"


# ---- budgets -------------------------------------------------------------------------------------

BAD_BUDGETS = ["0", "-1", "-1e9", "nan", "NaN", "inf", "-inf", "Infinity", "1e400", "abc", "", " ", "1e9e9", "1e-5", "99",
               "1.5", "1e51", "1e99999", "１e9", "٣e9", "1,000,000", "1.3.3B", "1BB", "M", "0x10", "1e9 1e9", "1__0", "_1",
               "1e", "e9", "1e9\x00", "9" * LONG, "1e" + "9" * LONG]


@pytest.mark.parametrize("budget", BAD_BUDGETS, ids=lambda b: repr(b)[:30])
def test_bad_params_budget(budget):
    assert_bad_input(run(["plan", "--params", budget]), shown(budget))


@pytest.mark.parametrize("option", ["--flops", "--tokens"])
@pytest.mark.parametrize("budget", ["0", "-5", "nan", "inf", "abc", "", "1e9e9", "1"])
def test_bad_flops_and_tokens(option, budget):
    assert_bad_input(run(["plan", option, budget, "--format", "json"]), shown(budget))


def test_bad_budget_among_good_ones_fails_before_any_output():
    line = assert_bad_input(run(["plan", "--params", "1e9", "--params", "abc", "--format", "json"]), "'abc'")
    assert "budget" in line


# ---- shapes --------------------------------------------------------------------------------------

BAD_SHAPES = ["0x768", "12x0", "12x1", "12x768x0", "12x768x768", "12x768x1000", "-1x768", "12.5x768", "12x", "x768", "12x768x12x3",
              "１２x768", "١٢x768", "12x७६८", "12×768", "12 x 768", "12x768x", "x", "", " ", "1000001x768",
              "12x1000000000000001", "12x768\x00", "12x768\ny", "1" * LONG, "1" * LONG + "x768", "12x" + "7" * LONG,
              "12x768x" + "7" * LONG, "9" * 50 + "x768"]


@pytest.mark.parametrize("shape", BAD_SHAPES, ids=lambda s: repr(s)[:30])
def test_bad_shape_in_bounds(shape):
    assert_bad_input(run(["bounds", shape, "--format", "json"]), shown(shape))


@pytest.mark.parametrize("shape", ["0x768", "12x768x768", "12.5x768", "１２x768", "-1x768", "1" * LONG], ids=lambda s: s[:20])
def test_bad_shape_in_compare_and_equiv(shape):
    assert_bad_input(run(["compare", "--deep", shape, "--shallow", "6x1086"]), shown(shape))
    assert_bad_input(run(["compare", "--deep", "12x768", "--shallow", shape]), shown(shape))
    assert_bad_input(run(["equiv", "--deep", shape, "--depth", "2"]), shown(shape))


def test_bad_shape_says_what_is_accepted():
    assert "expected DEPTHxWIDTH[xHEADS]" in assert_bad_input(run(["bounds", "12x"]), "'12x'")
    assert "H < d" in assert_bad_input(run(["bounds", "12x768x768"]), "'12x768x768'")
    assert "heads" in assert_bad_input(run(["bounds", "12x768", "--heads", "768"]), "12x768")


@pytest.mark.parametrize("name", ["nosuchmodel", "gpt-17", "bert_base_typo", "a" * LONG], ids=lambda s: s[:20])
def test_unknown_model_name(name):
    assert_bad_input(run(["bounds", name]), shown(name))
    assert_bad_input(run(["compare", "--deep", name, "--shallow", "6x1086"]), shown(name))


@pytest.mark.parametrize("heads", ["0", "-1", "x", "1.5", "", "1000000000000000", "1" + "0" * 400], ids=lambda h: h[:20])
def test_bad_heads_option(heads):
    assert_bad_input(run(["bounds", "12x768", "--heads", heads]), shown(heads))
    assert_bad_input(run(["equiv", "--deep", "12x768", "--depth", "2", "--heads", heads]), shown(heads))
    assert_bad_input(run(["bounds", "--depth", "1:2", "--width", "2:9", "--heads", heads]), shown(heads))


# ---- standard input ------------------------------------------------------------------------------

def test_stdin_blank_lines_comments_and_crlf_are_fine():
    records = parse_json(run(["bounds", "-", "--format", "json"],
                             input="\ufeff# shapes\r\n\r\n12x768\r\n   \r\n24x1024x16   # BERT-large\r\n#end"))
    assert [(r["depth"], r["width"]) for r in records] == [(12, 768), (24, 1024)]


@pytest.mark.parametrize("fmt", ["json", "jsonl", "csv", "table"])
def test_stdin_one_bad_line_among_good_ones(fmt):
    assert_bad_input(run(["bounds", "-", "--format", fmt], input="12x768\n24x1024x16\n12x0\n6x1000\n"), "'12x0'")
    assert_bad_input(run(["plan", "--params", "-", "--format", fmt], input="1e9\n\n# x\nabc\n2e9\n"), "'abc'")
    assert_bad_input(run(["equiv", "--deep", "-", "--depth", "2", "--format", fmt], input="6x1000x16\n6x1000x1000\n"),
                     "'6x1000x1000'")


@pytest.mark.parametrize("stdin", ["", "\n\n", "# only a comment\n", "  \r\n# x\r\n"])
def test_stdin_without_inputs(stdin):
    assert_bad_input(run(["bounds", "-"], input=stdin), "standard input")
    assert_bad_input(run(["plan", "--params", "-"], input=stdin), "standard input")


def test_stdin_binary():
    assert_bad_input(run(["bounds", "-"], input=b"\xff\xfe\x00\x01binary\n"), "standard input")
    assert_bad_input(run(["plan", "--params", "-"], input=bytes(range(256))), "standard input")


def test_stdin_huge_line():
    assert_bad_input(run(["bounds", "-"], input="12x768\n" + "9" * LONG + "\n"), "9" * 20)


# ---- options -------------------------------------------------------------------------------------

@pytest.mark.parametrize("args, needle", [
    (["plan", "--params", "1e9", "--flops", "1e20"], "--params --flops"),
    # a budget with its training length is one plan (README "Costs of a training run"); two lengths for three budgets is not
    (["plan", "--params", "1e9", "--params", "2e9", "--params", "3e9", "--tokens", "1e10", "--tokens", "2e10"], "--tokens"),
    (["plan", "--flops", "1e9", "--tokens", "1e10"], "FLOP budget"),  # C/(6·D) = 0.017 parameters
    (["plan", "--params", "1e9", "--tokens", "0"], "--tokens"),
    (["plan"], "--params"),
    (["bounds"], "(none)"),
    (["bounds", "12x768", "--depth", "1:4", "--width", "768"], "12x768"),
    (["bounds", "--depth", "1:4"], "--depth"),
    (["bounds", "--width", "256"], "--width"),
])
def test_conflicting_or_missing_options(args, needle):
    assert_bad_input(run(args), needle)


COMMANDS = [["plan", "--params", "1e9"], ["compare", "--deep", "12x768", "--shallow", "6x1086"],
            ["bounds", "12x768"], ["bounds", "--depth", "1:3", "--width", "256:512:256"],
            ["equiv", "--deep", "6x1000x16", "--depth", "2,3"]]


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: " ".join(a[:2]))
@pytest.mark.parametrize("fmt", ["xml", "", "tables", "json,csv", "jsn"])  # JSON, CSV: accepted (case-insensitive, issue 16)
def test_unknown_format(args, fmt):
    assert_bad_input(run([*args, "--format", fmt]), f"'{fmt}'")


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: " ".join(a[:2]))
@pytest.mark.parametrize("field", ["nope", "", "deep.nope", "candidates.depth", "notes.0", "DEPTH"])
def test_unknown_field(args, field):
    line = assert_bad_input(run([*args, "--field", field, "--format", "json"]), f"'{field}'")
    assert "expected one of" in line


def test_field_error_lists_the_real_fields():
    line = assert_bad_input(run(["compare", "--deep", "12x768", "--shallow", "6x1086", "--field", "deep.nope"]), "deep.nope")
    assert "deep.regime" in line and "verdict" in line


@pytest.mark.parametrize("depth", ["6", "7", "1,6", "2:6", "100"])
def test_equiv_depth_not_below_the_deep_depth(depth):
    line = assert_bad_input(run(["equiv", "--deep", "6x1000x16", "--depth", depth]), f"'{depth}'")
    assert "below" in line


BAD_RANGES = ["0", "-1", "a", "", "2,,3", "2:", ":3", "3:1", "1:3:0", "1:2:3:4", "1.5", "١", "1:" + "9" * LONG,
              "1:99999999", "0:5", " , "]


@pytest.mark.parametrize("text", BAD_RANGES, ids=lambda t: repr(t)[:30])
def test_bad_ranges(text):
    assert_bad_input(run(["equiv", "--deep", "12x768", "--depth", text]), shown(text))
    assert_bad_input(run(["bounds", "--depth", text, "--width", "768"]), shown(text))


@pytest.mark.parametrize("width", ["1:10", "0", "10:1", "2:x", "256:8192:0", "1000000000000001"])
def test_bad_grid_width(width):
    assert_bad_input(run(["bounds", "--depth", "1:4", "--width", width]), shown(width))


def test_grid_with_too_many_rows():
    line = assert_bad_input(run(["bounds", "--depth", "1:1000000", "--width", "2:1000", "--format", "csv"]), "1:1000000")
    assert "100,000,000" in line


def test_grid_too_big_for_a_table():
    line = assert_bad_input(run(["bounds", "--depth", "1:100", "--width", "2:100"]), "'table'")
    assert "csv" in line


def test_grid_heads_not_below_smallest_width():
    assert_bad_input(run(["bounds", "--depth", "1:2", "--width", "2:8", "--heads", "2"]), "'2'")


# ---- usage errors from the option parser, flattened to one line -----------------------------------

@pytest.mark.parametrize("args, needle", [
    (["plan", "--params", "1e9", "--bogus"], "--bogus"),
    (["plan", "--params", "1e9", "--formt", "json"], "--formt"),
    (["compare", "--deep", "12x768"], "--shallow"),
    (["equiv", "--deep", "12x768"], "--depth"),
    (["plan", "--params", "1e9", "--format", "xml"], "'xml'"),
    (["plan", "--params", "1e9", "--align", "x"], "'x'"),
    (["plan", "--params", "1e9", "--align", "0"], "'0'"),
    (["plan", "--params", "1e9", "--head-dim", "1"], "'1'"),
    (["plan", "--params"], "--params"),
    (["nosuchcommand"], "nosuchcommand"),
    (["bounds", "-1x768"], "'-1x768'"),
    (["bounds", "12x768", "-5"], "'-5'"),
    (["plan", "--params", "1e9", "extra"], "extra"),
    (["--bogus"], "--bogus"),
])
def test_usage_errors_are_one_line_exit_2(args, needle):
    assert_bad_input(run(args), needle)


# ---- the same through a real process (a representative subset) ---------------------------------

@pytest.mark.parametrize("args, stdin, needle", [
    (["plan", "--params", "nan"], None, "'nan'"),
    (["plan", "--params", "1e400", "--format", "json"], None, "'1e400'"),
    (["plan", "--params", "1e9", "--flops", "1e20"], None, "--params --flops"),
    (["bounds", "12x768x768", "--format", "csv"], None, "'12x768x768'"),
    (["bounds", "１２x768"], None, "'１２x768'"),
    (["bounds", "-1x768"], None, "'-1x768'"),
    (["bounds", "1" * 20000], None, "1" * 20),
    (["bounds", "nosuchmodel"], None, "'nosuchmodel'"),
    (["bounds", "-", "--format", "json"], "12x768\r\nbad!\r\n24x1024\r\n", "'bad!'"),
    (["bounds", "-"], b"\xff\xfe\xfa", "standard input"),
    (["equiv", "--deep", "6x1000x16", "--depth", "6"], None, "'6'"),
    (["bounds", "--depth", "1:1000000", "--width", "2:1000"], None, "1:1000000"),
    (["compare", "--deep", "12x768", "--shallow", "6x1086", "--field", "nope"], None, "'nope'"),
    (["plan", "--params", "1e9", "--format", "xml"], None, "'xml'"),
    (["plan", "--params", "1e9", "--align", "x"], None, "'x'"),
    (["compare", "--deep", "12x768"], None, "--shallow"),
    (["plan", "--bogus"], None, "--bogus"),
])
def test_bad_input_in_a_real_process(args, stdin, needle):
    assert_bad_input(run_sub(args, input=stdin), needle)


# ---- config files for `inspect` (skipped until the command exists) ------------------------------

def _has_inspect() -> bool:
    return run(["inspect", "--help"]).code == 0


needs_inspect = pytest.mark.skipif(not _has_inspect(), reason="the inspect command is not there yet")


@needs_inspect
@pytest.mark.parametrize("name, content", [
    ("empty.json", b""),
    ("truncated.json", b'{"num_hidden_layers": 12,'),
    ("binary.json", bytes(range(256)) * 4),
    ("list.json", b"[1, 2, 3]"),
    ("string.json", b'"config"'),
    ("nested.json", b"[" * 100000 + b"]" * 100000),
    ("nonfinite.json", b'{"num_hidden_layers": NaN, "hidden_size": 768, "num_attention_heads": 12}'),
    ("zero.json", b'{"num_hidden_layers": 0, "hidden_size": 768, "num_attention_heads": 12}'),
    ("text.json", b'{"num_hidden_layers": "twelve", "hidden_size": 768, "num_attention_heads": 12}'),
    ("nokeys.json", b'{"model_type": "bert"}'),
    ("huge.json", b'{"pad": "' + b"x" * 12_000_000 + b'"}'),
], ids=lambda v: v if isinstance(v, str) else "content")
def test_inspect_bad_config_files(tmp_path, name, content):
    path = tmp_path / name
    path.write_bytes(content)
    for fmt in ("json", "table"):
        assert_bad_input(run(["inspect", str(path), "--format", fmt]), name)


@needs_inspect
def test_inspect_missing_file_and_directory(tmp_path):
    assert_bad_input(run(["inspect", str(tmp_path / "absent.json")]), "absent.json")
    assert_bad_input(run(["inspect", str(tmp_path)]), tmp_path.name[-12:])


@needs_inspect
def test_inspect_bad_config_in_a_real_process(tmp_path):
    path = tmp_path / "truncated.json"
    path.write_bytes(b'{"n_layer": 12,')
    assert_bad_input(run_sub(["inspect", str(path), "--format", "json"]), "truncated.json")
    assert_bad_input(run_sub(["inspect", "-"], input=b"\x00\x01\x02"), "'standard input'")


# ---- extremes: finite, honest answers -----------------------------------------------------------

def finite_records(args: list[str]):
    out = run([*args, "--format", "json"])
    data = parse_json(out)
    assert all_numbers_finite(data)
    for fmt in ("jsonl", "csv", "table"):
        other = run([*args, "--format", fmt])
        assert other.code == 0, other.stderr
        assert not NON_FINITE.search(other.stdout), NON_FINITE.search(other.stdout)
    return data


def test_plan_1e30_is_finite():
    [record] = finite_records(["plan", "--params", "1e30"])
    depth = record["threshold"]["min_depth"]
    assert 12 * depth * 9**depth >= 10**30 > 12 * (depth - 1) * 9 ** (depth - 1)
    assert math.isclose(record["threshold"]["min_depth_exact"], depth, abs_tol=1)
    assert record["candidates"] and record["recommended"]["depth"] >= depth


@pytest.mark.parametrize("budget", ["1e30", "3.8e32"])
def test_plan_extreme_budgets(budget):
    [record] = finite_records(["plan", "--params", budget])
    assert record["threshold"]["width"] >= 2 and 1 <= record["threshold"]["heads"] < record["threshold"]["width"]
    assert record["threshold"]["width"] <= 10**15 and record["threshold"]["params_nonembedding"] < 2**53 * 10**18  # exact integers, never floats


@pytest.mark.parametrize("args", [["--params", "3.9e32"], ["--params", "1e50"], ["--flops", "1e100"]])
def test_plan_budgets_past_the_width_range_are_refused(args):
    """12·32·(10^15)² = 3.84e32: past it the minimal-depth width passes 10^15 (JSON integers past 2^53)."""
    assert 12 * 32 * 10**30 < 3.9e32 and 3 ** 31 < 10**15 < 3 ** 32
    message = assert_bad_input(run(["plan", *args]), "too large to plan")
    assert "10^15" in message


@pytest.mark.parametrize("args", [["--params", "100"], ["--params", "1e3"], ["--tokens", "2000"]])
def test_plan_below_every_valid_shape_is_refused(args):
    """Issue 25: 100 parameters with widths in steps of 128 cannot be planned (1x128 is 12·128² = 196,608,
    1,966x the budget): one line naming about the smallest budget these options can plan."""
    message = assert_bad_input(run(["plan", *args]), "too small")
    assert "smallest budget it can plan is about" in message and "--multiple" in message


def test_plan_extreme_flops_and_tokens():
    finite_records(["plan", "--flops", "1e60"])
    finite_records(["plan", "--tokens", "2e7"])


def test_equiv_replicate_width_of_ten_to_the_hundred_million():
    [record] = finite_records(["equiv", "--deep", "40x100000000", "--depth", "2"])
    assert record["replicate_width"] is None
    assert record["replicate_log10_width"] > 1e8
    assert record["replicate_log10_params"] > 2e8


def test_equiv_replicate_width_of_ten_to_the_million():
    [record] = finite_records(["equiv", "--deep", "60x100000", "--depth", "1"])
    assert record["replicate_width"] is None and 1e6 < record["replicate_log10_width"] < 1e7
    assert "10^1.12664e+06" in run(["equiv", "--deep", "60x100000", "--depth", "1"]).stdout


@pytest.mark.parametrize("args", [
    ["bounds", "10000x768", "1000000x768", "12x1000000000000", "1x1000000000000000", "12x768x1", "1x2", "1x3",
     "6x729", "6x704", "7x2186", "40x1000000000000000x1"],
    ["bounds", "--depth", "1,2,39,40,41,10000,1000000", "--width", "2,3,729,1000000000000,1000000000000000"],
    ["bounds", "--depth", "1:3", "--width", "999999999999998:1000000000000000"],
    ["compare", "--deep", "10000x768", "--shallow", "1x1000000000000000"],
    ["compare", "--deep", "1000000x2", "--shallow", "1x2"],
    ["compare", "--deep", "6x729", "--shallow", "6x729"],
    ["equiv", "--deep", "10000x768", "--depth", "1,2,3,100,9999"],
    ["equiv", "--deep", "1000000x1000000000000000", "--depth", "1,2,999999"],
    ["equiv", "--deep", "12x768x1", "--depth", "1:11", "--heads", "1"],
    ["equiv", "--deep", "12x1000000000000", "--depth", "1:11"],
    ["equiv", "--deep", "2x3", "--depth", "1"],
    ["equiv", "--deep", "6x729", "--depth", "1:5"],
])
def test_extreme_shapes_are_finite(args):
    finite_records(args)


def test_heads_one_is_honest():
    [record] = finite_records(["bounds", "12x768x1"])
    assert record["heads"] == 1 and record["log3_sep_lower"] > 0


def test_depth_ten_thousand_is_honest():
    [record] = finite_records(["bounds", "10000x768"])
    assert record["regime"] == "depth-inefficient" and record["log3_sep_lower"] < record["log3_sep_upper"]


def test_extremes_in_a_real_process():
    for args in (["plan", "--params", "1e30", "--format", "json"],
                 ["equiv", "--deep", "40x100000000", "--depth", "2", "--format", "json"]):
        out = run_sub(args)
        assert out.code == 0 and out.stderr == "" or "warning" in out.stderr
        assert_finite_json_text(out.stdout)
        assert all_numbers_finite(json.loads(out.stdout))


def test_one_axis_is_capped_before_it_is_expanded():
    """A 10^8-value list would need gigabytes as Python ints; one axis stops at 10^6 values."""
    line = assert_bad_input(run(["bounds", "--depth", "1", "--width", "2:100000001", "--format", "csv"]), "2:100000001")
    assert "1,000,000 values" in line
