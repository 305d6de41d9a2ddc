"""Writers for result records: Rich tables for people; JSON, JSONL, CSV and --field for machines.

Records are the core's frozen dataclasses; their field names are the output contract and are
never renamed here. Nothing in this module computes a result. Rich and Pydantic are imported
only by the writer that needs them.
"""
from __future__ import annotations

import dataclasses
import math
import sys
from typing import Any, Callable, Iterable

from .errors import InputError

FORMATS = ("table", "json", "jsonl", "csv")


def plain(value: Any) -> Any:
    """Dataclasses to dicts, tuples to lists, non-finite floats to None (JSON never holds NaN)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def field_names(record: Any, prefix: str = "") -> list[str]:
    """Every selectable field of a record, nested ones dotted (``deep.log3_sep_lower``)."""
    names = []
    for key, value in plain(record).items() if not isinstance(record, dict) else record.items():
        names.append(prefix + key)
        if isinstance(value, dict):
            names += field_names(value, prefix + key + ".")
    return names


def pick(record: dict, name: str) -> Any:
    """The value of a (dotted) field name in a plain record."""
    for part in name.split("."):
        record = record[part]
    return record


def check_field(sample: Any, name: str | None) -> None:
    """Fail before any output when --field names no field of these records."""
    if name is not None and name not in (names := field_names(sample)):
        raise InputError("--field", name, "expected one of " + ", ".join(names))


def scalar_text(value: Any) -> str:
    """One value as text for --field and CSV: JSON spelling for null/booleans/lists, repr for floats."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "; ".join(value)
    if isinstance(value, (list, dict)):  # a nested record (--field deep) or a list of them: JSON, never Python's repr
        import json

        return json.dumps(value, allow_nan=False)
    return str(value)


def flatten(record: dict, prefix: str = "") -> dict:
    """One CSV row: nested records become prefixed columns; lists of records are left to JSON."""
    row = {}
    for key, value in record.items():
        if isinstance(value, dict):
            row.update(flatten(value, f"{prefix}{key}_"))
        elif not (isinstance(value, list) and value and isinstance(value[0], dict)):
            row[prefix + key] = scalar_text(value)
    return row


def write_json(records: Any, out) -> None:
    """JSON through Pydantic's TypeAdapter: the dataclasses are the schema; NaN/inf become null."""
    out.write(_adapter(type(records[0]) if isinstance(records, list) and records else type(records), isinstance(records, list))
              .dump_json(records, indent=2).decode())
    out.write("\n")


def write_jsonl(records: list, out) -> None:
    """One compact JSON object per line."""
    adapter = _adapter(type(records[0]), False) if records else None
    for record in records:
        out.write(adapter.dump_json(record).decode())
        out.write("\n")


def _adapter(kind: type, many: bool):
    from pydantic import TypeAdapter

    return TypeAdapter(list[kind] if many else kind)


def write_csv(records: list, out) -> None:
    """A header and one row per record (scalar fields; nested records as prefixed columns)."""
    import csv  # here, not at the top: the table path never pays for csv or json (issue 5)

    rows = [flatten(plain(r)) for r in records]
    if not rows:
        return
    writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)


def write_field(records: list, name: str, out) -> None:
    """Just one field's value per record, one per line, for $(...) capture."""
    for record in records:
        out.write(scalar_text(pick(plain(record), name)) + "\n")


def emit(records: Any, fmt: str, field: str | None, table: Callable[[Any], Iterable[Any]], out=None) -> None:
    """Write records (a list, or one object for compare) in the chosen format to stdout."""
    out = out or sys.stdout
    many = records if isinstance(records, list) else [records]
    if many:
        check_field(many[0], field)
    if field is not None:
        write_field(many, field, out)
    elif fmt == "json":
        write_json(records, out)
    elif fmt == "jsonl":
        write_jsonl(many, out)
    elif fmt == "csv":
        write_csv(many, out)
    else:
        console = make_console(out)
        for renderable in table(records):
            console.print(renderable)


def make_console(out):
    """A Rich console on ``out``; wide enough off a terminal that tables do not wrap."""
    from rich.console import Console

    terminal = hasattr(out, "isatty") and out.isatty()
    return Console(file=out, width=None if terminal else 160, highlight=False, soft_wrap=False,
                   emoji=False)  # no :code: emoji in our text; skips loading Rich's emoji table


# ---- number formats for tables -------------------------------------------------------------

def fmt_log3(value: float | None, vacuous: bool = False) -> str:
    if value is None:
        return "n/a"
    return f"{value:,.3f}" + (" (vacuous)" if vacuous else "")


