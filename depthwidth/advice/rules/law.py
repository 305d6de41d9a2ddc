"""What a fitted rule says, and whether to believe it: the law's optimum (depth, width) for a size,
its plausibility across its own fitted range, and the depth the planner shows with its 95%
interval (``fitted_depth``). The rule is a ``rules.file.FittedRule``, passed in (rulefile, which reads
rule files, checks them with ``plausibility``, so this module does not import it). No SciPy, no NumPy.
"""
from __future__ import annotations

import math

from ...core.errors import InputError
from ...core.frozen import frozen

DEPTH_LIMITS = (1.0, 1e4)  # a plausible optimal depth (depth_k = 1e30 recommended 5086 layers)
WIDTH_LIMITS = (1.0, 1e7)  # a plausible optimal width (a = 100 gave width 3e43)
Z95 = 1.959963984540054  # the normal quantile of a central 95% interval


def params_for_size(rule: FittedRule, size: float) -> float:
    """The parameter count N of a group size: N itself, or N = sqrt(C/120) for FLOPs (C = 6·N·D,
    D = 20·N: Hoffmann et al. 2022)."""
    return size if rule.group_by == "params" else math.sqrt(size / 120)


def size_for_params(rule: FittedRule, params: float) -> float:
    return params if rule.group_by == "params" else 120 * params * params


def _paper_log_width(params: float):
    """ln of the width spending N at depth L with the paper's block, N = 12·L·d²."""
    log_n = math.log(params)
    return lambda depth: 0.5 * (log_n - math.log(12) - math.log(depth))


def levine_crossing_depth(a: float, b: float, log_width_at_depth) -> float | None:
    """The depth where ln d = a + b·L meets the iso-budget curve ln d(L) (bisection in ln L over
    10^-6..10^12); None when they do not meet there."""
    gap = lambda log_depth: log_width_at_depth(math.exp(log_depth)) - a - b * math.exp(log_depth)
    grid = [math.log(10.0) * k / 4 for k in range(-24, 49)]
    for low, high in zip(grid, grid[1:]):
        g_low, g_high = gap(low), gap(high)
        if g_low == 0:
            return math.exp(low)
        if g_low * g_high < 0:
            for _ in range(80):
                mid = (low + high) / 2
                low, high = (mid, high) if gap(mid) * g_low > 0 else (low, mid)
            return math.exp((low + high) / 2)
    return None


def log_optimum(rule: FittedRule, params: float, log_width_at_depth=None, constants=None) -> tuple[float, float] | None:
    """(depth, ln width) of the rule's optimum for N parameters (None: the Levine law never meets
    the iso-budget curve). ``constants`` replaces (a, b) or (ln depth_k', beta) for intervals."""
    if rule.form == "power":
        law = rule.power
        log_size = math.log(size_for_params(rule, params))
        if constants is None:
            log_depth = math.log(law.depth_k) + law.depth_beta * log_size
        else:
            log_depth = constants[0] + constants[1] * (log_size - (law.depth_pivot or 0.0))
        return math.exp(min(log_depth, 700.0)), math.log(law.k) + law.alpha * log_size
    law = rule.levine
    a, b = constants if constants is not None else (law.a, law.b)
    width_curve = log_width_at_depth or _paper_log_width(params)
    depth = levine_crossing_depth(a, b, width_curve)
    return None if depth is None else (depth, a + b * depth)


def plausibility(rule: FittedRule) -> list[str]:
    """What is implausible about the law across its own fitted size range (empty: nothing): an
    optimum outside depth 1..10^4 or width 1..10^7 at the smallest, middle or largest fitted size."""
    low, high = rule.fit_range.size
    out = []
    for size in sorted({low, math.sqrt(low * high), high}):
        optimum = log_optimum(rule, params_for_size(rule, size))
        if optimum is None:
            out.append(f"at size {size:.3g} the {rule.form} law never meets the iso-budget curve")
            continue
        depth, log_width = optimum
        if not DEPTH_LIMITS[0] <= depth <= DEPTH_LIMITS[1] or not math.log(WIDTH_LIMITS[0]) <= log_width <= math.log(WIDTH_LIMITS[1]):
            width = f"{math.exp(log_width):.3g}" if log_width < 700 else f"e^{log_width:.4g}"
            out.append(f"at size {size:.3g} its optimum is depth {depth:.4g}, width {width}")
    return out


