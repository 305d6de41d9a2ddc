"""Depth and width for a parameter budget, for any block, as shapes a cluster can run.

Three answers, kept apart on purpose:
- the threshold rule (theory, Levine et al. 2020; ``threshold.py``, one code for one budget and for
  many): the smallest depth L with 3^L >= d(L), where d(L) is the width that spends the budget at
  depth L; below log3(width), adding depth pays off double-exponentially. For the paper's block
  (N = 12·L·d²) L* = W(ln3·N/6)/(2·ln3);
- a rule from the registry (``rules.py``: fits, practice, guards), or the user's own fitted rule;
- hardware validity (``hardware.py``): every printed shape is snapped to widths and depths that
  satisfy the alignment and tensor-parallel constraints, with the deviation from the budget.

Counting is ``blocks.py``'s: this module only asks it for counts of concrete architectures. The
records it fills (Plan, PlanBrief, Candidate) are ``plan_record.py``'s.
"""
from __future__ import annotations

import math
from dataclasses import field, replace

from ..core.errors import InputError
from ..arch.hardware import SHARD_TP, Constraints, width_step
from ..arch.blocks import DEFAULT_CONTEXT
from ..arch.record import block_fields
from ..theory.shapes import MAX_DEPTH, MAX_WIDTH
from ..arch.snapping import FAR_FROM_BUDGET, Snapped, no_valid_shape, rule_shape, snap_depth
from ..arch.spending import Spending
from . import notes as plan_notes
from ..core.messages import Message
from .plan_record import (Budget, Candidate, DepthBand, LossModel, Plan, RuleUsed, Setup, Threshold,
                          candidate)  # (the records, importable from here)
from ..theory.separation import CONSISTENT, bounds
from .threshold import planned_shape, theory_for
from ..core.frozen import frozen

DEFAULT_RULE = "consensus"  # pick.CONSENSUS: the evidence band, then the shape in it that reaches the best loss soonest


@frozen
class PlanOptions:
    """Everything `plan` takes besides the budget. ``run``: the training run every shape is costed
    under (a ``cost.run.RunSpec``; None: its defaults; its context is ``context``); ``prefer``: what
    the consensus pick minimizes (evidence.PREFERENCES). ``context`` is also the rows of a learned
    position table (GPT-2): ``spending`` is set to it (``Spending.at_context``)."""

    spending: Spending = field(default_factory=Spending)
    constraints: Constraints = field(default_factory=Constraints)
    rule: str = DEFAULT_RULE
    rule_file: str | None = None
    context: int = DEFAULT_CONTEXT
    reading: str = CONSISTENT
    prefer: str = "balanced"
    run: object = None
    loss_tolerance: float | None = None  # --loss-tolerance: the fastest shape within this predicted penalty
    perf: bool = True  # time every shape by the performance model in its best layout (False: the run's flat mfu, --mfu)
    fixed: tuple = ()  # layout fields the user fixed, (name, value) pairs of tp, pp, zero, recompute; the rest is searched

    def __post_init__(self):
        # one context: a learned position table (GPT-2's wpe) has the plan's context rows in every shape
        object.__setattr__(self, "spending", self.spending.at_context(self.context))

    def without_shard_rule(self) -> "PlanOptions":
        """These options with no 8-way rule (``Constraints.shard_from`` None): what ``plan`` and
        ``plan_columns.plan_many`` fall back to when the rule leaves no shape near the budget."""
        return replace(self, constraints=replace(self.constraints, shard_from=None))

    def at_budget(self, budget: float) -> "PlanOptions":
        """These options with the block the preset's family publishes at ``budget`` (``Spending.at_budget``)."""
        spending = self.spending.at_budget(budget)
        return self if spending is self.spending else replace(self, spending=spending)


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


def plan(budget: int, options: PlanOptions | None = None, budget_source: str = "params", tokens: float | None = None) -> Plan:
    """Minimal depth by the threshold rule, the recommended shape (the consensus of the evidence,
    or the chosen rule), and candidate shapes, every one valid under the constraints and costed
    under the plan's run (``tokens``: the training length; None: none given).

    Shapes of 1B parameters or more split ``SHARD_TP`` ways (``Constraints.shard_from``) unless the user's
    ``--kv-heads`` cannot, or no shape of the family near the budget can (a head size of 256 moves widths
    in steps of 2,048): then the plan answers without the rule and a warning says so."""
    options = options or PlanOptions()
    kv = dict(options.spending.overrides).get("kv_heads")
    if options.constraints.shard_from is not None and kv is not None and kv % SHARD_TP and SHARD_TP % kv:
        return _with_shard_warning(_plan(budget, options.without_shard_rule(), budget_source, tokens),
                                   f"--kv-heads {kv} cannot split {SHARD_TP} ways by tensor parallelism: the shapes keep it")
    try:
        return _plan(budget, options, budget_source, tokens)
    except InputError:
        if options.constraints.shard_from is None:
            raise
        unsharded = _plan(budget, options.without_shard_rule(), budget_source, tokens)  # refused again: that line
        return _with_shard_warning(unsharded, Message("unsharded", f"no {options.spending.arch} shape near {budget:.3g} parameters "
                                                      f"splits {SHARD_TP} ways by tensor parallelism: the shapes listed may not"))