def fmt_count(value: float | int | None) -> str:
    """Human parameter counts: 983M, 1.3B, 3.2e+30."""
    if value is None:
        return "n/a"
    if abs(value) >= 1e15:
        return f"{value:.3g}"
    for scale, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K")):
        if abs(value) >= scale:
            return f"{value / scale:.3g}{suffix}"
    return f"{value:g}"


def fmt_width(width: int | None, log10_width: float | None) -> str:
    """An exact width, or 10^x when only its log10 is known."""
    if width is not None:
        return f"{width:,}"
    if log10_width is None:
        return "n/a"
    return f"10^{log10_width:.3f}" if log10_width < 1e6 else f"10^{log10_width:.6g}"


def fmt_log10_count(log10_value: float | None) -> str:
    if log10_value is None:
        return "n/a"
    return fmt_count(10**log10_value) if log10_value < 15 else f"10^{log10_value:.3f}" if log10_value < 1e6 else f"10^{log10_value:.6g}"


# ---- tables, one per record kind ---------------------------------------------------------------

def _table(title: str, columns: list[str], rows: Iterable[list[str]], right=(), show_header: bool = True):
    from rich.table import Table

    table = Table(title=title, title_justify="left", header_style="bold", show_header=show_header)
    for name in columns:
        table.add_column(name, justify="right" if name in right else "left")
    for row in rows:
        table.add_row(*row)
    return table


def _notes(notes: Iterable[str], title: str = "Notes"):
    from rich.text import Text

    lines = list(dict.fromkeys(notes))
    return Text(title + ":\n" + "\n".join(f"  - {n}" for n in lines) + "\n") if lines else Text("")


SHAPE_COLUMNS = ["shape", "params", "log3 d", "regime", "log3 sep lower", "log3 sep upper"]


def _shape_row(r) -> list[str]:
    return [f"{r.depth}x{r.width}x{r.heads}", fmt_count(r.params), f"{r.threshold_depth:.3f}", r.regime,
            fmt_log3(r.log3_sep_lower, r.lower_vacuous), fmt_log3(r.log3_sep_upper)]


def bounds_tables(records):
    yield _table("Separation-rank bounds (Levine et al. 2020, Theorems 1-2)", SHAPE_COLUMNS,
                 map(_shape_row, records), right={"params", "log3 d", "log3 sep lower", "log3 sep upper"})
    yield _notes(f"{r.depth}x{r.width}x{r.heads}: {n}" for r in records for n in r.notes)


def plan_tables(plans):
    for p in plans:
        summary = [
            ["budget", f"{fmt_count(p.params)} parameters" + ("" if p.budget_source == "params" else f" (from {p.budget_source})")],
            ["minimal depth", f"{p.min_depth} (L* = {p.min_depth_exact:.3f}, where L = log3 d)"],
            ["width", f"{p.width:,} (exact {p.width_exact:,.1f})"],
            ["heads", str(p.heads)],
            ["planned shape", f"{p.min_depth}x{p.width}x{p.heads} ({p.regime} regime: depth >= log3 width)"],
            ["params actual", f"{fmt_count(p.params_actual)} ({p.params_deviation:+.1%} from budget)"],
            ["empirical optimum", f"depth {p.empirical_depth:.1f}, width {p.empirical_width:,.0f} (fit, not theory)"],
            ["recommended", f"{p.recommended_depth}x{p.recommended_width}x{p.recommended_heads} (the fit's optimum, aligned)"],
        ]
        yield _table(f"Plan for {fmt_count(p.params)} parameters", ["", ""], summary, show_header=False)
        yield _table("Candidate shapes", ["depth", "width", "heads", "params", "d/L", "regime", "log3 sep lower", "log3 sep upper"],
                     ([str(c.depth), f"{c.width:,}", str(c.heads), fmt_count(c.params), f"{c.aspect_ratio:.1f}", c.regime,
                       fmt_log3(c.log3_sep_lower, c.lower_vacuous), fmt_log3(c.log3_sep_upper)] for c in p.candidates),
                     right={"depth", "width", "heads", "params", "d/L", "log3 sep lower", "log3 sep upper"})
        yield _notes(p.notes)


def compare_tables(c):
    rows = [[label] + _shape_row(r) for label, r in (("deep", c.deep), ("shallow", c.shallow))]
    yield _table("Compare", ["", *SHAPE_COLUMNS], rows, right={"params", "log3 d", "log3 sep lower", "log3 sep upper"})
    gap = "n/a" if c.log3_gap is None else f"{c.log3_gap:,.3f}"
    at = f"at depth {c.shallow.depth}, heads {c.shallow.heads}"
    yield _table("Verdict", ["", ""], [
        ["verdict", c.verdict],
        ["log3 gap", gap],
        ["params ratio (deep/shallow)", f"{c.params_ratio:.4g}"],
        [f"replicate width {at}", fmt_width(c.replicate_width, c.replicate_log10_width)],
        [f"surpass width {at}", fmt_width(c.surpass_width, c.surpass_log10_width)],
        ["empirical depth for size", f"deep {c.deep_empirical_depth:.1f}, shallow {c.shallow_empirical_depth:.1f}"],
    ], show_header=False)
    yield _notes(c.notes)


