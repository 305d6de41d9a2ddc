"""The loss-penalty model refitted on a user's own sweep: ``fit --save`` stores it in the
rule file (``loss_model``) and ``plan --rule-file`` predicts every candidate's ``loss_vs_best`` with it.

Kept apart from ``fit.py`` (the optimum-depth laws): the same runs, grouped the same way
(``fit.group_runs``), fitted in the form of ``cost/loss.py`` by ``cost.lossfit.fit_penalty``.
With fewer than three sizes the data cannot say how the optimum moves with size, so b is held at
the shipped value (fitted on the published ablations; docs/loss.md); a sweep does not vary the
feed-forward ratio, so the ffn term's weight q is the shipped one. The losses are taken as they
are: a sweep's shapes are within ±5% of its budget, and the published law is not the user's.
"""
from __future__ import annotations

MIN_RUNS = 3  # a parabola in ln depth needs three depths in a group


def refit_penalty(runs, group_by: str = "params") -> dict | None:
    """The refitted PenaltyModel as a rule file's ``loss_model`` (plain numbers), or None when the runs
    cannot give one: sizes in FLOPs (the model is in parameters), or no group of three depths."""
    from ..cost.loss import SHIPPED
    from ..cost.lossfit import fit_penalty
    from .fit import group_runs

    if group_by != "params":
        return None
    rows = []
    for i, group in enumerate(group_runs(runs)):
        if len({r.depth for r in group}) >= MIN_RUNS:
            rows += [dict(group=f"size{i}", depth=r.depth, width=r.width, params=r.size, value=r.loss) for r in group]
    if not rows:
        return None
    sizes = {row["group"] for row in rows}
    model = fit_penalty(rows, law=None, slope=None if len(sizes) >= 3 else SHIPPED.b, q=SHIPPED.q,
                        source="refitted on the user's sweep by `depthwidth fit` (cost/loss.py's form)")
    return model.as_dict() if all(map(_finite, (model.ln_k, model.a, model.b, model.scatter))) else None


def _finite(x: float) -> bool:
    return x == x and abs(x) != float("inf")
