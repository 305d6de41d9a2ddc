"""Separation-rank bounds of self-attention networks.

Source: Levine, Wies, Sharir, Bata, Shashua, "Limits to Depth Efficiencies of Self-Attention"
(NeurIPS 2020, arXiv:2006.12467). Every quantity about the separation rank ``sep`` is carried as
log3(sep), which is at most a few times 10^21 for any accepted shape, so nothing overflows.

Each formula is written once and evaluates on Python numbers (``xp=math``) or NumPy arrays
(``xp=numpy``); ``bounds()`` is the scalar entry point and ``bounds_grid()`` the vectorized one.
Nothing here imports NumPy at module level: scalar callers never pay for it.
"""
from __future__ import annotations

import math

from .shapes import params
from ..core.frozen import frozen

LN3 = math.log(3.0)
LOG3_2 = math.log(2.0) / LN3
# Theorem 2's constant c2 prints as "-2 d_x log_3 (d_x/2) sqrt(2 sqrt(2e)) + log_3 d_x", which reads
# two ways (docs/theory.md, "Reading of c2"). With K = sqrt(2·sqrt(2e)) ~ 2.1595:
#   consistent (default): c2 = -2·d·log3(d/(2K)) + log3 d   -- respects sep >= 1 and zero-padding
#   literal:              c2 = -2·d·log3((d/2)·K) + log3 d  -- negative and non-monotone below 3^L
C2_K = math.sqrt(2.0 * math.sqrt(2.0 * math.e))
CONSISTENT = "consistent"
LITERAL = "literal"
C2_READINGS = (CONSISTENT, LITERAL)
# The argument of Theorem 2's log3 in c2 is width · UB2_ARG_PER_WIDTH[reading].
UB2_ARG_PER_WIDTH = {CONSISTENT: 1.0 / (2.0 * C2_K), LITERAL: 0.5 * C2_K}

EFFICIENT = "depth-efficient"  # 3^L < d: Theorem 1
INEFFICIENT = "depth-inefficient"  # 3^L > d: Theorem 2
THRESHOLD = "threshold"  # 3^L == d: neither theorem applies
REGIME_CODES = (EFFICIENT, THRESHOLD, INEFFICIENT)  # code = 1 + sign(3^L - d)

_POW3_INT64 = 39  # 3**39 < 2**63 <= 3**40: largest power of 3 an int64 holds


def threshold_depth(width, xp=math):
    """log3(d), the depth at which self-attention stops being depth-efficient (Levine et al. 2020)."""
    return xp.log(width) / LN3


def compare_pow3(depth: int, width: int) -> int:
    """sign(3**depth - width), exactly: never through floating-point logs (log(729, 3) < 6)."""
    if depth * 1.5849625 > width.bit_length() + 1:  # 3**depth has more bits than width: skip the big power
        return 1
    power = 3**depth
    return (power > width) - (power < width)


def regime(depth: int, width: int) -> str:
    """Which theorem governs (L, d): depth-efficient (3^L < d), depth-inefficient (3^L > d), or threshold."""
    return REGIME_CODES[1 + compare_pow3(int(depth), int(width))]


def log3_sep_lower_efficient(depth, width, heads, xp=math):
    """Theorem 1 lower bound: 3^(L-2)·(log3(d-H) + 2 - L - log3 2)."""
    return 3.0 ** (depth - 2) * (xp.log(width - heads) / LN3 + 2 - depth - LOG3_2)


def log3_sep_upper_efficient(depth, width, heads, xp=math):
    """Theorem 1 upper bound: ((3^L - 1)/2)·log3(d + H)."""
    return (3.0**depth - 1) / 2 * (xp.log(width + heads) / LN3)


def log3_sep_lower_inefficient(depth, width, heads, xp=math):
    """Theorem 2 lower bound: d·L/2 - L·(H/2 + 1) - d·(1 + log3((d - H)/2)/2)."""
    return 0.5 * width * depth - depth * (heads / 2 + 1) - width * (1 + 0.5 * xp.log((width - heads) / 2) / LN3)


