"""Grid mode against the scalar truth: every CSV/JSONL/JSON grid row equals ``theory.bounds`` of
its shape, field by field; ``bounds_grid`` equals ``bounds`` on random shapes; ``regime_codes``
is exact at every power of three; chunks stay bounded and JSON stays valid across them.

Floats agree to 1e-12 relative to the size of the terms each formula sums: NumPy's log and
power may differ from ``math``'s in the last bit, and cancellation can make a result small.
"""
from __future__ import annotations

import csv
import dataclasses
import io
import json
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from depthwidth.theory import separation as theory
from depthwidth.cli import app
from depthwidth.output.stream import stream_grid
from depthwidth.theory.shapes import default_heads
from depthwidth.theory.separation import REGIME_CODES, Bounds, bounds, bounds_grid, iter_bounds_grid, regime_codes

RUNNER = CliRunner()
FIELDS = [f.name for f in dataclasses.fields(Bounds)]
DEPTHS = list(range(1, 9))
WIDTHS = list(range(200, 801, 100)) + [729, 243]  # 729 = 3^6 and 243 = 3^5: threshold rows
GRID_ARGS = ["bounds", "--depth", "1:8", "--width", "200:800:100,729,243"]
REL = 1e-12


def term_scale(depth: int, width: int, heads: int, theorem: int | None) -> float:
    """The magnitude of the terms the theorem's formulas sum, for a tolerance that survives cancellation."""
    log3 = lambda x: abs(math.log(x)) / theory.LN3  # noqa: E731
    if theorem == 1:
        return 3.0 ** (depth - 2) * (log3(width - heads) + 2 + depth + 1) + 3.0**depth * log3(width + heads)
    if theorem == 2:
        return (2.5 * width * depth + depth * (heads / 2 + 2) + width * (1 + log3(max(2.0, (width - heads) / 2)))
                + 2 * width * log3(width * theory.UB2_ARG_PER_WIDTH[theory.LITERAL]) + log3(width))
    return 1.0


def close(got: float, want: float, scale: float) -> bool:
    return abs(got - want) <= REL * max(abs(got), abs(want), scale)


def scalar_rows(heads: int | None = None, reading: str = theory.CONSISTENT) -> list[Bounds]:
    return [bounds(L, d, heads if heads is not None else default_heads(d), reading) for L in DEPTHS for d in WIDTHS]


def assert_same_record(row: dict, want: Bounds) -> None:
    """``row`` (JSON types: None for missing) equals the scalar record ``want`` field by field."""
    assert list(row) == FIELDS
    for name in ("depth", "width", "heads", "params_12Ld2", "regime", "theorem", "lower_vacuous", "c2_reading", "notes"):
        assert row[name] == (list(want.notes) if name == "notes" else getattr(want, name)), (name, row, want)
    assert close(row["threshold_depth"], want.threshold_depth, 1.0)
    scale = term_scale(want.depth, want.width, want.heads, want.theorem)
    for name in ("log3_sep_lower", "log3_sep_upper"):
        expected = getattr(want, name)
        if expected is None:
            assert row[name] is None, (name, row)
        else:
            assert isinstance(row[name], float) and math.isfinite(row[name]) and close(row[name], expected, scale), (name, row, want)
    if want.regime == theory.THRESHOLD:
        assert row["theorem"] is None and row["log3_sep_lower"] is None and row["log3_sep_upper"] is None


def csv_record(row: dict) -> dict:
    """A CSV row back in JSON types (empty cell = None; notes joined by '; ')."""
    as_float = lambda text: float(text) if text else None  # noqa: E731
    return {
        "depth": int(row["depth"]), "width": int(row["width"]), "heads": int(row["heads"]), "params_12Ld2": int(row["params_12Ld2"]),
        "threshold_depth": float(row["threshold_depth"]), "regime": row["regime"],
        "theorem": int(row["theorem"]) if row["theorem"] else None,
        "log3_sep_lower": as_float(row["log3_sep_lower"]), "log3_sep_upper": as_float(row["log3_sep_upper"]),
        "lower_vacuous": {"true": True, "false": False}[row["lower_vacuous"]], "c2_reading": row["c2_reading"],
        "notes": row["notes"].split("; ") if row["notes"] else [],
    }


def no_nan(text: str):
    raise AssertionError(f"JSON holds {text}")


def run_grid(*extra: str) -> str:
    result = RUNNER.invoke(app, GRID_ARGS + list(extra))
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.mark.parametrize("heads", [None, 3])
def test_csv_grid_equals_scalar_bounds(heads):
    extra = ["--heads", str(heads)] if heads else []
    text = run_grid("--format", "csv", *extra)
    assert text.splitlines()[0] == ",".join(FIELDS)
    rows = list(csv.DictReader(io.StringIO(text)))
    want = scalar_rows(heads)
    assert len(rows) == len(want) == len(DEPTHS) * len(WIDTHS)
    for row, record in zip(rows, want):
        assert_same_record(csv_record(row), record)