def _with_shard_warning(p: Plan, warning: str) -> Plan:
    return replace(p, warnings=(warning, *p.warnings))


def _plan(budget: int, options: PlanOptions | None, budget_source: str, tokens: float | None) -> Plan:
    """``plan`` under the options' constraints as given."""
    from .evidence import depth_band

    options = (options or PlanOptions()).at_budget(budget)
    if options.rule_file:
        from .rules.user import rule_layout

        options = replace(options, spending=rule_layout(options.spending, options.rule_file))
    spending = options.spending
    theory = theory_for(budget, spending)
    planned = planned_shape(budget, spending, options.constraints, theory)
    step = width_step(options.constraints, spending.head_dim)
    constraints = options.constraints.at_budget(budget)  # the listed shapes of a 1B plan all split 8 ways (the threshold's may not: --brief's)
    options, stages, cost = _costed_run(budget, options, constraints, tokens, planned)
    band = depth_band(budget, theory.min_depth, lambda L: theory.model.width(budget, L))
    pick = _recommendation(budget, options, constraints, theory, planned, band, cost, stages)
    recommended, target = pick["recommended"], pick["target"]
    if recommended is None or (abs(recommended.deviation) > FAR_FROM_BUDGET and theory.width_exact > 2 * step):
        raise no_valid_shape(spending, constraints, round(target), theory.model.width(budget, target))
    rec = recommended.arch
    if rec.depth > MAX_DEPTH or rec.width > MAX_WIDTH:  # never a shape `bounds` and `inspect` would refuse
        raise InputError("budget", f"{budget:.3g}", f"--rule {options.rule_file or pick['rule'].name} gives {rec.depth:,}x{rec.width:,} at "
                                                    f"this budget, past the largest shape depthwidth accepts (depth "
                                                    f"{MAX_DEPTH:,}, width 10^15); --rule threshold gives the minimal-depth shape", number=budget)
    lo, hi = band.depth_band
    top = min(max(target, rec.depth) if pick["beyond"] else max(target, hi, rec.depth), MAX_DEPTH / 1.25)
    if stages > rec.depth:  # the pick has too few layers for the stages: the deeper shapes, or none
        recommended, rec, deepened = staged_pick(budget, spending, constraints, theory.model, stages, theory.min_depth, top, hi)
        pick.update(recommended=recommended, warnings_pp=[deepened])
    if pick["rule"] is not None:
        from .pick import rule_why

        fitted = pick["fitted"]
        pick["why"] = rule_why(pick["rule"].name, rec.depth, rec.width, (lo, hi), bool(fitted and fitted.clamped))
    pick["constraints"] = constraints
    return _plan_record(budget, budget_source, tokens, options, theory, planned, band, cost, stages, pick, top)


def _costed_run(budget: int, options: PlanOptions, constraints, tokens, planned) -> tuple:
    """(the options with the run's defaults filled in, the pipeline stages every shape needs, the
    costing of shapes: ``pick.costing``) at the tensor-parallel degree the shapes must shard by."""
    from .pick import costing

    if options.run is None:  # the run's defaults, at the tensor-parallel degree the shapes must shard by
        from ..cost.run import RunSpec

        options = replace(options, run=RunSpec(tp=constraints.tp))
    fixed = dict(options.fixed)
    if constraints.tp > 1:  # the degree the shapes must shard by is the run's
        fixed.setdefault("tp", constraints.tp)
    stages = fixed.get("pp") or 1  # --pp: a shape with fewer layers cannot be split into these stages
    cost = costing(options.run, budget, tokens, options.context, options.perf, tuple(sorted(fixed.items())),
                   probe=None if planned is None else planned.arch)
    return options, stages, cost


