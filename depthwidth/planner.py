"""Depth and width for a parameter budget, for any block, as shapes a cluster can run.

Three answers, kept apart on purpose:
- the threshold rule (theory, Levine et al. 2020): the smallest depth L with 3^L >= d(L), where
  d(L) is the width that spends the budget at depth L; below log3(width), adding depth pays off
  double-exponentially. For the paper's block (N = 12·L·d²) L* = W(ln3·N/6)/(2·ln3);
- a rule from the registry (``rules.py``: fits, practice, guards), or the user's own fitted rule;
- hardware validity (``hardware.py``): every printed shape is snapped to widths and depths that
  satisfy the alignment and tensor-parallel constraints, with the deviation from the budget.

Counting is ``blocks.py``'s: this module only asks it for counts of concrete architectures.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Callable

from .errors import InputError
from .hardware import Constraints, heads_ok, tp_conflicts, tp_sizes, violations, width_step
from .shapes import MAX_WIDTH
from .theory import CONSISTENT, LN3, THRESHOLD, Bounds, bounds, compare_pow3

TOKENS_PER_PARAM = 20  # Hoffmann et al. 2022, compute-optimal training
FLOPS_PER_PARAM_TOKEN = 6  # C ≈ 6·N·D
BUDGET_TOLERANCE = 0.05  # recommended shapes and candidates stay within ±5% of the budget when possible
COUNTS = ("total", "active", "with-embeddings")
DEPTH_BAND = 0.08  # depths within 8% of a target count as equally near when choosing the more shardable shape
SNAP_SPAN = 12
FAR_FROM_BUDGET = 0.5  # a "nearest valid shape" further than this from the budget is a conflict, not an answer  # widths tried on each side of the ideal width, in steps of the width multiple
# The largest width a plan may print is 10^15 (shapes.MAX_WIDTH); at the minimal depth 32 that is
# a budget of 12·32·10^30 ≈ 3.84e32 for the paper's block. Larger budgets are refused, not rounded.
MAX_PLAN_WIDTH = MAX_WIDTH


def lambert_w(z: float) -> float:
    """Principal branch W0(z) for z >= 0, to double precision (Newton on w + ln w = ln z, or Halley)."""
    if not z >= 0 or math.isinf(z):
        raise ValueError(f"lambert_w needs a finite z >= 0, got {z!r}")
    if z == 0:
        return 0.0
    if z > math.e:  # log form: no exp(w), so no overflow however large z is
        log_z = math.log(z)
        w = log_z - math.log(log_z)
        for _ in range(50):
            step = (w + math.log(w) - log_z) / (1 + 1 / w)
            w -= step
            if abs(step) <= 4e-16 * w:
                break
        return w
    w = math.log1p(z)
    for _ in range(50):  # Halley on w·e^w = z
        ew = math.exp(w)
        f = w * ew - z
        step = f / (ew * (w + 1) - (w + 2) * f / (2 * w + 2))
        w -= step
        if abs(step) <= 4e-16 * max(w, 1e-300):
            break
    return w


def min_depth_exact(budget: float) -> float:
    """Real L* solving L = log3(sqrt(N/(12L))) for the paper's block: L* = W(ln3·N/6)/(2·ln3)."""
    return lambert_w(LN3 * budget / 6) / (2 * LN3)


def min_depth(budget: int) -> int:
    """Smallest integer L with 3^L >= sqrt(N/(12L)), i.e. 12·L·9^L >= N, in exact integer arithmetic."""
    budget = math.ceil(budget)
    depth = max(1, math.floor(min_depth_exact(budget)) - 1)
    while 12 * depth * 9**depth < budget:
        depth += 1
    while depth > 1 and 12 * (depth - 1) * 9 ** (depth - 1) >= budget:
        depth -= 1
    return depth


def width_for(budget: float, depth: int) -> float:
    """The width spending the whole budget at this depth with the paper's block: sqrt(N/(12·L))."""
    return math.sqrt(budget / (12 * depth))