@pytest.mark.parametrize("heads", [None, 3])
def test_jsonl_grid_equals_scalar_bounds(heads):
    extra = ["--heads", str(heads)] if heads else []
    lines = run_grid("--format", "jsonl", *extra).splitlines()
    want = scalar_rows(heads)
    assert len(lines) == len(want)
    for line, record in zip(lines, want):
        assert_same_record(json.loads(line, parse_constant=no_nan), record)


def test_json_grid_equals_scalar_bounds():
    rows = json.loads(run_grid("--format", "json"), parse_constant=no_nan)
    want = scalar_rows()
    assert len(rows) == len(want)
    for row, record in zip(rows, want):
        assert_same_record(row, record)


@pytest.mark.parametrize("reading", theory.C2_READINGS)
def test_grid_under_either_c2_reading_equals_scalar_bounds(reading):
    """--c2-reading reaches the grid (case-insensitively); every row says which reading it used."""
    lines = run_grid("--format", "jsonl", "--c2-reading", reading.upper()).splitlines()
    want = scalar_rows(reading=reading)
    for line, record in zip(lines, want, strict=True):
        row = json.loads(line, parse_constant=no_nan)
        assert row["c2_reading"] == reading
        assert_same_record(row, record)


def test_literal_reading_changes_only_theorem_2_upper_bounds():
    """8x729x9: Theorem 2 (3^8 > 729); the two readings differ by 4·d·log3(K), K = sqrt(2·sqrt(2e))."""
    K = math.sqrt(2 * math.sqrt(2 * math.e))
    consistent, literal = (next(iter_bounds_grid([8, 5], [729], 9, reading=r)) for r in theory.C2_READINGS)
    assert consistent["log3_sep_upper"][0] - literal["log3_sep_upper"][0] == pytest.approx(4 * 729 * math.log(K, 3))
    assert consistent["log3_sep_lower"][0] == literal["log3_sep_lower"][0]
    assert consistent["log3_sep_upper"][1] == literal["log3_sep_upper"][1]  # 5x729: Theorem 1, no c2


def test_threshold_rows_of_the_small_grid():
    rows = [json.loads(line) for line in run_grid("--format", "jsonl").splitlines()]
    threshold = {(r["depth"], r["width"]) for r in rows if r["regime"] == theory.THRESHOLD}
    assert threshold == {(5, 243), (6, 729)}


@pytest.mark.parametrize("field", FIELDS)
def test_field_matches_the_csv_column(field):
    column = [row[field] for row in csv.DictReader(io.StringIO(run_grid("--format", "csv")))]
    assert run_grid("--field", field).splitlines() == column


def test_grid_matches_scalar_cli_output_for_the_same_shapes():
    """Grid rows and `bounds LxDxH --format csv` rows describe the same shapes alike."""
    shapes = [f"{L}x{d}x{default_heads(d)}" for L in DEPTHS for d in WIDTHS]
    scalar = RUNNER.invoke(app, ["bounds", *shapes, "--format", "jsonl"])
    assert scalar.exit_code == 0, scalar.output
    grid = run_grid("--format", "jsonl")
    for line_scalar, line_grid in zip(scalar.stdout.splitlines(), grid.splitlines(), strict=True):
        a, b = json.loads(line_scalar), json.loads(line_grid)
        assert list(b) == FIELDS and set(b) <= set(a)  # scalar rows may add block fields (reports.ShapeRecord)
        for key in b:
            if isinstance(a[key], float):
                assert close(b[key], a[key], term_scale(a["depth"], a["width"], a["heads"], a["theorem"]))
            elif key == "notes":  # the scalar record's block notes follow the bounds' notes
                assert a[key][:len(b[key])] == b[key], key
            else:
                assert a[key] == b[key], key


# ---- chunking: bounded, ordered, valid across chunk boundaries ------------------------------------