def _recommendation(budget: int, options: PlanOptions, constraints, theory, planned, band, cost, stages: int) -> dict:
    """The recommended shape and how it was found: the consensus of the evidence band (or, past all
    published evidence and the accepted depths, the threshold's shape), or the chosen rule's; with
    the depth aimed at (``target``), the ``why``, and what a rule file or the consensus add."""
    from .evidence import beyond_evidence
    from .pick import CONSENSUS, consensus_pick

    spending, depth, model = options.spending, theory.min_depth, theory.model
    lo, hi = band.depth_band
    past = beyond_evidence(budget, band)  # (evidence.py) the band only extrapolates published d/L
    beyond = past if past and hi > MAX_DEPTH / 1.25 else None  # ... and passes the accepted depths: no shape in it
    pick = dict(rule=None, optimum=None, fitted=None, left_out=None, agreed=None, beyond=beyond, warnings_pp=[])
    if options.rule_file is None and options.rule == CONSENSUS and beyond:
        # no shape in the band is one depthwidth accepts: the theory answers
        return {**pick, "recommended": planned, "target": depth, "why": beyond}
    if options.rule_file is None and options.rule == CONSENSUS:
        recommended, agreed, left_out = consensus_pick(budget, spending, constraints, model, depth, band, cost, options.prefer,
                                                         options.loss_tolerance, stages=stages)
        target = math.sqrt(lo * hi)
        why = agreed.why if not past else extrapolated_why(budget, band, agreed.why)
        if recommended is None:  # no valid shape inside the band: the valid shape nearest its middle
            recommended = snap_depth(budget, spending, constraints, model, target, lowest=depth)
        return {**pick, "recommended": recommended, "target": target, "why": why, "agreed": agreed, "left_out": left_out}
    rule, fitted = chosen_rule(options), None
    if options.rule_file:
        fitted = fitted_rule_depth(options.rule_file, budget, model)
    optimum = (fitted.depth, model.width(budget, fitted.depth)) if fitted is not None and fitted.clamped \
        else rule.recommend(budget, lambda L: model.width(budget, L))
    target = optimum[0] if optimum else depth
    if optimum is None:  # the threshold rule itself: its recommendation is the planned shape
        recommended = planned
    else:
        recommended = rule_shape(budget, spending, constraints, optimum, lowest=depth) \
            or snap_depth(budget, spending, constraints, model, target, lowest=depth)
    return {**pick, "recommended": recommended, "target": target, "why": None, "rule": rule, "optimum": optimum,
            "fitted": fitted}


def _plan_record(budget, budget_source, tokens, options, theory, planned, band, cost, stages, pick, top) -> Plan:
    """The Plan: the candidates costed and weighed by the loss model, the threshold's shape, the
    rule used, the band, the answer, warnings and notes."""
    from .pick import CONSENSUS
    from .target import loss_decides, loss_notes, rule_loss_model
    from ..cost.loss import fitted_range, optimal_depth
    from ..core.budgets import spell

    spending, lo, hi = options.spending, *band.depth_band
    rule, optimum, fitted, agreed, recommended = pick["rule"], pick["optimum"], pick["fitted"], pick["agreed"], pick["recommended"]
    loss_model = rule_loss_model(options.rule_file)  # fit --save's refit on the user's sweep, else the shipped model
    decides = loss_decides(budget, (lo, hi), loss_model)
    built, answer = _candidates(budget, options, theory, band, cost, stages, pick, top, loss_model,
                                decides or options.loss_tolerance is not None)  # the why's times are the ranking's
    arch = planned.arch
    record = bounds(arch.depth, arch.width, arch.heads, options.reading)
    fields, _ = block_fields(arch, context=options.context)
    warnings, notes = plan_notes.advice(budget, options, theory, planned, recommended, optimum, rule, built, band, cost, fitted)
    warnings = pick["warnings_pp"] + warnings
    if arch.depth < stages:
        notes.append(Message("pipeline-shallow", f"the minimal-depth shape {arch.depth}x{arch.width} has fewer layers than "
                             f"--pp {stages}: it is not costed (no layout splits it into that many stages)", shape="threshold"))
    notes += [Message("left-out", pick["left_out"])] if pick["left_out"] else []
    notes += unsharded_note([*built, planned.arch]) + [Message("loss-model", n) for n in loss_notes(budget, tokens, loss_model)]
    optimal = dict(zip(("optimal_depth", "optimal_depth_low", "optimal_depth_high"), map(float, optimal_depth(budget, loss_model))))
    span = fitted_range(budget, loss_model)
    return Plan(
        budget=Budget(budget, spell(budget), budget_source, spending.budget_count, spending.arch),
        threshold=Threshold(min_depth_exact=theory.min_depth_exact, min_depth=theory.min_depth, width_exact=theory.width_exact,
                            width=arch.width, heads=arch.heads, params_12Ld2=record.params_12Ld2,
                            budget_deviation=planned.deviation, regime=record.regime,
                            **{k: v for k, v in fields.items() if k in Threshold.__annotations__}),
        rule=RuleUsed(CONSENSUS if rule is None else rule.name, options.prefer,
                      optimum[0] if optimum else None, optimum[1] if optimum else None,
                      *((None,) * 4 if fitted is None else (fitted.low, fitted.high, fitted.in_range, fitted.clamped))),
        band=DepthBand(lo, hi, agreed.valid_shapes if rule is None and not pick["beyond"] else None, band.centre,
                       band.extrapolated),
        recommended=answer, why=pick["why"],
        **{k: getattr(answer, k) for k in ("kv_heads", "head_dim", "ffn", "gated", "params_active", "flops_per_token",
                                           "kv_bytes_per_token")},
        loss_model=LossModel(**optimal, fitted_params_low=span["loss_fitted_params_low"],
                             fitted_params_high=span["loss_fitted_params_high"], in_fitted_range=span["loss_in_fitted_range"],
                             decides=decides),
        setup=setup_record(cost), candidates=tuple(built), evidence=tuple(evidence_records(band)),
        warnings=tuple(warnings), notes=tuple(notes),
    )


