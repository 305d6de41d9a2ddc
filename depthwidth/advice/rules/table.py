"""`plan --rules`: every rule's shape for a budget side by side (one record per rule), snapped to
valid shapes like the plan's own, and the consensus row (``evidence.py``) with its band."""
from __future__ import annotations

import math

from ...arch.hardware import tp_sizes
from ..planner import PlanOptions
from ..threshold import planned_shape, theory_for
from ...arch.snapping import no_valid_shape, rule_shape, snap_depth
from ...arch.record import counts
from ...core.frozen import frozen


@frozen
class RuleShape:
    """One rule's answer for a budget, snapped to a valid shape; for a guard, its maximum depth."""

    budget: int
    budget_count: str
    rule: str
    kind: str
    depth: int
    width: int
    heads: int
    kv_heads: int
    ffn: int
    params_nonembedding: int
    params_active: int
    params_embedding: int | None
    params_with_embeddings: int | None
    budget_deviation: float
    tp_sizes: tuple[int, ...]
    rule_depth: float
    rule_width: float
    formula: str
    source: str
    fit_range: str
    verified: bool
    extrapolated: bool
    notes: tuple[str, ...]


def rule_shapes(budget: int, options: PlanOptions | None = None, left_out: list[str] | None = None) -> list[RuleShape]:
    """Every registry rule (and the user's rule file) for one budget, side by side with the theory.
    A rule whose depth passes the largest accepted depth is left out (never a shape `bounds` refuses),
    with a line in ``left_out`` saying so."""
    from ...theory.shapes import MAX_DEPTH
    from .builtin import REGISTRY
    from .user import rule_from_file

    options = (options or PlanOptions()).at_budget(budget)
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
            if not depth <= MAX_DEPTH:
                if left_out is not None:
                    left_out.append(f"budget {budget:.3g}: guard {rule.name} allows depths up to {depth:,.0f}, past the largest "
                                    f"depth depthwidth accepts ({MAX_DEPTH:,}): left out")
                continue
            notes.insert(0, f"a guard, not a recommendation: at this budget, depths above {depth:.1f} exceed the rule's "
                            f"maximum depth for their width")
            snapped = snap_depth(budget, spending, constraints, theory.model, max(1.0, math.floor(depth)))
        else:
            optimum = rule.recommend(budget, width_at_depth)
            if optimum is not None and not optimum[0] <= MAX_DEPTH:
                if left_out is not None:
                    left_out.append(f"budget {budget:.3g}: rule {rule.name} gives depth {optimum[0]:,.0f}, past the largest "
                                    f"depth depthwidth accepts ({MAX_DEPTH:,}): left out")
                continue
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
            budget=budget, budget_count=spending.budget_count, rule=rule.name, kind=rule.kind, depth=arch.depth,
            width=arch.width, heads=arch.heads, kv_heads=arch.kv_heads, ffn=arch.ffn, **counts(arch),
            budget_deviation=snapped.deviation,
            tp_sizes=tp_sizes(arch), rule_depth=optimum[0], rule_width=optimum[1], formula=rule.formula,
            source=rule.source, fit_range=rule.fit_range, verified=rule.verified, extrapolated=extrapolated,
            notes=tuple(notes)))
    rows.append(consensus_row(budget, options))
    return rows


def consensus_row(budget: int, options: PlanOptions) -> RuleShape:
    """The consensus (the plan's default, ``evidence.py``) as one more row: its pick, and its band as the range."""
    from dataclasses import replace

    from ..planner import plan

    p = plan(budget, replace(options, rule="consensus", rule_file=None))
    lo, hi, r = p.band.low, p.band.high, p.recommended
    return RuleShape(
        budget=budget, budget_count=p.budget.count, rule="consensus", kind="consensus", depth=r.depth,
        width=r.width, heads=r.heads, kv_heads=r.kv_heads, ffn=r.ffn,
        params_nonembedding=r.params_nonembedding, params_active=r.params_active, params_embedding=r.params_embedding,
        params_with_embeddings=r.params_with_embeddings, budget_deviation=r.budget_deviation,
        tp_sizes=r.tp_sizes, rule_depth=float(r.depth), rule_width=float(r.width),
        formula=f"the evidence band [{lo}, {hi}], then the valid shape in it that reaches the best shape's loss soonest (prefer {p.rule.prefer})",
        source="depthwidth evidence.py: the rules in range and the catalogue's published models (README 'How the recommendation is made')",
        fit_range=f"band [{lo}, {hi}]", verified=True, extrapolated=False, notes=(p.why,))