def check_reading(reading: str) -> str:
    """The c2 reading by name; anything else is a programming error (the CLI validates user input)."""
    if reading not in C2_READINGS:
        raise ValueError(f"c2 reading must be one of {', '.join(C2_READINGS)}, got {reading!r}")
    return reading


def log3_sep_upper_inefficient(depth, width, heads, xp=math, reading=CONSISTENT):
    """Theorem 2 upper bound: 2·d·L + c1 + c2 with c1 = L and, in the consistent reading,
    c2 = -2·d·log3(d/(2K)) + log3 d, K = sqrt(2·sqrt(2e)) (literal: log3((d/2)·K)). H does not enter."""
    arg = UB2_ARG_PER_WIDTH[check_reading(reading)]
    return 2.0 * width * depth + depth - 2.0 * width * (xp.log(width * arg) / LN3) + xp.log(width) / LN3


@frozen
class Bounds:
    """The shape record: a shape, its regime, and the valid theorem's bounds on log3(sep)."""

    depth: int
    width: int
    heads: int
    params_12Ld2: int  # the paper's count 12·L·d² (Kaplan et al. 2020's non-embedding convention)
    threshold_depth: float
    regime: str
    theorem: int | None
    log3_sep_lower: float | None
    log3_sep_upper: float | None
    lower_vacuous: bool
    c2_reading: str
    notes: tuple[str, ...]


def bounds(depth: int, width: int, heads: int, reading: str = CONSISTENT) -> Bounds:
    """Bounds on log3(sep) for an L x d network with H heads, from the theorem valid at (L, d).

    The lower bound is clamped at 0 and flagged vacuous where the formula gives <= 0 (sep >= 1
    always). The upper bound is None where the printed formula falls below the lower bound.
    """
    depth, width, heads = int(depth), int(width), int(heads)
    kind = regime(depth, width)
    common = dict(depth=depth, width=width, heads=heads, params_12Ld2=params(depth, width),
                  threshold_depth=threshold_depth(width), regime=kind, c2_reading=check_reading(reading))
    if kind == THRESHOLD:
        return Bounds(**common, theorem=None, log3_sep_lower=None, log3_sep_upper=None, lower_vacuous=False,
                      notes=bound_notes(depth, None, 0.0, 0.0))
    if kind == EFFICIENT:
        theorem, raw_lower, raw_upper = 1, log3_sep_lower_efficient(depth, width, heads), log3_sep_upper_efficient(depth, width, heads)
    else:
        theorem, raw_lower, raw_upper = 2, log3_sep_lower_inefficient(depth, width, heads), log3_sep_upper_inefficient(depth, width, heads, reading=reading)
    lower = max(raw_lower, 0.0)
    return Bounds(**common, theorem=theorem, log3_sep_lower=lower, log3_sep_upper=raw_upper if raw_upper >= lower else None,
                  lower_vacuous=raw_lower <= 0, notes=bound_notes(depth, theorem, raw_lower, raw_upper))


def bound_notes(depth: int, theorem: int | None, raw_lower: float, raw_upper: float) -> tuple[str, ...]:
    """Why a bound is missing or vacuous; ``theorem`` None means the threshold d = 3^L."""
    if theorem is None:
        return (f"d = 3^{depth} exactly: neither Theorem 1 (3^L < d) nor Theorem 2 (3^L > d) applies, so no bounds",)
    notes = []
    if raw_lower <= 0:
        notes.append(f"Theorem {theorem} lower bound formula gives {raw_lower:.3f} <= 0: vacuous (only sep >= 1), reported as 0"
                     + ("; the paper's aside that log3(d - H) + a > 0 throughout this regime fails when H is close to d"
                        if theorem == 1 else ""))
    if raw_upper < max(raw_lower, 0.0):
        notes.append(f"Theorem {theorem} upper bound formula gives {raw_upper:.3f}, below the lower bound: "
                     "no information here (a guard: with the consistent reading of c2 this is not expected; "
                     "the literal reading does it for d in about (0.93·3^L, 3^L)), reported as unavailable")
    return tuple(notes)