@frozen
class FittedDepth:
    """What the planner shows for a rule file: the law's depth for a budget, its 95% interval,
    whether the budget lies inside the fitted sizes, and whether the depth had to be clamped to
    1..10^4 (``note`` says why, for a warning and the JSON record)."""

    depth: float
    low: float
    high: float
    in_range: bool
    clamped: bool
    note: str | None


def _interval_points(center: tuple[float, float], covariance, box) -> list[tuple[float, float]]:
    """Points on the 95% ellipse of (c0, c1) along its axes, or the corners of the box intervals."""
    if covariance is None:
        return [(x, y) for x in box[0] for y in box[1]]
    (s00, s01), (_, s11) = covariance
    trace, det = s00 + s11, s00 * s11 - s01 * s01
    root = math.sqrt(max(trace * trace / 4 - det, 0.0))
    points = []
    for eigen in (trace / 2 + root, trace / 2 - root):
        vector = (s01, eigen - s00) if abs(s01) > 1e-300 else ((1.0, 0.0) if abs(eigen - s00) <= abs(eigen - s11) else (0.0, 1.0))
        norm = math.hypot(*vector) or 1.0
        scale = Z95 * math.sqrt(max(eigen, 0.0)) / norm
        for sign in (1, -1):
            points.append((center[0] + sign * scale * vector[0], center[1] + sign * scale * vector[1]))
    return points


def fitted_depth(rule: FittedRule, budget: float, log_width_at_depth=None) -> FittedDepth:
    """The rule's optimal depth for a parameter budget with its 95% interval (from the constants'
    covariance, or, for files without one, the corners of their intervals), whether the budget is
    inside the fitted sizes, and a clamp to 1..10^4 flagged in ``clamped``/``note``.

    ``log_width_at_depth``: ln of the width spending the budget at depth L for the planner's block
    (Levine form); default the paper's block, N = 12·L·d²."""
    optimum = log_optimum(rule, budget, log_width_at_depth)
    if optimum is None:
        raise InputError("rule file", rule.name, f"its Levine law never meets the iso-budget curve of {budget:.3g}")
    depth = optimum[0]
    if rule.form == "power":  # ln L = c + beta·(ln N - pivot): its variance is exact for a line
        law = rule.power
        x = math.log(size_for_params(rule, budget))
        if law.depth_covariance is not None and law.depth_pivot is not None:
            (v_c, v_cb), (_, v_b) = law.depth_covariance
            offset = x - law.depth_pivot
            half = Z95 * math.sqrt(max(v_c + 2 * offset * v_cb + offset * offset * v_b, 0.0))
        else:  # a /1 file: only beta's interval, pivoting at the middle of the fitted sizes
            low_size, high_size = rule.fit_range.size
            offset = abs(x - math.log(math.sqrt(low_size * high_size)))
            half = offset * (law.beta_interval[1] - law.beta_interval[0]) / 2
        low, high = depth * math.exp(-min(half, 700.0)), depth * math.exp(min(half, 700.0))
    else:
        law = rule.levine
        points = _interval_points((law.a, law.b), law.covariance, (law.a_interval, law.b_interval))
        depths = [depth] + [o[0] for p in points if (o := log_optimum(rule, budget, log_width_at_depth, p)) is not None]
        low, high = min(depths), max(depths)
    in_range = rule.in_range(size_for_params(rule, budget))
    clamped = not DEPTH_LIMITS[0] <= depth <= DEPTH_LIMITS[1]
    note = None
    if clamped:
        note = (f"rule '{rule.name}' gives depth {depth:.4g} for {budget:.3g}, outside {DEPTH_LIMITS[0]:g}-"
                f"{DEPTH_LIMITS[1]:g}: clamped")
        depth = min(max(depth, DEPTH_LIMITS[0]), DEPTH_LIMITS[1])
    elif not in_range:
        lo, hi = rule.fit_range.size
        note = f"budget {budget:.3g} lies outside the sizes rule '{rule.name}' was fitted on ({lo:.3g}-{hi:.3g}): an extrapolation"
    return FittedDepth(depth, min(low, depth), max(high, depth), in_range, clamped, note)
