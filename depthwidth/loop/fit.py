"""Fit your own depth/width rule from a sweep's results, the method of Levine et al.
2020 (NeurIPS version, "The Depth-to-Width Interplay in Self-Attention", Sec. 4): at each size
find the depth with the lowest loss; across sizes fit how that optimum moves.

1. Runs are grouped by size (``params``, or training FLOPs): an explicit ``group`` column if the
   file has one, otherwise runs whose sizes are within ±10% of each other (``GROUP_TOLERANCE``).
2. Per group, loss = c0 + c1·x + c2·x² with x = ln L is fitted by least squares; its vertex
   x* = -c1/(2·c2) is the optimal depth. Its interval is a percentile bootstrap: runs resampled
   with replacement (NumPy's Generator, ``bootstrap`` draws, fixed ``seed``), the draws' spread
   about x* widened by t_{n-3}/z for the few runs a group has (``small_sample_factor``).
3. The optimal width is read off the group's own iso-size relation ln d = c + e·ln L, fitted by
   least squares over the group's runs (e = -1/2 when N ∝ L·d²). A fitted line, not an
   interpolation between neighbouring runs: widths are snapped to hardware multiples, and the
   line smooths that snapping instead of carrying it into the optimum.
4. Across groups: the Levine form ln d_opt = a + b·L_opt, and power laws d_opt = k·N^alpha and
   L_opt = depth_k·N^beta, each by weighted least squares (``scipy.optimize.least_squares``)
   where a group weighs by the bootstrap spread of its optimum. Intervals come from the fit's
   covariance (J^T·J)^-1, widened by the reduced chi-square when the groups scatter more than
   their own spread allows (Birge ratio). The covariance is saved with the rule, so the planner
   can show a fitted depth with its interval (``rules.law.fitted_depth``).
5. Goodness of fit is the error of predicting each group's optimal width from its size, in
   ln(width): for the Levine form, where the law crosses the group's iso-size curve
   (``scipy.optimize.brentq``); for the power law, k·N^alpha. ``r2`` and ``heldout_rmse`` are
   leave-one-size-out (each size predicted by the law fitted on the others), so noise scores near
   or below 0, never near 1; ``rmse`` is in-sample. The better form has the lower held-out rmse.

No law is claimed that the data cannot support: with fewer than 3 sizes, a size without a fitted
parabola, or optima that do not move with size beyond their intervals, ``fit`` still answers with
each size's optimum and says why no law was fitted (``FitReport.law_note``; no rule can be saved).
A size whose runs cannot support a parabola (fewer than 4 runs at 3 depths, the lowest loss at an
end, a parabola opening downwards) gets its measured best depth, with the depths tried on either
side of it as its interval (an open side when the best is the shallowest or deepest tried).

One size group's optimum (step 1) is ``group_fit``'s. SciPy is imported by these two modules only;
only the ``fit`` and ``plot fit`` commands import them.
"""
from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
from scipy import optimize

from ..core.errors import InputError
from ..core.messages import Message
from .results import Run
from ..advice.rules.file import (RULE_FORMAT, AttentionLayout, FitRange, FittedOn, FittedRule, GroupOptimum, LevineLaw, PowerLaw,
    Source)
from .sizes import SizeOptimum, budget_of, held_layout
from .group_fit import (CONFIDENCE, GroupFit, _geometric_mean, _size_label, fit_or_best)
from ..core.frozen import frozen

GROUP_TOLERANCE = 0.10  # sizes within ±10% of a group's middle: max/min <= 1.1/0.9
DEFAULT_BOOTSTRAP = 1000
DEFAULT_SEED = 0
MIN_GROUPS = 3  # a two-constant law passes through any two optima: a third size is the first test of it
SIGMA_FLOOR = 1e-9  # a group whose bootstrap optimum never moves (noise-free losses)


