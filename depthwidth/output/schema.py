"""JSON Schemas of the output records, for pipeline users (`depthwidth schema RECORD`).

Built by Pydantic from the records' own dataclasses, whose field names are the JSON contract, so
a schema cannot drift from what the writers print. Pydantic is imported here only, and only
when a schema is asked for: `plan` and `bounds` never load it.
"""
from __future__ import annotations

from importlib import import_module

from ..core.errors import InputError

JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


def _attribute(module: str, name: str):
    """The record type ``name`` of ``depthwidth.<module>``, imported when a schema is asked for."""
    return lambda: getattr(import_module(f"depthwidth.{module}"), name)


def _costed(module: str, name: str):
    """The record ``name`` of ``module`` as a command prints it with its costs (``run`` and ``serve``:
    ``cost.fields.costed_type``)."""
    def load():
        from ..cost.fields import costed_type

        return costed_type(getattr(import_module(f"depthwidth.{module}"), name))
    return load


def _comparison():
    """compare's record: both sides with their costs."""
    from ..advice.reports import comparison_report_type
    from ..arch.record import ShapeRecord
    from ..cost.fields import costed_type
    from ..core.frozen import frozen_class

    side = costed_type(ShapeRecord, True)
    return frozen_class("ComparisonReport", [("deep", side), ("shallow", side)], bases=(comparison_report_type(),))


def _sweep():
    """sweep's rows: without a training length, or with its costs (``--tokens``)."""
    from typing import Union

    from ..loop.sweep_record import SweepRow
    from ..loop.sweep_costs import CostedSweepRow

    return Union[SweepRow, CostedSweepRow]


# name -> (the record's type, whether `--format json` prints an array of them, what prints it)
RECORDS = {
    "plan": (_attribute("advice.plan_record", "Plan"), True, "plan --format json (one record per budget)"),
    "plan-brief": (_attribute("advice.plan_record", "PlanBrief"), True, "plan --brief --format json (one record per budget)"),
    "candidate": (_attribute("advice.plan_record", "Candidate"), False, "one of a plan's candidates"),
    "plan-rules": (_attribute("advice.rules.table", "RuleShape"), True, "plan --rules --format json"),
    "shape": (_attribute("arch.record", "ShapeRecord"), False, "the one shape record"),
    "bounds": (_attribute("arch.record", "ShapeRecord"), True, "bounds SHAPE... --format json"),
    "grid": (_attribute("theory.separation", "Bounds"), True, "bounds --depth A:B --width C:D --format json"),
    "compare": (_comparison, False, "compare --format json"),
    "equiv": (_attribute("theory.comparison", "Equivalence"), True, "equiv --format json"),
    "models": (_attribute("advice.reports", "ModelReport"), True, "models --format json"),
    "inspect": (_costed("advice.reports", "ConfigReport"), True, "inspect --format json"),
    "cost": (_attribute("cost.row", "CostRow"), True, "cost --format json"),
    "sweep": (_sweep, True, "sweep --format json (with --tokens, each row with its run)"),
    "export": (_attribute("loop.export", "Export"), True, "export --format json"),
    "fit": (_attribute("loop.sizes", "SizeOptimum"), True, "fit --format json (one record per size)"),
    "rules": (_attribute("advice.rules.record", "Rule"), True, "rules --format json"),
    "reproduce": (_attribute("advice.claims", "Claim"), True, "reproduce --format json"),
    "certify": (_attribute("theory.certify", "Certificate"), True, "certify --format json"),
}


def schema(name: str) -> dict:
    """The JSON Schema (draft 2020-12) of what ``RECORDS[name]`` says prints it; for an array
    command, JSONL lines and CSV rows are its items (CSV flattens nested records)."""
    key = name.strip().lower()
    if key not in RECORDS:
        raise InputError("record", name, "expected one of " + ", ".join(RECORDS))
    from pydantic import TypeAdapter

    load, many, where = RECORDS[key]
    kind = load()
    body = TypeAdapter(list[kind] if many else kind).json_schema(mode="serialization")
    from .. import __version__

    return {"$schema": JSON_SCHEMA_DIALECT, "$id": f"depthwidth/{__version__}/{key}",
            "title": f"depthwidth {key} record" + ("s" if many else ""),
            "description": f"What `depthwidth {where}` prints (depthwidth {__version__}). "
                           + ("JSONL prints one item per line." if many else ""), **body}
