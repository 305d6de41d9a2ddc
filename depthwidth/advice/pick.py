"""The plan's recommended shape by the consensus rule (``evidence.py``), and the costs of every
shape a plan prints (``cost/run.py``).

The consensus (README "How the recommendation is made"): the floor is the theory's minimal depth;
the band [lo, hi] comes from the in-range evidence at the budget (``evidence.depth_band``); the
candidates are valid snapped shapes (``snapping.snapped_at``) at the depths of the band; the pick is
the one that reaches the best shape's loss soonest under the plan's run (``target.py``: the loss
model's penalty turned into extra tokens by the loss law, times the shape's own training time by
the performance model, ``cost/perf/modeled.py``: each shape in its best layout on the cluster; ``--mfu``:
``cost.run.run_costs`` at that flat utilization; ``--prefer``, ``--loss-tolerance``). Without a training length the ranking
assumes the compute-optimal 20 tokens per parameter (Hoffmann et al. 2022), and without a GPU count
one node of the accelerator (``hardware.node_gpus``); the printed costs are the ones ranked by, at
those assumptions (``run.tokens_assumed``, ``run.gpus_assumed`` say so).
"""
from __future__ import annotations

import math
from dataclasses import replace

from ..core.budgets import TOKENS_PER_PARAM
from ..arch.snapping import BUDGET_TOLERANCE, Snapped, snapped_at
from ..core.frozen import frozen

CONSENSUS = "consensus"
MOST_BAND_DEPTHS = 48  # a wider band is sampled at this many depths (evenly in log depth), both ends kept
MOST_WIDTHS = 8  # valid widths tried per depth of the band, nearest the budget's width


@frozen
class Costing:
    """The run every shape of a plan is costed under: ``spec`` as given (tokens, gpus may be None) and
    ``ranking``, the same run at the assumed length and on one node when they were not given."""

    spec: object
    ranking: object
    tokens_given: bool
    gpus_given: bool = True
    model: bool = False  # time from the performance model (cost/perf/modeled.py); False: the flat --mfu
    fixed: tuple = ()  # the layout fields the user fixed ((name, value) pairs); the rest searched
    cluster_note: str | None = None  # without --gpus, when one node holds no layout: the smallest cluster that does

    def _costed(self, arch):
        key = (arch.depth, arch.width, arch.heads, arch.kv_heads, arch.ffn)
        cache = self.__dict__.setdefault("_cache", {})
        if key not in cache:
            if self.model:
                from ..cost.perf.modeled import modeled_costs

                cache[key] = modeled_costs(arch, self.ranking, self.fixed, serve=False)  # decode: model_fields
            else:
                from ..cost.perf.predict import flat_costs

                cache[key] = flat_costs(arch, self.ranking)
        return cache[key]

    def costs(self, arch):
        """The RunCosts of ``arch`` under the ranking spec: its best layout's, timed by the performance model,
        or the layout given at the flat --mfu (``predict.flat_costs``; memoized per shape)."""
        return self._costed(arch)[0]

    def model_fields(self, arch) -> dict:
        """The performance model's fields of ``arch`` (``modeled.MODEL_FIELDS``; with --mfu the flat ones): the
        decode latency is timed here, for the shapes a plan prints, not for every shape it ranks."""
        fields = dict(self._costed(arch)[1])
        if self.model:
            fields["decode_seconds_per_token"] = self.decode(arch)
        return fields

    def decode(self, arch, tp: int | None = None) -> float:
        """The decode seconds per token of ``arch`` (one sequence at the run's context, ``modeled.decode_seconds``,
        at its serving tensor-parallel degree or ``tp``; memoized per shape and degree)."""
        from ..cost.perf.modeled import decode_seconds

        key = (arch.depth, arch.width, arch.heads, arch.kv_heads, arch.ffn, tp)
        cache = self.__dict__.setdefault("_decode", {})
        if key not in cache:
            cache[key] = decode_seconds(arch, self.ranking, self.fixed, tp)
        return cache[key]

    def decode_alike(self, shapes) -> list[float]:
        """The decode latencies ``--prefer serve`` ranks by: every shape at one tensor-parallel degree, the
        largest any of them needs to fit (``modeled.serving_degree``; a shape that cannot shard that way keeps
        its own), so that no shape is faster only because it needs more GPUs."""
        from ..arch.hardware import tp_sizes
        from ..cost.perf.modeled import serving_degree

        common = max(serving_degree(a, self.ranking, self.fixed) for a in shapes)
        return [self.decode(a, common if common in tp_sizes(a) else None) for a in shapes]

    def time_floor(self, arch) -> tuple[float, float] | None:
        """Lower bounds of the (train_days, train_gpu_hours) ``costs`` gives ``arch``, without timing a
        layout (``modeled.time_floor``); None with --mfu or when it cannot be bounded."""
        if not self.model:
            return None
        from ..cost.perf.modeled import time_floor

        return time_floor(arch, self.ranking, self.fixed)

    def assess(self, arch, count: float, budget: float, loss_model=None, weigh_loss: bool = True):
        """The shape's penalty and time to the target loss (``target.assess``; memoized per shape)."""
        from .target import assess

        key = (arch.depth, arch.width, arch.heads, arch.kv_heads, arch.ffn, count, budget, id(loss_model), weigh_loss)
        cache = self.__dict__.setdefault("_targets", {})
        if key not in cache:
            cache[key] = assess(arch, self.costs(arch), count, budget, self.ranking.tokens, loss_model, weigh_loss=weigh_loss)
        return cache[key]

    def loss_fields(self, arch, count: float, budget: float, loss_model=None, weigh_loss: bool = True) -> dict:
        """The shape record's loss fields (``target.LOSS_FIELDS``): the times to the target at the ranking
        length, assumed or given (as ``fields``' train_days; ``run.tokens_assumed`` says which), so the
        JSON carries the days the ``why`` prints (null without --tokens)."""
        return self.assess(arch, count, budget, loss_model, weigh_loss).fields()

    def fields(self, arch) -> dict:
        """The shape record's cost fields (``run_records.COST_FIELDS``)."""
        from ..cost.fields import cost_fields

        return cost_fields(self.costs(arch))


