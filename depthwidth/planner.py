"""Depth and width for a parameter budget N = 12·L·d².

Two answers, kept apart on purpose:
- the threshold rule (theory, Levine et al. 2020): the smallest depth L with L >= log3(d), below
  which depth is double-exponentially more efficient than width;
- the empirical optimum of the NeurIPS version ("The Depth-to-Width Interplay in Self-Attention"):
  a fit to the authors' experiments, not a theorem.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from .shapes import HEAD_DIM, default_heads, params
from .theory import LN3, THRESHOLD, Bounds, bounds, compare_pow3

# Empirical fit of the NeurIPS version, ln(d_opt) = a + b·L, on depths 6 to 48 of the authors'
# setup (small vocabulary, English web text). An observation, never theory. Our recollection of
# the fitted line; it reproduces the paper's 1T -> width ~30K and "GPT-3 175B is too deep" claims.
EMPIRICAL_LN_WIDTH_INTERCEPT = 5.039
EMPIRICAL_LN_WIDTH_SLOPE = 0.0555
EMPIRICAL_FIT_DEPTHS = (6, 48)
EMPIRICAL_SOURCE = "empirical fit ln(d) = 5.039 + 0.0555·L of Levine et al. 2020 (NeurIPS version), depths 6-48"

TOKENS_PER_PARAM = 20  # Hoffmann et al. 2022, compute-optimal training
FLOPS_PER_PARAM_TOKEN = 6  # C ≈ 6·N·D


def lambert_w(z: float) -> float:
    """Principal branch W0(z) for z >= 0, to double precision (Newton on w + ln w = ln z, or Halley)."""
    if not z >= 0 or math.isinf(z):
        raise ValueError(f"lambert_w needs a finite z >= 0, got {z!r}")
    if z == 0:
        return 0.0
    if z > math.e:  # log form: no exp(w), so no overflow however large z is
        log_z = math.log(z)
        w = log_z - math.log(log_z)
        for _ in range(50):
            step = (w + math.log(w) - log_z) / (1 + 1 / w)
            w -= step
            if abs(step) <= 4e-16 * w:
                break
        return w
    w = math.log1p(z)
    for _ in range(50):  # Halley on w·e^w = z
        ew = math.exp(w)
        f = w * ew - z
        step = f / (ew * (w + 1) - (w + 2) * f / (2 * w + 2))
        w -= step
        if abs(step) <= 4e-16 * max(w, 1e-300):
            break
    return w


def min_depth_exact(budget: float) -> float:
    """Real L* solving L = log3(sqrt(N/(12L))): L* = W(ln3·N/6)/(2·ln3)."""
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
    """The width spending the whole budget at this depth: sqrt(N/(12·L))."""
    return math.sqrt(budget / (12 * depth))


def empirical_optimum(budget: float) -> tuple[float, float]:
    """(depth, width) of the empirical rule: ln d = a + b·L with N = 12·L·d², so
    L = W(2b·N·e^(-2a)/12)/(2b)."""
    a, b = EMPIRICAL_LN_WIDTH_INTERCEPT, EMPIRICAL_LN_WIDTH_SLOPE
    depth = lambert_w(2 * b * budget * math.exp(-2 * a) / 12) / (2 * b)
    return depth, math.exp(a + b * depth)


def params_from_tokens(tokens: float) -> float:
    """Compute-optimal N for D training tokens: N = D/20 (Hoffmann et al. 2022)."""
    return tokens / TOKENS_PER_PARAM


def params_from_flops(flops: float) -> float:
    """Compute-optimal N for C FLOPs: C = 6·N·D and D = 20·N, so N = sqrt(C/120)."""
    return math.sqrt(flops / (FLOPS_PER_PARAM_TOKEN * TOKENS_PER_PARAM))


def aligned_width(width: float, align: int, depth: int | None = None) -> int:
    """Nearest multiple of ``align`` (plain rounding, at least 2, when the width is below ``align``).

    With ``depth``, never past the threshold: if rounding would make 3^depth < width, take the
    largest aligned width (or integer width) that keeps depth >= log3(width).
    """
    step = align if width >= align else 1
    rounded = max(2, int(width / step + 0.5) * step)
    if depth is not None and compare_pow3(depth, rounded) < 0:
        rounded = max(2, (3**depth // step) * step)
    return rounded


@dataclass(frozen=True)
class Candidate(Bounds):
    """A shape record for a budget: the Bounds fields plus the aspect ratio d/L."""

    aspect_ratio: float


@dataclass(frozen=True)
class Plan:
    """The plan record for one budget (field names are the JSON contract)."""

    params: int
    budget_source: str
    min_depth_exact: float
    min_depth: int
    width_exact: float
    width: int
    heads: int
    params_actual: int
    params_deviation: float
    regime: str
    empirical_depth: float
    empirical_width: float
    recommended_depth: int
    recommended_width: int
    recommended_heads: int
    candidates: tuple[Candidate, ...]
    notes: tuple[str, ...]


def candidate(depth: int, width: int, heads: int) -> Candidate:
    """The shape record of one candidate shape, with its aspect ratio."""
    record = bounds(depth, width, heads)
    return Candidate(**record.__dict__, aspect_ratio=width / depth)


def candidate_depths(lowest: int, empirical_depth: float, most: int = 12) -> list[int]:
    """Depths from the minimal depth to beyond the empirical optimum, on a 1-2-3-4-6-8-12 ladder."""
    top = max(math.ceil(1.25 * empirical_depth), 2 * lowest)
    ladder, scale = [], 1
    while scale <= top:
        ladder += [scale * k for k in (1, 1.5) if lowest < scale * k <= top and float(scale * k).is_integer()]
        scale *= 2
    depths = sorted({lowest, *map(int, ladder), max(lowest, round(empirical_depth))})
    if len(depths) > most:  # thin the middle, keep both ends and the empirical depth
        keep = {depths[0], depths[-1], max(lowest, round(empirical_depth))}
        step = len(depths) / (most - len(keep))
        keep |= {depths[int(i * step)] for i in range(most - len(keep))}
        depths = sorted(keep)
    return depths


def plan(budget: int, align: int = 64, head_dim: int = HEAD_DIM, budget_source: str = "params") -> Plan:
    """Minimal depth by the threshold rule, the width it implies, and candidate shapes."""
    depth = min_depth(budget)
    exact = width_for(budget, depth)
    width = aligned_width(exact, align, depth)
    heads = default_heads(width, head_dim)
    actual = params(depth, width)
    deviation = actual / budget - 1
    emp_depth, emp_width = empirical_optimum(budget)
    rec_depth = max(depth, round(emp_depth))  # the fit's optimum, never below the threshold rule
    rec_width = aligned_width(width_for(budget, rec_depth), align)
    candidates = tuple(
        candidate(L, w, default_heads(w, head_dim))
        for L in candidate_depths(depth, emp_depth)
        for w in [aligned_width(width_for(budget, L), align)]
    )
    return Plan(
        params=budget, budget_source=budget_source, min_depth_exact=min_depth_exact(budget), min_depth=depth,
        width_exact=exact, width=width, heads=heads, params_actual=actual, params_deviation=deviation,
        regime=bounds(depth, width, heads).regime, empirical_depth=emp_depth, empirical_width=emp_width,
        recommended_depth=rec_depth, recommended_width=rec_width, recommended_heads=default_heads(rec_width, head_dim),
        candidates=candidates, notes=advice(budget, depth, width, deviation, emp_depth, candidates, align),
    )


def advice(budget, depth, width, deviation, emp_depth, candidates, align) -> tuple[str, ...]:
    """Short notes drawn from the reference card's literature context."""
    notes = [f"threshold rule (Levine et al. 2020): depth {depth} is the smallest with 3^L >= width for this budget; "
             "below log3(width), adding depth pays off double-exponentially, above it depth and width trade evenly"]
    if abs(deviation) > 0.1:
        notes.append(f"rounding the width to a multiple of {align} moves the parameter count {deviation:+.0%} from the budget")
    in_band = [c.depth for c in candidates if 20 <= c.aspect_ratio <= 200]
    if in_band:
        notes.append(f"Kaplan et al. 2020: at fixed size, loss varies only a few percent for aspect ratios d/L of about 20-200 "
                     f"(here depths {', '.join(map(str, in_band))})")
    low, high = EMPIRICAL_FIT_DEPTHS
    if not low <= emp_depth <= high:
        notes.append(f"the empirical optimum (depth {emp_depth:.1f}) lies outside the fit's depths {low}-{high}: an extrapolation")
    notes.append(f"empirical optimum: {EMPIRICAL_SOURCE}; small vocabulary, English web text; not theory")
    if max(c.depth for c in candidates) >= 48 or emp_depth >= 48:
        notes.append("stacks of ~60 layers diverged without special initialization (Liu et al. 2020, ADMIN); "
                     "residual connections and MLPs counter rank collapse (Dong et al. 2021)")
    if any(c.regime == THRESHOLD for c in candidates):
        notes.append("a candidate sits exactly on d = 3^L, where neither theorem applies")
    return tuple(notes)