@pytest.mark.parametrize("depths, widths", [(range(1, 8), range(2, 52)), ([5], range(2, 400)), (range(1, 300), [64])])
def test_chunks_are_bounded_and_depth_major(depths, widths):
    chunks = list(iter_bounds_grid(list(depths), list(widths), rows_per_chunk=33))
    assert all(0 < c["depth"].size <= 33 for c in chunks)
    got = [(L, d) for c in chunks for L, d in zip(c["depth"].tolist(), c["width"].tolist())]
    assert got == [(L, d) for L in depths for d in widths]


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "json"])
def test_output_is_the_same_whatever_the_chunk_size(fmt):
    def written(rows_per_chunk):
        out = io.StringIO()
        stream_grid(iter_bounds_grid(DEPTHS, WIDTHS, rows_per_chunk=rows_per_chunk), fmt, None, out)
        return out.getvalue()

    whole = written(1 << 16)
    for size in (1, 7, 10):
        assert written(size) == whole
    if fmt == "json":
        assert len(json.loads(whole, parse_constant=no_nan)) == len(DEPTHS) * len(WIDTHS)


def test_huge_axis_is_still_chunked():
    """One depth and a million widths: chunks of whole depths would be a single giant one."""
    chunk = next(iter_bounds_grid([30], range(2, 1_000_002)))
    assert chunk["depth"].size == 1 << 16


# ---- bounds_grid against bounds on random shapes -----------------------------------------------

SHAPE_COUNT = st.integers(1, 40)
SHAPE_DEPTH = st.one_of(st.integers(1, 40), st.integers(1, 10**4))
SHAPE_WIDTH = st.one_of(st.integers(2, 10**12), st.integers(1, 25).map(lambda k: 3**k),
                        st.tuples(st.integers(1, 25), st.sampled_from([-1, 1])).map(lambda kd: 3 ** kd[0] + kd[1]))
HEADS_KIND = st.sampled_from(["any", "default", "most"])


@st.composite
def shape_lists(draw):
    """Up to 40 shapes: depths small or large, widths anywhere, at 3^k or next to it; heads any from 1 to
    d - 1, the default, or d - 1. The strategies are built once (one built per draw costs
    hypothesis more than the test's own work), but the one whose bound is the width."""
    shapes = []
    for _ in range(draw(SHAPE_COUNT)):
        depth, width, kind = draw(SHAPE_DEPTH), draw(SHAPE_WIDTH), draw(HEADS_KIND)
        heads = draw(st.integers(1, width - 1)) if kind == "any" else default_heads(width) if kind == "default" else width - 1
        shapes.append((depth, width, heads))
    return shapes


@pytest.mark.slow
@pytest.mark.parametrize("part", range(3))  # 300 random shape lists in three tests of 100 that workers share
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shapes=shape_lists())
def test_bounds_grid_equals_bounds(part, shapes):
    depth, width, heads = (np.array(column, dtype=np.int64) for column in zip(*shapes))
    grid = bounds_grid(depth, width, heads)
    for i, (L, d, H) in enumerate(shapes):
        want = bounds(L, d, H)
        assert REGIME_CODES[grid["regime_code"][i]] == want.regime
        assert (int(grid["theorem"][i]) or None) == want.theorem
        lower, upper = float(grid["log3_sep_lower"][i]), float(grid["log3_sep_upper"][i])
        if want.theorem is None:
            assert math.isnan(lower) and math.isnan(upper) and not grid["lower_vacuous"][i]
            continue
        scale = term_scale(L, d, H, want.theorem)
        raw_lower = float(grid["lower_formula"][i])
        assert math.isfinite(lower) and math.isfinite(raw_lower) and math.isfinite(float(grid["upper_formula"][i]))
        if abs(raw_lower) > REL * scale:  # a formula within rounding of 0 may be called vacuous either way
            assert bool(grid["lower_vacuous"][i]) == want.lower_vacuous
        assert close(lower, want.log3_sep_lower, scale)
        if want.log3_sep_upper is not None and not math.isnan(upper):
            assert close(upper, want.log3_sep_upper, scale)
        elif want.log3_sep_upper is not None or not math.isnan(upper):  # one side dropped it: only at a tie
            assert close(float(grid["upper_formula"][i]), max(want.log3_sep_lower, 0.0), scale)


def test_bounds_grid_broadcasts_a_scalar_heads():
    grid = bounds_grid(np.arange(1, 20), 1000, 16)
    assert grid["log3_sep_lower"].shape == (19,)
    for i, L in enumerate(range(1, 20)):
        assert REGIME_CODES[grid["regime_code"][i]] == bounds(L, 1000, 16).regime


# ---- regime_codes: exact integer comparison, never a float log ----------------------------------

def test_regime_codes_exact_around_every_power_of_three():
    depths, widths = [], []
    for L in range(1, 39):
        for d in (3**L - 1, 3**L, 3**L + 1):
            for depth in (L - 1, L, L + 1):
                if d >= 2 and depth >= 1:
                    depths.append(depth)
                    widths.append(d)
    codes = regime_codes(np.array(depths), np.array(widths))
    for depth, d, code in zip(depths, widths, codes.tolist()):
        truth = (3**depth > d) - (3**depth < d)
        assert code == 1 + truth, (depth, d)
        assert REGIME_CODES[code] == theory.regime(depth, d)