def costing(run, budget: int, tokens: float | None, context: int, model: bool = False, fixed: tuple = (),
            probe=None) -> Costing:
    """The Costing of a plan: ``run`` (a cost.run.RunSpec or None for the defaults) at the plan's context,
    with ``tokens`` (None: no training length; ranking at 20 tokens per parameter); ``model``: time every
    shape by the performance model in its best layout (``fixed``: the layout fields given). Without
    --gpus the shapes are ranked on one node, or, when ``probe`` (a shape of the budget) fits in no
    layout there, on the smallest cluster that holds it (``modeled.smallest_cluster``)."""
    from ..cost.run import RunSpec

    from ..arch.hardware import node_gpus

    spec = replace(run or RunSpec(), context=context, tokens=tokens)
    ranking = spec if tokens is not None else replace(spec, tokens=float(TOKENS_PER_PARAM * budget))
    note = None
    if spec.gpus is None:
        gpus = node_gpus(spec.gpu, spec.tp * spec.pp)
        if model and probe is not None:
            from ..cost.perf.modeled import smallest_cluster

            gpus, note = smallest_cluster(probe, ranking, fixed)
        ranking = replace(ranking, gpus=gpus)
    return Costing(spec, ranking, tokens is not None, spec.gpus is not None, model, tuple(fixed), note)


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
            snapped = snapped_at(budget, spending, constraints, depth, width)
            if snapped is not None and abs(snapped.deviation) <= BUDGET_TOLERANCE:
                shapes.append(snapped)
    kv_heads = dict(spending.overrides).get("kv_heads") or spending.block.kv_heads
    kept = [s for s in shapes if s.arch.kv_heads == kv_heads]
    if not kv_heads or not kept or len(kept) == len(shapes):
        return shapes, None
    return kept, (f"{len(shapes) - len(kept)} shape(s) in the band within ±{BUDGET_TOLERANCE:.0%} of the budget were left out of "
                  f"the pick: their heads are not a multiple of the block's {kv_heads} KV heads, so they would have fewer")