def empirical_optimum(budget: float) -> tuple[float, float]:
    """(depth, width) of the Levine et al. NeurIPS fit (``rules.py``, 'levine-fit') for the paper's
    block N = 12·L·d²."""
    from .rules import get_rule

    return get_rule("levine-fit").recommend(budget, lambda depth: width_for(budget, depth))


def params_from_tokens(tokens: float) -> float:
    """Compute-optimal N for D training tokens: N = D/20 (Hoffmann et al. 2022)."""
    return tokens / TOKENS_PER_PARAM


def params_from_flops(flops: float) -> float:
    """Compute-optimal N for C FLOPs: C = 6·N·D and D = 20·N, so N = sqrt(C/120)."""
    return math.sqrt(flops / (FLOPS_PER_PARAM_TOKEN * TOKENS_PER_PARAM))


# ---- spending a budget with a real block ---------------------------------------------------------

@dataclass(frozen=True)
class Spending:
    """How a budget is spent: a block preset with overrides, and which count the budget limits."""

    arch: str = "vanilla"
    overrides: tuple[tuple[str, object], ...] = ()
    count: str = "total"

    def architecture(self, depth: int, width: int):
        """The concrete architecture of this block at (depth, width) (``blocks.Preset.architecture``)."""
        from .blocks import preset

        return preset(self.arch).architecture(depth, width, **dict(self.overrides))

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

    @cached_property
    def head_dim(self) -> int:
        from .blocks import preset

        return dict(self.overrides).get("head_dim") or preset(self.arch).head_dim

    @property
    def paper_block(self) -> bool:
        """The paper's 12·L·d² block, where the closed forms of the threshold rule apply exactly."""
        return self.arch == "vanilla" and self.count == "total" and not self.overrides


def _clean_width(spending: Spending) -> int:
    """A width unit at which every preset's rounding is exact (multiples of 2^10·3^2·5 and of the
    head dimension), so counts there lie on the block's exact quadratic in d."""
    return math.lcm(46080, spending.head_dim)


@dataclass(frozen=True)
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

    def width(self, budget: float, depth: float) -> float:
        """The real width d > 0 that spends ``budget`` at ``depth`` (root of the quadratic)."""
        f = self._floats
        a2, a1, a0 = (f[i] * depth + f[i + 3] for i in range(3))
        c = a0 - budget
        if a2 <= 0:
            return -c / a1 if a1 > 0 else math.inf
        return (-a1 + math.sqrt(a1 * a1 - 4 * a2 * c)) / (2 * a2)  # a2 > 0, c < 0: the positive root


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

def block_min_depth(budget: int, model: Quadratic) -> int:
    """Smallest integer L with 3^L >= d(L), d(L) the width spending N at depth L: since the count
    grows with d, that is count(L, 3^L) >= N, decided exactly (integers and fractions)."""
    depth = 1
    while model.value(depth, 3**depth) < budget:
        depth += 1
    return depth


def block_min_depth_exact(budget: float, model: Quadratic) -> float:
    """Real L* with L = log3(d(L)) for the block's count (bisection; the paper's block has the
    closed form ``min_depth_exact``)."""
    gap = lambda depth: math.log(model.width(budget, depth)) / LN3 - depth  # decreasing in L
    lo, hi = 0.5, 1.0
    while gap(hi) > 0:
        lo, hi = hi, 2 * hi
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if gap(mid) > 0 else (lo, mid)
    return (lo + hi) / 2


# ---- snapping to hardware-valid shapes ----------------------------------------------------------

@dataclass(frozen=True)
class Snapped:
    """A valid shape for a budget: the architecture, the count spent, and its deviation."""

    arch: object
    params: int
    deviation: float


def _valid(spending: Spending, constraints: Constraints, depth: int, width: int):
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
        arch = _valid(spending, constraints, depth, width)
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
            arch = _valid(spending, constraints, depth, width)
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
    arch = _valid(spending, constraints, int(optimum[0]), int(optimum[1]))
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


# ---- the plan record ---------------------------------------------------------------------------

