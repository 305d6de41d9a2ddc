"""Snapping to hardware-valid shapes (``hardware.py``): widths and depths that satisfy the
alignment and tensor-parallel constraints, nearest the budget, the more shardable first."""
from __future__ import annotations

import math

from ..errors import InputError
from .hardware import Constraints, heads_ok, tp_conflicts, violations, width_step
from .spending import Quadratic, Spending
from ..theory.frozen import frozen

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


def valid_arch(spending: Spending, constraints: Constraints, depth: int, width: int):
    """The architecture at (depth, width) if it builds and meets the constraints, else None."""
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


def shardability(arch) -> int:
    """The largest of 1, 2, 4, 8 that the shape shards by (GPUs per node come in these numbers):
    among shapes equally near the budget, the planner prefers the more shardable."""
    return next((t for t in (8, 4, 2) if not tp_conflicts(arch, t)), 1)


def snap_width(budget: int, spending: Spending, constraints: Constraints, depth: int, center: float,
               lo: int = 2, hi: int | None = None, tolerance: float = BUDGET_TOLERANCE) -> Snapped | None:
    """At a fixed depth, a valid width in [lo, hi]: within ``tolerance`` of the budget the most
    shardable one (then the nearest the budget), else the one nearest the budget."""
    step = width_step(constraints, spending.head_dim)
    options = []
    for width in _widths_near(center, step, lo, hi):
        arch = valid_arch(spending, constraints, depth, width)
        if arch is not None:
            count = spending.params(arch)
            options.append(Snapped(arch, count, count / budget - 1))
    within = [o for o in options if abs(o.deviation) <= tolerance]
    if within:
        return min(within, key=lambda o: (-shardability(o.arch), abs(o.deviation)))
    return min(options, key=lambda o: abs(o.deviation), default=None)


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