def equiv_tables(records):
    yield _table("Widths a shallower network needs (Levine et al. 2020, Corollaries 1-2)",
                 ["deep", "shallow depth", "heads", "replicate width", "its params", "surpass width", "its params"],
                 ([r.deep, str(r.shallow_depth), str(r.shallow_heads),
                   fmt_width(r.replicate_width, r.replicate_log10_width), fmt_log10_count(r.replicate_log10_params),
                   fmt_width(r.surpass_width, r.surpass_log10_width), fmt_log10_count(r.surpass_log10_params)] for r in records),
                 right={"shallow depth", "heads", "replicate width", "its params", "surpass width", "its params"})
    yield _notes(f"{r.deep} at depth {r.shallow_depth}: {n}" for r in records for n in r.notes)


# ---- grids: whole NumPy chunks formatted at once, written as they come ---------------------------

def grid_columns() -> list[str]:
    """A grid row has exactly the fields of a shape record."""
    from .theory import Bounds

    return [f.name for f in dataclasses.fields(Bounds)]


def _grid_text_columns(chunk: dict, style: str) -> dict:
    """Every field of a chunk's rows as an object array of texts, by field name.

    ``style`` is "csv" (CSV cells), "json" (JSON literals) or "field" (bare --field values).
    Numbers are spelled as the scalar writers spell them (repr for floats); NaN, a missing bound,
    becomes null or an empty cell. Spelling floats dominates a grid's cost, so each distinct
    width, head count, depth and log3 width is spelled once per chunk.
    """
    import numpy as np

    from .theory import REGIME_CODES

    null = "null" if style == "json" else ""

    def labels(codes, texts):
        return np.array(texts, dtype=object)[codes]

    notes = chunk["notes"]
    note_text = np.full(notes.shape, "[]" if style == "json" else "", dtype=object)
    for i in np.flatnonzero(notes != None):  # noqa: E711 - element-wise comparison with None
        note_text[i] = _note_text(notes[i], style)
    return {
        "depth": _distinct_texts(chunk["depth"]), "width": _distinct_texts(chunk["width"]),
        "heads": _distinct_texts(chunk["heads"]), "params": _texts(chunk["params"], str),
        "threshold_depth": _distinct_texts(chunk["threshold_depth"], null),
        "regime": labels(chunk["regime_code"], [f'"{r}"' if style == "json" else r for r in REGIME_CODES]),
        "theorem": labels(chunk["theorem"], [null, "1", "2"]),
        "log3_sep_lower": _float_texts(chunk["log3_sep_lower"], null), "log3_sep_upper": _float_texts(chunk["log3_sep_upper"], null),
        "lower_vacuous": labels(chunk["lower_vacuous"].astype(np.int8), ["false", "true"]), "notes": note_text,
    }


def _join_rows(columns: list, prefixes: list, end: str) -> str:
    """All rows of a chunk as one string, each ``prefix0 cell0 prefix1 cell1 ... end``: one
    join over an interleaved object array, no Python-level work per row (twice as fast)."""
    import numpy as np

    pieces = np.empty((columns[0].size, 2 * len(columns) + 1), dtype=object)
    for i, (prefix, column) in enumerate(zip(prefixes, columns)):
        pieces[:, 2 * i] = prefix
        pieces[:, 2 * i + 1] = column
    pieces[:, -1] = end
    return "".join(pieces.ravel().tolist())


def _note_text(notes, style: str) -> str:
    if style == "json":
        import json

        return json.dumps(list(notes))
    text = "; ".join(notes)
    return _csv_cell(text) if style == "csv" else text


def _texts(values, spell):
    """``spell`` of every value (Python ints past int64 arrive as an object array)."""
    import numpy as np

    return np.array(list(map(spell, values.tolist())), dtype=object)


def _distinct_texts(values, null=""):
    """Texts of a column that repeats (grids repeat widths and depths): each distinct value spelled once."""
    import numpy as np

    def spell(some):
        return _texts(some, str) if some.dtype.kind in "iuO" else _float_texts(some, null)

    if values.dtype == object or values.size < 64:
        return spell(values)
    distinct, inverse = np.unique(values, return_inverse=True)
    return spell(values) if distinct.size * 4 > values.size else spell(distinct)[inverse.reshape(-1)]