def shape_fields(arch, context: int) -> dict:
    """The block fields every shape record carries (null where meaningless), as keyword arguments;
    every count comes from blocks.py."""
    from .blocks import flops_per_token, kv_bytes_per_token, params_active, params_embedding, params_nonembedding

    return dict(kv_heads=arch.kv_heads, head_dim=arch.head_dim, ffn=arch.ffn, gated=arch.gated, experts=arch.experts,
                top_k=arch.top_k, params_real=params_nonembedding(arch), params_active=params_active(arch),
                params_embedding=params_embedding(arch), flops_per_token=flops_per_token(arch, context),
                kv_bytes_per_token=kv_bytes_per_token(arch), tp_sizes=tp_sizes(arch))


@dataclass(frozen=True)
class Candidate(Bounds):
    """One iso-budget shape: the shape record (Theorems 1-2; ``params`` is the paper's 12·L·d²),
    its aspect ratio, the count the budget limits and its deviation, and the block fields."""

    aspect_ratio: float
    params_actual: int
    params_deviation: float
    kv_heads: int
    head_dim: int
    ffn: int
    gated: bool
    experts: int | None
    top_k: int | None
    params_real: int
    params_active: int
    params_embedding: int | None
    flops_per_token: int
    kv_bytes_per_token: int | None
    tp_sizes: tuple[int, ...]


def candidate(snapped: Snapped, context: int, reading: str = CONSISTENT) -> Candidate:
    """The candidate record of a snapped shape."""
    arch = snapped.arch
    record = bounds(arch.depth, arch.width, arch.heads, reading)
    return Candidate(**record.__dict__, aspect_ratio=arch.width / arch.depth,
                     params_actual=snapped.params, params_deviation=snapped.deviation, **shape_fields(arch, context))


@dataclass(frozen=True)
class Plan:
    """The plan record for one budget (field names are the JSON contract; README documents each)."""

    params: int
    budget_source: str
    arch: str
    count: str
    min_depth_exact: float
    min_depth: int
    width_exact: float
    width: int
    heads: int
    kv_heads: int
    head_dim: int
    ffn: int
    gated: bool
    experts: int | None
    top_k: int | None
    params_actual: int
    params_deviation: float
    params_real: int
    params_active: int
    params_embedding: int | None
    flops_per_token: int
    kv_bytes_per_token: int | None
    tp_sizes: tuple[int, ...]
    regime: str
    rule: str
    empirical_depth: float | None
    empirical_width: float | None
    recommended_depth: int
    recommended_width: int
    recommended_heads: int
    recommended_kv_heads: int
    recommended_ffn: int
    recommended_params: int
    recommended_params_deviation: float
    recommended_tp_sizes: tuple[int, ...]
    candidates: tuple[Candidate, ...]
    notes: tuple[str, ...]


@dataclass(frozen=True)
class PlanOptions:
    """Everything `plan` takes besides the budget."""

    spending: Spending = field(default_factory=Spending)
    constraints: Constraints = field(default_factory=Constraints)
    rule: str = "levine-fit"
    rule_file: str | None = None
    context: int = 2048
    reading: str = CONSISTENT


def candidate_depths(lowest: int, top_depth: float, most: int = 12) -> list[int]:
    """Depths from the minimal depth to beyond the deepest recommendation, on a 1-1.5-2-3-4-6-8 ladder."""
    top = max(math.ceil(1.25 * top_depth), 2 * lowest)
    ladder, scale = [], 1
    while scale <= top:
        ladder += [scale * k for k in (1, 1.5) if lowest < scale * k <= top and float(scale * k).is_integer()]
        scale *= 2
    depths = sorted({lowest, *map(int, ladder), max(lowest, round(top_depth))})
    if len(depths) > most:  # thin the middle, keep both ends and the recommended depth
        keep = {depths[0], depths[-1], max(lowest, round(top_depth))}
        step = len(depths) / (most - len(keep))
        keep |= {depths[int(i * step)] for i in range(most - len(keep))}
        depths = sorted(keep)
    return depths


@dataclass(frozen=True)
class Theory:
    """The threshold rule for a budget and block: minimal depth, its real crossing, the width."""

    model: Quadratic
    min_depth: int
    min_depth_exact: float
    width_exact: float