@frozen
class FitReport:
    """The result of ``depthwidth fit`` (field names are the JSON contract)."""

    name: str
    form: str  # the law a saved rule file tells plan to use
    better_form: str | None  # with --form both: the form with the lower rmse in ln(width)
    group_by: str
    levine: LevineLaw | None
    power: PowerLaw | None
    fit_range: FitRange
    groups: tuple[GroupFit, ...]
    source: Source
    fitted_on: FittedOn
    bootstrap: int
    seed: int
    confidence: float
    notes: tuple[str, ...]
    law_note: str | None = None  # why no law across sizes was fitted (None: one was)
    layout: AttentionLayout | None = None  # the attention layout every run held (None: not in the file, or not one)

    def records(self) -> list[SizeOptimum]:
        """One record per size (the JSON, JSONL and CSV output), each with the law across sizes beside it."""
        return [SizeOptimum(budget=budget_of(g, self.group_by), group_by=self.group_by, label=g.label, runs=g.runs, depths=g.depths,
                            best_depth=g.best_depth, optimal_depth=g.optimal_depth, optimal_depth_low=g.depth_interval[0],
                            optimal_depth_high=g.depth_interval[1], optimal_width=g.optimal_width,
                            optimal_width_low=g.width_interval[0], optimal_width_high=g.width_interval[1],
                            min_loss=g.min_loss, curvature=g.curvature, method=g.method, confidence=self.confidence,
                            form=self.form, law_note=self.law_note, better_form=self.better_form,
                            levine=self.levine, power=self.power, fit_range=self.fit_range, source=self.source,
                            bootstrap=self.bootstrap, seed=self.seed, notes=self.notes)
                for g in self.groups]

    def rule(self, created: str, tool: str) -> FittedRule:
        """The rule file's content (``depthwidth-rule/2``)."""
        groups = tuple(GroupOptimum(g.size, g.optimal_depth, g.depth_interval, g.runs) for g in self.groups)
        return FittedRule(RULE_FORMAT, self.name, self.form, self.levine, self.power, self.group_by, self.fit_range,
                          groups, self.source, created, tool, self.fitted_on, layout=self.layout)


# ---- grouping ------------------------------------------------------------------------------------

def group_runs(runs, tolerance: float = GROUP_TOLERANCE) -> list[list[Run]]:
    """Runs of about equal size, smallest size first: by the ``group`` label when the runs carry
    one; otherwise a group is every run within a factor (1+tol)/(1-tol) of its smallest size,
    and two groups closer than that factor are an error (the split would be a guess)."""
    runs = list(runs)
    if runs and runs[0].group is not None:
        labelled: dict[str, list[Run]] = {}
        for run in runs:
            labelled.setdefault(run.group, []).append(run)
        return sorted(labelled.values(), key=lambda g: _geometric_mean([r.size for r in g]))
    factor = (1 + tolerance) / (1 - tolerance)
    groups: list[list[Run]] = []
    for run in sorted(runs, key=lambda r: (r.size, r.row)):
        if groups and run.size <= groups[-1][0].size * factor:
            groups[-1].append(run)
            continue
        if groups and run.size <= groups[-1][-1].size * factor:
            raise InputError("sizes", f"{groups[-1][-1].size:.4g} and {run.size:.4g}",
                             f"rows {groups[-1][-1].row} and {run.row} are too close to tell apart as groups but too far "
                             f"apart for one (a group spans at most ±{tolerance:.0%}); add a 'group' column naming each "
                             "run's size group")
        groups.append([run])
    return groups


# ---- across groups -------------------------------------------------------------------------------

def _spread(draws: np.ndarray) -> float:
    """A robust standard deviation of bootstrap draws: half the 16th-84th percentile range
    (a draw whose parabola is nearly flat can land far away; the variance would follow it)."""
    valid = draws[np.isfinite(draws)]
    if valid.size < 2:
        return SIGMA_FLOOR
    low, high = np.percentile(valid, [15.865, 84.135])
    return max(float(high - low) / 2, SIGMA_FLOOR)


