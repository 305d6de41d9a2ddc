"""Spending a budget with a real block: which count the budget limits, the block's count as an
exact quadratic in the width, and the threshold rule (3^L >= d(L)) for any block.

Counting is ``blocks.py``'s: this module only asks it for counts of concrete architectures.
"""
from __future__ import annotations

import math
from bisect import bisect_left
from functools import cached_property, lru_cache

from ..core.errors import InputError
from ..core.num import Scalars, lib, libm_log
from ..theory.separation import LN3
from ..core.frozen import frozen

# --count's words -> the count field each one limits (a plan's ``budget_count``)
BUDGET_COUNTS = {"total": "params_nonembedding", "active": "params_active", "with-embeddings": "params_with_embeddings"}


@frozen
class Spending:
    """How a budget is spent: a block preset with overrides, and which count the budget limits.

    ``context``: the training context, the rows of the block's learned position table (GPT-2's
    wpe; None: blocks.DEFAULT_CONTEXT). Only a preset with a learned table reads it: ``at_context``
    sets it for those and leaves every other Spending as it is (``planner.PlanOptions`` does)."""

    arch: str = "vanilla"
    overrides: tuple[tuple[str, object], ...] = ()
    count: str = "total"
    context: int | None = None
    size: int | None = None  # which of the preset's published sizes (``presets.Preset.sizes``); None: the preset's own

    @property
    def block(self):
        """The preset at this Spending's size (``presets.Preset.at_size``)."""
        from .presets import preset

        return preset(self.arch).at_size(self.size)

    def at_budget(self, budget: float):
        """This Spending with the preset's size for a budget of ``budget`` parameters (the block a family
        publishes at that size); the user's overrides stay final."""
        from dataclasses import replace
        from .presets import preset

        size = preset(self.arch).size_index(budget)
        return self if size == self.size else replace(self, size=size)

    def architecture(self, depth: int, width: int):
        """The concrete architecture of this block at (depth, width) (``presets.Preset.architecture``)."""
        return self.block.architecture(depth, width, self.context, **dict(self.overrides))

    @property
    def learns_positions(self) -> bool:
        """Whether the block has a learned position table (its rows: ``position_rows``)."""
        from .presets import PRESETS

        found = PRESETS.get(self.arch)
        return bool(found and found.learned_positions)

    @property
    def position_rows(self) -> int:
        """Rows of the block's learned position table (the context; 0 without a table)."""
        return self.block.position_rows(self.context)

    def at_context(self, context: int | None):
        """This Spending with ``context`` as its position table's rows; itself for a block without one."""
        from dataclasses import replace

        return replace(self, context=context) if self.learns_positions and context != self.context else self

    def params(self, arch) -> int:
        """The count the budget limits: non-embedding total, active per token, or with embeddings."""
        from .blocks import params_active, params_embedding, params_nonembedding

        if self.count == "active":
            return params_active(arch)
        total = params_nonembedding(arch)
        if self.count == "with-embeddings":
            embedding = params_embedding(arch)
            if embedding is None:
                raise InputError("--count", self.count, "counting embeddings needs a vocabulary: give --vocab")
            total += embedding
        return total

    @property
    def budget_count(self) -> str:
        """The name of the count field the budget limits (``BUDGET_COUNTS``)."""
        return BUDGET_COUNTS[self.count]

    @cached_property
    def head_dim(self) -> int:
        return dict(self.overrides).get("head_dim") or self.block.head_dim

    @property
    def paper_block(self) -> bool:
        """The paper's 12·L·d² block, where the closed forms of the threshold rule apply exactly."""
        return self.arch == "vanilla" and self.count == "total" and not self.overrides


def _clean_width(spending: Spending) -> int:
    """A width unit at which every preset's rounding is exact (multiples of 2^10·3^2·5 and of the
    head dimension), so counts there lie on the block's exact quadratic in d; with --kv-heads G the
    query heads d/head_dim must be a multiple of G too (``--kv-heads 7`` once failed at 46080 = 360 heads)."""
    kv_heads = dict(spending.overrides).get("kv_heads") or 1
    unit = getattr(spending, "heads_unit", 1)  # a held layout (held_layout.LayoutSpending): head counts in multiples of it
    return math.lcm(46080, spending.head_dim, spending.head_dim * kv_heads, spending.head_dim * unit)