def theory_for(budget: int, spending: Spending) -> Theory:
    """Minimal depth by the threshold rule, closed forms for the paper's block (numbers unchanged
    since 0.1), the exact quadratic count for any other block.

    Budgets whose minimal-depth width passes 10^15 (the largest accepted width; JSON integers stay
    exact below 2^53) are refused: about 3.8e32 for the paper's block (12·32·10^30)."""
    model = quadratic(spending)
    if spending.paper_block:
        depth = min_depth(budget)
        theory = Theory(model, depth, min_depth_exact(budget), width_for(budget, depth))
    else:
        depth = block_min_depth(budget, model)
        theory = Theory(model, depth, block_min_depth_exact(budget, model), model.width(budget, depth))
    if theory.width_exact > MAX_PLAN_WIDTH:
        limit_depth = next(L for L in range(1, 64) if 3**L >= MAX_PLAN_WIDTH)
        raise InputError("budget", f"{budget:.3g}", f"too large to plan: its minimal-depth width would pass 10^15 "
                                                     f"(the largest accepted width); budgets up to about "
                                                     f"{float(model.value(limit_depth, MAX_PLAN_WIDTH)):.2g} for --arch {spending.arch}")
    return theory


def planned_shape(budget: int, spending: Spending, constraints: Constraints, theory: Theory) -> Snapped:
    """The minimal depth's shape: the depth is the theory's answer, so only the width moves, to the
    valid width nearest the budget that keeps 3^(L-1) < width <= 3^L (else the nearest valid one)."""
    depth = theory.min_depth
    low = 3 ** (depth - 1) + 1 if depth > 1 else 2
    planned = snap_width(budget, spending, constraints, depth, theory.width_exact, lo=low, hi=3**depth)
    if planned is None or abs(planned.deviation) > FAR_FROM_BUDGET:
        # the threshold guarantee and the constraints cannot both hold near the budget: keep the constraints
        anywhere = snap_width(budget, spending, constraints, depth, theory.width_exact)
        if planned is None or (anywhere is not None and abs(anywhere.deviation) <= FAR_FROM_BUDGET):
            planned = anywhere
    step = width_step(constraints, spending.head_dim)
    if planned is None or (abs(planned.deviation) > FAR_FROM_BUDGET and theory.width_exact > 2 * step):
        raise no_valid_shape(spending, constraints, depth, theory.width_exact)
    return planned


def plan(budget: int, options: PlanOptions | None = None, budget_source: str = "params") -> Plan:
    """Minimal depth by the threshold rule, the recommended shape of the chosen rule, and
    candidate shapes, every one valid under the constraints."""
    options = options or PlanOptions()
    spending, constraints = options.spending, options.constraints
    theory = theory_for(budget, spending)
    depth, model = theory.min_depth, theory.model
    planned = planned_shape(budget, spending, constraints, theory)
    step = width_step(constraints, spending.head_dim)
    rule = chosen_rule(options)
    width_at_depth = lambda L: model.width(budget, L)
    optimum = rule.recommend(budget, width_at_depth)
    target = optimum[0] if optimum else depth
    if optimum is None:  # the threshold rule itself: its recommendation is the planned shape
        recommended = planned
    else:
        recommended = rule_shape(budget, spending, constraints, optimum, lowest=depth) \
            or snap_depth(budget, spending, constraints, model, target, lowest=depth)
    if recommended is None or (abs(recommended.deviation) > FAR_FROM_BUDGET and theory.width_exact > 2 * step):
        raise no_valid_shape(spending, constraints, round(target), width_at_depth(target))
    candidates = []
    for L in candidate_depths(depth, max(target, recommended.arch.depth)):
        snapped = snap_depth(budget, spending, constraints, model, L, lowest=depth,
                             exclude=frozenset(c.arch.depth for c in candidates))
        if snapped is not None and all(c.arch.width != snapped.arch.width for c in candidates):
            candidates.append(snapped)  # one candidate per width: neighbouring depths of one width add nothing
    candidates.sort(key=lambda s: s.arch.depth)
    arch = planned.arch
    record = bounds(arch.depth, arch.width, arch.heads, options.reading)
    rec = recommended.arch
    built = [candidate(s, options.context, options.reading) for s in candidates]
    return Plan(
        params=budget, budget_source=budget_source, arch=spending.arch, count=spending.count,
        min_depth_exact=theory.min_depth_exact, min_depth=depth, width_exact=theory.width_exact, width=arch.width,
        heads=arch.heads, params_actual=planned.params, params_deviation=planned.deviation,
        **{k: v for k, v in shape_fields(arch, options.context).items() if k not in ("heads",)},
        regime=record.regime, rule=rule.name,
        empirical_depth=optimum[0] if optimum else None, empirical_width=optimum[1] if optimum else None,
        recommended_depth=rec.depth, recommended_width=rec.width, recommended_heads=rec.heads,
        recommended_kv_heads=rec.kv_heads, recommended_ffn=rec.ffn, recommended_params=recommended.params,
        recommended_params_deviation=recommended.deviation, recommended_tp_sizes=tp_sizes(rec),
        candidates=tuple(built),
        notes=advice(budget, options, theory, planned, recommended, optimum, rule, built),
    )


