"""What `fit` prints per size: one record per size group, with the law across sizes beside it,
and the attention layout a sweep's runs held (kept in a rule file for ``plan --rule-file``)."""
from __future__ import annotations

import math

from ..advice.rules.file import AttentionLayout, FitRange, LevineLaw, PowerLaw, Source
from ..core.frozen import frozen


def budget_of(group, group_by: str = "params") -> float:
    """A group's budget: its label when that is a number (a sweep's budget, or a numeric group column)
    and sizes are parameters, else its size (the geometric mean of its runs' counts)."""
    if group_by != "params":
        return group.size
    try:
        value = float(group.label)
    except ValueError:
        return group.size
    return value if math.isfinite(value) and value > 0 else group.size


@frozen
class SizeOptimum:
    """`fit --format json`: one record per size: its optimal depth with the interval (``confidence``),
    how it was found (``method``), and the law across sizes (``form``: "none" with ``law_note``
    saying why when no law was fitted)."""

    budget: float  # the sweep's budget (a numeric group label), else the size: the geometric mean of the runs' counts
    group_by: str
    label: str
    runs: int
    depths: tuple[float, ...]
    best_depth: float
    optimal_depth: float
    optimal_depth_low: float | None  # None: open (the best run is the shallowest tried)
    optimal_depth_high: float | None  # None: open (the best run is the deepest tried)
    optimal_width: float
    optimal_width_low: float | None
    optimal_width_high: float | None
    min_loss: float
    curvature: float | None
    method: str
    confidence: float
    form: str  # the law across sizes a saved rule uses (levine or power); "none" when no law was fitted
    law_note: str | None  # why no law was fitted (None: one was)
    better_form: str | None
    levine: LevineLaw | None
    power: PowerLaw | None
    fit_range: FitRange
    source: Source
    bootstrap: int
    seed: int
    notes: tuple[str, ...]


def held_layout(runs) -> AttentionLayout | None:
    """The attention layout every run held (a sweep's rows carry heads, kv_heads, head_dim): one head size,
    and one key/value head count or else one ratio heads / kv_heads; None when the file does not say."""
    if not runs or any(r.heads is None or r.kv_heads is None or r.heads % r.kv_heads for r in runs):
        return None
    head_dims = {r.head_dim for r in runs}
    kv = {r.kv_heads for r in runs}
    ratios = {r.heads // r.kv_heads for r in runs}
    head_dim = head_dims.pop() if len(head_dims) == 1 else None
    if len(kv) == 1 and len(ratios) > 1:
        return AttentionLayout(head_dim, kv.pop(), None)
    if len(ratios) == 1:
        return AttentionLayout(head_dim, None, ratios.pop())
    return AttentionLayout(head_dim, None, None) if head_dim else None
