"""Hardening, round two (issue 16): the findings of an outside stress test, one regression test each.

The contract is the README's Errors section: one stderr line, exit 2 for bad input, exit 1 for
anything else (a closed or full stdout, a closed stdin), never partial stdout, never a traceback
or an "internal error" for something the user or the environment did.
"""
from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
import tracemalloc

import pytest

from conftest import ROOT, assert_bad_input, one_error_line, run


def sub(args: list[str], stdin=None, stdout=subprocess.PIPE, env: dict | None = None, close: tuple[int, ...] = (),
        input: bytes | None = None, timeout: float = 60):
    """``python -m depthwidth`` with file descriptors ``close`` closed in the child (``<&-``, ``>&-``)."""
    environ = {k: v for k, v in os.environ.items() if k not in ("DEPTHWIDTH_DEBUG", "PYTHONIOENCODING")}
    environ["PYTHONPATH"] = str(ROOT) + os.pathsep + environ.get("PYTHONPATH", "")
    environ.update(env or {})

    def closing():
        for fd in close:
            os.close(fd)

    return subprocess.run([sys.executable, "-m", "depthwidth", *args], stdin=stdin if input is None else None, input=input,
                          stdout=stdout, stderr=subprocess.PIPE, env=environ, cwd=ROOT, timeout=timeout,
                          preexec_fn=closing if close else None)


# ---- Rich markup in data ---------------------------------------------------------------------------

CONFIG = {"num_hidden_layers": 12, "hidden_size": 768, "num_attention_heads": 12, "intermediate_size": 3072}


@pytest.mark.parametrize("model_type", ["[/]", "[bold]loud[/bold]", "x[/red]y", "[link=file:///etc]z"])
def test_markup_in_a_config_is_shown_verbatim(tmp_path, monkeypatch, model_type):
    monkeypatch.chdir(tmp_path)  # a short path: the table title does not wrap
    (tmp_path / "cfg[red].json").write_text(json.dumps({**CONFIG, "model_type": model_type}))
    out = run(["inspect", "cfg[red].json"])
    assert out.code == 0, out.stderr
    assert model_type in out.stdout and "cfg[red].json" in out.stdout


def test_table_and_notes_helpers_never_read_markup():
    from depthwidth.output.tables import _notes, _table
    from depthwidth.output.writers import make_console

    buffer = io.StringIO()
    console = make_console(buffer)
    console.print(_table("title [b]x[/b]", ["a [i]", "b"], [["[/]", "[red]r[/red]"]]))
    console.print(_notes(["note [bold]n[/bold]", "[/]"]))
    text = buffer.getvalue()
    for literal in ("title [b]x[/b]", "a [i]", "[/]", "[red]r[/red]", "note [bold]n[/bold]"):
        assert literal in text, (literal, text)


def test_claim_status_keeps_its_colour():
    from rich.console import Console

    from depthwidth.advice.claims import claims
    from depthwidth.output.tables import claims_tables

    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, color_system="standard", width=300)
    for renderable in claims_tables(claims()):
        console.print(renderable)
    assert "\x1b[32mreproduced" in buffer.getvalue()  # green, through a style, not markup


# ---- plots: the same figure gives the same bytes ---------------------------------------------------

@pytest.mark.parametrize("suffix", [".svg", ".png"])
def test_plots_are_byte_identical_between_runs(tmp_path, suffix):
    pytest.importorskip("matplotlib")
    files = [tmp_path / f"a{suffix}", tmp_path / f"b{suffix}"]
    for path in files:
        out = run(["plot", "bounds", "--width", "768", "--out", str(path)])
        assert out.code == 0, out.stderr
    assert files[0].read_bytes() == files[1].read_bytes()


