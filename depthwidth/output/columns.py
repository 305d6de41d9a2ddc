"""Records given as columns (``{field: [value per row]}``) written as JSON, JSONL, CSV or one
--field, byte for byte what ``writers.emit`` writes for the same records, but spelled a column
at a time: ``plan --brief`` over 10^5 budgets. Tables go through ``emit``."""
from __future__ import annotations

import math

from .guard import write_output
from .records import json_text, scalar_text
from .stream import _csv_cell, _join_rows

FAST_COLUMN = 1000  # a number column this long is spelled by orjson (floats through NumPy, loaded already by `plan --brief`)


def _spelled(values: list, style: str) -> list[str]:
    """Every value of one column as its cell text: ``scalar_text`` for CSV and --field, JSON for JSON."""
    kinds = set(map(type, values))
    if kinds == {int}:
        if len(values) >= FAST_COLUMN:  # orjson spells integers as str does, five times faster (64-bit ones only)
            import orjson

            try:
                return orjson.dumps(values)[1:-1].decode().split(",")
            except orjson.JSONEncodeError:  # an integer past 64 bits
                pass
        return list(map(str, values))
    if kinds == {float} and all(map(math.isfinite, values)):
        if len(values) < FAST_COLUMN:
            return list(map(float.__repr__, values))
        import numpy as np

        from .stream import _texts  # repr's texts spelled by orjson (a third of the time), tested at every exponent

        return _texts(np.array(values, dtype=np.float64), float.__repr__, True)
    if kinds == {bool}:
        return ["true" if v else "false" for v in values]
    spell = _json_cell if style == "json" else _csv_text if style == "csv" else _field_text
    if bool in kinds:  # True == 1 as a dict key: a column mixing them is spelled cell by cell
        return list(map(spell, values))
    memo: dict = {}  # texts, None, tuples and mixed columns repeat: each distinct value is spelled once
    return [memo[v] if v in memo else memo.setdefault(v, spell(v)) for v in values]


def _plain(value):
    """A cell as the record writers see it: tuples as lists, non-finite floats as null."""
    if isinstance(value, tuple):
        return list(value)
    return None if isinstance(value, float) and not math.isfinite(value) else value


def _json_cell(value) -> str:
    return json_text(_plain(value))


def _field_text(value) -> str:
    return scalar_text(_plain(value))


def _csv_text(value) -> str:
    return _csv_cell(scalar_text(_plain(value)))


def write_columns(columns: dict[str, list], fmt: str, field: str | None, out) -> None:
    """The rows of ``columns`` in ``fmt`` (json, jsonl or csv) or only ``field``, written at once."""
    from .records import check_names

    names = list(columns)
    chosen = check_names(field, names)
    if chosen is not None and fmt in ("json", "jsonl"):  # --field with JSON: objects of the named fields
        names, chosen = chosen, None
    rows = len(columns[names[0]]) if names else 0
    if chosen is not None:
        text = "".join("\t".join(cells) + "\n" for cells in zip(*(_spelled(columns[n], "field") for n in chosen)))
    elif rows == 0:
        text = "[]\n" if fmt == "json" else ""
    elif fmt == "csv":
        cells = [_spelled(columns[n], "csv") for n in names]
        text = ",".join(names) + "\n" + _join_rows(cells, [""] + [","] * (len(names) - 1), "\n")
    else:
        cells = [_spelled(columns[n], "json") for n in names]
        prefixes = ["{" + json_text(names[0]) + ":"] + ["," + json_text(n) + ":" for n in names[1:]]
        body = _join_rows(cells, prefixes, "}\n")
        text = "[\n" + body[:-1].replace("}\n{", "},\n{") + "\n]\n" if fmt == "json" else body
    write_output(text, out)