def _weighted_fit(residuals, start) -> tuple[np.ndarray, np.ndarray, float, int]:
    """Least squares on residuals already divided by their standard deviations: the estimate,
    its covariance (J^T·J)^-1 widened by the reduced chi-square when above 1, chi², dof."""
    result = optimize.least_squares(residuals, start, method="lm", xtol=1e-14, ftol=1e-14, gtol=1e-14)
    jac = result.jac
    covariance = np.linalg.pinv(jac.T @ jac)
    chi2 = float(np.sum(result.fun**2))
    dof = result.fun.size - len(start)
    if dof > 0 and chi2 / dof > 1:
        covariance = covariance * (chi2 / dof)
    return result.x, covariance, chi2, dof


def _interval(value: float, variance: float) -> tuple[float, float]:
    half = NormalDist().inv_cdf(0.5 + CONFIDENCE / 2) * math.sqrt(max(variance, 0.0))
    return (float(value - half), float(value + half))


def _goodness(observed: np.ndarray, predicted: np.ndarray) -> tuple[float | None, float]:
    """r2 and rmse of predicted against observed ln(width)."""
    residual = observed - predicted
    total = float(np.sum((observed - observed.mean()) ** 2))
    rmse = float(np.sqrt(np.mean(residual**2)))
    return (None if total <= 1e-300 else 1 - float(np.sum(residual**2)) / total), rmse


def levine_crossing(a: float, b: float, intercept: float, slope: float, guess: float) -> float | None:
    """ln L where the law ln d = a + b·L meets the iso-size line ln d = c + e·ln L (brentq on
    ln L, searched outwards from ``guess``); None when they do not meet near it."""
    def gap(t):
        return intercept + slope * t - a - b * math.exp(t)

    for reach in (0.5, 1, 2, 4, 8):
        low, high = guess - reach, min(guess + reach, 700.0)
        if gap(low) * gap(high) <= 0:
            return optimize.brentq(gap, low, high, xtol=1e-13)
    return None


def fit_levine(groups, draws, notes: list[str], nested: bool = False) -> LevineLaw:
    """ln d_opt = a + b·L_opt, each group weighed by its optimum's spread along its iso-size line."""
    L = np.array([g.optimal_depth for g in groups])
    ln_d = np.log([g.optimal_width for g in groups])
    e = np.array([g.width_relation[1] for g in groups])
    sigma_x = np.array([_spread(d) for d in draws])

    def residuals(p):  # a residual in ln d, over its standard deviation |e - b·L|·sigma_x (effective variance)
        a, b = p
        return (ln_d - a - b * L) / (np.abs(e - b * L) * sigma_x)

    b0, a0 = np.polyfit(L, ln_d, 1)
    (a, b), cov, _, _ = _weighted_fit(residuals, np.array([a0, b0]))
    if nested:
        return LevineLaw(float(a), float(b), (a, a), (b, b), None, 0.0)
    predicted = []
    for g, observed in zip(groups, ln_d):
        c, slope = g.width_relation
        t = levine_crossing(a, b, c, slope, math.log(g.optimal_depth))
        if t is None:
            notes.append(f"the Levine law does not cross the iso-size line of group {g.label} near its optimum; "
                         "its rmse there uses the residual at the optimum")
            predicted.append(a + b * g.optimal_depth)
        else:
            predicted.append(c + slope * t)
    _, rmse = _goodness(ln_d, np.array(predicted))
    r2, heldout = held_out(groups, draws, lambda gs, ds: _levine_prediction(gs, ds))
    covariance = ((float(cov[0, 0]), float(cov[0, 1])), (float(cov[1, 0]), float(cov[1, 1])))
    return LevineLaw(float(a), float(b), _interval(a, cov[0, 0]), _interval(b, cov[1, 1]), r2, rmse, covariance, heldout)


def _levine_prediction(groups, draws):
    """Fit the Levine law on ``groups`` and return a predictor of a group's ln(optimal width)."""
    law = fit_levine(groups, draws, [], nested=True)

    def predict(g):
        c, slope = g.width_relation
        t = levine_crossing(law.a, law.b, c, slope, math.log(g.optimal_depth))
        return law.a + law.b * g.optimal_depth if t is None else c + slope * t
    return predict


