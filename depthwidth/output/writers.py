"""Writers for result records: Rich tables for people; JSON, JSONL, CSV and --field for machines.

Records are the core's frozen dataclasses; their field names are the output contract and are
never renamed here. Nothing in this package computes a result. Rich is imported only by the
table writer.
"""
from __future__ import annotations

import sys
from typing import Any, Callable, Iterable

from ..core.errors import InputError
from .guard import encoding_of, write_output
from .records import field_list, flatten, json_text, pick, plain, scalar_text

MAX_TABLE_ROWS = 5000  # records in one table: more is unreadable and slow to lay out; CSV/JSON have no such cap


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
    import csv  # here, not at the top: the table path never pays for csv or json

    rows = [flatten(plain(r)) for r in records]
    if not rows:
        return
    writer = csv.DictWriter(out, fieldnames=union_of_columns(rows), restval="", lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)


def union_of_columns(rows: list[dict]) -> list[str]:
    """Every column of the rows, in the order they first appear: records whose nested dicts differ
    (each rule has its own constants) share one header; a row lacking a column leaves it empty.
    A new column goes just before the next column of its own row already placed, so related
    columns stay together (``constants_a_value`` after ``constants_base_status``, before ``source``)."""
    order = list(rows[0])
    seen = set(order)
    for row in rows[1:]:
        keys = list(row)
        for i, key in enumerate(keys):
            if key in seen:
                continue
            following = next((k for k in keys[i + 1:] if k in seen), None)
            order.insert(order.index(following) if following is not None else len(order), key)
            seen.add(key)
    return order


def only_fields(records: Any, name) -> Any:
    """``records`` (a list, or one record) cut to the --field names, each under its own (dotted) name:
    what ``--field`` prints with ``--format json`` or ``jsonl`` (a bare value before)."""
    names = field_list(name)
    cut = lambda record: {n: pick(plain(record), n) for n in names}
    return [cut(r) for r in records] if isinstance(records, list) else cut(records)


def write_field(records: list, name, out) -> None:
    """Just the --field values, one line per record, for $(...) capture; several fields (--field
    repeated) are separated by tabs, in the order given (``read a b``, ``cut -f``)."""
    names = field_list(name)
    for record in records:
        values = plain(record)
        out.write("\t".join(scalar_text(pick(values, n)) for n in names) + "\n")


def check_table_rows(count: int, fmt: str, field: str | None) -> None:
    """A table holds at most MAX_TABLE_ROWS records (the grid's cap for tables, for every command)."""
    if fmt == "table" and field is None and count > MAX_TABLE_ROWS:
        raise InputError("--format", fmt, f"a table holds at most {MAX_TABLE_ROWS:,} rows; "
                                          f"use --format csv, jsonl or json for these {count:,}")


def emit(records: Any, fmt: str, field: str | None, table: Callable[[Any], Iterable[Any]], out=None,
         command: str = "plan") -> None:
    """Write records (a list, or one object for compare) in the chosen format to stdout; ``command`` names
    the map of its old (0.4) field names (``renames.BY_COMMAND``).

    The whole text is rendered first and written at once (``write_output``): a failure while
    rendering leaves stdout empty, and an encoding that cannot spell a character cannot fail midway."""
    out = sys.stdout if out is None else out
    many = records if isinstance(records, list) else [records]
    if many and field is not None:  # old flat names (0.4) as their new paths, for one minor version (renames.py)
        from .records import check_names, field_names
        from .renames import renamed

        names = field_names(many[0])  # (a plan's record made plain once for both)
        field = renamed(field_list(field), names, command)
        check_names(field, names)
    check_table_rows(len(many), fmt, field)
    buffer = _Buffer(out)
    if field is not None and fmt in ("json", "jsonl"):  # the named fields as JSON objects, not bare values
        records = only_fields(records, field)
        many, field = records if isinstance(records, list) else [records], None
    if field is not None:
        write_field(many, field, buffer)
    elif fmt == "json":
        write_json(records, buffer)
    elif fmt == "jsonl":
        write_jsonl(many, buffer)
    elif fmt == "csv":
        write_csv(many, buffer)
    else:
        console = None  # plain text (str) is written as it is: a screen that needs no Rich never loads it
        for renderable in table(records):
            if isinstance(renderable, str):
                buffer.write(renderable)
                continue
            console = console or make_console(out, buffer)
            console.print(renderable)
    write_output(buffer.getvalue(), out)


class _Buffer:
    """A text buffer that reports the encoding of the stream it stands for (Rich draws ASCII
    boxes for a non-UTF encoding)."""

    def __init__(self, out):
        import io

        self._parts = io.StringIO()
        self.write = self._parts.write
        self.encoding = encoding_of(out) or "utf-8"

    def getvalue(self) -> str:
        return self._parts.getvalue()

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False

def make_console(out, file=None):
    """A Rich console sized for ``out`` (``fitting.console_width``: the terminal, COLUMNS, 160 off a
    terminal, unbounded with --wide; tables fold or stack to fit it, see ``fitting.FittedTable``),
    writing to ``file`` (default ``out``): colour and width follow the real stream, while the
    text goes to a buffer."""
    from rich.console import Console

    from .fitting import console_width

    terminal = hasattr(out, "isatty") and out.isatty()
    return Console(file=out if file is None else file, width=console_width(terminal), highlight=False, soft_wrap=False,
                   height=None if terminal else 25,  # off a terminal: Rich's default height, without probing three fds per print
                   force_terminal=terminal or None,
                   emoji=False)  # no :code: emoji in our text; skips loading Rich's emoji table