@frozen
class Quadratic:
    """count(L, d) = (a2·d² + a1·d + a0)·L + (b2·d² + b1·d + b0), exactly, for depths past the
    block's leading dense layers; fitted through exact counts at clean widths (``_clean_width``)."""

    a: tuple  # (a2, a1, a0): Fractions (ints for the paper's block)
    b: tuple

    @cached_property
    def _floats(self) -> tuple[float, ...]:
        return tuple(map(float, self.a + self.b))

    def per_layer(self, width: float) -> tuple[float, float]:
        """(count per layer, count outside the depth-proportional part) at a width, in floats."""
        a2, a1, a0, b2, b1, b0 = self._floats
        return a2 * width * width + a1 * width + a0, b2 * width * width + b1 * width + b0

    def value(self, depth, width):
        a2, a1, a0 = self.a
        b2, b1, b0 = self.b
        return (a2 * width * width + a1 * width + a0) * depth + (b2 * width * width + b1 * width + b0)

    def width(self, budget, depth):
        """The real width d > 0 that spends ``budget`` at ``depth`` (root of the quadratic); numbers
        or arrays (``core.num``), the same float operations in the same order."""
        f = self._floats
        a2, a1, a0 = f[0] * depth + f[3], f[1] * depth + f[4], f[2] * depth + f[5]
        c = a0 - budget
        if a2.__class__ is float and c.__class__ is float:  # one number: only the branch it takes, no flags to silence
            if a2 <= 0:  # no d² term
                return -c / a1 if a1 > 0 else math.inf
            return (-a1 + math.sqrt(a1 * a1 - 4 * a2 * c)) / (2 * a2)
        import numpy as np  # arrays (or NumPy scalars): a plain number took the branch above

        with np.errstate(all="ignore"):
            root = (-a1 + np.sqrt(a1 * a1 - 4 * a2 * c)) / (2 * a2)  # a2 > 0, c < 0: the positive root
            return np.where(a2 <= 0, np.where(a1 > 0, -c / a1, math.inf), root)


@lru_cache(maxsize=64)
def quadratic(spending: Spending) -> Quadratic:
    """The block's count as an exact polynomial (see ``Quadratic``): every weight matrix of a layer
    is d x (something fixed or proportional to d), so the count is c2·d² + c1·d with no constant."""
    if spending.paper_block:  # 12·L·d², the paper's count (Kaplan et al. 2020): no need to measure it
        return Quadratic((12, 0, 0), (0, 0, 0))
    from fractions import Fraction

    unit = _clean_width(spending)
    widths = (unit, 2 * unit)
    rows = []
    for depth in (64, 128):  # past any leading dense layers
        counts = [Fraction(spending.params(spending.architecture(depth, w))) for w in widths]
        rows.append(_through(widths, counts))
    slope = tuple((q - p) / 64 for p, q in zip(*rows))
    intercept = tuple(p - 64 * s for p, s in zip(rows[0], slope))
    return Quadratic(slope, intercept)


def _through(xs, ys) -> tuple:
    """Coefficients (c2, c1, 0) of c2·x² + c1·x through two points, exactly (Fraction ys)."""
    (x0, x1), (y0, y1) = xs, ys
    c2 = (y1 / x1 - y0 / x0) / (x1 - x0)
    return c2, y0 / x0 - c2 * x0, y0 * 0  # a zero of the ys' exact type


# ---- the threshold rule for any block --------------------------------------------------------------

def block_min_depth(budget, model: Quadratic):
    """Smallest integer L >= 1 with 3^L >= d(L), d(L) the width spending N at depth L: since the
    count grows with d, that is count(L, 3^L) >= N, decided exactly on integers (N is whole, so
    the count rounds down), for a budget or an int64/object array of budgets. For the paper's block
    the count is 12·L·9^L. The first L whose count reaches N is the first whose running maximum
    does: one sorted list of thresholds, one search."""
    top = budget if budget.__class__ is int else max(budget.tolist(), default=1)
    thresholds, best, depth = [], 0, 1
    while best < top:
        best = max(best, math.floor(model.value(depth, 3**depth)))
        thresholds.append(best)
        depth += 1
    if budget.__class__ is int:
        return bisect_left(thresholds, budget) + 1
    import numpy as np

    if budget.dtype == object:
        return np.array([bisect_left(thresholds, b) + 1 for b in budget.tolist()], dtype=np.int64)
    capped = np.array([min(t, 2**63 - 1) for t in thresholds] or [2**63 - 1], dtype=np.int64)
    return np.searchsorted(capped, budget, side="left").astype(np.int64) + 1


def block_min_depth_exact(budget, model: Quadratic):
    """Real L* with L = log3(d(L)) for the block's count, for a float budget or an array of them:
    double hi from 1 while the gap log3(d(hi)) - hi is positive, then 100 halvings (the paper's
    block has the closed form ``min_depth_exact``). A value stops once a halving leaves (lo, hi)
    unchanged (every later one would too)."""
    xp = lib(budget)
    lo, hi = budget * 0 + 0.5, budget * 0 + 1.0
    going = True
    while xp.any(going):
        going = going & _gap_positive(model, budget, hi)
        lo, hi = xp.where(going, hi, lo), xp.where(going, 2 * hi, hi)
    going = True
    for _ in range(100):
        mid = (lo + hi) / 2
        up = _gap_positive(model, budget, mid)
        new_lo, new_hi = xp.where(up, mid, lo), xp.where(up, hi, mid)
        going = going & ((new_lo != lo) | (new_hi != hi))
        lo, hi = new_lo, new_hi
        if not xp.any(going):
            break
    return (lo + hi) / 2


def _gap_positive(model: Quadratic, budget, depth):
    """log3(d(depth)) - depth > 0; libm's log wherever an ulp could change the sign."""
    width = model.width(budget, depth)
    xp = lib(width)
    if xp is Scalars:
        return math.log(width) / LN3 - depth > 0
    with xp.errstate(all="ignore"):
        q = xp.log(width) / LN3
        gap = q - depth
    near = xp.flatnonzero(~(xp.abs(gap) > 64 * 2.0**-52 * xp.maximum(xp.abs(q), xp.abs(depth))))
    if near.size:
        gap[near] = libm_log(width[near]) / LN3 - depth[near]
    return gap > 0
