"""A sweep's rows with the costs of training each one (``sweep --params N --tokens D``).

Every number comes from ``cost.run.run_costs`` (its formulas cited there) on the row's own
block (``SweepRows.architectures``), timed by the performance model in the row's best layout on the
cluster (``cost/perf/modeled.py``; its MODEL_FIELDS too), or at a flat ``--mfu``; this module only
attaches them. Pure: no I/O.
"""
from __future__ import annotations

from dataclasses import field, fields

from ..cost.fields import RUN_FIELDS
from ..cost.perf.modeled import MODEL_FIELDS

COST_FIELDS = RUN_FIELDS + MODEL_FIELDS + ("calibrated_on",)  # the calibration profile's line, with --profile
from .sweep_record import SweepRow, SweepRows
from ..core.frozen import frozen_class


# A sweep row with its training run's costs (``cost.run.RunCosts`` fields of the same names): ``tokens``
# trained, ``train_flops``, ``train_gpu_hours``, ``train_days`` (None without a GPU count),
# ``train_memory_per_gpu_bytes``, ``fits_on_gpu`` and ``kv_cache_bytes_per_sequence`` (None for latent
# attention), placed before ``loss``, which stays the last field (the one to fill in).
CostedSweepRow = frozen_class(
    "CostedSweepRow",
    [(f.name, f.type) for f in fields(SweepRow) if f.name != "loss"] + [(name, object) for name in COST_FIELDS]
    + [("loss", "float | None", field(default=None))],
    module=__name__)


def costed(rows: SweepRows, specs, fixed: tuple | None = ()) -> SweepRows:
    """``rows`` with the costs of each under its ``cost.run.RunSpec`` (``specs``: one per row, or one
    for all); ``fixed``: the layout fields given, the rest searched by the performance model (None: the
    flat MFU of the spec, ``--mfu``); skipped lines, blocks and layout kept."""
    from dataclasses import replace

    from ..cost.run import record, run_costs

    specs = list(specs) if isinstance(specs, (list, tuple)) else [specs] * len(rows)
    out = []
    for row, arch, spec in zip(rows, rows.architectures, specs):
        if fixed is None:
            cost = {**record(run_costs(arch, spec)), **dict.fromkeys(MODEL_FIELDS), "calibrated_on": None}
        else:
            from ..arch.hardware import node_gpus
            from ..cost.perf.modeled import modeled_costs

            costs, extra = modeled_costs(arch, spec if spec.gpus else replace(spec, gpus=node_gpus(spec.gpu, spec.tp * spec.pp)), fixed)
            cost = {**record(costs), **extra, "calibrated_on": spec.calibrated_on}
            if spec.gpus is None:  # searched on one node, but a sweep without --gpus gives no wall-clock days
                cost["train_days"] = None
        values = {f.name: getattr(row, f.name) for f in fields(SweepRow)}
        values.update({name: cost[name] for name in COST_FIELDS})
        out.append(CostedSweepRow(**values))
    return SweepRows(out, rows.skipped, rows.architectures, rows.layout)