def consensus_pick(budget: int, spending, constraints, model, floor: int, band, cost: Costing, prefer: str,
                   tolerance: float | None = None, loss_model=None, stages: int = 1):
    """(the Snapped pick, the evidence.Consensus, a note or None) inside ``band``: the shape that reaches
    the best shape's loss soonest (``target.score``); the pick is None when no valid shape lies in the band.
    Shapes with fewer layers than ``stages`` (--pp) are left out: no layout splits them that many ways."""
    from .evidence import Consensus, Pick
    from . import target

    shapes, note = band_shapes(budget, spending, constraints, model, *band.depth_band)
    shapes = [s for s in shapes if s.arch.depth >= stages]
    if not shapes:
        return None, Consensus(band, None), note
    weigh = tolerance is not None or target.loss_decides(budget, band.depth_band, loss_model)
    assessed = _leading(shapes, cost, budget, loss_model, prefer, tolerance, weigh)
    if prefer == "serve" and tolerance is None:  # ranked by the modelled decode latency
        latency = cost.decode_alike([t.arch for t in assessed])
        assessed = [replace(t, decode=d) for t, d in zip(assessed, latency)]
    ranked = target.score(assessed, prefer, tolerance)
    score, best = ranked[0]
    chosen = Pick(best.arch, best.costs, score, prefer,
                  target.why(ranked, band.depth_band, prefer, tolerance, len(shapes), budget, loss_model),
                  tuple((s, t.arch, t.costs) for s, t in ranked))
    snapped = next(s for s in shapes if s.arch is best.arch)
    named = tuple(next(s for s in shapes if s.arch is t.arch) for _, t in ranked[:2])  # what the why names
    return snapped, Consensus(band, chosen, named, len(shapes)), note


def _leading(shapes: list[Snapped], cost: Costing, budget: int, loss_model, prefer: str, tolerance: float | None,
             weigh: bool = True) -> list:
    """The Targeted (``Costing.assess``) of the band's shapes, but for shapes that provably rank below the
    first two, which the pick and its why name: with the performance model, ``balanced`` or ``train``
    and no tolerance, each shape's score has a lower bound from its step's (``Costing.time_floor``,
    ``target.score_floor``); shapes are timed in the order of that bound until it passes the second
    best score found, both of the best two fitting. Otherwise every shape is assessed."""
    from . import target
    from ..cost.perf.layout import SAFETY

    every = lambda: [cost.assess(s.arch, s.params, budget, loss_model, weigh) for s in shapes]
    if len(shapes) <= 2 or prefer not in ("balanced", "train") or tolerance is not None:
        return every()
    floors = [cost.time_floor(s.arch) for s in shapes]
    if any(f is None for f in floors):  # --mfu, or a shape no layout of the fixed degrees can run
        return every()
    order = sorted((target.score_floor(s.arch, s.params, budget, cost.ranking.tokens, f, prefer, loss_model, weigh_loss=weigh), i)
                   for i, (s, f) in enumerate(zip(shapes, floors)))
    assessed = []
    for floor, i in order:
        if len(assessed) >= 2:
            second_score, second = target.score(assessed, prefer)[1]
            if target.fits(second) and floor * (1 - SAFETY) > second_score:
                break  # this shape and every later one rank below the best two
        assessed.append(cost.assess(shapes[i].arch, shapes[i].params, budget, loss_model, weigh))
    return assessed


def rule_why(rule_name: str, depth: int, width: int, band: tuple[int, int], clamped: bool = False) -> str:
    """The ``why`` of a plan whose recommendation comes from one named rule, not the consensus."""
    lo, hi = band
    where = "inside" if lo <= depth <= hi else "outside"
    return (f"{depth}x{width} is rule '{rule_name}''s optimum snapped to a valid shape (chosen with --rule"
            + (", clamped" if clamped else "") + f"); it lies {where} the evidence band [{lo}, {hi}].")