def held_out(groups, draws, fit_on) -> tuple[float | None, float | None]:
    """Leave-one-size-out goodness: each group's ln(optimal width) predicted by the law fitted on the
    others: (r2 of those predictions, rmse). None with fewer than 3 groups (two points fit exactly).
    On noise the held-out r2 is near or below 0; in-sample r2 is not reported, it flatters."""
    if len(groups) < 3:
        return None, None
    observed, predicted = [], []
    for i, g in enumerate(groups):
        rest = [x for j, x in enumerate(groups) if j != i]
        rest_draws = [x for j, x in enumerate(draws) if j != i]
        try:
            predict = fit_on(rest, rest_draws)
            value = predict(g)
        except (ValueError, FloatingPointError, np.linalg.LinAlgError):
            return None, None
        observed.append(math.log(g.optimal_width))
        predicted.append(value)
    r2, rmse = _goodness(np.array(observed), np.array(predicted))
    return r2, rmse


def fit_power(groups, draws, nested: bool = False) -> PowerLaw:
    """ln d_opt = ln k + alpha·ln N and ln L_opt = ln depth_k + beta·ln N, weighted by each group's spread."""
    ln_n = np.log([g.size for g in groups])
    ln_d = np.log([g.optimal_width for g in groups])
    ln_l = np.log([g.optimal_depth for g in groups])
    sigma_x = np.array([_spread(d) for d in draws])
    sigma_d = np.abs([g.width_relation[1] for g in groups]) * sigma_x

    def line(y, sigma):
        slope0, icept0 = np.polyfit(ln_n, y, 1)
        return _weighted_fit(lambda p: (y - p[0] - p[1] * ln_n) / sigma, np.array([icept0, slope0]))

    (ln_k, alpha), cov_d, _, _ = line(ln_d, sigma_d)
    (ln_kl, beta), cov_l, _, _ = line(ln_l, sigma_x)
    _, rmse = _goodness(ln_d, ln_k + alpha * ln_n)
    k_low, k_high = _interval(ln_k, cov_d[0, 0])
    pivot = float(ln_n.mean())  # (ln L at the pivot, beta) are nearly uncorrelated: the covariance the planner uses
    c00, c01, c11 = cov_l[0, 0], cov_l[0, 1], cov_l[1, 1]
    depth_cov = ((float(c00 + 2 * pivot * c01 + pivot * pivot * c11), float(c01 + pivot * c11)),
                 (float(c01 + pivot * c11), float(c11)))
    if nested:
        return PowerLaw(float(math.exp(ln_k)), float(alpha), (alpha, alpha), (1.0, 1.0), float(math.exp(ln_kl)), float(beta),
                        (beta, beta), None, 0.0)
    r2, heldout = held_out(groups, draws, lambda gs, ds: _power_prediction(gs, ds))
    return PowerLaw(float(math.exp(ln_k)), float(alpha), _interval(alpha, cov_d[1, 1]), (math.exp(k_low), math.exp(k_high)),
                    float(math.exp(ln_kl)), float(beta), _interval(beta, cov_l[1, 1]), r2, rmse, depth_cov, pivot, heldout)


def _power_prediction(groups, draws):
    law = fit_power(groups, draws, nested=True)
    return lambda g: math.log(law.k) + law.alpha * math.log(g.size)


def no_law_reason(groups, draws) -> str | None:
    """Why the groups support no law across sizes (None: they do): fewer than MIN_GROUPS sizes, a size
    without a fitted parabola, or optima that do not move beyond their intervals."""
    shown = ", ".join(f"{g.label} ({g.runs} runs)" for g in groups)
    if len(groups) < MIN_GROUPS:
        return (f"{len(groups)} size group{'s' * (len(groups) != 1)} ({shown}); a law across sizes needs at least "
                f"{MIN_GROUPS} (a two-constant law passes through any two optima, so two sizes cannot test it): add a size")
    lacking = [g.label for g, d in zip(groups, draws) if d is None]
    if lacking:
        return f"size group{'s' * (len(lacking) != 1)} {', '.join(lacking)} ha{'ve' if len(lacking) != 1 else 's'} no fitted parabola"
    low = max(g.depth_interval[0] for g in groups)
    high = min(g.depth_interval[1] for g in groups)
    if low <= high:
        spans = "; ".join(f"{g.label}: {g.optimal_depth:.3g} [{g.depth_interval[0]:.3g}, {g.depth_interval[1]:.3g}]" for g in groups)
        return (f"the optimal depths do not move with size beyond their {CONFIDENCE:.0%} intervals (every interval holds "
                f"depth {low:.3g}-{high:.3g}: {spans}): add sizes further apart or repeat runs")
    return None