def test_regime_codes_past_int64_powers():
    """Depths past 39 have 3^L beyond int64: always depth-inefficient for any int64 width."""
    codes = regime_codes(np.array([39, 39, 40, 1000, 10**6]), np.array([2**61, 2**62, 2**63 - 1, 2**63 - 1, 10**15]))
    assert codes.tolist() == [2, 0, 2, 2, 2]  # 2^61 < 3^39 < 2^62 < 3^40
    assert regime_codes(np.array([38]), np.array([3**38 + 1])).tolist() == [0]


def test_fast_float_texts_are_repr_at_every_exponent():
    """output/stream.py spells grid floats with orjson: the texts must be repr's, byte for byte,
    across every exponent (orjson differs from repr for 1e-9 <= |x| < 1e-4; those go through repr)."""
    from depthwidth.output.stream import _texts

    rng = np.random.default_rng(29)
    values = rng.random(200_000) * 10.0 ** rng.integers(-323, 308, 200_000)
    edges = [0.0, -0.0, 1e-4, 9.999999999999999e-05, 1e-9, 9.99e-10, 1e16, 9999999999999998.0, 5e-324, 1.7976931348623157e308]
    values = np.concatenate([values, -values, edges])
    assert _texts(values, float.__repr__).tolist() == [repr(v) for v in values.tolist()]
    ints = rng.integers(-2**62, 2**62, 10_000)
    assert _texts(ints, str).tolist() == [str(v) for v in ints.tolist()]


def _crafted_chunk(lower, upper, threshold=None):
    """A small grid chunk with its float columns replaced by ``lower``, ``upper`` (and ``threshold``)."""
    chunk = dict(next(iter_bounds_grid(list(range(1, 11)), list(range(64, 64 * 41, 64)))))
    size = chunk["depth"].size
    chunk["log3_sep_lower"], chunk["log3_sep_upper"] = lower[:size], upper[:size]
    if threshold is not None:
        chunk["threshold_depth"] = threshold[:size]
    return chunk


@pytest.mark.parametrize("case", ["every exponent", "a small value", "a missing bound"])
def test_csv_number_runs_are_str_and_repr_cell_by_cell(case):
    """output/stream.py spells a CSV run of adjacent number columns with one orjson dump of their 2-D
    array: every cell must still be str (ints) or repr (floats) of its value, or empty for NaN."""
    from depthwidth.output.stream import _chunk_text, grid_columns

    rng = np.random.default_rng(31)
    lower = rng.random(400) * 10.0 ** rng.integers(-300, 300, 400)
    upper = -rng.random(400) * 10.0 ** rng.integers(-4, 300, 400)
    if case == "a small value":
        upper[3] = 5e-05  # repr '5e-05', orjson '0.00005': this run must be spelled column by column
    if case == "a missing bound":
        lower[5] = math.nan
    chunk = _crafted_chunk(lower, upper, rng.random(400) * 50)
    names = grid_columns()
    text = _chunk_text(chunk, ("csv", names, [""] + [","] * (len(names) - 1), "\n"))
    rows = list(csv.reader(io.StringIO(text)))
    assert len(rows) == chunk["depth"].size
    for i, row in enumerate(rows):
        cells = dict(zip(names, row))
        for name in ("depth", "width", "heads", "params_12Ld2"):
            assert cells[name] == str(int(chunk[name][i]))
        for name in ("threshold_depth", "log3_sep_lower", "log3_sep_upper"):
            value = float(chunk[name][i])
            assert cells[name] == ("" if math.isnan(value) else repr(value)), (name, value)


def test_forked_workers_that_compute_their_own_chunks_write_the_same_grid(monkeypatch):
    """A big grid's workers each compute only their chunks (``parts``): the same text as one process."""
    from depthwidth.output import stream

    depths, widths = list(range(1, 41)), list(range(64, 64 * 301, 64))
    whole = io.StringIO()
    stream_grid(iter_bounds_grid(depths, widths, rows_per_chunk=997), "csv", None, whole)
    monkeypatch.setattr(stream, "PARALLEL_ROWS", 1000)
    forked = io.StringIO()
    stream_grid(iter_bounds_grid(depths, widths, rows_per_chunk=997), "csv", None, forked, len(depths) * len(widths),
                parts=lambda k, n: iter_bounds_grid(depths, widths, rows_per_chunk=997, part=(k, n)))
    assert forked.getvalue() == whole.getvalue() and whole.getvalue().count("\n") == len(depths) * len(widths) + 1