def chosen_rule(options: PlanOptions):
    """The rule that gives the recommended shape: the user's rule file, or a registry rule."""
    from .rules import get_rule, rule_from_file

    rule = rule_from_file(options.rule_file) if options.rule_file else get_rule(options.rule)
    if rule.kind == "guard":
        raise InputError("--rule", options.rule, "a guard bounds the depth but recommends no shape; "
                                                 "choose a rule of kind fit, practice or theory (see `depthwidth rules`)")
    return rule


def plan_architecture(budget: int, arch: str = "llama", **options):
    """The recommended, hardware-valid architecture of a plan (what `export --plan` writes).

    ``options``: ``overrides`` (dict of block fields), ``count``, ``constraints`` (hardware.Constraints),
    ``rule``, ``rule_file``, ``context``."""
    overrides = tuple(sorted((options.pop("overrides", None) or {}).items()))
    spending = Spending(arch, overrides, options.pop("count", "total"))
    p = plan(budget, PlanOptions(spending=spending, **options))
    return spending.architecture(p.recommended_depth, p.recommended_width)


def guard_notes(depth: int, width: int) -> list[str]:
    """A warning for each guard of the registry that the shape breaks (e.g. Depth Delusion's critical depth)."""
    from .rules import REGISTRY

    out = []
    for rule in REGISTRY.values():
        limit = rule.max_depth(width) if rule.kind == "guard" else None
        if limit is not None and depth > limit:
            out.append(f"depth {depth} is above the '{rule.name}' guard's maximum {limit:.1f} for width {width:,} "
                       f"({rule.formula}; {rule.source})")
    return out


def advice(budget, options: PlanOptions, theory: Theory, planned: Snapped, recommended: Snapped, optimum, rule,
           candidates) -> tuple[str, ...]:
    """Short notes: the rule used, deviations, hardware snaps, and the literature context."""
    depth, width = planned.arch.depth, planned.arch.width
    notes = [f"threshold rule (Levine et al. 2020): depth {depth} is the smallest with 3^L >= width for this budget "
             f"({options.spending.arch} block, {options.spending.count} parameters); below log3(width), adding depth "
             "pays off double-exponentially, above it depth and width trade evenly"]
    if compare_pow3(depth, width) < 0:
        notes.append(f"no valid width at depth {depth} keeps depth >= log3(width): {width} is past 3^{depth}")
    if abs(planned.deviation) > BUDGET_TOLERANCE:
        notes.append(f"the planned shape {depth}x{width} is {planned.deviation:+.1%} from the budget: the nearest valid "
                     f"width at the minimal depth (the depth is the theory's answer, so only the width moves)")
    if abs(recommended.deviation) > BUDGET_TOLERANCE:
        notes.append(f"no valid shape near the recommended depth is within ±{BUDGET_TOLERANCE:.0%} of the budget "
                     f"({recommended.deviation:+.1%})")
    if optimum is not None:
        flag = "" if rule.verified else " (constants not verified against a stored source)"
        extrapolated = rule.extrapolated(budget, optimum[0])
        notes.append(f"recommended by rule '{rule.name}' ({rule.kind}){flag}: depth {optimum[0]:.1f}, width "
                     f"{optimum[1]:,.0f} before snapping to a valid shape; {rule.source}"
                     + ("; outside the rule's range: an extrapolation" if extrapolated else ""))
    else:
        notes.append(f"rule '{rule.name}' is the threshold rule itself: the recommended shape is the minimal depth")
    notes += guard_notes(recommended.arch.depth, recommended.arch.width)
    in_band = [c.depth for c in candidates if 20 <= c.aspect_ratio <= 200]
    if in_band:
        notes.append(f"Kaplan et al. 2020: at fixed size, loss varies only a few percent over a wide band of aspect ratios "
                     f"d/L (here depths {', '.join(map(str, in_band))} have d/L in 20-200)")
    if max(c.depth for c in candidates) >= 48:
        notes.append("stacks of ~60 layers diverged without special initialization (Liu et al. 2020, ADMIN); "
                     "residual connections and MLPs counter rank collapse (Dong et al. 2021)")
    if any(c.regime == THRESHOLD for c in candidates):
        notes.append("a candidate sits exactly on d = 3^L, where neither theorem applies")
    return tuple(notes)