def fit_results(runs, source: Source, group_by: str = "params", form: str = "both", bootstrap: int = DEFAULT_BOOTSTRAP,
                seed: int = DEFAULT_SEED, name: str = "fit", sources: tuple[Source, ...] = ()) -> FitReport:
    """The whole fit (steps 1-5 of the module docstring) for parsed runs; ``sources``: every file
    read (their sha256 go into the rule's ``fitted_on``).

    Fits no law it cannot support (``no_law_reason``): the report then has each size's optimum, no
    law (form "none") and ``law_note`` saying why (one depth inside every group's 95% interval: the
    data cannot tell the sizes' optima apart, whatever a fitted line would say)."""
    if form not in ("levine", "power", "both"):
        raise InputError("--form", form, "expected levine, power or both")
    if bootstrap < 2:
        raise InputError("--bootstrap", bootstrap, "expected at least 2 resamples")
    groups_of_runs = group_runs(runs)
    rng = np.random.default_rng(seed)
    labels = [g[0].group if g[0].group is not None else _size_label(_geometric_mean([r.size for r in g]))
              for g in groups_of_runs]
    fitted = [fit_or_best(g, label, bootstrap, rng, group_by) for g, label in zip(groups_of_runs, labels)]
    groups = tuple(g for g, _, _ in fitted)
    draws = [d for _, d, _ in fitted]
    notes: list[str] = [f"group {g.label}: no parabola ({why}); its optimum is the measured best depth {g.best_depth:g}, "
                        "its interval the depths tried on either side" for g, _, why in fitted if why]
    for g in groups:
        if g.method == "parabola" and g.bootstrap_valid < 0.9 * bootstrap:
            notes.append(f"group {g.label}: {bootstrap - g.bootstrap_valid} of {bootstrap} resamples had no minimum "
                         "(fewer than 3 depths or a downward parabola); its interval uses the rest and may be too narrow")
    law_note = no_law_reason(groups, draws)
    # the sizes fitted on: every group's size and its budget (a sweep's 1.5e9 whose runs count 1.47e9 is inside)
    sizes = [g.size for g in groups] + [budget_of(g, group_by) for g in groups]
    fit_range = FitRange((min(sizes), max(sizes)),
                         (min(r.depth for r in runs), max(r.depth for r in runs)),
                         (min(r.width for r in runs), max(r.width for r in runs)))
    fitted_on = FittedOn(tuple(g.size for g in groups), tuple(float(r.depth) for r in runs),
                         tuple(float(r.width) for r in runs), len(runs), tuple(sources) or (source,))
    layout = held_layout(runs)
    if law_note:
        return FitReport(name, "none", None, group_by, None, None, fit_range, groups, source, fitted_on, bootstrap, seed,
                         CONFIDENCE, tuple(notes + [Message("no-law", f"no law across sizes: {law_note}", reason=law_note)]), law_note, layout)
    notes.append("r2 and heldout_rmse are leave-one-size-out: each size's optimal width predicted by the law fitted on "
                 "the other sizes (rmse is in-sample)")
    levine = fit_levine(groups, draws, notes) if form in ("levine", "both") else None
    power = fit_power(groups, draws) if form in ("power", "both") else None
    better = None
    if levine is not None and power is not None:
        score = lambda law: law.heldout_rmse if law.heldout_rmse is not None else law.rmse
        better = "levine" if score(levine) <= score(power) else "power"
    chosen = better or form
    return FitReport(name, chosen, better, group_by, levine, power, fit_range, groups, source, fitted_on, bootstrap, seed,
                     CONFIDENCE, tuple(notes), None, layout)
