"""A sweep's rows with the costs of training each one (``sweep --params N --tokens D``).

Every number comes from ``cost.run.run_costs`` (its formulas cited there) on the row's own
block (``SweepRows.architectures``), timed by the performance model in the row's best layout on the
cluster (``cost/perf/modeled.py``; its MODEL_FIELDS too), or at a flat ``--mfu``; this module only
attaches them. Pure: no I/O.
"""
from __future__ import annotations

from dataclasses import field, fields
from typing import get_type_hints

from ..cost.fields import Run, Serve
from ..cost.perf.modeled import MODEL_FIELDS
from .sweep_record import SweepRow, SweepRows
from ..core.frozen import frozen_class


_HINTS = get_type_hints(SweepRow)  # the row's annotations resolved where SweepRow is defined

# A sweep row with its training ``run`` and ``serve`` records (``cost.fields``: Run, Serve; the records of
# plan's candidates), filled from ``cost.run.RunCosts`` and the performance model, placed before ``loss``,
# which stays the last field (the one to fill in).
CostedSweepRow = frozen_class(
    "CostedSweepRow",
    [(f.name, _HINTS[f.name]) for f in fields(SweepRow) if f.name != "loss"] + [("run", Run), ("serve", Serve)]
    + [("loss", "float | None", field(default=None))],
    module=__name__)


def costed(rows: SweepRows, specs, fixed: tuple | None = ()) -> SweepRows:
    """``rows`` with the costs of each under its ``cost.run.RunSpec`` (``specs``: one per row, or one
    for all); ``fixed``: the layout fields given, the rest searched by the performance model (None: the
    flat MFU of the spec, ``--mfu``); skipped lines, blocks and layout kept."""
    from ..cost.fields import nested

    specs = list(specs) if isinstance(specs, (list, tuple)) else [specs] * len(rows)
    out = []
    for row, arch, spec in zip(rows, rows.architectures, specs):
        parts = nested(_flat_costs(arch, spec, fixed), spec)
        values = {f.name: getattr(row, f.name) for f in fields(SweepRow)}
        out.append(CostedSweepRow(**values, run=parts["run"], serve=parts["serve"]))
    return SweepRows(out, rows.skipped, rows.architectures, rows.layout, specs[0].mfu if fixed is None and specs else None)


def _flat_costs(arch, spec, fixed: tuple | None) -> dict:
    """The flat cost fields of one row (``cost.run.record`` and the model's MODEL_FIELDS): at the flat MFU in
    the layout given (``fixed`` None: ``predict.flat_costs``), else in the best layout on the GPUs (one node without --gpus: then no wall-clock days)."""
    from dataclasses import replace

    from ..cost.perf.modeled import modeled_costs
    from ..cost.perf.predict import flat_costs
    from ..cost.run import record

    if fixed is None:
        costs, extra = flat_costs(arch, spec)
        return {**record(costs), **dict.fromkeys(MODEL_FIELDS), **extra, "calibrated_on": None}
    from ..arch.hardware import node_gpus

    costs, extra = modeled_costs(arch, spec if spec.gpus else replace(spec, gpus=node_gpus(spec.gpu, spec.tp * spec.pp)), fixed)
    cost = {**record(costs), **extra, "calibrated_on": spec.calibrated_on}
    if spec.gpus is None:  # searched on one node, but a sweep without --gpus gives no wall-clock days
        cost["train_days"] = None
    return cost
