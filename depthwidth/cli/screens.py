"""What a command's first screen needs beyond its record (issue 45): `compare`'s pick between its two
shapes (``advice.which``), costed on the run options as `plan` and `cost` cost a shape. Computed only
for the table: the JSON record is the command's own."""
from __future__ import annotations

LAYOUT_FIELDS = ("tp", "pp", "zero", "recompute")


def given_layout(run) -> tuple[tuple, bool]:
    """(the layout fields the user set, (name, value) pairs; whether the performance model times the
    run): a run option left at its default (``options.RUN``) is searched, as `cost` and `plan` search
    it; an --mfu other than its default times the run flat at that utilization, in the layout given."""
    from .options import RUN

    default = {name: value for name, (_, value) in RUN.options.items()}
    modeled = run.mfu == default["mfu"]
    given = [(name, getattr(run, name)) for name in LAYOUT_FIELDS
             if getattr(run, name) is not None and (not modeled or getattr(run, name) != default[name])]
    return tuple((k, v.strip().lower() if isinstance(v, str) else v) for k, v in given), modeled


def compare_which(run, spec, named):
    """``advice.which.which`` of ``named`` = [(label, text, blocks.Architecture)] under the run options."""
    from ..advice.which import which

    fixed, modeled = given_layout(run)
    return which(named, spec, fixed, modeled)
