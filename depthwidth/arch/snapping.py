"""Snapping to hardware-valid shapes (``hardware.py``): widths and depths that satisfy the
alignment and tensor-parallel constraints, nearest the budget, the more shardable first."""
from __future__ import annotations

import math
from functools import lru_cache

from ..core.errors import InputError
from .hardware import Constraints, heads_ok, violations, width_step
from .hardware import shards_ways as shardability  # among shapes equally near the budget, the more shardable first
from .spending import Quadratic, Spending
from ..core.frozen import frozen
from ..core.num import EXACT_FLOAT

BUDGET_TOLERANCE = 0.05  # recommended shapes and candidates stay within ±5% of the budget when possible
DEPTH_BAND = 0.08  # depths within 8% of a target count as equally near when choosing the more shardable shape
SNAP_SPAN = 12  # widths tried on each side of the ideal width, in steps of the width multiple
FAR_FROM_BUDGET = 0.5  # a "nearest valid shape" further than this from the budget is a conflict, not an answer


@frozen
class Snapped:
    """A valid shape for a budget: the architecture, the count spent, and its deviation."""

    arch: object
    params: int
    deviation: float


@lru_cache(maxsize=4096)
def valid_arch(spending: Spending, constraints: Constraints, depth: int, width: int):
    """The architecture at (depth, width) if it builds and meets the constraints, else None. Remembered:
    a plan's snaps to neighbouring depths ask for most shapes two or three times (an architecture is a
    frozen record: every asker may share it)."""
    if not heads_ok(width // spending.head_dim, constraints):  # most invalid widths fail here, before any counting
        return None
    try:
        arch = spending.architecture(depth, width)
    except InputError:
        return None
    return None if violations(arch, constraints) else arch


def _widths_near(center: float, step: int, lo: int = 1, hi: int | None = None, span: int = SNAP_SPAN) -> list[int]:
    """Multiples of ``step`` within ``span`` steps of ``center`` and inside [lo, hi], nearest first."""
    k0 = max(1, round(center / step))
    ks = range(max(1, k0 - span), k0 + span + 1)
    widths = [k * step for k in ks if k * step >= lo and (hi is None or k * step <= hi)]
    return sorted(widths, key=lambda w: abs(w - center))


def snapped_at(budget: int, spending: Spending, constraints: Constraints, depth: int, width: int) -> Snapped | None:
    """The shape at (depth, width) with the count it spends and its deviation from the budget, if valid."""
    arch = valid_arch(spending, constraints, depth, width)
    if arch is None:
        return None
    count = spending.params(arch)
    return Snapped(arch, count, count / budget - 1)


# ---- the width nearest the budget at a fixed depth, for one budget or many ----------------------------

class ShapeFacts:
    """What ``valid_arch`` says of each (depth, width), built once however many budgets ask:
    (valid, shardability, the count the budget limits, the architecture or None). Fact 0 stands
    for a width that is not there (k < 1)."""

    def __init__(self, spending: Spending, constraints: Constraints):
        self.spending, self.constraints = spending, constraints
        self.step = width_step(constraints, spending.head_dim)  # widths are its multiples
        self.index: dict[tuple[int, int], int] = {}
        self.rows: list[tuple] = [(False, 0, 0, None)]
        self._tables: dict = {}

    def fact(self, depth: int, width: int) -> int:
        found = self.index.get((depth, width))
        if found is None:
            arch = valid_arch(self.spending, self.constraints, depth, width)
            found = self.index[depth, width] = len(self.rows)
            self.rows.append((False, 0, 0, None) if arch is None else (True, shardability(arch), self.spending.params(arch), arch))
        return found

    def near(self, depth, k0) -> list:
        """For each offset s in -SNAP_SPAN..SNAP_SPAN, the fact of width (k0 + s)·step at ``depth``
        (a number, or one per budget: each distinct (depth, k) is built once)."""
        step = self.step
        if k0.__class__ is int:
            return [self.fact(depth, (k0 + s) * step) if k0 + s >= 1 else 0 for s in range(-SNAP_SPAN, SNAP_SPAN + 1)]
        import numpy as np

        span = np.arange(-SNAP_SPAN, SNAP_SPAN + 1, dtype=np.int64)
        k = k0[:, None] + span
        index = np.zeros(k.shape, np.int64)
        for c in np.unique(depth).tolist():  # a row's ks are consecutive: so are their positions among the depth's ks
            mine = np.flatnonzero(depth == c)
            ks = np.unique((np.unique(k0[mine])[:, None] + span).ravel())
            ks = ks[ks >= 1]
            ids = np.array([self.fact(c, w) for w in (ks * step).tolist()], np.int64)
            start = np.maximum(k[mine, 0], 1)
            cells = np.clip(np.searchsorted(ks, start)[:, None] + (k[mine] - start[:, None]), 0, ks.size - 1)
            index[mine] = np.where(k[mine] >= 1, ids[cells], 0)
        return list(index.T)

    def column(self, j: int, ids):
        """Field j of each fact (a number for one fact id, an array for an array of them)."""
        if ids.__class__ is int:
            return self.rows[ids][j]
        key = (j, len(self.rows))
        table = self._tables.get(key)
        if table is None:
            import numpy as np

            values = [row[j] for row in self.rows]
            exact = j != 2 or all(abs(v) < EXACT_FLOAT for v in values)  # counts: int64 while each converts to a float exactly
            table = self._tables[key] = np.array(values, dtype=None if j != 2 else np.int64 if exact else object)
        return table[ids]


class WidthsNear:
    """The widths within SNAP_SPAN steps of the ideal width ``center`` at ``depth``, each with its
    validity, shardability, deviation from the budget and distance from the ideal: one entry per
    offset, each a number (one budget) or an array (one per budget), ``core.num`` choosing."""

    def __init__(self, budget, depth, center, facts: ShapeFacts):
        from ..core.num import Scalars, exact_ratio, lib

        self.xp = xp = lib(center)
        step = facts.step
        # round(center / step), halves to even as Python's round and NumPy's rint
        k0 = max(1, round(center / step)) if xp is Scalars else xp.maximum(1, xp.rint(center / step)).astype(xp.int64)
        offsets = range(-SNAP_SPAN, SNAP_SPAN + 1)
        self.fact = facts.near(depth, k0)
        self.width = [(k0 + s) * step for s in offsets]
        self.valid = [facts.column(0, ids) for ids in self.fact]
        self.shard = [facts.column(1, ids) for ids in self.fact]
        self.deviation = [exact_ratio(facts.column(2, ids), budget) - 1 for ids in self.fact]
        self.off = [abs(d) for d in self.deviation]
        self.distance = [abs(w - center) for w in self.width]
        self._stacked: dict = {}

    def choose(self, allowed: list, tolerance: float = BUDGET_TOLERANCE):
        """The offset chosen among the allowed widths, -1 where none is: within ``tolerance`` of the
        budget the most shardable, then the nearest the budget; else the nearest the budget; ties to
        the width nearer the ideal one, then to the smaller (``snap_depth``'s order of widths)."""
        xp = self.xp
        within = [a & (o <= tolerance) for a, o in zip(allowed, self.off)]
        has_within = _any(within)
        pool = [xp.where(has_within, w, a) for w, a in zip(within, allowed)]
        for key in ([xp.where(has_within, -s, 0) for s in self.shard], self.off, self.distance):
            masked = [xp.where(p, k, math.inf) for p, k in zip(pool, key)]
            best = masked[0]
            for m in masked[1:]:
                best = xp.minimum(best, m)
            pool = [p & (m == best) for p, m in zip(pool, masked)]
        return xp.select(pool, list(range(len(pool))), -1)

    def at(self, values: list, chosen):
        """values[chosen] for each budget (NaN where chosen is -1)."""
        if chosen.__class__ is int:
            return values[chosen] if chosen >= 0 else math.nan
        import numpy as np

        stacked = self._stacked.get(id(values))
        if stacked is None:  # each list is stacked once (the offsets' columns of one field)
            stacked = self._stacked[id(values)] = np.stack(values, axis=1)
        picked = stacked[np.arange(stacked.shape[0]), np.maximum(chosen, 0)]
        return np.where(chosen >= 0, picked, np.nan)


def _any(columns: list):
    out = columns[0]
    for c in columns[1:]:
        out = out | c
    return out


def snap_depth(budget: int, spending: Spending, constraints: Constraints, model: Quadratic, target: float,
               lowest: int = 1, exclude: frozenset = frozenset(), tolerance: float = BUDGET_TOLERANCE) -> Snapped | None:
    """The valid (depth, width) nearest the target depth whose count is within ``tolerance`` of the
    budget (else the one nearest the budget): widths near the ideal one, each with the depths that
    spend the budget best."""
    step = width_step(constraints, spending.head_dim)
    target = max(target, lowest)
    center = model.width(budget, target)
    options, settled = [], False  # settled: a valid shape within tolerance in the target's own depth band
    for width in _widths_near(center, step):
        per_layer, rest = model.per_layer(width)
        ideal = (budget - rest) / per_layer if per_layer > 0 else target
        if settled and abs(math.log(max(ideal, 0.5) / target)) > DEPTH_BAND + tolerance:
            continue  # every depth this width allows lies outside the target's band: it cannot win
        # the depths spending the budget best, and the depth nearest the target that stays within tolerance
        nearest = min(max(round(target), math.ceil(ideal * (1 - tolerance))), math.floor(ideal * (1 + tolerance)))
        for depth in {max(lowest, d) for d in (math.floor(ideal), math.ceil(ideal), nearest) if d >= 1}:
            if depth in exclude:
                continue
            arch = valid_arch(spending, constraints, depth, width)
            if arch is not None:
                count = spending.params(arch)
                options.append(Snapped(arch, count, count / budget - 1))
                settled = settled or (abs(count / budget - 1) <= tolerance and abs(math.log(depth / target)) < DEPTH_BAND)
    if not options:
        return None
    within = [o for o in options if abs(o.deviation) <= tolerance]
    if within:  # nearest the target depth (in bands of 8%), then the most shardable, then nearest the budget
        band = lambda o: int(abs(math.log(o.arch.depth / target)) / DEPTH_BAND)
        nearest = min(map(band, within))
        return min((o for o in within if band(o) == nearest),
                   key=lambda o: (-shardability(o.arch), abs(o.deviation), abs(o.arch.depth - target)))
    return min(options, key=lambda o: (abs(o.deviation), abs(o.arch.depth - target)))


def rule_shape(budget: int, spending: Spending, constraints: Constraints, optimum, lowest: int = 1) -> Snapped | None:
    """The rule's own shape when it prescribes whole numbers (nanochat: d = 64·L rounded up to 128)
    that are valid and within tolerance of the budget; else None (the planner snaps instead)."""
    if optimum is None or not all(float(x).is_integer() for x in optimum) or optimum[0] < lowest:
        return None
    arch = valid_arch(spending, constraints, int(optimum[0]), int(optimum[1]))
    if arch is None:
        return None
    count = spending.params(arch)
    return Snapped(arch, count, count / budget - 1) if abs(count / budget - 1) <= BUDGET_TOLERANCE else None


def no_valid_shape(spending: Spending, constraints: Constraints, depth: int, width: float) -> InputError:
    """The error for constraints no nearby shape meets, naming what the nearest one breaks."""
    step = width_step(constraints, spending.head_dim)
    broken = ["no valid width nearby"]
    for near in _widths_near(width, step):  # the nearest width whose block builds names what the constraints break
        try:
            broken = violations(spending.architecture(depth, near), constraints)
            break
        except InputError as err:
            broken = [err.accepted]
    what, value = ("--tp", constraints.tp) if constraints.tp > 1 else ("constraints", f"--arch {spending.arch}")
    return InputError(what, value, f"no {spending.arch} shape near {depth}x{round(width)} meets the constraints: "
                                   + "; ".join(broken or ["no valid width nearby"]))
