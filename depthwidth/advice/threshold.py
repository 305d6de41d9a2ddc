"""The threshold rule's answer for one budget or for many, one code (Levine et al. 2020): below a
depth of log3(width) self-attention is double-exponentially depth-efficient, so the plan starts at
the minimal depth, the smallest L with 3^L >= d(L), d(L) the width that spends the budget at L.

Every step takes a budget (plain numbers: ``plan``) or a NumPy array of budgets (``plan --brief``,
``plan_columns``), ``core.num`` handing each formula ``math`` or NumPy, so both give the same
numbers (tests/test_plan_columns.py compares them row by row):
- the minimal depth, decided on exact integers (``spending.block_min_depth``: 12·L·9^L for the
  paper's block, the block's exact count at (L, 3^L) for any other);
- its real crossing L* (Lambert W for the paper's block, ``separation.min_depth_exact``; bisection
  otherwise, ``spending.block_min_depth_exact``) and the width spending the budget at L;
- the minimal-depth shape: the valid width nearest the budget that keeps 3^(L-1) < width <= 3^L
  (``snapping.WidthsNear``), else the valid width nearest the budget at that depth;
- the refusals: a budget too large (its width past 10^15), below every valid shape, or with no
  valid shape nearby.
"""
from __future__ import annotations

from functools import lru_cache

from ..arch.hardware import Constraints, width_step
from ..arch.snapping import FAR_FROM_BUDGET, ShapeFacts, Snapped, WidthsNear, no_valid_shape
from ..arch.spending import Quadratic, Spending, block_min_depth, block_min_depth_exact, quadratic
from ..core.errors import InputError
from ..core.frozen import frozen
from ..theory.separation import min_depth_exact
from ..theory.shapes import MAX_WIDTH

# The largest width a plan may print is 10^15 (shapes.MAX_WIDTH); at the minimal depth 32 that is
# a budget of 12·32·10^30 ≈ 3.84e32 for the paper's block. Larger budgets are refused, not rounded.
MAX_PLAN_WIDTH = MAX_WIDTH


@frozen
class Theory:
    """The threshold rule for a budget and block: minimal depth, its real crossing, the width."""

    model: Quadratic
    min_depth: int
    min_depth_exact: float
    width_exact: float


def threshold(budget, spending: Spending):
    """(the block's count, minimal depth, real crossing L*, the width spending the budget at the
    minimal depth) for a whole budget or an int64/object array of them (Python ints past 2^53)."""
    from ..core.num import exact_ratio, lib

    model = quadratic(spending)
    depth = block_min_depth(budget, model)
    floats = budget if budget.__class__ is int else _floats(budget)  # float(N), rounded once as Python rounds an int
    if spending.paper_block:  # L* = W(ln3·N/6)/(2·ln3); d = sqrt(N/(12·L)), the division correctly rounded
        ratio = exact_ratio(budget, 12 * depth)
        return model, depth, min_depth_exact(floats), lib(ratio).sqrt(ratio)
    return model, depth, block_min_depth_exact(floats, model), model.width(floats, depth)


def _floats(budget):
    import numpy as np

    return np.array([float(b) for b in budget.tolist()]) if budget.dtype == object else budget.astype(np.float64)


def too_large(budget: int, spending: Spending, model: Quadratic) -> InputError:
    """The refusal of a budget whose minimal-depth width passes 10^15 (the largest accepted width;
    JSON integers stay exact below 2^53): about 3.8e32 for the paper's block (12·32·10^30)."""
    limit_depth = next(L for L in range(1, 64) if 3**L >= MAX_PLAN_WIDTH)
    return InputError("budget", f"{budget:.3g}", f"too large to plan: its minimal-depth width would pass 10^15 "
                                                 f"(the largest accepted width); budgets up to about "
                                                 f"{float(model.value(limit_depth, MAX_PLAN_WIDTH)):.2g} for --arch {spending.arch}", number=budget)


def theory_for(budget: int, spending: Spending) -> Theory:
    """The threshold rule for one budget (``threshold``); a budget too large to plan is refused."""
    model, depth, exact, width = threshold(budget, spending)
    if width > MAX_PLAN_WIDTH:
        raise too_large(budget, spending, model)
    return Theory(model, depth, exact, width)


def minimal_shape(budget, depth, width_exact, facts: ShapeFacts):
    """(the widths near the ideal one, the offset chosen) at the minimal depth: the valid width nearest
    the budget keeping 3^(L-1) < width <= 3^L when that stays within FAR_FROM_BUDGET of the budget,
    else the valid width nearest the budget at that depth; -1 where no width is valid."""
    near = WidthsNear(budget, depth, width_exact, facts)
    xp = near.xp
    low, high = _threshold_widths(depth)
    first = near.choose([v & (w >= low) & (w <= high) for v, w in zip(near.valid, near.width)])
    need = (first < 0) | (near.at(near.off, first) > FAR_FROM_BUDGET)
    anywhere = near.choose([v & (w >= 2) for v, w in zip(near.valid, near.width)])
    use = need & ((first < 0) | ((anywhere >= 0) & (near.at(near.off, anywhere) <= FAR_FROM_BUDGET)))
    return near, xp.where(use, anywhere, first)


