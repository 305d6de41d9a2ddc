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

from .errors import EnvironmentFailure, InputError

FORMATS = ("table", "json", "jsonl", "csv")
MAX_TABLE_ROWS = 5000  # records in one table: more is unreadable and slow to lay out; CSV/JSON have no such cap


def plain(value: Any) -> Any:
    """Dataclasses to dicts, tuples to lists, non-finite floats to None (JSON never holds NaN)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):  # e.g. a rule's constants, each a dataclass
        return {key: plain(v) for key, v in value.items()}
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
    if isinstance(value, list) and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return ";".join(map(str, value))  # tp_sizes: 1;2;4;8, one CSV cell with no quoting
    if isinstance(value, (list, dict)):  # a nested record (--field deep) or a list of them: JSON, never Python's repr
        return json_text(value)
    return str(value)


def json_text(value: Any) -> str:
    """The one JSON spelling of a plain value: compact, ASCII only (\\u escapes), floats by repr
    (shortest round-trip), never NaN or Infinity. The grid writer spells rows the same way."""
    import json

    return json.dumps(value, ensure_ascii=True, allow_nan=False, separators=(",", ":"))


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
    """A JSON array with one compact record per line (one object for a single record such as
    compare's), spelled by ``json_text`` exactly as the grid writer spells its rows."""
    if not isinstance(records, list):
        out.write(json_text(plain(records)) + "\n")
    elif records:
        out.write("[\n" + ",\n".join(json_text(plain(r)) for r in records) + "\n]\n")
    else:
        out.write("[]\n")


def write_jsonl(records: list, out) -> None:
    """One compact JSON object per line."""
    out.write("".join(json_text(plain(r)) + "\n" for r in records))


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


def check_table_rows(count: int, fmt: str, field: str | None) -> None:
    """A table holds at most MAX_TABLE_ROWS records (the grid's cap for tables, for every command)."""
    if fmt == "table" and field is None and count > MAX_TABLE_ROWS:
        raise InputError("--format", fmt, f"a table holds at most {MAX_TABLE_ROWS:,} rows; "
                                          f"use --format csv, jsonl or json for these {count:,}")


def emit(records: Any, fmt: str, field: str | None, table: Callable[[Any], Iterable[Any]], out=None) -> None:
    """Write records (a list, or one object for compare) in the chosen format to stdout.

    The whole text is rendered first and written at once (``write_output``): a failure while
    rendering leaves stdout empty, and an encoding that cannot spell a character cannot fail midway."""
    out = sys.stdout if out is None else out
    many = records if isinstance(records, list) else [records]
    if many:
        check_field(many[0], field)
    check_table_rows(len(many), fmt, field)
    buffer = _Buffer(out)
    if field is not None:
        write_field(many, field, buffer)
    elif fmt == "json":
        write_json(records, buffer)
    elif fmt == "jsonl":
        write_jsonl(many, buffer)
    elif fmt == "csv":
        write_csv(many, buffer)
    else:
        console = make_console(out, buffer)
        for renderable in table(records):
            console.print(renderable)
    write_output(buffer.getvalue(), out)


class _Buffer:
    """A text buffer that reports the encoding of the stream it stands for (Rich draws ASCII
    boxes for a non-UTF encoding)."""

    def __init__(self, out):
        import io

        self._parts = io.StringIO()
        self.write = self._parts.write
        self.encoding = _encoding(out) or "utf-8"

    def getvalue(self) -> str:
        return self._parts.getvalue()

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


def _encoding(out) -> str | None:
    """The normalized codec name of a text stream, or None (a StringIO takes any text)."""
    name = getattr(out, "encoding", None)
    if not isinstance(name, str):
        return None
    import codecs

    try:
        return codecs.lookup(name).name
    except LookupError:
        return None


def output_text(text: str, out) -> str:
    """``text`` as ``out`` can take it: unchanged for UTF-8 (and StringIO); for another encoding
    (PYTHONIOENCODING=ascii, a latin-1 terminal) every character it cannot spell becomes a
    backslash escape (``±`` -> ``\\xb1``), so nothing fails after part of the output is out.
    JSON needs none of this: it is ASCII always."""
    encoding = _encoding(out)
    if encoding is None or encoding in ("utf-8", "utf-8-sig") or text.isascii():
        return text
    return text.encode(encoding, "backslashreplace").decode(encoding)


def write_output(text: str, out) -> None:
    """Write and flush ``text`` to ``out``; a closed or full stdout becomes EnvironmentFailure
    ("cannot write output: ..."); a reader that went away (BrokenPipeError) goes up as is."""
    if out is None:  # Python sets sys.stdout to None when it starts with file descriptor 1 closed
        raise EnvironmentFailure("cannot write output: standard output is closed")
    try:
        out.write(output_text(text, out))
        out.flush()
    except BrokenPipeError:
        raise
    except (OSError, ValueError) as err:  # ValueError: "I/O operation on closed file"
        raise EnvironmentFailure(f"cannot write output: {getattr(err, 'strerror', None) or err}") from None


def make_console(out, file=None):
    """A Rich console sized for ``out`` (wide enough off a terminal that tables do not wrap),
    writing to ``file`` (default ``out``): colour and width follow the real stream, while the
    text goes to a buffer."""
    from rich.console import Console

    terminal = hasattr(out, "isatty") and out.isatty()
    return Console(file=out if file is None else file, width=None if terminal else 160, highlight=False, soft_wrap=False,
                   force_terminal=terminal or None,
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
    """A Rich table. Every string (title, headers, cells) is shown as it is, never read as Rich
    markup: data such as a config's model_type "[/]" neither crashes nor vanishes. Style a cell
    by passing a ``rich.text.Text`` (see ``claims_tables``)."""
    from rich.table import Table
    from rich.text import Text

    def literal(value):
        return Text(value) if isinstance(value, str) else value

    table = Table(title=literal(title), title_justify="left", header_style="bold", show_header=show_header)
    for name in columns:
        table.add_column(literal(name), justify="right" if name in right else "left")
    for row in rows:
        table.add_row(*map(literal, row))
    return table


def styled(text: str, style: str | None):
    """A table cell in a colour (a Rich style such as "green"), shown as it is: tables never read
    markup from strings (see ``_table``), so colour goes through this."""
    from rich.text import Text

    return Text(text, style=style or "")


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


def _block_text(r, prefix: str = "") -> str:
    """Heads, KV heads, head size and feed-forward of a shape, in one cell."""
    kv = getattr(r, prefix + "kv_heads")
    ffn = getattr(r, prefix + "ffn")
    gated = getattr(r, "gated", False)
    return f"{getattr(r, prefix + 'heads')} heads" + (f" ({kv} KV)" if kv != getattr(r, prefix + "heads") else "") + \
        f", ffn {ffn:,}" + (" gated" if gated else "")


def _tp_text(sizes) -> str:
    return ", ".join(map(str, sizes)) if sizes else "none"


def plan_tables(plans):
    for p in plans:
        rule = "" if p.empirical_depth is None else f" (rule {p.rule}: depth {p.empirical_depth:.1f}, width {p.empirical_width:,.0f} before snapping)"
        summary = [
            ["budget", f"{fmt_count(p.params)} {p.count} parameters, {p.arch} block"
             + ("" if p.budget_source == "params" else f" (from {p.budget_source})")],
            ["minimal depth", f"{p.min_depth} (L* = {p.min_depth_exact:.3f}, where L = log3 d)"],
            ["width", f"{p.width:,} (exact {p.width_exact:,.1f})"],
            ["planned shape", f"{p.min_depth}x{p.width}x{p.heads} ({p.regime} regime: depth >= log3 width)"],
            ["block", _block_text(p)],
            ["params actual", f"{fmt_count(p.params_actual)} ({p.params_deviation:+.1%} from budget); active {fmt_count(p.params_active)}"
             + ("" if p.params_embedding is None else f"; embeddings {fmt_count(p.params_embedding)}")],
            ["per token", f"{fmt_count(p.flops_per_token)} training FLOPs"
             + ("" if p.kv_bytes_per_token is None else f"; KV cache {p.kv_bytes_per_token:,} bytes")],
            ["tensor parallel", _tp_text(p.tp_sizes)],
            ["recommended", f"{p.recommended_depth}x{p.recommended_width}x{p.recommended_heads}, {p.recommended_kv_heads} KV heads, "
             f"ffn {p.recommended_ffn:,}: {fmt_count(p.recommended_params)} ({p.recommended_params_deviation:+.1%}){rule}"],
            ["recommended tp", _tp_text(p.recommended_tp_sizes)],
        ]
        yield _table(f"Plan for {fmt_count(p.params)} parameters", ["", ""], summary, show_header=False)
        yield _table("Candidate shapes", ["depth", "width", "heads", "KV", "ffn", "params", "vs budget", "d/L", "tp", "regime",
                                          "log3 sep lower", "log3 sep upper"],
                     ([str(c.depth), f"{c.width:,}", str(c.heads), str(c.kv_heads), f"{c.ffn:,}", fmt_count(c.params_actual),
                       f"{c.params_deviation:+.1%}", f"{c.aspect_ratio:.1f}", _tp_text(c.tp_sizes), c.regime,
                       fmt_log3(c.log3_sep_lower, c.lower_vacuous), fmt_log3(c.log3_sep_upper)] for c in p.candidates),
                     right={"depth", "width", "heads", "KV", "ffn", "params", "vs budget", "d/L", "log3 sep lower", "log3 sep upper"})
        yield _notes(p.notes)


def sweep_tables(rows):
    """`sweep`: the iso-budget shapes, one row each (the loss column is for the user's runs)."""
    yield _table("Iso-budget sweep", ["id", "depth", "width", "heads", "KV", "ffn", "params", "vs budget", "d/L", "tp",
                                      "FLOPs/token", "KV bytes/token", "regime"],
                 ([r.id, str(r.depth), f"{r.width:,}", str(r.heads), str(r.kv_heads), f"{r.ffn:,}", fmt_count(r.params),
                   f"{r.params_deviation:+.1%}", f"{r.aspect_ratio:.1f}", _tp_text(r.tp_sizes), fmt_count(r.flops_per_token),
                   "n/a" if r.kv_bytes_per_token is None else f"{r.kv_bytes_per_token:,}", r.regime] for r in rows),
                 right={"depth", "width", "heads", "KV", "ffn", "params", "vs budget", "d/L", "FLOPs/token", "KV bytes/token"})
    yield _notes(["train each row, fill in the loss column (CSV or JSON), then: depthwidth fit RESULTS.csv --save rule.json"])


def compare_tables(c):
    rows = [[label] + _shape_row(r) for label, r in (("deep", c.deep), ("shallow", c.shallow))]
    yield _table("Compare", ["", *SHAPE_COLUMNS], rows, right={"params", "log3 d", "log3 sep lower", "log3 sep upper"})
    gap = "n/a" if c.log3_gap is None else f"{c.log3_gap:,.3f}"
    at = f"at depth {c.shallow.depth}, heads {c.shallow.heads}"
    yield _table("Verdict", ["", ""], [
        ["verdict", c.verdict],
        ["log3 gap", gap],
        ["params ratio (deep/shallow)", f"{c.params_ratio:.4g}"],
        [f"replicate width {at} ({c.replicate_basis})", fmt_width(c.replicate_width, c.replicate_log10_width)],
        [f"surpass width {at} ({c.surpass_basis})", fmt_width(c.surpass_width, c.surpass_log10_width)],
        ["empirical depth for size", f"deep {c.deep_empirical_depth:.1f}, shallow {c.shallow_empirical_depth:.1f}"],
    ], show_header=False)
    yield _notes(c.notes)


def equiv_tables(records):
    yield _table("Widths a shallower network needs (Levine et al. 2020, Corollaries 1-2)",
                 ["deep", "shallow depth", "heads", "replicate width", "its params", "replicate basis", "surpass width",
                  "its params", "surpass basis"],
                 ([r.deep, str(r.shallow_depth), str(r.shallow_heads),
                   fmt_width(r.replicate_width, r.replicate_log10_width), fmt_log10_count(r.replicate_log10_params),
                   r.replicate_basis or "n/a", fmt_width(r.surpass_width, r.surpass_log10_width),
                   fmt_log10_count(r.surpass_log10_params), r.surpass_basis or "n/a"] for r in records),
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
        "c2_reading": np.full(notes.shape, f'"{chunk["c2_reading"]}"' if style == "json" else chunk["c2_reading"], dtype=object),
        **(_block_text_columns(chunk, style, null) if "kv_heads" in chunk else {}),
    }


def _block_text_columns(chunk: dict, style: str, null: str) -> dict:
    """The vanilla block's fields of a shape-list chunk (``reports.shape_list_chunks``), spelled as
    the scalar writers spell them: ints, null for what the paper's block lacks, tp_sizes as a list."""
    import numpy as np

    size = chunk["depth"].size
    constant = lambda text: np.full(size, text, dtype=object)
    head_dim = _texts(chunk["head_dim"], str)
    head_dim[chunk["head_dim"] < 0] = null
    spell_list = (lambda sizes: "[" + ",".join(map(str, sizes)) + "]") if style == "json" else (lambda sizes: ";".join(map(str, sizes)))
    tp = np.array([null if sizes is None else spell_list(sizes) for sizes in chunk["tp_sizes"].tolist()], dtype=object)
    return {"kv_heads": _distinct_texts(chunk["kv_heads"]), "head_dim": head_dim, "ffn": _texts(chunk["ffn"], str),
            "gated": constant("false"), "experts": constant(null), "top_k": constant(null),
            "params_real": _texts(chunk["params_real"], str), "params_active": _texts(chunk["params_active"], str),
            "params_embedding": constant(null), "flops_per_token": _texts(chunk["flops_per_token"], str),
            "kv_bytes_per_token": _texts(chunk["kv_bytes_per_token"], str), "tp_sizes": tp}


def _join_rows(columns: list, prefixes: list, end: str) -> str:
    """All rows of a chunk as one string, each ``prefix0 cell0 prefix1 cell1 ... end``: one
    join over an interleaved object array, no Python-level work per row (twice as fast)."""
    import numpy as np

    if not prefixes[0] and len(set(prefixes[1:])) <= 1:  # CSV, --field: one separator, joined per row (faster)
        separator = prefixes[1] if len(prefixes) > 1 else ""
        return end.join(map(separator.join, zip(*(column.tolist() for column in columns)))) + end
    pieces = np.empty((columns[0].size, 2 * len(columns) + 1), dtype=object)
    for i, (prefix, column) in enumerate(zip(prefixes, columns)):
        pieces[:, 2 * i] = prefix
        pieces[:, 2 * i + 1] = column
    pieces[:, -1] = end
    return "".join(pieces.ravel().tolist())


def _note_text(notes, style: str) -> str:
    if style == "json":
        return json_text(list(notes))
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

    finite = np.isfinite(values)
    if finite.all():
        return _texts(values, float.__repr__)
    texts = np.full(values.shape, null, dtype=object)
    texts[finite] = _texts(values[finite], float.__repr__)
    return texts


def _csv_cell(text: str) -> str:
    """Quote a CSV cell the way csv.QUOTE_MINIMAL would."""
    return '"' + text.replace('"', '""') + '"' if any(c in text for c in ',"\n\r') else text


PARALLEL_ROWS = 1 << 18  # grids from this many rows spell their chunks in worker processes


def stream_grid(chunks: Iterable[dict], fmt: str, field: str | None, out, rows: int | None = None,
                names: list[str] | None = None) -> None:
    """Write grid chunks as CSV, JSONL, JSON or one --field, never holding the whole grid.
    (Tables, at most a few thousand rows, go through ``emit`` with scalar records.)

    Spelling floats (``repr``) is most of a big grid's cost, so a grid of ``rows`` >=
    PARALLEL_ROWS on a machine with several CPUs has its chunks spelled by forked worker
    processes, a few chunks ahead, and written in order: the same bytes, in about half the time.
    ``names``: the columns (default: a grid row's, the Bounds fields)."""
    names = names or grid_columns()
    if field is not None and field not in names:
        raise InputError("--field", field, "expected one of " + ", ".join(names))
    write = _stream_writer(out)
    style = "field" if field is not None else "json" if fmt in ("json", "jsonl") else "csv"
    if style == "csv":
        write(",".join(names) + "\n")
        prefixes, end = [""] + [","] * (len(names) - 1), "\n"
    elif style == "json":
        prefixes, end = ["{" + f'"{names[0]}":'] + [f',"{name}":' for name in names[1:]], "},\n" if fmt == "json" else "}\n"
    else:
        prefixes, end = [""], "\n"
    if fmt == "json" and field is None:
        write("[")
    first = True
    spec = (style, [field] if style == "field" else names, prefixes, end)
    texts = _chunk_texts(chunks, spec, rows)
    try:
        for text in texts:  # one chunk's text at a time (~10 MB at most), never the whole grid
            if fmt == "json" and field is None:  # rows end in "},\n": the separator moves before the next chunk
                write(("\n" if first else ",\n") + text[:-2])
            else:
                write(text)
            first = False
    finally:
        texts.close()  # a failed write (a closed pipe) stops the workers now, not at exit
    if fmt == "json" and field is None:
        write("\n]\n")
    write_output("", out)  # flush: a full disk is reported here


def _chunk_text(chunk: dict, spec: tuple) -> str:
    """All rows of one chunk as text (a top-level function: worker processes run it)."""
    style, columns, prefixes, end = spec
    texts = _grid_text_columns(chunk, style)
    return _join_rows([texts[name] for name in columns], prefixes, end)


def _chunk_texts(chunks: Iterable[dict], spec: tuple, rows: int | None):
    """The text of each non-empty chunk, in order: here, or in forked workers for a big grid."""
    import os

    chunks = (chunk for chunk in chunks if chunk["depth"].size)
    workers = min(os.cpu_count() or 1, 4)
    if rows is None or rows < PARALLEL_ROWS or workers < 2 or not hasattr(os, "fork"):
        return (_chunk_text(chunk, spec) for chunk in chunks)
    return _forked_texts(chunks, spec, workers)


_DONE = (1 << 64) - 1  # a worker's last frame: it has spelled every chunk dealt to it


def _forked_texts(chunks, spec: tuple, workers: int):
    """Chunk texts spelled by ``workers`` forked processes, chunk i by worker i % workers.

    Each worker runs its own copy of the ``chunks`` generator (computing a chunk is cheap,
    spelling it is not), spells its share and sends each text down its own pipe as a
    length-prefixed frame; a full pipe blocks it, so memory stays at a chunk per worker. No
    threads, no shared queues: a consumer that stops (a closed stdout) kills the workers and
    nothing can hang. A worker that dies without its final frame is an error, never a short grid."""
    import os
    import signal
    import struct

    sys.stdout.flush()  # nothing buffered is inherited twice
    pipes, pids = [], []
    try:
        for index in range(workers):
            read_end, write_end = os.pipe()
            pid = os.fork()
            if pid == 0:  # the worker: never returns
                code = 1
                try:
                    os.close(read_end)
                    for pipe in pipes:
                        pipe.close()
                    with os.fdopen(write_end, "wb") as sink:
                        for number, chunk in enumerate(chunks):
                            if number % workers == index:
                                data = _chunk_text(chunk, spec).encode("utf-8", "surrogatepass")
                                sink.write(struct.pack("<Q", len(data)) + data)
                        sink.write(struct.pack("<Q", _DONE))
                    code = 0
                finally:
                    os._exit(code)  # no atexit handlers, no second flush of the parent's buffers
            os.close(write_end)
            pids.append(pid)
            pipes.append(os.fdopen(read_end, "rb"))
        number = 0
        while True:
            source = pipes[number % workers]
            head = source.read(8)
            if len(head) < 8:
                raise RuntimeError("a grid worker process stopped before its last chunk")
            (size,) = struct.unpack("<Q", head)
            if size == _DONE:  # no chunk `number`: every chunk has been written
                return
            data = source.read(size)
            if len(data) < size:
                raise RuntimeError("a grid worker process stopped in the middle of a chunk")
            yield data.decode("utf-8", "surrogatepass")
            number += 1
    finally:
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:  # pragma: no cover - already gone
                pass
            os.waitpid(pid, 0)
        for pipe in pipes:
            pipe.close()


def _stream_writer(out):
    """A write function for streamed output: each piece made safe for the stream's encoding
    (``output_text``), a failing write raised as EnvironmentFailure."""
    if out is None:
        raise EnvironmentFailure("cannot write output: standard output is closed")

    def write(text: str) -> None:
        try:
            out.write(output_text(text, out))
        except BrokenPipeError:
            raise
        except (OSError, ValueError) as err:
            raise EnvironmentFailure(f"cannot write output: {getattr(err, 'strerror', None) or err}") from None

    return write

def models_tables(records):
    yield _table("Published architectures", ["model", "shape", "params 12Ld²", "params real", "active", "KV B/token", "d/L",
                                              "log3 d", "regime", "log3 sep lower", "log3 sep upper", "min depth", "empirical depth"],
                 ([r.name, f"{r.depth}x{r.width}x{r.heads}", fmt_count(r.params), fmt_count(r.params_real),
                   fmt_count(r.params_active), fmt_count(r.kv_bytes_per_token), f"{r.aspect_ratio:.0f}",
                   f"{r.threshold_depth:.3f}", r.regime, fmt_log3(r.log3_sep_lower, r.lower_vacuous), fmt_log3(r.log3_sep_upper),
                   str(r.min_depth), f"{r.empirical_depth:.1f}"] for r in records),
                 right={"params 12Ld²", "params real", "active", "KV B/token", "d/L", "log3 d", "log3 sep lower", "log3 sep upper",
                        "min depth", "empirical depth"})


def inspect_tables(records):
    for r in records:
        yield _table(f"{r.source}" + (f" ({r.model_type})" if r.model_type else ""), ["", ""], [
            ["shape", f"{r.depth}x{r.width}x{r.heads}" + (f", {r.kv_heads} KV heads" if r.kv_heads != r.heads else "")],
            ["feed-forward", f"{r.ffn:,}" + (" (gated)" if r.gated else "")
             + (f"; {r.experts} experts, top-{r.top_k}" if r.experts else "")],
            ["decoder layers", str(r.decoder_depth) if r.decoder_depth else "none (not an encoder-decoder)"],
            ["params (real, non-embedding)", "n/a" if r.params_real is None else f"{r.params_real:,} ({fmt_count(r.params_real)})"],
            ["params (active per token)", "n/a" if r.params_active is None else f"{r.params_active:,} ({fmt_count(r.params_active)})"],
            ["params (embeddings)", "n/a" if r.params_embedding is None else f"{r.params_embedding:,} ({fmt_count(r.params_embedding)})"],
            ["params (12·L·d²)", f"{r.params:,} ({fmt_count(r.params)})"],
            ["training FLOPs per token (T=2048)", "n/a" if r.flops_per_token is None else fmt_count(r.flops_per_token)],
            ["KV cache per token (16-bit)", "n/a" if r.kv_bytes_per_token is None else f"{r.kv_bytes_per_token:,} bytes"],
            ["tensor-parallel degrees", "n/a" if r.tp_sizes is None else ", ".join(map(str, r.tp_sizes))],
            ["regime", f"{r.regime} (log3 d = {r.threshold_depth:.3f})"],
            ["log3 sep bounds", f"{fmt_log3(r.log3_sep_lower, r.lower_vacuous)} .. {fmt_log3(r.log3_sep_upper)}"],
            ["minimal depth for its size", str(r.min_depth)],
            ["empirical optimum for its size", f"depth {r.empirical_depth:.1f}, width {r.empirical_width:,.0f}"],
            ["vocabulary", "n/a" if r.vocab is None else f"{r.vocab:,}" + (" (below the width)" if r.vocab_bottleneck else "")],
        ], show_header=False)
        yield _notes(r.notes)


def export_tables(records):
    for r in records:
        yield _table(f"{r.path} ({r.format})", ["", ""], [
            ["shape", f"{r.depth}x{r.width}x{r.heads}" + (f", {r.kv_heads} KV heads" if r.kv_heads != r.heads else "")
             + f", head_dim {r.head_dim}"],
            ["feed-forward", f"{r.ffn:,}" + (" (gated)" if r.gated_ffn else "")
             + (f", {r.experts} experts, top-{r.top_k}" if r.experts else "")],
            ["params (real, non-embedding)", f"{r.params_real:,} ({fmt_count(r.params_real)})"],
            ["params (active per token)", f"{r.params_active:,} ({fmt_count(r.params_active)})"],
            ["params (embeddings)", "n/a" if r.params_embedding is None else f"{r.params_embedding:,} ({fmt_count(r.params_embedding)})"],
            ["vocabulary", f"{r.vocab:,}, " + ("tied" if r.tied else "untied")],
            ["context", f"{r.context:,}"],
        ], show_header=False)
        yield _notes(r.notes)


def claims_tables(records):
    yield _table("Levine et al. 2020: claims recomputed", ["claim", "quoted", "computed", "tolerance", "status", "why"],
                 ([c.statement, c.quoted or "(no number: derived)", c.computed, c.tolerance or "",
                   styled(c.status, {"reproduced": "green", "differs": "yellow"}.get(c.status)), c.reason]
                  for c in records))
    yield _notes(sorted({c.source for c in records}), "Sources")


def rules_tables(records):
    """`depthwidth rules`: the registry, one row per rule; unverified constants flagged."""
    yield _table("Depth/width rules (rules.py)", ["name", "kind", "formula", "source", "range", "verified"],
                 ([r.name, r.kind, r.formula, r.source, r.fit_range,
                   "yes" if r.verified else styled("NO: unverified constants", "yellow")] for r in records))
    yield _notes((f"{r.name}: {r.verification}" for r in records), "Where each rule was verified")


def plan_rules_tables(records):
    """`plan --rules`: every rule's shape for a budget side by side; guards give a maximum depth."""
    for params in dict.fromkeys(r.params for r in records):
        rows = [r for r in records if r.params == params]
        yield _table(f"Rules side by side for {fmt_count(params)} parameters",
                     ["rule", "kind", "depth", "width", "heads", "d/L", "params", "rule's L, d", "range", "verified", "extrapolated"],
                     ([r.rule, r.kind, (f"<= {r.depth}" if r.kind == "guard" else str(r.depth)), f"{r.width:,}", str(r.heads),
                       f"{r.width / r.depth:.0f}", f"{fmt_count(r.params_actual)} ({r.params_deviation:+.1%})",
                       f"{r.rule_depth:.1f}, {r.rule_width:,.0f}", r.fit_range,
                       "yes" if r.verified else styled("NO", "yellow"), styled("yes", "yellow") if r.extrapolated else "no"] for r in rows),
                     right={"depth", "width", "heads", "d/L", "params", "rule's L, d"})
        yield _notes(f"{r.rule}: {n}" for r in rows for n in (*r.notes, r.source))


def _span(interval) -> str:
    return f"[{interval[0]:.4g}, {interval[1]:.4g}]"


def fit_tables(report):
    """`depthwidth fit`: each group's optimum with its interval, then the laws across groups."""
    r = report
    unit = "parameters" if r.group_by == "params" else "FLOPs"
    yield _table(f"Optimal depth per size group ({r.source.file}; {r.confidence:.0%} bootstrap intervals, {r.bootstrap} resamples)",
                 ["group", f"size ({unit})", "runs", "depths", "lowest-loss depth", "optimal depth", "interval",
                  "optimal width", "interval", "min loss"],
                 ([g.label, fmt_count(g.size), str(g.runs), f"{g.depths[0]:g}-{g.depths[-1]:g} ({len(g.depths)})",
                   f"{g.best_depth:g}", f"{g.optimal_depth:.1f}", _span(g.depth_interval), f"{g.optimal_width:,.0f}",
                   _span(g.width_interval), f"{g.min_loss:.4f}"] for g in r.groups),
                 right={f"size ({unit})", "runs", "lowest-loss depth", "optimal depth", "optimal width", "min loss"})
    rows = []
    if r.levine is not None:
        lv = r.levine
        rows.append(["levine: ln d = a + b·L", f"a = {lv.a:.4g} {_span(lv.a_interval)}", f"b = {lv.b:.4g} {_span(lv.b_interval)}",
                     "n/a" if lv.r2 is None else f"{lv.r2:.4f}", f"{lv.rmse:.4f}"])
    if r.power is not None:
        pw = r.power
        rows.append(["power: d = k·N^alpha", f"k = {pw.k:.4g} {_span(pw.k_interval)}",
                     f"alpha = {pw.alpha:.4g} {_span(pw.alpha_interval)}", "n/a" if pw.r2 is None else f"{pw.r2:.4f}", f"{pw.rmse:.4f}"])
        rows.append(["power: L = depth_k·N^beta", f"depth_k = {pw.depth_k:.4g}", f"beta = {pw.depth_beta:.4g} {_span(pw.beta_interval)}",
                     "", ""])
    yield _table(f"Laws across {len(r.groups)} groups (N = {r.group_by})", ["law", "constant", "constant", "r2", "rmse (ln d)"],
                 rows, right={"r2", "rmse (ln d)"})
    verdict = (f"{r.better_form} fits better (lower rmse of ln(optimal width) predicted from each group's size)"
               if r.better_form else f"{r.form} (chosen with --form)")
    fr = r.fit_range
    yield _notes([f"rule '{r.name}' uses the {r.form} form: {verdict}",
                  f"fitted on sizes {fmt_count(fr.size[0])}-{fmt_count(fr.size[1])} {unit}, depths {fr.depth[0]:g}-{fr.depth[1]:g}, "
                  f"widths {fr.width[0]:,.0f}-{fr.width[1]:,.0f}", *r.notes])


def certify_tables(records):
    """`certify`: the certified rank beside Theorem 1/2's bounds, one summary per shape."""
    for r in records:
        a, b = (",".join(map(str, part)) for part in (r.partition_a, r.partition_b))
        seeds = f"seed {r.seed}" if r.trials == 1 else f"seeds {r.seed}..{r.seed + r.trials - 1}"
        rank = f"{r.rank:,}" + (" (at least: saturated by M)" if r.saturated else "")
        if r.trials > 1:
            rank += f"; per trial {r.rank_min:,}..{r.rank_max:,}"
        theorem = "no theorem (d = 3^L)" if r.theorem is None else f"Theorem {r.theorem}" + (f", c2 {r.c2_reading}" if r.theorem == 2 else "")
        lower = fmt_log3(r.log3_sep_lower, r.lower_vacuous) + ("" if r.lower_testable or r.lower_vacuous or r.log3_sep_lower is None
                                                               else " (untestable with this M)")
        yield _table(f"Certified separation rank of {r.depth}x{r.width}x{r.heads} (eq. 3, exact mod p)", ["", ""], [
            ["network", f"L = {r.depth}, d = {r.width}, H = {r.heads}, head dim {r.head_dim}; no softmax, norm, activation or residual"],
            ["grid", f"{r.templates} x {r.templates} templates; N = {r.positions}, A = {{{a}}}, B = {{{b}}}; "
                     f"y_{r.output_coord} at position {r.output_position}"],
            ["arithmetic", f"mod {r.prime:,}; {seeds}"],
            ["certified rank", rank],
            ["log3 rank", fmt_log3(r.log3_rank)],
            ["regime", f"{r.regime} ({theorem})"],
            ["log3 sep lower", lower],
            ["log3 sep upper", fmt_log3(r.log3_sep_upper)],
            ["verdict", r.verdict],
        ], show_header=False)
        yield _notes(r.notes)
