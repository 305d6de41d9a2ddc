"""`plan --brief`: the threshold rule's answer for many budgets at once.

For each budget, the leading fields of the plan record (``plan_record.Plan`` up to ``regime``): the
minimal depth (Levine et al. 2020: the smallest L with 3^L >= d(L)), its real crossing, the
minimal-depth shape snapped to valid hardware and its counts, with the same names and values as
`plan` (``plan_columns.plan_many``: the same code as one budget's plan, with arrays). No rule, no
candidates, no costs and no notes: those are the per-budget work a pipeline over 10^5 budgets
cannot afford (about 4 ms a budget), and they are what `plan` without --brief prints.
"""
from __future__ import annotations

from dataclasses import fields

from ..core.errors import InputError
from .plan_record import PlanBrief


FIELDS = tuple(f.name for f in fields(PlanBrief))


def brief_columns(budgets: list[int], options, source: str) -> dict[str, list]:
    """Every PlanBrief field as a list of Python values, one per budget, in field order.

    A budget `plan` refuses (too large, no valid shape near the minimal depth) refuses the whole
    call with the scalar planner's own message, as `plan` does: nothing partial is printed."""
    from .plan_columns import plan_many

    columns = plan_many(budgets, options)
    for row, error in enumerate(columns.error.tolist()):
        if error is not None:  # the scalar planner's own refusal, with the budget it refused as a number
            raise InputError(error.what, error.value, error.accepted, error.where,
                             budgets[row] if error.what == "budget" else error.number)
    n = len(budgets)
    depth, width = columns.min_depth.tolist(), columns.width.tolist()
    listed = lambda values: values.tolist() if hasattr(values, "tolist") else list(values)
    out = {name: listed(getattr(columns, name)) for name in FIELDS if hasattr(columns, name) and name != "budget_count"}
    out.update(budget_source=[source] * n, arch=[options.spending.arch] * n, budget_count=[columns.budget_count] * n,
               params_12Ld2=[12 * L * w * w for L, w in zip(depth, width)], regime=columns.regime,
               tp_sizes=[tuple(t) for t in out["tp_sizes"]])
    return {name: out[name] for name in FIELDS}