def _threshold_widths(depth):
    """(3^(L-1) + 1, 3^L): the widths the threshold guarantee allows at depth L (L = 1: from 2)."""
    if depth.__class__ is int:
        return (3 ** (depth - 1) + 1 if depth > 1 else 2), 3**depth
    import numpy as np

    powers = np.array([3**p for p in range(40)], dtype=np.int64)  # widths here are at most ~1e15 < 3^39
    low = np.where(depth > 1, powers[np.clip(depth - 1, 0, 39)] + 1, 2)
    return low, np.where(depth > 39, np.iinfo(np.int64).max, powers[np.clip(depth, 0, 39)])


def refusals(near: WidthsNear, chosen, width_exact, step: int):
    """(below every valid shape, refused at all): the chosen shape spends more than 1 + FAR_FROM_BUDGET
    times the budget; or none is valid, or the nearest is further than FAR_FROM_BUDGET from a budget
    whose ideal width passes two width steps."""
    too_small = (chosen >= 0) & (near.at(near.deviation, chosen) > FAR_FROM_BUDGET)
    far = (near.at(near.off, chosen) > FAR_FROM_BUDGET) & (width_exact > 2 * step)
    return too_small, too_small | (chosen < 0) | far


def planned_shape(budget: int, spending: Spending, constraints: Constraints, theory: Theory) -> Snapped:
    """The minimal depth's shape: the depth is the theory's answer, so only the width moves
    (``minimal_shape``). A budget below every valid shape (the smallest valid width at the minimal
    depth spends more than 1 + FAR_FROM_BUDGET times it: the width multiple, the head size or a
    preset's fixed sizes) is refused, naming about the smallest budget these options can plan."""
    facts = ShapeFacts(spending, constraints)
    near, chosen = minimal_shape(budget, theory.min_depth, theory.width_exact, facts)
    too_small, refused = refusals(near, chosen, theory.width_exact, facts.step)
    _, _, count, arch = facts.rows[near.fact[chosen]] if chosen >= 0 else facts.rows[0]
    if too_small:
        raise below_every_shape(budget, spending, constraints, arch, near.deviation[chosen])
    if refused:
        raise no_valid_shape(spending, constraints, theory.min_depth, theory.width_exact)
    return Snapped(arch, count, near.deviation[chosen])


def below_every_shape(budget: int, spending: Spending, constraints: Constraints, arch, deviation: float) -> InputError:
    smallest = smallest_budget(budget, spending, constraints)
    step = width_step(constraints, spending.head_dim)
    return InputError("budget", f"{budget:.4g}", f"too small for --arch {spending.arch} with these options: its smallest valid "
                                                 f"shape at the minimal depth, {arch.depth}x{arch.width} (widths in steps of {step}), "
                                                 f"spends {deviation + 1:.3g}x the budget; "
                                                 + (f"the smallest budget it can plan is about {smallest:.2g}" if smallest else
                                                    "no budget nearby can be planned")
                                                 + f" (a --multiple below {constraints.multiple:,} or a smaller --head-dim "
                                                   "allows narrower shapes)", number=budget)


GRID_STEPS = 50  # trial budgets of smallest_budget: 10^(k/50), 4.7% apart


def smallest_budget(budget: int, spending: Spending, constraints: Constraints) -> float | None:
    """About the smallest budget above ``budget`` these options can plan: the first point of the fixed
    grid 10^(k/GRID_STEPS) above it whose minimal-depth shape is not refused (``refusals``: valid, and
    spending at most 1 + FAR_FROM_BUDGET times the budget). The grid does not move with ``budget``, so
    every refused budget below that point names the same figure (mixtral's 3.9e7 and 4.1e7,
    a 10% ladder started at each refused budget, and within ±5% where a plan needs only ±50%);
    None past 10^12 times the budget."""
    import math

    return _smallest_from(math.floor(math.log10(budget) * GRID_STEPS) + 1, spending, constraints)


_VERDICTS: dict = {}  # (k, spending, constraints) -> the verdict of grid point k (``_verdict``), shared by every start


@lru_cache(maxsize=64)
def _smallest_from(start: int, spending: Spending, constraints: Constraints) -> float | None:
    """``smallest_budget`` from the grid point 10^(start/GRID_STEPS) on (cached: plan --brief asks once per refused
    row; the points' verdicts too, which the refused budgets below one plannable point all walk through). Pure."""
    facts = None
    for k in range(start, start + 12 * GRID_STEPS):
        key = (k, spending, constraints)
        if key not in _VERDICTS:
            if len(_VERDICTS) >= 1 << 16:
                _VERDICTS.clear()
            facts = facts or ShapeFacts(spending, constraints)
            _VERDICTS[key] = _verdict(k, facts)
        if _VERDICTS[key] is not False:
            return _VERDICTS[key]
    return None


def _verdict(k: int, facts: ShapeFacts) -> float | bool | None:
    """Grid point k's budget 10^(k/GRID_STEPS) when its minimal-depth shape is not refused (``refusals``),
    None when it is too large to plan (no later point is plannable either), else False."""
    trial = 10 ** (k / GRID_STEPS)
    try:
        theory = theory_for(int(trial), facts.spending)
    except InputError:
        return None
    near, chosen = minimal_shape(int(trial), theory.min_depth, theory.width_exact, facts)
    return False if refusals(near, chosen, theory.width_exact, facts.step)[1] else trial
