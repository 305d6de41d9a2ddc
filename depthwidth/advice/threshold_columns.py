"""The threshold rule over NumPy columns of budgets (``planvec``): the minimal depth on exact
integers, its real crossing (Lambert W for the paper's block, bisection otherwise) and the ideal
width at a depth, each element-wise exactly as the scalar planner computes it (every log that can
change a decision is libm's ``math.log``), and the scalar path's refusal of a budget too large.
"""
from __future__ import annotations

import math

from ..errors import InputError
from .planner import theory_for
from ..theory.separation import LN3, lambert_w


def _min_depth(budget, spending, model):
    """The first L >= 1 whose exact threshold count reaches the budget (``planner.min_depth`` /
    ``planner.block_min_depth``): thresholds as whole numbers, a running maximum, one search."""
    import numpy as np

    top = max(budget.tolist(), default=1)
    thresholds, best, L = [], 0, 1
    while best < top:
        value = 12 * L * 9**L if spending.paper_block else math.floor(model.value(L, 3**L))
        best = max(best, value)  # the first L with T_L >= N is the first with max(T_1..T_L) >= N
        thresholds.append(best)
        L += 1
    if budget.dtype == object:
        from bisect import bisect_left

        return np.array([bisect_left(thresholds, b) + 1 for b in budget.tolist()], dtype=np.int64)
    capped = np.array([min(t, 2**63 - 1) for t in thresholds] or [2**63 - 1], dtype=np.int64)
    return np.searchsorted(capped, budget, side="left").astype(np.int64) + 1


def _as_float(budget):
    """float(N) row by row, rounded once as Python rounds an int."""
    import numpy as np

    return np.array([float(b) for b in budget.tolist()]) if budget.dtype == object else budget.astype(np.float64)


def _width_exact(budget, depth, spending, model):
    """The width spending the budget at the minimal depth: sqrt(N/(12·L)) (int/int division
    correctly rounded, as Python's) for the paper's block, else the quadratic's root."""
    import numpy as np

    if spending.paper_block:
        if budget.dtype == object:
            ratio = np.array([b / (12 * L) for b, L in zip(budget.tolist(), depth.tolist())])
        else:
            ratio = budget.astype(np.float64) / (12 * depth).astype(np.float64)
        return np.sqrt(ratio)
    return _quadratic_width(model, _as_float(budget), depth.astype(np.float64))


def _quadratic_width(model, budget, depth):
    """``Quadratic.width`` element-wise, the same float operations in the same order."""
    import numpy as np

    f = tuple(map(float, model.a + model.b))  # Quadratic's own float coefficients
    a2, a1, a0 = (f[i] * depth + f[i + 3] for i in range(3))
    c = a0 - budget
    with np.errstate(all="ignore"):
        root = (-a1 + np.sqrt(a1 * a1 - 4 * a2 * c)) / (2 * a2)
        linear = np.where(a1 > 0, -c / a1, np.inf)
    return np.where(a2 <= 0, linear, root)


def _libm_log(x):
    """math.log of each element (libm, as the scalar path): NumPy's log may differ by an ulp."""
    import numpy as np

    return np.fromiter(map(math.log, x.tolist()), np.float64, x.size)


def _min_depth_exact(budget, spending, model):
    """The real crossing L*: ``planner.min_depth_exact`` (Lambert W) for the paper's block, else
    ``planner.block_min_depth_exact``'s bisection, iteration for iteration."""
    floats = _as_float(budget)
    if spending.paper_block:
        return _lambert_w(LN3 * floats / 6) / (2 * LN3)
    return _bisection(model, floats)


def _lambert_w(z):
    """``planner.lambert_w`` element-wise for z > e (the log-form Newton iteration, each element
    stopping where the scalar loop breaks); the few z <= e go through the scalar function."""
    import numpy as np

    w = np.empty_like(z)
    small = np.flatnonzero(~(z > math.e))
    w[small] = [lambert_w(v) for v in z[small].tolist()]
    rows = np.flatnonzero(z > math.e)
    log_z = _libm_log(z[rows])
    x = log_z - _libm_log(log_z)
    for _ in range(50):
        if not rows.size:
            break
        step = (x + _libm_log(x) - log_z) / (1 + 1 / x)
        x = x - step
        done = np.abs(step) <= 4e-16 * x
        w[rows[done]] = x[done]
        rows, x, log_z = rows[~done], x[~done], log_z[~done]
    w[rows] = x
    return w


def _bisection(model, budget):
    """``planner.block_min_depth_exact``: double hi from 1 while gap(hi) > 0, then 100 halvings.
    A row stops once an iteration leaves (lo, hi) unchanged (every later one would too)."""
    import numpy as np

    tiny = 64 * 2.0**-52

    def positive(rows, depth):  # gap(depth) > 0, gap = log3(width) - depth; libm's log wherever an ulp could matter
        width = _quadratic_width(model, budget[rows], depth)
        with np.errstate(all="ignore"):
            q = np.log(width) / LN3
            gap = q - depth
        near = np.flatnonzero(~(np.abs(gap) > tiny * np.maximum(np.abs(q), np.abs(depth))))
        if near.size:
            gap[near] = _libm_log(width[near]) / LN3 - depth[near]
        return gap > 0

    n = budget.size
    lo, hi = np.full(n, 0.5), np.full(n, 1.0)
    rows = np.arange(n)
    while rows.size:
        up = positive(rows, hi[rows])
        rows = rows[up]
        lo[rows], hi[rows] = hi[rows], 2 * hi[rows]
    rows = np.arange(n)
    for _ in range(100):
        if not rows.size:
            break
        a, b = lo[rows], hi[rows]
        mid = (a + b) / 2
        up = positive(rows, mid)
        new_lo, new_hi = np.where(up, mid, a), np.where(up, b, mid)
        lo[rows], hi[rows] = new_lo, new_hi
        rows = rows[(new_lo != a) | (new_hi != b)]
    return (lo + hi) / 2


def _too_large(error, rows, values, spending) -> None:
    """The scalar refusal of a budget past the largest width: its text from ``theory_for`` once,
    then the same error for each budget (only the budget's spelling differs; else row by row)."""
    def scalar(budget):
        try:
            theory_for(budget, spending)
        except InputError as err:
            return err
        raise AssertionError(f"budget {budget} was expected to be refused as too large")  # pragma: no cover

    template = scalar(values[rows[0]])
    same = template.value == f"{values[rows[0]]:.3g}"
    for i in rows.tolist():
        error[i] = str(InputError(template.what, f"{values[i]:.3g}", template.accepted) if same else scalar(values[i]))