def regime_codes(depth, width):
    """Vectorized exact regime: 0 depth-efficient, 1 threshold, 2 depth-inefficient (index into REGIME_CODES)."""
    import numpy as np

    depth = np.asarray(depth, dtype=np.int64)
    width = np.asarray(width, dtype=np.int64)
    powers = np.array([3**k for k in range(_POW3_INT64 + 1)], dtype=np.int64)
    power = powers[np.clip(depth, 0, _POW3_INT64)]
    sign = np.where(depth > _POW3_INT64, 1, np.sign(power - width))  # any int64 width is below 3**40
    return (sign + 1).astype(np.int8)


def bounds_grid(depth, width, heads, reading=CONSISTENT):
    """``bounds()`` over broadcast NumPy arrays, returned as a dict of arrays.

    Keys: ``regime_code`` (int8, see ``regime_codes``), ``theorem`` (0 where none),
    ``log3_sep_lower`` and ``log3_sep_upper`` (float64, NaN where unavailable), ``lower_vacuous``
    (bool), and the unclamped ``lower_formula`` / ``upper_formula`` (NaN on the threshold).
    Same formulas and clamping rules as ``bounds()``.
    """
    import numpy as np

    depth, width, heads = np.broadcast_arrays(np.asarray(depth, np.int64), np.asarray(width, np.int64), np.asarray(heads, np.int64))
    code = regime_codes(depth, width)
    L, d, H = (a.astype(np.float64) for a in (depth, width, heads))
    # Theorem 2 over every row (cheaper than gathering and scattering the usual majority; finite
    # wherever H < d), then NaN on the threshold and Theorem 1 on its rows (3^(L-2) would overflow elsewhere).
    with np.errstate(all="ignore"):
        raw_lower = log3_sep_lower_inefficient(L, d, H, xp=np)
        raw_upper = log3_sep_upper_inefficient(L, d, H, xp=np, reading=reading)
    other = code != 2
    if other.any():
        raw_lower[other] = np.nan
        raw_upper[other] = np.nan
        efficient = code == 0
        if efficient.any():
            L, d, H = L[efficient], d[efficient], H[efficient]
            raw_lower[efficient] = log3_sep_lower_efficient(L, d, H, xp=np)
            raw_upper[efficient] = log3_sep_upper_efficient(L, d, H, xp=np)
    lower_vacuous = raw_lower <= 0  # False where NaN
    lower = np.where(lower_vacuous, 0.0, raw_lower)
    upper = np.where(raw_upper >= lower, raw_upper, np.nan)
    theorem = (code == 0) + 2 * (code == 2)
    return {"regime_code": code, "theorem": theorem.astype(np.int8), "log3_sep_lower": lower, "log3_sep_upper": upper,
            "lower_vacuous": lower_vacuous, "lower_formula": raw_lower, "upper_formula": raw_upper}


