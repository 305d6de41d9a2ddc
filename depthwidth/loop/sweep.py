"""Iso-budget sweeps: shapes of one size at distinct depths, one row per shape with an empty ``loss``
column for the user's runs.

This is the first half of the paper's empirical method (Levine et al. 2020, NeurIPS version, Sec. 5:
train several depths at each size); `depthwidth fit` does the second half on the filled-in file.

A sweep compares depths, so everything else is held fixed across its rows:
- the attention layout: a fixed number of key/value heads (``kv_heads``) or a fixed ratio
  heads / kv_heads (``kv_ratio``; default the preset's own ratio, ``held_layout.PRESET_KV_RATIO``), so depth is
  not confounded with attention sharing;
- the budget: each row spends it within ``snapping.BUDGET_TOLERANCE``; a row that cannot (an explicitly
  requested depth) is kept, flagged (``within_tolerance`` false, ``budget_deviation``, ``note``);
- requested depths are kept exactly: each gets its best valid width (nearest the budget), or a
  line in ``SweepRows.skipped`` saying why it has none. No two rows of one budget share a depth;
- without requested depths, the rows spread over the plan's evidence band (``evidence.depth_band``),
  one shape per depth and one depth per width, widening the band (down to the minimal depth, up to
  2.5 times its top) only as far as ``count`` distinct widths need. Every search is over a bounded number
  of widths (``MAX_POOL_WIDTHS``), whatever the budget.

Row ids are the export folder names (``01-24x2048x16``; with several budgets ``1e9-01-24x2048x16``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..core.errors import InputError
from ..arch.hardware import Constraints, tp_sizes
from ..advice.planner import PlanOptions
from ..advice.threshold import MAX_PLAN_WIDTH
from ..arch.snapping import BUDGET_TOLERANCE, FAR_FROM_BUDGET, Snapped, valid_arch
from ..arch.held_layout import LayoutSpending, layout_quadratic, layout_spending, layout_text, width_unit
from ..arch.spending import Quadratic, block_min_depth
from ..theory.separation import min_depth
from ..theory.shapes import MAX_DEPTH
from .sweep_record import SweepRow, SweepRows

MAX_SWEEP_ROWS = 1000
WIDENED_MARGIN = 2.5  # a default sweep may reach at most 2.5 times the top of the plan's depth band
GROWTH = 1.25  # ... widening the band by this factor at a time, on both sides
MAX_POOL_WIDTHS = 240  # widths looked at per band: all of them when fewer, else this many log-spaced
WIDTH_SPAN = 12  # widths tried on each side of the ideal one, in steps of the width unit (a requested depth)
# layouts a default sweep falls back to when the preset's own give fewer distinct widths within the tolerance
# (a finer head multiple: widths in finer steps): 2 query heads per key/value head, then multi-head attention
FALLBACK_KV_RATIOS = (2, 1)
BUDGET_COUNT_FIELDS = {"total": "params_nonembedding", "active": "params_active", "with-embeddings": "params_with_embeddings"}


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
    shapes: dict = field(default_factory=dict)

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

    def shape(self, depth: int, width: int) -> Snapped | None:
        """The valid shape at (depth, width) with its count and deviation (None: not valid); cached."""
        key = (depth, width)
        if key not in self.shapes:
            arch = valid_arch(self.spending, self.constraints, depth, width)
            count = None if arch is None else self.spending.params(arch)
            self.shapes[key] = None if arch is None else Snapped(arch, count, count / self.budget - 1)
        return self.shapes[key]

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


def unsharded_line(rows) -> list[str]:
    """The note naming the sweep rows tensor parallelism cannot split 8 ways (hardware.SHARD_TP; from each
    row's ``tp_sizes``), as only shapes below 1B non-embedding parameters may be (hardware.SHARD_FROM)."""
    from ..arch.hardware import SHARD_FROM, SHARD_TP

    ways = lambda r: max(t for t in (1, 2, 4, SHARD_TP) if t in r.tp_sizes)
    short = [f"{r.id} ({r.heads}/{r.kv_heads} heads, tp {ways(r)})" for r in rows if SHARD_TP not in r.tp_sizes]
    if not short:
        return []
    return [f"{len(short)} row{'s' * (len(short) != 1)} cannot split {SHARD_TP} ways by tensor parallelism (heads/KV heads, "
            f"the largest tp of 1, 2, 4, 8; JSON: tp_sizes): {_listing(short, 12)}; only shapes below {SHARD_FROM:.0e} "
            "non-embedding parameters may"]


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
    ``count`` shapes spread over the plan's depth band, one per depth and one per width, every one
    within the tolerance (``default_shapes``); a shortfall is a line in ``skipped`` saying why.
    Rows come out in increasing depth. The block is the preset's at this budget's size
    (``presets.Preset.sizes``).

    ``kv_heads``/``kv_ratio`` fix the attention layout. Without either, the preset's ratio is held
    (Llama: 4 query heads per key/value head); the preset's own key/value count held fixed (Llama: 8),
    then 2 query heads per key/value head, then multi-head attention are tried as well, and one of
    them is held instead only when it gives more rows within the tolerance (then more rows, then more
    rows inside the plan's depth band, then more rows that split 8 ways; a tie keeps the earlier
    layout); ``SweepRows.layout`` says which."""
    options = (options or PlanOptions()).at_budget(budget)
    if depths is not None and len(depths) > MAX_SWEEP_ROWS:
        raise InputError("--depths", f"{len(depths)} depths", f"at most {MAX_SWEEP_ROWS} rows in one sweep")
    if depths is None and (isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_SWEEP_ROWS):
        raise InputError("--count", count, f"expected a whole number from 1 to {MAX_SWEEP_ROWS}")
    spending = layout_spending(options.spending, kv_heads, kv_ratio)
    layouts = [spending]
    block = spending.block
    if kv_heads is None and kv_ratio is None and "kv_heads" not in dict(options.spending.overrides) \
            and block.kv_heads and spending.kv_ratio and spending.kv_ratio > 1:
        layouts.append(LayoutSpending(spending.arch, spending.overrides, spending.count, spending.context, spending.size,
                                      kv_fixed=block.kv_heads))
        layouts += [LayoutSpending(spending.arch, spending.overrides, spending.count, spending.context, spending.size,
                                   kv_ratio=r) for r in FALLBACK_KV_RATIOS if r < spending.kv_ratio]
    # rows within the tolerance, then rows, then rows inside the plan's depth band, then rows that split 8 ways
    from ..arch.hardware import SHARD_TP, shards_ways

    score = lambda result: (sum(abs(s.deviation) <= BUDGET_TOLERANCE for s in result[0]), len(result[0]),
                            sum(result[3][0] <= s.arch.depth <= result[3][1] for s in result[0]),
                            sum(shards_ways(s.arch) == SHARD_TP for s in result[0]))
    results: list = []
    for layout in layouts:
        try:
            results.append(_sweep_layout(budget, options, layout, depths, count))
        except InputError:
            if layout is layouts[-1] and not results:
                raise
        if results and score(results[0]) == (len(results[0][0]),) * 4 \
                and len(results[0][0]) >= (count if depths is None else len(set(depths))):
            break  # the preset's own layout already gives every row, within the tolerance and inside the band
    chosen, skipped, layout, _ = max(results, key=score)  # max keeps the first (the preset's ratio) on a tie
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
    """(chosen shapes, skipped lines, the layout, the depth band) of one budget under one attention layout."""
    constraints = options.constraints
    model = layout_quadratic(spending)
    family = _Family(budget, spending, constraints, model, width_unit(spending, constraints))
    lowest = min_depth(budget) if spending.paper_block else block_min_depth(budget, model)
    if model.width(budget, lowest) > MAX_PLAN_WIDTH:
        raise InputError("budget", f"{budget:.3g}", "too large to sweep: its minimal-depth width would pass 10^15 "
                                                     "(the largest accepted width)", number=budget)
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
        return chosen, skipped, spending, (0, math.inf)
    from ..advice.evidence import beyond_evidence, depth_band

    width_at_depth = lambda L: model.width(budget, L)
    band = depth_band(budget, lowest, width_at_depth)
    lo, hi = band.depth_band
    if beyond_evidence(budget, band):  # the band only extrapolates published d/L: bracket the threshold shape
        lo, hi = lowest, 2 * lowest
        skipped.append(f"budget {budget:.3g}: no published evidence reaches this size (plan recommends the threshold "
                       f"rule's shape); the sweep spreads its depths from the minimal depth {lowest} to {hi}")
    if options.rule_file:  # the user's fitted rule: its depth joins the band
        from ..advice.rules.user import rule_from_file

        optimum = rule_from_file(options.rule_file).recommend(budget, width_at_depth)
        if optimum is not None and math.isfinite(optimum[0]):
            lo, hi = min(lo, max(lowest, round(optimum[0]))), max(hi, max(lowest, round(optimum[0])))
    widest = min(MAX_DEPTH, max(lowest, math.floor(WIDENED_MARGIN * hi)))  # never a depth bounds would refuse
    chosen, (start, stop) = default_shapes(family, lowest, lo, hi, widest, count)
    finer = [flag for flag, coarse in (("--multiple", (constraints.multiple or 1) > 1), ("--head-dim", spending.head_dim > 32),
                                       ("--kv-ratio", spending.heads_unit > 1), ("--tp", constraints.tp > 1)) if coarse]
    named = " or ".join(filter(None, (", ".join(finer[:-1]), finer[-1]))) if finer else ""
    steps = f"widths come in steps of {family.unit}" + (f" (a smaller {named} gives finer steps)" if finer else "")
    if chosen and (start < lo or stop > hi):
        skipped.append(f"budget {budget:.3g}: the plan's depth band [{lo}, {hi}] holds fewer than {count} distinct widths "
                       f"within ±{BUDGET_TOLERANCE:.0%}; the sweep looked from depth {start} to {stop} ({steps})")
    if len(chosen) < count:
        skipped.append(f"budget {budget:.3g}: {len(chosen)} shape{'s' * (len(chosen) != 1)}, not {count}: only "
                       f"{len(chosen)} distinct widths spend the budget within ±{BUDGET_TOLERANCE:.0%} at distinct depths "
                       f"between depth {start} and {stop} (the minimal depth is {lowest}, the plan's band [{lo}, {hi}], "
                       f"at most {WIDENED_MARGIN:g} times its top) with {layout_text(spending)}; {steps}")
    if not chosen:
        from ..arch.snapping import no_valid_shape

        raise no_valid_shape(spending, constraints, lowest, model.width(budget, lowest))
    return chosen, skipped, spending, (lo, hi)


def default_shapes(family: _Family, lowest: int, lo: int, hi: int, widest: int, count: int) -> tuple[list[Snapped], tuple[int, int]]:
    """Up to ``count`` shapes within tolerance, at distinct depths and distinct widths, spread over the
    depth band [lo, hi], and the depths looked at.

    The band (clipped to the minimal depth ``lowest``) is searched first; while it holds fewer than
    ``count`` distinct widths it grows by ``GROWTH`` on both sides, never below ``lowest`` nor past
    ``widest``. Each width in the window gives its depth nearest the budget (``_pool``); the rows are
    then the shapes nearest ``count`` depths log-spaced over the window."""
    start, stop = max(lo, lowest), max(hi, lowest)
    while True:
        pool = _pool(family, lowest, start, stop)
        if len(pool) >= count or (start <= lowest and stop >= widest):
            break
        start, stop = max(lowest, math.floor(start / GROWTH)), min(max(widest, stop), math.ceil(stop * GROWTH))
    if len(pool) <= count:
        return pool, (start, stop)
    chosen: list[Snapped] = []
    for target in target_depths(start, stop, count) if count > 1 else [math.sqrt(start * stop)]:
        free = [s for s in pool if s not in chosen]
        chosen.append(min(free, key=lambda s: (abs(math.log(s.arch.depth / target)), abs(s.deviation))))
    return sorted(chosen, key=lambda s: s.arch.depth), (start, stop)


def _pool(family: _Family, lowest: int, start: int, stop: int) -> list[Snapped]:
    """The shapes within tolerance with depths in [start, stop]: each width (multiples of the width unit;
    at most ``MAX_POOL_WIDTHS``, log-spaced, when there are more) at its depths nearest the budget,
    one shape per width and per depth (the one nearest the budget), in increasing depth."""
    model, unit, budget = family.model, family.unit, family.budget
    narrow = max(1, math.floor(model.width(budget, stop) / (1 + 2 * BUDGET_TOLERANCE) / unit))
    wide = max(narrow, math.ceil(model.width(budget, start) * (1 + 2 * BUDGET_TOLERANCE) / unit))
    if wide - narrow + 1 <= MAX_POOL_WIDTHS:
        steps = range(narrow, wide + 1)
    else:
        ratio = math.log(wide / narrow) / (MAX_POOL_WIDTHS - 1)
        steps = sorted({round(narrow * math.exp(ratio * i)) for i in range(MAX_POOL_WIDTHS)})
    by_depth: dict[int, Snapped] = {}
    for k in steps:
        width = k * unit
        per_layer, rest = model.per_layer(width)
        if per_layer <= 0:
            continue
        ideal = (budget - rest) / per_layer
        best = None
        for depth in {math.floor(ideal), math.ceil(ideal)}:
            if max(start, lowest) <= depth <= stop:
                snapped = family.shape(depth, width)
                if snapped is not None and abs(snapped.deviation) <= BUDGET_TOLERANCE \
                        and (best is None or abs(snapped.deviation) < abs(best.deviation)):
                    best = snapped
        if best is not None:
            held = by_depth.get(best.arch.depth)
            if held is None or abs(best.deviation) < abs(held.deviation):
                by_depth[best.arch.depth] = best
    return [by_depth[d] for d in sorted(by_depth)]


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
        kv_bytes_per_token=kv_bytes_per_token(arch), note=note, predicted_loss=_predicted_loss(arch, budget))


def _predicted_loss(arch, budget: int):
    """The loss penalty (and its interval) of a sweep row: the loss model at the sweep's budget (cost/loss.py)."""
    from ..cost.fields import Loss
    from ..cost.loss import loss_penalty

    return Loss(*(float(v) for v in loss_penalty(arch.depth, budget, None, arch.width, arch.ffn)))


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