# ---- every rule side by side (`plan --rules`) ---------------------------------------------------

@dataclass(frozen=True)
class RuleShape:
    """One rule's answer for a budget, snapped to a valid shape; for a guard, its maximum depth."""

    params: int
    rule: str
    kind: str
    depth: int
    width: int
    heads: int
    kv_heads: int
    ffn: int
    params_actual: int
    params_deviation: float
    tp_sizes: tuple[int, ...]
    rule_depth: float
    rule_width: float
    formula: str
    source: str
    fit_range: str
    verified: bool
    extrapolated: bool
    notes: tuple[str, ...]


def rule_shapes(budget: int, options: PlanOptions | None = None) -> list[RuleShape]:
    """Every registry rule (and the user's rule file) for one budget, side by side with the theory."""
    from .rules import REGISTRY, rule_from_file

    options = options or PlanOptions()
    spending, constraints = options.spending, options.constraints
    theory = theory_for(budget, spending)
    width_at_depth = lambda L: theory.model.width(budget, L)
    rules = list(REGISTRY.values()) + ([rule_from_file(options.rule_file)] if options.rule_file else [])
    rows = []
    for rule in rules:
        notes = list(rule.notes) if rule.notes else []
        if rule.kind == "guard":
            optimum = rule.guard_crossing(width_at_depth)
            depth = optimum[0]
            notes.insert(0, f"a guard, not a recommendation: at this budget, depths above {depth:.1f} exceed the rule's "
                            f"maximum depth for their width")
            snapped = snap_depth(budget, spending, constraints, theory.model, max(1.0, math.floor(depth)))
        else:
            optimum = rule.recommend(budget, width_at_depth)
            if optimum is None:  # the theory row: the minimal depth itself
                optimum = (theory.min_depth_exact, theory.width_exact)
                snapped = planned_shape(budget, spending, constraints, theory)  # the same shape `plan` prints
            else:
                snapped = rule_shape(budget, spending, constraints, optimum) \
                    or snap_depth(budget, spending, constraints, theory.model, optimum[0])
        if snapped is None:
            raise no_valid_shape(spending, constraints, round(optimum[0]), optimum[1])
        extrapolated = rule.extrapolated(budget, optimum[0])
        if extrapolated:
            notes.append(f"budget {budget:.3g} or depth {optimum[0]:.1f} lies outside the rule's range ({rule.fit_range}): "
                         "an extrapolation")
        if not rule.verified:
            notes.append("constants not verified against a stored source")
        arch = snapped.arch
        rows.append(RuleShape(
            params=budget, rule=rule.name, kind=rule.kind, depth=arch.depth, width=arch.width, heads=arch.heads,
            kv_heads=arch.kv_heads, ffn=arch.ffn, params_actual=snapped.params, params_deviation=snapped.deviation,
            tp_sizes=tp_sizes(arch), rule_depth=optimum[0], rule_width=optimum[1], formula=rule.formula,
            source=rule.source, fit_range=rule.fit_range, verified=rule.verified, extrapolated=extrapolated,
            notes=tuple(notes)))
    return rows