def iter_bounds_grid(depths, widths, heads=None, rows_per_chunk: int = 1 << 16, reading=CONSISTENT,
                     part: tuple[int, int] | None = None):
    """The grid depths x widths (depth-major) in chunks of at most ``rows_per_chunk`` rows, as
    dicts of arrays, so memory stays bounded however long either axis is. ``part`` = (k, n): only
    the chunks number i with i % n == k (a worker process's share; no chunk is empty).

    Each chunk holds ``depth``, ``width``, ``heads``, ``params_12Ld2`` (exact: int64, or Python ints past
    2^63), ``threshold_depth``, the ``bounds_grid`` keys, and ``notes``: an object array, None
    where a row has no note. ``heads`` None means the default width/64 per width.
    """
    import numpy as np

    from .shapes import default_heads

    widths = np.asarray(widths, np.int64).reshape(-1)
    depths = np.asarray(depths, np.int64).reshape(-1)
    head_row = default_heads(widths, xp=np) if heads is None else np.full(widths.shape, heads, np.int64)
    log3_width = threshold_depth(widths.astype(np.float64), xp=np)
    exact_int64 = 12 * int(depths.max(initial=1)) * int(widths.max(initial=1)) ** 2 < 2**63
    rows = depths.size * widths.size
    for number, start in enumerate(range(0, rows, max(1, rows_per_chunk))):
        if part is not None and number % part[1] != part[0]:
            continue
        row, column = np.divmod(np.arange(start, min(rows, start + max(1, rows_per_chunk)), dtype=np.int64), widths.size)
        depth, width, head = depths[row], widths[column], head_row[column]
        chunk = {"depth": depth, "width": width, "heads": head,
                 "params_12Ld2": params(depth, width) if exact_int64 else params(depth.astype(object), width.astype(object)),
                 "threshold_depth": log3_width[column], **bounds_grid(depth, width, head, reading)}
        notes = np.full(depth.size, None, dtype=object)
        flagged = np.flatnonzero((chunk["regime_code"] == 1) | chunk["lower_vacuous"]
                                 | ((chunk["theorem"] > 0) & np.isnan(chunk["log3_sep_upper"])))
        for i, L, theorem, lower, upper in zip(flagged.tolist(), depth[flagged].tolist(), chunk["theorem"][flagged].tolist(),
                                               chunk["lower_formula"][flagged].tolist(), chunk["upper_formula"][flagged].tolist()):
            notes[i] = bound_notes(L, theorem or None, lower, upper)
        chunk["notes"] = notes
        chunk["c2_reading"] = reading
        yield chunk


# ---- the minimal depth of the paper's block (Lambert W) ----------------------------------------

def lambert_w(z):
    """Principal branch W0(z) for z >= 0, a number or each element of an array, to double precision:
    Newton on w + ln w = ln z above e (no exp(w), so no overflow however large z is; libm's log, one
    code for both), Halley on w·e^w = z below it (element by element)."""
    from ..core.num import Scalars, lib

    xp = lib(z)
    if not xp.all(xp.isfinite(z) & (z >= 0)):
        raise ValueError(f"lambert_w needs a finite z >= 0, got {z!r}")
    if xp is Scalars:
        return _w_log_form(z) if z > math.e else _w_halley(z)
    w, large = xp.empty_like(z), z > math.e
    w[large] = _w_log_form(z[large])
    w[~large] = [_w_halley(v) for v in z[~large].tolist()]
    return w


def _w_log_form(z):
    """W0(z) for z > e: Newton on w + ln w = ln z; each value stops at its own converged step."""
    from ..core.num import libm_log, lib

    xp = lib(z)
    log_z = libm_log(z)
    w = log_z - libm_log(log_z)
    going = True
    for _ in range(50):
        step = (w + libm_log(w) - log_z) / (1 + 1 / w)
        w = xp.where(going, w - step, w)
        going = going & xp.logical_not(abs(step) <= 4e-16 * w)
        if not xp.any(going):
            break
    return w


def _w_halley(z: float) -> float:
    if z == 0:
        return 0.0
    w = math.log1p(z)
    for _ in range(50):  # Halley on w·e^w = z
        ew = math.exp(w)
        f = w * ew - z
        step = f / (ew * (w + 1) - (w + 2) * f / (2 * w + 2))
        w -= step
        if abs(step) <= 4e-16 * max(w, 1e-300):
            break
    return w


def min_depth_exact(budget):
    """Real L* solving L = log3(sqrt(N/(12L))) for the paper's block: L* = W(ln3·N/6)/(2·ln3)
    (a budget or an array of float budgets)."""
    return lambert_w(LN3 * budget / 6) / (2 * LN3)


def min_depth(budget: int) -> int:
    """Smallest integer L with 3^L >= sqrt(N/(12L)), i.e. 12·L·9^L >= N, in exact integer arithmetic."""
    budget = math.ceil(budget)
    depth = max(1, math.floor(min_depth_exact(budget)) - 1)
    while 12 * depth * 9**depth < budget:
        depth += 1
    while depth > 1 and 12 * (depth - 1) * 9 ** (depth - 1) >= budget:
        depth -= 1
    return depth


def width_for(budget: float, depth: int) -> float:
    """The width spending the whole budget at this depth with the paper's block: sqrt(N/(12·L))."""
    return math.sqrt(budget / (12 * depth))
