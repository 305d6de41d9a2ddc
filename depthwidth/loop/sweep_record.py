"""The sweep's records (field names are the JSON contract; README and docs document each): one
``SweepRow`` per shape, and ``SweepRows``, the rows with what was skipped, each row's block and
the attention layout held fixed.
"""
from __future__ import annotations


from ..arch.blocks import Architecture
from ..arch.record import COUNT_FIELDS, COUNT_TYPES, LAYOUT_FIELDS, repeats
from ..cost.fields import Loss
from ..core.frozen import frozen


@frozen
@repeats(Architecture, LAYOUT_FIELDS, after="width")
@repeats(COUNT_TYPES, COUNT_FIELDS, after="params_12Ld2")
class SweepRow:
    """One shape of a sweep: its ``id`` (the export folder name), the shape record, the count the
    budget limits with its deviation, ``loss`` (the measured loss: None, to fill in; what `fit` reads) and
    ``predicted_loss``, the loss model's penalty against the best shape of the budget (cost/loss.py; the
    ``loss`` record of plan's candidates, ``cost.fields.Loss``, named apart from the loss to fill in)."""

    id: str
    budget: int
    budget_count: str
    depth: int
    width: int
    params_12Ld2: int
    budget_deviation: float
    within_tolerance: bool
    aspect_ratio: float
    regime: str
    threshold_depth: float
    log3_sep_lower: float | None
    log3_sep_upper: float | None
    lower_vacuous: bool
    c2_reading: str
    tp_sizes: tuple[int, ...]
    flops_per_token: int
    kv_bytes_per_token: int | None
    note: str | None
    loss: float | None = None
    predicted_loss: Loss | None = None


class SweepRows(list):
    """The rows of a sweep (a list of SweepRow), with ``skipped``: one line per requested depth that
    has no row, or per shortfall of the default list (for stderr), and ``architectures``: the block
    of each row, in row order (what an export writes); ``layout``: the attention layout held fixed;
    ``mfu``: the flat --mfu the rows' runs are timed at (None: the performance model, or not costed)."""

    def __init__(self, rows=(), skipped=(), architectures=(), layout: str = "", mfu: float | None = None):
        super().__init__(rows)
        self.skipped = tuple(skipped)
        self.architectures = tuple(architectures)
        self.layout = layout
        self.mfu = mfu