def _candidates(budget, options, theory, band, cost, stages, pick, top, loss_model, weigh) -> tuple[list, Candidate]:
    """The listed shapes as costed Candidates (those with at least ``stages`` layers), and the
    recommended shape's Candidate (from the list when it is listed)."""
    spending, constraints = options.spending, pick["constraints"]
    lo, hi = band.depth_band
    recommended, rec, agreed = pick["recommended"], pick["recommended"].arch, pick["agreed"]
    named = agreed.named if pick["rule"] is None and not pick["beyond"] and recommended is agreed_pick(agreed) else ()
    shapes = [s for s in plan_candidates(budget, spending, constraints, theory.model, theory.min_depth,
                                         sorted({lo, hi} if not pick["beyond"] else set()), top, recommended, named)
              if s.arch.depth >= stages]
    built = [candidate(s, options.context, options.reading, {**cost.fields(s.arch), **cost.model_fields(s.arch),
                                                             **cost.loss_fields(s.arch, s.params, budget, loss_model, weigh)},
                       lo <= s.arch.depth <= hi, cost.ranking) for s in shapes]
    answer = next(c for c, s in zip(built, shapes) if s is recommended) if recommended in shapes else \
        candidate(recommended, options.context, options.reading, {**cost.fields(rec), **cost.model_fields(rec),
                  **cost.loss_fields(rec, recommended.params, budget, loss_model, weigh)}, lo <= rec.depth <= hi, cost.ranking)
    return built, answer


def agreed_pick(agreed):
    """The consensus' own pick (the first shape its why names), or None."""
    return agreed.named[0] if agreed is not None and agreed.named else None


def extrapolated_why(budget: int, band, why: str) -> str:
    """The consensus ``why`` of a budget past all published evidence whose band still holds accepted shapes
    (a shape in the band, never the minimal-depth shape's thousands of heads), saying it extrapolates."""
    from .evidence import published_models, params_12

    largest = max(published_models(), key=lambda m: params_12(m.depth, m.width))
    size = params_12(largest.depth, largest.width)
    lo, hi = band.depth_band
    return (f"no published evidence reaches {budget:.3g} (the largest published model, {largest.name}, has 12·L·d² = "
            f"{size:.3g}, {budget / size:.3g}x smaller): the band [{lo:,}, {hi:,}] extrapolates published d/L, and "
            + why[0].lower() + why[1:])


def unsharded_note(built) -> list[Message]:
    """The note naming the shapes (the candidates and the minimal-depth shape) tensor parallelism cannot
    split 8 ways (hardware.SHARD_TP): only shapes below 1B non-embedding parameters may be such
    (hardware.SHARD_FROM; at a budget of 1B or more only the minimal-depth shape); none when all can."""
    from ..arch.hardware import SHARD_FROM, SHARD_TP, shards_ways

    short = dict.fromkeys(f"{c.depth}x{c.width} ({c.heads}/{c.kv_heads} heads: tp {shards_ways(c)})" for c in built
                          if shards_ways(c) < SHARD_TP)
    if not short:
        return []
    return [Message("unsharded", f"cannot split {SHARD_TP} ways by tensor parallelism (heads/KV heads: the largest tp of "
                    "1, 2, 4, 8): " + ", ".join(short) + f"; only shapes below {SHARD_FROM:.0e} non-embedding parameters may be")]


