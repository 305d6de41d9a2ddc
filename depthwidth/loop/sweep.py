"""Iso-budget sweeps: shapes of one size at distinct depths, one row per shape with an empty ``loss``
column for the user's runs.

This is the first half of the paper's empirical method (Levine et al. 2020, NeurIPS version, Sec. 5:
train several depths at each size); `depthwidth fit` does the second half on the filled-in file.

A sweep compares depths, so everything else is held fixed across its rows:
- the attention layout: a fixed number of key/value heads (``kv_heads``) or a fixed ratio
  heads / kv_heads (``kv_ratio``; default the preset's own ratio, ``PRESET_KV_RATIO``), so depth is
  not confounded with attention sharing;
- the budget: each row spends it within ``planner.BUDGET_TOLERANCE``; a row that cannot (an explicitly
  requested depth) is kept, flagged (``within_tolerance`` false, ``budget_deviation``, ``note``);
- requested depths are kept exactly: each gets its best valid width (nearest the budget), or a
  line in ``SweepRows.skipped`` saying why it has none. No two rows of one budget share a depth.

Row ids are the export folder names (``01-24x2048x16``; with several budgets ``1e9-01-24x2048x16``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache

from ..errors import InputError
from ..arch.hardware import Constraints, tp_sizes
from ..advice.planner import MAX_PLAN_WIDTH, PlanOptions
from ..arch.snapping import BUDGET_TOLERANCE, FAR_FROM_BUDGET, Snapped, valid_arch
from ..arch.spending import Quadratic, Spending, _through, block_min_depth
from ..theory.separation import min_depth

MAX_SWEEP_ROWS = 1000
DEEPEST_MARGIN = 1.1  # the default list reaches 10% past the deepest rule's recommended depth
WIDENED_MARGIN = 2.0  # ... and, when that range has too few distinct widths, at most to twice that depth
WIDTH_SPAN = 12  # widths tried on each side of the ideal one, in steps of the width unit
# heads / kv_heads of each preset's reference model (blocks.PRESETS sources): Llama 3 8B 32/8 and Llama 2 70B
# 64/8 (meta-llama config.json), Mistral-7B and Mixtral-8x7B 32/8, Qwen2-7B 28/4; GPT-2, Gemma-7B and the
# paper's block are multi-head (1). DeepSeek's latent attention has no key/value heads (None).
PRESET_KV_RATIO = {"vanilla": 1, "gpt2": 1, "gemma": 1, "llama": 4, "mistral": 4, "mixtral": 4, "qwen2": 7, "deepseek": None}
BUDGET_COUNT_FIELDS = {"total": "params_nonembedding", "active": "params_active", "with-embeddings": "params_with_embeddings"}


@dataclass(frozen=True)
class SweepRow:
    """One shape of a sweep: its ``id`` (the export folder name), the shape record, the count the
    budget limits with its deviation, and ``loss`` (None: to fill in)."""

    id: str
    budget: int
    budget_count: str
    depth: int
    width: int
    heads: int
    kv_heads: int
    head_dim: int
    ffn: int
    gated: bool
    experts: int | None
    top_k: int | None
    params_12Ld2: int
    params_nonembedding: int
    params_active: int
    params_embedding: int | None
    params_with_embeddings: int | None
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
    loss_vs_best: float | None = None  # the loss model's predicted penalty vs the best shape of the budget (cost/loss.py)
    loss_vs_best_low: float | None = None
    loss_vs_best_high: float | None = None


class SweepRows(list):
    """The rows of a sweep (a list of SweepRow), with ``skipped``: one line per requested depth that
    has no row, or per shortfall of the default list (for stderr), and ``architectures``: the block
    of each row, in row order (what an export writes); ``layout``: the attention layout held fixed."""

    def __init__(self, rows=(), skipped=(), architectures=(), layout: str = ""):
        super().__init__(rows)
        self.skipped = tuple(skipped)
        self.architectures = tuple(architectures)
        self.layout = layout


# ---- a block with its attention layout held fixed ---------------------------------------------------

@dataclass(frozen=True)
class LayoutSpending(Spending):
    """A Spending whose key/value heads follow a fixed layout: ``kv_fixed`` heads at every width,
    or ``kv_ratio`` query heads per key/value head (kv_heads = heads / kv_ratio)."""

    kv_fixed: int | None = None
    kv_ratio: int | None = None

    def architecture(self, depth: int, width: int):
        from ..arch.blocks import preset

        block = preset(self.arch)
        overrides = dict(self.overrides)
        if not block.mla and (self.kv_fixed or self.kv_ratio):
            head_dim = overrides.get("head_dim") or block.head_dim
            heads = width // head_dim
            if self.kv_ratio:
                if heads % self.kv_ratio:
                    raise InputError("--kv-ratio", self.kv_ratio, f"{heads} heads are not a multiple of it")
                overrides["kv_heads"] = heads // self.kv_ratio
            else:
                overrides["kv_heads"] = self.kv_fixed
        return block.architecture(depth, width, self.context, **overrides)

    @property
    def heads_unit(self) -> int:
        """Head counts must be multiples of this (the layout's ratio, or the fixed kv heads)."""
        return self.kv_ratio or self.kv_fixed or 1

    @property
    def paper_block(self) -> bool:
        return Spending.paper_block.fget(self) and self.heads_unit == 1


def layout_spending(spending: Spending, kv_heads: int | None = None, kv_ratio: int | None = None) -> LayoutSpending:
    """The sweep's block: ``kv_heads`` fixed, or ``kv_ratio`` fixed, or (neither) a --kv-heads already in
    the overrides, else the preset's ratio (``PRESET_KV_RATIO``)."""
    from ..arch.blocks import preset

    block = preset(spending.arch)
    overrides = dict(spending.overrides)
    given = overrides.pop("kv_heads", None)
    if kv_heads is not None and given is not None and kv_heads != given:
        raise InputError("--kv-heads", kv_heads, f"given twice ({given} and {kv_heads})")
    kv_heads = kv_heads if kv_heads is not None else given
    if kv_heads is not None and kv_ratio is not None:
        raise InputError("--kv-ratio", kv_ratio, "give --kv-heads (a fixed count) or --kv-ratio (heads per KV head), not both")
    for name, value in (("--kv-heads", kv_heads), ("--kv-ratio", kv_ratio)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise InputError(name, value, "expected a whole number >= 1")
    if block.mla:
        if kv_heads is not None or kv_ratio is not None:
            raise InputError("--kv-heads" if kv_heads is not None else "--kv-ratio", kv_heads or kv_ratio,
                             f"the {block.name} preset uses latent attention (MLA): there are no key/value heads to set")
        return LayoutSpending(spending.arch, tuple(sorted(overrides.items())), spending.count, spending.context)
    if kv_heads is None and kv_ratio is None:
        kv_ratio = PRESET_KV_RATIO.get(block.name) or 1
    return LayoutSpending(spending.arch, tuple(sorted(overrides.items())), spending.count, spending.context,
                          kv_fixed=kv_heads, kv_ratio=kv_ratio)


def layout_text(spending: LayoutSpending) -> str:
    if spending.kv_fixed:
        return f"{spending.kv_fixed} key/value head{'s' * (spending.kv_fixed != 1)} in every row"
    if spending.kv_ratio and spending.kv_ratio > 1:
        return f"{spending.kv_ratio} query heads per key/value head in every row"
    if spending.kv_ratio == 1:
        return "multi-head attention (kv_heads = heads) in every row"
    return "latent attention in every row"


@lru_cache(maxsize=64)
def layout_quadratic(spending: LayoutSpending) -> Quadratic:
    """The block's count as an exact quadratic in the width (as ``planner.quadratic``), measured at
    widths where every preset's rounding is exact and the layout's head multiple divides the heads."""
    from fractions import Fraction

    from ..arch.spending import quadratic

    if spending.paper_block:
        return quadratic(Spending())
    unit = math.lcm(46080, spending.head_dim * spending.heads_unit)
    widths = (unit, 2 * unit)
    rows = []
    for depth in (64, 128):
        rows.append(_through(widths, [Fraction(spending.params(spending.architecture(depth, w))) for w in widths]))
    slope = tuple((q - p) / 64 for p, q in zip(*rows))
    return Quadratic(slope, tuple(p - 64 * s for p, s in zip(rows[0], slope)))


def width_unit(spending: LayoutSpending, constraints: Constraints) -> int:
    """Widths of a sweep are multiples of this: the width multiple, and head_dim times the head
    multiple the layout and tensor parallelism need."""
    heads_unit = math.lcm(spending.heads_unit, constraints.tp)
    return math.lcm(constraints.multiple or 1, spending.head_dim * heads_unit)


# ---- the sweep -------------------------------------------------------------------------------------

@dataclass
class _Family:
    """One budget's block, constraints and model, with a cache of the best width per depth."""

    budget: int
    spending: LayoutSpending
    constraints: Constraints
    model: Quadratic
    unit: int
    best: dict = field(default_factory=dict)

    def best_width(self, depth: int) -> Snapped | None:
        """The valid shape at exactly this depth whose count is nearest the budget (None: no valid width)."""
        if depth not in self.best:
            center = self.model.width(self.budget, depth)
            k0 = max(1, round(center / self.unit)) if math.isfinite(center) else 1
            options = []
            for k in range(max(1, k0 - WIDTH_SPAN), k0 + WIDTH_SPAN + 1):
                arch = valid_arch(self.spending, self.constraints, depth, k * self.unit)
                if arch is not None:
                    count = self.spending.params(arch)
                    options.append(Snapped(arch, count, count / self.budget - 1))
            self.best[depth] = min(options, key=lambda o: (abs(o.deviation), o.arch.width), default=None)
        return self.best[depth]

    def narrowest(self, depth: int) -> Snapped | None:
        """The narrowest valid shape at this depth (searched upwards from one width unit)."""
        for k in range(1, 4 * WIDTH_SPAN):
            arch = valid_arch(self.spending, self.constraints, depth, k * self.unit)
            if arch is not None:
                count = self.spending.params(arch)
                return Snapped(arch, count, count / self.budget - 1)
        return None

    def deepest_within(self) -> int | None:
        """About the deepest depth whose narrowest valid shape still fits the budget (within tolerance)."""
        probe = self.narrowest(64)
        if probe is None:
            return None
        per_layer, rest = self.model.per_layer(probe.arch.width)
        return max(0, math.floor((self.budget * (1 + BUDGET_TOLERANCE) - rest) / per_layer)) if per_layer > 0 else None


def deepest_recommendation(budget: int, options: PlanOptions, width_at_depth) -> float:
    """The largest real depth any recommending rule of the registry (and the rule file) gives."""
    from ..advice.rules import REGISTRY
    from ..advice.user_rules import rule_from_file

    rules = [r for r in REGISTRY.values() if r.kind != "guard"]
    if options.rule_file:
        rules.append(rule_from_file(options.rule_file))
    depths = [optimum[0] for r in rules if (optimum := r.recommend(budget, width_at_depth)) is not None]
    return max(depths, default=1.0)


def target_depths(lowest: int, top: float, count: int) -> list[float]:
    """``count`` depths spaced evenly in log space from ``lowest`` to ``top``."""
    if count == 1 or top <= lowest:
        return [float(lowest)]
    ratio = math.log(top / lowest)
    return [lowest * math.exp(ratio * i / (count - 1)) for i in range(count)]


def _listing(values, limit: int = 8) -> str:
    shown = ", ".join(map(str, values[:limit]))
    return shown + (", ..." if len(values) > limit else "")


def budget_label(budget: int) -> str:
    """A budget as a short file-name-safe label: 1e9, 3e7, 1.3e9, 350 -> 350."""
    text = f"{budget:.3g}"
    if "e" in text:
        mantissa, exponent = text.split("e")
        text = f"{mantissa}e{int(exponent)}"
    return text


def sweep(budget: int, options: PlanOptions | None = None, depths: list[int] | None = None, count: int = 8, *,
          kv_heads: int | None = None, kv_ratio: int | None = None, id_prefix: str = "") -> SweepRows:
    """The iso-budget family: explicit ``depths`` (each kept exactly, or a line in ``skipped``), or
    ``count`` distinct depths log-spaced from the minimal depth to 10% past the deepest rule's
    recommendation, every shape within the tolerance: one per width first, then deeper (to twice
    that depth), then a second depth per width (``default_shapes``); each step and any shortfall is
    a line in ``skipped``. Rows come out in increasing depth.

    ``kv_heads``/``kv_ratio`` fix the attention layout. Without either, the preset's ratio is held
    (Llama: 4 query heads per key/value head); when the preset's own key/value count held fixed
    (Llama: 8) gives more rows within the tolerance (tensor parallelism makes ratio layouts coarse),
    that count is held instead (then more rows, more distinct widths, a shallower deepest row and a
    smaller total deviation break ties; a full tie keeps the ratio), and
    ``SweepRows.layout`` says which."""
    options = options or PlanOptions()
    if depths is not None and len(depths) > MAX_SWEEP_ROWS:
        raise InputError("--depths", f"{len(depths)} depths", f"at most {MAX_SWEEP_ROWS} rows in one sweep")
    if depths is None and (isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_SWEEP_ROWS):
        raise InputError("--count", count, f"expected a whole number from 1 to {MAX_SWEEP_ROWS}")
    spending = layout_spending(options.spending, kv_heads, kv_ratio)
    layouts = [spending]
    from ..arch.blocks import preset

    block = preset(spending.arch)
    if kv_heads is None and kv_ratio is None and "kv_heads" not in dict(options.spending.overrides) \
            and block.kv_heads and spending.kv_ratio and spending.kv_ratio > 1:
        layouts.append(LayoutSpending(spending.arch, spending.overrides, spending.count, spending.context,
                                      kv_fixed=block.kv_heads))
    results: list = []
    for layout in layouts:
        try:
            results.append(_sweep_layout(budget, options, layout, depths, count))
        except InputError:
            if layout is layouts[-1] and not results:
                raise
    score = lambda result: (sum(abs(s.deviation) <= BUDGET_TOLERANCE for s in result[0]), len(result[0]),
                            len({s.arch.width for s in result[0]}), -max((s.arch.depth for s in result[0]), default=0),
                            -sum(abs(s.deviation) for s in result[0]))
    chosen, skipped, layout = max(results, key=score)  # max keeps the first (the ratio) on a tie
    if not chosen:  # explicit depths, none of them with a shape near the budget
        more = f" (and {len(skipped) - 1} more requested depths like it)" if len(skipped) > 1 else ""
        raise InputError("--depths", _listing(sorted(set(depths))), f"no requested depth has a shape near the budget: "
                                                                   f"{skipped[0]}{more}")
    count_field = BUDGET_COUNT_FIELDS.get(layout.count, layout.count)
    rows = [sweep_row(s, i, id_prefix, budget, count_field, options) for i, s in enumerate(chosen, 1)]
    named = _listing([f"{r.id} ({r.budget_deviation:+.1%})" for r in rows if not r.within_tolerance], 12)
    skipped = [line.replace("{flagged}", named) for line in skipped]
    return SweepRows(rows, skipped, [s.arch for s in chosen], layout_text(layout))


def _sweep_layout(budget: int, options: PlanOptions, spending: LayoutSpending, depths, count):
    """(chosen shapes, skipped lines, the layout) of one budget under one attention layout."""
    constraints = options.constraints
    model = layout_quadratic(spending)
    family = _Family(budget, spending, constraints, model, width_unit(spending, constraints))
    lowest = min_depth(budget) if spending.paper_block else block_min_depth(budget, model)
    if model.width(budget, lowest) > MAX_PLAN_WIDTH:
        raise InputError("budget", f"{budget:.3g}", "too large to sweep: its minimal-depth width would pass 10^15 "
                                                     "(the largest accepted width)")
    skipped: list[str] = []
    if depths is not None:
        chosen = []
        for depth in sorted(set(depths)):
            snapped = family.best_width(depth)
            if snapped is not None and abs(snapped.deviation) <= FAR_FROM_BUDGET:
                chosen.append(snapped)
            else:
                skipped.append(why_not(family, depth, snapped))
        flagged = [s for s in chosen if abs(s.deviation) > BUDGET_TOLERANCE]
        if flagged:
            skipped.append(f"budget {budget:.3g}: {len(flagged)} of {len(chosen)} rows are more than ±{BUDGET_TOLERANCE:.0%} "
                           f"from the budget (flagged in within_tolerance and note): {{flagged}}; with "
                           f"{layout_text(spending)}, widths come in steps of {family.unit}")
        return chosen, skipped, spending
    width_at_depth = lambda L: model.width(budget, L)
    deepest = deepest_recommendation(budget, options, width_at_depth)
    top = max(lowest, math.floor(DEEPEST_MARGIN * deepest))
    chosen, reach = default_shapes(family, lowest, top, max(top, math.floor(WIDENED_MARGIN * deepest)), count)
    finer = [flag for flag, coarse in (("--multiple", (constraints.multiple or 1) > 1), ("--head-dim", spending.head_dim > 32),
                                       ("--kv-ratio", spending.heads_unit > 1), ("--tp", constraints.tp > 1)) if coarse]
    named = " or ".join(filter(None, (", ".join(finer[:-1]), finer[-1]))) if finer else ""
    steps = f"widths come in steps of {family.unit}" + (f" (a smaller {named} gives finer steps)" if finer else "")
    if reach > top:
        skipped.append(f"budget {budget:.3g}: depths past {top} (10% past the deepest rule's recommendation) added, up to "
                       f"{reach}, to look for {count} distinct widths within ±{BUDGET_TOLERANCE:.0%} ({steps})")
    shared = len(chosen) - len({s.arch.width for s in chosen})
    if shared:
        skipped.append(f"budget {budget:.3g}: {shared} width{'s carry' if shared != 1 else ' carries'} a second depth: only "
                       f"{len(chosen) - shared} distinct widths spend the budget within ±{BUDGET_TOLERANCE:.0%} between "
                       f"depth {lowest} and {reach} with {layout_text(spending)} ({steps})")
    if len(chosen) < count:
        skipped.append(f"budget {budget:.3g}: {len(chosen)} shape{'s' * (len(chosen) != 1)}, not {count}: only "
                       f"{len(chosen)} distinct depths (at most two per width) between depth {lowest} (the minimal depth) "
                       f"and {reach} spend the budget within ±{BUDGET_TOLERANCE:.0%} with {layout_text(spending)}; {steps}")
    if not chosen:
        from ..advice.planner import no_valid_shape

        raise no_valid_shape(spending, constraints, lowest, model.width(budget, lowest))
    return chosen, skipped, spending


def default_shapes(family: _Family, lowest: int, top: int, widest: int, count: int) -> tuple[list[Snapped], int]:
    """Up to ``count`` shapes within tolerance at distinct depths, and the deepest depth looked at.

    1. One shape per width: log-spaced target depths over the usable depths in [lowest, top], each
       taking the usable depth nearest it whose width no row has yet.
    2. Too few widths: the range grows past ``top`` (at most to ``widest``) just far enough to reach
       ``count`` distinct widths (narrower ones: deeper rows), and step 1 runs again on it.
    3. Still too few: a second depth at a width already used (never a third), each time the usable
       depth farthest in log depth from every chosen one (filling the widest gap)."""
    ok = lambda depth: (s := family.best_width(depth)) is not None and abs(s.deviation) <= BUDGET_TOLERANCE
    usable = [d for d in range(lowest, top + 1) if ok(d)]
    reach = top
    widths = {family.best_width(d).arch.width for d in usable}
    depth = top
    while len(widths) < count and depth < widest:
        depth += 1
        if ok(depth):
            usable.append(depth)
            reach = depth
            widths.add(family.best_width(depth).arch.width)
    if not usable:
        return [], reach
    targets = target_depths(usable[0], usable[-1], min(count, len(usable)))
    chosen: dict[int, Snapped] = {}
    for target in targets:
        for depth in sorted(usable, key=lambda d: (abs(math.log(d / target)), d)):
            snapped = family.best_width(depth)
            if depth not in chosen and all(c.arch.width != snapped.arch.width for c in chosen.values()):
                chosen[depth] = snapped
                break
    while len(chosen) < count:
        used = [c.arch.width for c in chosen.values()]
        spare = [d for d in usable if d not in chosen and used.count(family.best_width(d).arch.width) == 1]
        if not spare:
            break
        gap = lambda d: (min(abs(math.log(d / c)) for c in chosen), -abs(family.best_width(d).deviation), -d)
        best = max(spare, key=gap)
        chosen[best] = family.best_width(best)
    return [chosen[d] for d in sorted(chosen)], reach


def why_not(family: _Family, depth: int, snapped: Snapped | None) -> str:
    """The line for a requested depth with no row."""
    budget, spending = family.budget, family.spending
    ideal = family.model.width(budget, depth)
    deepest = family.deepest_within()
    hint = f"; the deepest depth with a shape near the budget is about {deepest}" if deepest else ""
    if snapped is None:
        return (f"depth {depth}: no valid {spending.arch} width near {ideal:,.0f} meets the constraints "
                f"({layout_text(spending)}, widths in multiples of {family.unit})")
    arch = snapped.arch
    if snapped.deviation > 0:
        return (f"depth {depth}: the budget {budget:.3g} over {depth:,} layers leaves a width of {ideal:,.1f}; the "
                f"narrowest valid {spending.arch} shape at that depth ({arch.width:,}: {arch.heads} heads of "
                f"{arch.head_dim}, {arch.kv_heads} key/value) spends {snapped.params:.3g}, {snapped.deviation:+.0%} "
                f"of the budget{hint}")
    return (f"depth {depth}: the widest valid {spending.arch} shape near {ideal:,.0f} at that depth spends "
            f"{snapped.params:.3g}, {snapped.deviation:+.0%} of the budget {budget:.3g}")


def sweep_row(snapped: Snapped, index: int, prefix: str, budget: int, count_field: str, options: PlanOptions) -> SweepRow:
    """The record of one chosen shape; every count from blocks.py, the bounds from theory.py."""
    from ..arch.blocks import flops_per_token, kv_bytes_per_token, params_active, params_embedding, params_nonembedding
    from ..theory.separation import bounds

    arch = snapped.arch
    record = bounds(arch.depth, arch.width, arch.heads, options.reading)
    nonembedding, embedding = params_nonembedding(arch), params_embedding(arch)
    within = abs(snapped.deviation) <= BUDGET_TOLERANCE
    note = None if within else (f"{count_field} {snapped.params:,} is {snapped.deviation:+.1%} from the budget: no valid "
                                f"width at depth {arch.depth} comes within ±{BUDGET_TOLERANCE:.0%}")
    return SweepRow(
        id=f"{prefix}{index:02d}-{arch.depth}x{arch.width}x{arch.heads}", budget=budget, budget_count=count_field,
        depth=arch.depth, width=arch.width, heads=arch.heads, kv_heads=arch.kv_heads, head_dim=arch.head_dim,
        ffn=arch.ffn,
        gated=arch.gated, experts=arch.experts, top_k=arch.top_k, params_12Ld2=record.params_12Ld2,
        params_nonembedding=nonembedding, params_active=params_active(arch), params_embedding=embedding,
        params_with_embeddings=None if embedding is None else nonembedding + embedding,
        budget_deviation=snapped.deviation, within_tolerance=within, aspect_ratio=arch.width / arch.depth,
        regime=record.regime, threshold_depth=record.threshold_depth, log3_sep_lower=record.log3_sep_lower,
        log3_sep_upper=record.log3_sep_upper, lower_vacuous=record.lower_vacuous, c2_reading=record.c2_reading,
        tp_sizes=tp_sizes(arch), flops_per_token=flops_per_token(arch, options.context),
        kv_bytes_per_token=kv_bytes_per_token(arch), note=note, **_predicted_loss(arch.depth, budget))


def _predicted_loss(depth: int, budget: int) -> dict:
    """loss_vs_best (and its interval) of a sweep row: the loss model at the sweep's budget (cost/loss.py)."""
    from ..cost.loss import loss_penalty

    names = ("loss_vs_best", "loss_vs_best_low", "loss_vs_best_high")
    return {name: float(v) for name, v in zip(names, loss_penalty(depth, budget))}


def sweep_many(budgets: list[int], options: PlanOptions | None = None, depths: list[int] | None = None, count: int = 8,
               **layout) -> SweepRows:
    """One sweep per budget, concatenated; with several budgets each id starts with the budget's label
    (``1e9-01-...``), so ids stay unique and equal the export folder names."""
    rows, skipped, archs, layouts = [], [], [], []
    labels = [budget_label(b) for b in budgets]
    if len(set(labels)) != len(labels):  # budgets that print alike: fall back to exact integers
        labels = [str(int(b)) for b in budgets]
    for budget, label in zip(budgets, labels):
        part = sweep(budget, options, depths, count, id_prefix=f"{label}-" if len(budgets) > 1 else "", **layout)
        rows += part
        skipped += part.skipped
        archs += part.architectures
        layouts.append(part.layout)
    return SweepRows(rows, skipped, archs, "; ".join(dict.fromkeys(layouts)))