def test_plot_checks_out_before_drawing(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    import depthwidth.output.plot as plot
    import depthwidth.output.plot_bounds as plot_bounds

    def no_drawing(*args, **kwargs):
        raise AssertionError("drew a figure before checking --out")

    monkeypatch.setattr(plot_bounds, "bounds_figure", no_drawing)
    monkeypatch.setattr(plot, "phase_figure", no_drawing)
    assert_bad_input(run(["plot", "bounds", "--width", "768", "--out", str(tmp_path / "x.pdf")]), "x.pdf")
    assert_bad_input(run(["plot", "phase", "--out", str(tmp_path / "no" / "such" / "dir.svg")]), "dir.svg")
    assert_bad_input(run(["plot", "phase", "--out", str(tmp_path)]), tmp_path.name[-10:])


def test_plot_without_a_subcommand_prints_its_help():
    out = run(["plot"])
    assert out.code == 0 and out.stderr == ""
    assert len(out.stdout.splitlines()) > 5 and "phase" in out.stdout and "bounds" in out.stdout


# ---- output that cannot be encoded -----------------------------------------------------------------

ASCII = {"PYTHONIOENCODING": "ascii"}


@pytest.mark.parametrize("args", [["models"], ["reproduce"], ["plan", "--params", "1e9"]], ids=lambda a: a[0])
def test_tables_on_an_ascii_stdout(args):
    done = sub(args, env=ASCII)
    assert done.returncode == 0, done.stderr
    done.stdout.decode("ascii")
    assert len(done.stdout.splitlines()) > 5


@pytest.mark.parametrize("fmt", ["json", "jsonl", "csv"])
def test_machine_formats_on_an_ascii_stdout(fmt):
    done = sub(["reproduce", "--format", fmt], env=ASCII)
    assert done.returncode == 0, done.stderr
    text = done.stdout.decode("ascii")
    utf8 = sub(["reproduce", "--format", fmt]).stdout.decode()
    if fmt == "csv":  # backslash escapes, the same number of rows and cells
        assert "\\xb1" in text and text.encode().decode("unicode_escape") == utf8
    else:  # JSON is always ASCII (\u escapes) and reads back the same
        assert text == utf8 and "\\u00b1" in text


def test_field_and_grid_on_an_ascii_stdout():
    done = sub(["reproduce", "--field", "tolerance"], env=ASCII)
    assert done.returncode == 0 and "\\xb1" in done.stdout.decode("ascii")
    done = sub(["bounds", "--depth", "1:5", "--width", "2:300", "--format", "csv"], env=ASCII)
    assert done.returncode == 0 and done.stdout.decode("ascii").count("\n") == 5 * 299 + 1


# ---- standard input ---------------------------------------------------------------------------------

def test_stdin_over_the_cap_fails_fast():
    with open("/dev/zero", "rb") as zero:
        done = sub(["bounds", "-"], stdin=zero, timeout=30)
    assert done.returncode == 2 and done.stdout == b""
    assert "50 MiB" in one_error_line(done.stderr)  # userfile.MAX_BYTES, the one limit for every file read
    done = sub(["plan", "--params", "-"], input=b"1e9\n" * (13 * 1024 * 1024 + 1))  # 52 MiB of good lines
    assert done.returncode == 2 and "50 MiB" in one_error_line(done.stderr)


@pytest.mark.parametrize("args", [["bounds", "-"], ["plan", "--params", "-"], ["inspect", "-"]])
def test_closed_stdin_is_one_clear_line(args):
    done = sub(args, close=(0,))
    assert done.returncode in (1, 2) and done.stdout == b""
    assert "standard input" in one_error_line(done.stderr)


@pytest.mark.parametrize("args, stdin, needle", [
    (["bounds", "-"], "12x768\n\n# comment\n12x0\n6x1000\n", "line 4"),
    (["plan", "--params", "-"], "1e9\r\nabc\r\n", "line 2"),
    (["equiv", "--deep", "-", "--depth", "2"], "# deep ones\n6x1000x16\n6x1000x1000\n", "line 3"),
])
def test_bad_stdin_line_says_its_number(args, stdin, needle):
    line = assert_bad_input(run(args, input=stdin), needle)
    assert "standard input" in line


def test_a_bad_argument_equal_to_no_stdin_line_has_no_line_number():
    line = assert_bad_input(run(["bounds", "12x0", "-"], input="12x768\n"), "'12x0'")
    assert "line" not in line


# ---- "did you mean" on a huge garbage name ----------------------------------------------------------

def test_no_suggestions_for_a_huge_name():
    from depthwidth.arch.catalog import lookup
    from depthwidth.core.errors import InputError

    name = "bert-base" + "q" * 30_000_000
    tracemalloc.start()
    try:
        with pytest.raises(InputError) as caught:
            lookup(name)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 100e6, peak  # difflib over 30 MB took 1.3 GB
    assert len(str(caught.value)) < 300 and "did you mean" not in str(caught.value)
    with pytest.raises(InputError, match="did you mean 'bert-base'"):  # short names still get suggestions
        lookup("bert-bas")


# ---- output that cannot be written ------------------------------------------------------------------

WRITERS = [["bounds", "12x768"], ["bounds", "12x768", "--format", "json"], ["bounds", "12x768", "--format", "csv"],
           ["plan", "--params", "1e9", "--field", "threshold.width"], ["bounds", "--depth", "1:50", "--width", "2:2000", "--format", "csv"],
           ["--version"], ["plan", "--help"]]


@pytest.mark.parametrize("args", WRITERS, ids=" ".join)
def test_closed_stdout_exits_1(args):
    done = sub(args, close=(1,), stdout=None)
    assert done.returncode == 1
    assert "cannot write output" in one_error_line(done.stderr)


@pytest.mark.parametrize("args", WRITERS, ids=" ".join)
def test_full_device_exits_1(args):
    with open("/dev/full", "wb") as full:
        done = sub(args, stdout=full)
    assert done.returncode == 1
    assert "cannot write output" in one_error_line(done.stderr)


def test_broken_pipe_stays_quiet():
    proc = subprocess.Popen([sys.executable, "-m", "depthwidth", "bounds", "--depth", "1:1000", "--width", "2:2000",
                             "--format", "csv"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    proc.stdout.read(100)
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=60) == 1 and b"Traceback" not in err and b"Exception ignored" not in err


# ---- size caps ---------------------------------------------------------------------------------------

def test_equiv_rows_are_capped():
    line = assert_bad_input(run(["equiv", "--deep", "1000000x1000", "--depth", "1:999999"]), "1:999999")
    assert "100,000" in line


def test_plan_budget_lists_are_capped():
    line = assert_bad_input(run(["plan", "--params", "-", "--format", "csv"], input="1e9\n" * 100_001), "standard input")
    assert "100,000" in line


def test_tables_from_stdin_are_capped_like_grid_tables():
    line = assert_bad_input(run(["bounds", "-"], input="12x768\n" * 5001), "'table'")
    assert "5,000" in line and "csv" in line
    assert run(["bounds", "-", "--format", "csv"], input="12x768\n" * 5001).stdout.count("\n") == 5002


# ---- messages -----------------------------------------------------------------------------------------

def test_models_filter_message_names_the_filter():
    line = assert_bad_input(run(["models", "--min-params", "1T"]), "--min-params 1T")
    assert "None" not in line


def test_token_count_range_is_in_tokens():
    line = assert_bad_input(run(["plan", "--tokens", "1999"]), "'1999'")
    assert "2,000" in line and "got 100" not in line
    # 2,000 tokens are accepted and read as 100 parameters, which no valid shape reaches (issue 25: refused as too small)
    assert "bad budget '100': too small" in run(["plan", "--tokens", "2000"]).stderr
    line = assert_bad_input(run(["plan", "--flops", "1e6"]), "'1e6'")
    assert "1.2e6" in line


@pytest.mark.parametrize("text, value", [("+1e9", "1000000000"), ("+350M", "350000000"), (" +1_000_000 ", "1000000")])
def test_a_leading_plus_is_accepted(text, value):
    assert run(["plan", "--params", text, "--field", "budget.value"]).stdout == value + "\n"


@pytest.mark.parametrize("text", ["1e9k", "1E3M", "2e1B", "++1e9", "+-1e9"])
def test_an_exponent_with_a_suffix_is_rejected(text):
    assert_bad_input(run(["plan", "--params", text]), repr(text)[1:-1])


@pytest.mark.parametrize("spelling", ["CSV", "Csv", "JSON"])
def test_format_names_are_case_insensitive(spelling):
    out = run(["bounds", "12x768", "--format", spelling])
    assert out.code == 0 and out.stdout == run(["bounds", "12x768", "--format", spelling.lower()]).stdout


def test_a_multiple_larger_than_the_width_is_not_silent():
    option = "--multiple" if "--multiple" in run(["plan", "--help"]).stdout else "--align"
    out = run(["plan", "--params", "1e6", option, "100000"])
    assert out.code in (0, 2), out.stderr
    assert option in out.stderr and "100000" in out.stderr.replace(",", "")


# ---- JSON: one spelling everywhere -------------------------------------------------------------------

SHAPES = [(L, d) for L in (1, 2, 6, 7, 12, 40) for d in (2, 3, 704, 729, 768, 2186, 5000)]


def grid_args(fmt: str) -> list[str]:
    return ["bounds", "--depth", "1,2,6,7,12,40", "--width", "2,3,704,729,768,2186,5000", "--format", fmt]


def shape_args(fmt: str) -> list[str]:
    from depthwidth.theory.shapes import default_heads

    return ["bounds", *(f"{L}x{d}x{default_heads(d)}" for L, d in SHAPES), "--format", fmt]


@pytest.mark.parametrize("fmt", ["json", "jsonl", "csv"])
def test_scalar_and_grid_writers_spell_records_alike(fmt):
    """Byte for byte per record: a scalar `bounds` record (which goes on with its block's fields)
    starts with exactly the text of the grid row for the same shape."""
    scalar, grid = run(shape_args(fmt)), run(grid_args(fmt))
    assert scalar.code == grid.code == 0, scalar.stderr + grid.stderr
    scalar_lines, grid_lines = scalar.stdout.splitlines(), grid.stdout.splitlines()
    assert len(scalar_lines) == len(grid_lines) == len(SHAPES) + (2 if fmt == "json" else 1 if fmt == "csv" else 0)
    for mine, theirs in zip(scalar_lines, grid_lines):
        if theirs in ("[", "]"):
            assert mine == theirs
            continue
        if fmt == "csv":  # every cell before the notes, as text; then the notes, which the block may extend
            [*cells, notes], mine_cells = next(csv.reader([theirs])), next(csv.reader([mine]))
            assert mine_cells[:len(cells)] == cells
            assert mine_cells[len(cells)].startswith(notes)
            continue
        head, notes = theirs.rstrip(",").split(',"notes":')
        assert mine.startswith(head + ',"notes":'), (mine[:300], theirs[:300])
        assert mine.startswith(head + ',"notes":' + notes.rstrip("]}")), (mine[:300], theirs[:300])


@pytest.mark.parametrize("fmt", ["json", "jsonl"])
def test_small_floats_are_spelled_by_repr(fmt):
    """Pydantic wrote 0.0000269312...; every writer now spells a float as repr does (2.69...e-05)."""
    text = run(["plan", "--params", "1e12", "--format", fmt]).stdout
    [record] = json.loads(text) if fmt == "json" else [json.loads(text)]
    small = record["threshold"]["budget_deviation"]
    assert 0 < abs(small) < 1e-4  # the case: repr switches to an exponent below 1e-4
    assert repr(small) in text and "e-05" in repr(small)
    for line in text.splitlines():  # each record is exactly the compact json.dumps spelling
        if line not in ("[", "]"):
            assert line.rstrip(",") == json.dumps(json.loads(line.rstrip(",")), separators=(",", ":"))


def test_json_rows_are_one_record_per_line():
    text = run(["bounds", "12x768", "6x729", "--format", "json"]).stdout
    lines = text.splitlines()
    assert lines[0] == "[" and lines[-1] == "]" and len(lines) == 4
    assert [json.loads(line.rstrip(",")) for line in lines[1:-1]] == json.loads(text)


def test_csv_of_a_scalar_command_reads_back():
    rows = list(csv.DictReader(io.StringIO(run(["reproduce", "--format", "csv"]).stdout)))
    assert rows and all(row["status"] for row in rows)


@pytest.mark.parametrize("fmt, field", [("csv", None), ("json", None), ("jsonl", None), ("csv", "log3_sep_upper")])
def test_grid_spelled_in_worker_processes_is_the_same(fmt, field):
    """A big grid's chunks are spelled by forked workers (``rows`` >= PARALLEL_ROWS): same bytes, same order."""
    from depthwidth.output.stream import PARALLEL_ROWS, stream_grid
    from depthwidth.theory.separation import iter_bounds_grid

    texts = []
    for rows in (None, PARALLEL_ROWS):
        out = io.StringIO()
        stream_grid(iter_bounds_grid(list(range(1, 40)), list(range(2, 3000, 7)), rows_per_chunk=997), fmt, field, out, rows)
        texts.append(out.getvalue())
    assert texts[0] == texts[1] and texts[0].count("\n") >= 39 * 428