def _float_texts(values, null):
    """repr of every finite float; ``null`` for NaN (no bound) and infinities."""
    import numpy as np

    texts = np.full(values.shape, null, dtype=object)
    finite = np.isfinite(values)
    texts[finite] = _texts(values[finite], float.__repr__)
    return texts


def _csv_cell(text: str) -> str:
    """Quote a CSV cell the way csv.QUOTE_MINIMAL would."""
    return '"' + text.replace('"', '""') + '"' if any(c in text for c in ',"\n\r') else text


def stream_grid(chunks: Iterable[dict], fmt: str, field: str | None, out) -> None:
    """Write grid chunks as CSV, JSONL, JSON or one --field, never holding the whole grid.
    (Tables, at most a few thousand rows, go through ``emit`` with scalar records.)"""
    names = grid_columns()
    if field is not None and field not in names:
        raise InputError("--field", field, "expected one of " + ", ".join(names))
    style = "field" if field is not None else "json" if fmt in ("json", "jsonl") else "csv"
    if style == "csv":
        out.write(",".join(names) + "\n")
        prefixes, end = [""] + [","] * (len(names) - 1), "\n"
    elif style == "json":
        prefixes, end = ["{" + f'"{names[0]}":'] + [f',"{name}":' for name in names[1:]], "},\n" if fmt == "json" else "}\n"
    else:
        prefixes, end = [""], "\n"
    if fmt == "json" and field is None:
        out.write("[")
    first = True
    for chunk in chunks:  # one chunk's text at a time (~10 MB at most), never the whole grid
        if not chunk["depth"].size:
            continue
        texts = _grid_text_columns(chunk, style)
        text = _join_rows([texts[name] for name in ([field] if style == "field" else names)], prefixes, end)
        if fmt == "json" and field is None:  # rows end in "},\n": the separator moves before the next chunk
            out.write(("\n" if first else ",\n") + text[:-2])
        else:
            out.write(text)
        first = False
    if fmt == "json" and field is None:
        out.write("\n]\n")


def models_tables(records):
    yield _table("Published architectures", ["model", "shape", "params 12Ld²", "d/L", "log3 d", "regime", "log3 sep lower",
                                              "log3 sep upper", "min depth", "empirical depth"],
                 ([r.name, f"{r.depth}x{r.width}x{r.heads}", fmt_count(r.params), f"{r.aspect_ratio:.0f}",
                   f"{r.threshold_depth:.3f}", r.regime, fmt_log3(r.log3_sep_lower, r.lower_vacuous), fmt_log3(r.log3_sep_upper),
                   str(r.min_depth), f"{r.empirical_depth:.1f}"] for r in records),
                 right={"params 12Ld²", "d/L", "log3 d", "log3 sep lower", "log3 sep upper", "min depth", "empirical depth"})


def inspect_tables(records):
    for r in records:
        yield _table(f"{r.source}" + (f" ({r.model_type})" if r.model_type else ""), ["", ""], [
            ["shape", f"{r.depth}x{r.width}x{r.heads}" + (f", {r.kv_heads} KV heads" if r.kv_heads != r.heads else "")],
            ["feed-forward", f"{r.ffn:,}" + (" (gated)" if r.gated_ffn else "")],
            ["params (real, non-embedding)", f"{r.params_real:,} ({fmt_count(r.params_real)})"],
            ["params (12·L·d²)", f"{r.params:,} ({fmt_count(r.params)})"],
            ["regime", f"{r.regime} (log3 d = {r.threshold_depth:.3f})"],
            ["log3 sep bounds", f"{fmt_log3(r.log3_sep_lower, r.lower_vacuous)} .. {fmt_log3(r.log3_sep_upper)}"],
            ["minimal depth for its size", str(r.min_depth)],
            ["empirical optimum for its size", f"depth {r.empirical_depth:.1f}, width {r.empirical_width:,.0f}"],
            ["vocabulary", "n/a" if r.vocab is None else f"{r.vocab:,}" + (" (below the width)" if r.vocab_bottleneck else "")],
        ], show_header=False)
        yield _notes(r.notes)


def claims_tables(records):
    yield _table("Levine et al. 2020: claims recomputed", ["claim", "quoted", "computed", "tolerance", "status", "why"],
                 ([c.statement, c.quoted, c.computed, c.tolerance,
                   f"[green]{c.status}[/]" if c.status == "reproduced" else f"[yellow]{c.status}[/]", c.reason] for c in records))
    yield _notes(sorted({c.source for c in records}), "Sources")
