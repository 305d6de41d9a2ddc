"""The one spelling of every record: dataclasses to plain values, field names, one value as
text, JSON. JSON, JSONL, CSV, --field and the grid streamer all spell through here, so a field
has the same name and the same text in every format."""
from __future__ import annotations

import dataclasses
import math
from typing import Any

from ..core.errors import not_one_of

FORMATS = ("table", "json", "jsonl", "csv")


def plain(value: Any) -> Any:
    """Dataclasses to dicts, tuples to lists, non-finite floats to None (JSON never holds NaN)."""
    names = _FIELD_NAMES.get(value.__class__, _UNSEEN)
    if names is _UNSEEN:
        names = _field_names(value.__class__)
    if names is not None:
        return {name: plain(getattr(value, name)) for name in names}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):  # e.g. a rule's constants, each a dataclass
        return {key: plain(v) for key, v in value.items()}
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


_UNSEEN = object()
_FIELD_NAMES: dict = {}  # a class's dataclass field names (None for any other class), read once per class


def _field_names(cls: type) -> tuple | None:
    if len(_FIELD_NAMES) >= 1024:  # classes made at run time (a schema's, a test's) must not pile up
        _FIELD_NAMES.clear()
    names = tuple(f.name for f in dataclasses.fields(cls)) if dataclasses.is_dataclass(cls) else None
    _FIELD_NAMES[cls] = names
    return names


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
        if record is None:
            return None
        record = record[part]
    return record


def field_list(field) -> list[str] | None:
    """--field as a list of names (it may be repeated: each is printed), None when not given."""
    if field is None:
        return None
    names = [field] if isinstance(field, str) else list(field)
    return names or None


def check_names(field, accepted) -> list[str] | None:
    """The --field names, each one of ``accepted`` (else the "did you mean" error, before any output)."""
    names = field_list(field)
    accepted = list(accepted)
    for name in names or ():
        if name not in accepted:
            raise not_one_of("--field", name, accepted)
    return names


def check_field(sample: Any, name) -> None:
    """Fail before any output when a --field names no field of these records."""
    if field_list(name) is not None:
        check_names(name, field_names(sample))


def scalar_text(value: Any) -> str:
    """One value as text for --field and CSV (the same text in both): empty for null, JSON spelling
    for booleans, repr for floats; a list of numbers joined by ';' (``12.0;28.0``), a list of
    strings by '; ', anything nested (a record, a list of records) as compact JSON."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "; ".join(value)
    if value and isinstance(value, list) and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
        return ";".join(map(scalar_text, value))  # tp_sizes 1;2;4;8, depth_range 12.0;28.0: one CSV cell, no quoting
    if isinstance(value, (list, dict)):  # a nested record (--field deep) or a list of them: JSON, never Python's repr
        return json_text(value)
    return str(value)


def json_text(value: Any) -> str:
    """The one JSON spelling of a plain value: compact, ASCII only (\\u escapes), floats by repr
    (shortest round-trip), never NaN or Infinity. The grid writer spells rows the same way."""
    import json

    return json.dumps(value, ensure_ascii=True, allow_nan=False, separators=(",", ":"))


def flatten(record: dict, prefix: str = "") -> dict:
    """One CSV row: nested records become columns of their dotted names (``run.layout.tp``, as --field
    names them); lists of records are left to JSON."""
    row = {}
    for key, value in record.items():
        if isinstance(value, dict):
            row.update(flatten(value, f"{prefix}{key}."))
        elif not (isinstance(value, list) and value and isinstance(value[0], dict)):
            row[prefix + key] = scalar_text(value)
    return row
