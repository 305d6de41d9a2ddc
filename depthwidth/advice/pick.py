"""The plan's recommended shape by the consensus rule (``evidence.py``), and the costs of every
shape a plan prints (``costs.py``).

The consensus (README "How the recommendation is made"): the floor is the theory's minimal depth;
the band [lo, hi] comes from the in-range evidence at the budget (``evidence.depth_band``); the
candidates are valid snapped shapes (``snapping.snap_width``) at the depths of the band; the pick is
the cheapest of them by ``costs.run_costs`` under the plan's run (``--prefer``). Without a training
length the ranking assumes the compute-optimal 20 tokens per parameter (Hoffmann et al. 2022), and
the plan's notes say so; the printed cost fields that need a length stay null.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

from ..budgets import TOKENS_PER_PARAM
from ..arch.snapping import BUDGET_TOLERANCE, Snapped, snap_width

CONSENSUS = "consensus"
MOST_BAND_DEPTHS = 48  # a wider band is sampled at this many depths (evenly in log depth), both ends kept
MOST_WIDTHS = 8  # valid widths tried per depth of the band, nearest the budget's width


@dataclass(frozen=True)
class Costing:
    """The run every shape of a plan is costed under: ``spec`` as given (tokens may be None) and
    ``ranking``, the same run at the assumed length when none was given."""

    spec: object
    ranking: object
    tokens_given: bool

    def costs(self, arch):
        """run_costs of ``arch`` under the ranking spec (memoized per shape)."""
        from ..cost.run import run_costs

        key = (arch.depth, arch.width, arch.heads, arch.kv_heads, arch.ffn)
        cache = self.__dict__.setdefault("_cache", {})
        if key not in cache:
            cache[key] = run_costs(arch, self.ranking)
        return cache[key]

    def ranked(self, arch, count: int, budget: int):
        """The costs the consensus compares: GPU-hours and training memory scaled by budget / the
        shape's count, so that no shape wins by spending less of the budget (every shape is within
        the snapping tolerance of it); KV cache and depth as they are."""
        costs = self.costs(arch)
        scale = budget / count if count else 1.0
        return replace(costs, train_gpu_hours=costs.train_gpu_hours * scale,
                       train_memory_per_gpu_bytes=costs.train_memory_per_gpu_bytes * scale)

    def fields(self, arch) -> dict:
        """The shape record's cost fields (``run_records.COST_FIELDS``)."""
        from ..cost.fields import cost_fields

        return cost_fields(self.costs(arch), self.tokens_given)


def costing(run, budget: int, tokens: float | None, context: int) -> Costing:
    """The Costing of a plan: ``run`` (a costs.RunSpec or None for the defaults) at the plan's context,
    with ``tokens`` (None: no training length; ranking at 20 tokens per parameter)."""
    from ..cost.run import RunSpec

    spec = replace(run or RunSpec(), context=context, tokens=tokens)
    ranking = spec if tokens is not None else replace(spec, tokens=float(TOKENS_PER_PARAM * budget))
    return Costing(spec, ranking, tokens is not None)


def band_depths(lo: int, hi: int, most: int = MOST_BAND_DEPTHS) -> list[int]:
    """Every depth of [lo, hi], or ``most`` of them evenly in log depth (both ends kept)."""
    if hi - lo + 1 <= most:
        return list(range(lo, hi + 1))
    ratio = math.log(hi / lo) / (most - 1)
    return sorted({lo, hi, *(round(lo * math.exp(ratio * i)) for i in range(most))})


def band_shapes(budget: int, spending, constraints, model, lo: int, hi: int) -> tuple[list[Snapped], str | None]:
    """The valid shapes at the depths of the band whose count is within the tolerance of the budget
    (every such width, not only the nearest). A block with grouped-query attention keeps its key/value
    heads when it can: a width whose heads the preset's G does not divide falls back to fewer KV
    heads (a different model, whose smaller KV cache is not a saving), so such shapes are dropped
    when some shape in the band keeps G (the second value is a note saying so, else None)."""
    from ..arch.hardware import width_step

    step = width_step(constraints, spending.head_dim)
    shapes = []
    for depth in band_depths(lo, hi):
        center = model.width(budget, depth)
        # a count within ±5% needs a width within ±5% (counts grow at least linearly in d): try only those
        widths = range(max(step, math.ceil(center / 1.06 / step) * step), math.floor(center * 1.06) + 1, step)
        if len(widths) > MOST_WIDTHS:  # wide shapes: the width multiple is fine-grained, the nearest widths suffice
            widths = sorted(widths[len(widths) // 2 - MOST_WIDTHS // 2:][:MOST_WIDTHS])
        for width in widths:
            snapped = snap_width(budget, spending, constraints, depth, width, lo=width, hi=width)
            if snapped is not None and abs(snapped.deviation) <= BUDGET_TOLERANCE:
                shapes.append(snapped)
    kv_heads = dict(spending.overrides).get("kv_heads") or spending.block.kv_heads
    kept = [s for s in shapes if s.arch.kv_heads == kv_heads]
    if not kv_heads or not kept or len(kept) == len(shapes):
        return shapes, None
    return kept, (f"{len(shapes) - len(kept)} shape(s) in the band within ±{BUDGET_TOLERANCE:.0%} of the budget were left out of "
                  f"the pick: their heads are not a multiple of the block's {kv_heads} KV heads, so they would have fewer")


def consensus_pick(budget: int, spending, constraints, model, floor: int, band, cost: Costing, prefer: str):
    """(the Snapped pick, the evidence.Consensus, a note or None) inside ``band``; the pick is None
    when no valid shape lies in the band."""
    from .evidence import Consensus, pick

    lo, hi = band.depth_band
    shapes, note = band_shapes(budget, spending, constraints, model, lo, hi)
    counts = {id(s.arch): s.params for s in shapes}
    chosen = pick(band, [s.arch for s in shapes], lambda arch: cost.ranked(arch, counts[id(arch)], budget), prefer)
    snapped = None if chosen is None else next(s for s in shapes if s.arch is chosen.arch)
    return snapped, Consensus(band, chosen), note


def rule_why(rule_name: str, depth: int, width: int, band: tuple[int, int], clamped: bool = False) -> str:
    """The ``why`` of a plan whose recommendation comes from one named rule, not the consensus."""
    lo, hi = band
    where = "inside" if lo <= depth <= hi else "outside"
    return (f"{depth}x{width} is rule '{rule_name}''s optimum snapped to a valid shape (chosen with --rule"
            + (", clamped" if clamped else "") + f"); it lies {where} the evidence band [{lo}, {hi}].")