def staged_pick(budget, spending, constraints, model, stages: int, floor: int, top: float, hi: int):
    """(Snapped, its architecture, a warning) when the recommended shape has fewer layers than --pp
    ``stages``: the valid shape nearest ``stages`` layers; an input error when ``stages`` passes the
    deepest depth the plan considers (``candidate_depths`` up to ``top``, the band's top ``hi``)."""
    deepest = max(candidate_depths(floor, top) + [hi])
    chosen = snap_depth(budget, spending, constraints, model, stages, lowest=stages) if stages <= deepest else None
    if chosen is None:
        raise InputError("--pp", stages, f"more pipeline stages than the {deepest:,} layers of the deepest shape this plan "
                                         f"considers at {budget:.3g} parameters (depths {floor:,} to {deepest:,}); expected "
                                         f"at most {deepest:,} (each stage holds at least one layer)")
    return chosen, chosen.arch, Message("pipeline-deepened", f"--pp {stages}: the recommended shape is the valid shape nearest "
                                        f"{stages} layers, {chosen.arch.depth}x{chosen.arch.width}; shapes with fewer layers than "
                                        "pipeline stages are left out of the pick and the candidates", shape="recommended", pp=stages)


def plan_candidates(budget, spending, constraints, model, lowest: int, extra: list[int], top: float, recommended: Snapped,
                    named: tuple = ()) -> list[Snapped]:
    """The candidate shapes: one per width, at depths from the minimal depth to past the deepest of
    the target, the band and the pick (``candidate_depths``, plus ``extra``), always holding the
    recommended shape itself and every other shape the why ``named`` (a candidate of the same depth
    or width gives way to them)."""
    candidates = []
    for L in sorted(set(candidate_depths(lowest, top)) | set(extra)):
        snapped = snap_depth(budget, spending, constraints, model, L, lowest=lowest,
                             exclude=frozenset(c.arch.depth for c in candidates))
        if snapped is not None and all(c.arch.width != snapped.arch.width for c in candidates):
            candidates.append(snapped)  # one candidate per width: neighbouring depths of one width add nothing
    kept = [recommended]
    for s in named:  # one shape per depth: the pick, then the others the why names
        if all(s.arch.depth != k.arch.depth for k in kept):
            kept.append(s)
    candidates = [c for c in candidates if all(c.arch.depth != k.arch.depth and c.arch.width != k.arch.width for k in kept)] + kept
    return sorted(candidates, key=lambda s: s.arch.depth)


def evidence_records(band) -> list[dict]:
    from .evidence import evidence_records as records

    return records(band)


def setup_record(cost) -> Setup:
    """The plan's ``setup``: what every shape was costed under (on one node when ``gpus_assumed``), the
    length ranked at (``tokens_assumed``: the compute-optimal 20 per parameter) and billed time's ratio."""
    from ..cost.billed import BILLED_NOTE, BILLED_RATIO

    spec = cost.ranking
    return Setup(gpu=spec.gpu, gpus=spec.gpus, gpus_assumed=not cost.gpus_given,
                 time_model="performance model" if cost.model else "mfu", mfu=None if cost.model else spec.mfu,
                 fixed_layout=dict(cost.fixed), context=spec.context, tokens=spec.tokens, tokens_assumed=not cost.tokens_given,
                 calibrated_on=spec.calibrated_on if cost.model else None, billed_ratio=BILLED_RATIO, billed_note=BILLED_NOTE)


def fitted_rule_depth(path, budget: int, model):
    """rulelaw.fitted_depth of the user's rule file at this budget, for the planner's block."""
    from .rules.file import read_rule_file
    from .rules.law import fitted_depth

    def log_width(L):
        width = model.width(budget, L)
        return math.log(width) if 0 < width < math.inf else (-math.inf if width <= 0 else math.inf)

    return fitted_depth(read_rule_file(path), budget, log_width)


def chosen_rule(options: PlanOptions):
    """The rule that gives the recommended shape: the user's rule file, or a registry rule."""
    from .rules.builtin import get_rule
    from .rules.user import rule_from_file

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
    spending = Spending(arch, overrides, options.pop("count", "total")).at_budget(budget)
    p = plan(budget, PlanOptions(spending=spending, **options))
    return spending.architecture(p.recommended.depth, p.recommended.width)
