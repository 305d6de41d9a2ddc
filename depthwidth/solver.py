"""Width equivalence between a deep and a shallower self-attention network.

Corollary 1 (replicate) and Corollary 2 (surpass) of Levine et al. 2020, "Limits to Depth
Efficiencies of Self-Attention", solved numerically and exactly at the integer boundary.

At shallow depth Ls the candidate widths x split into two pieces:
- x < 3^Ls, Theorem 2: the bound is concave in x above 2H (and convex below), so it rises,
  peaks and falls before 3^Ls; the first crossing is found by ternary search for the turning
  point and bisection on the rising side;
- x > 3^Ls, Theorem 1: the bound is increasing in x and inverts in closed form,
  x = 3^y -/+ H, carried as log10 because y can be in the millions.
x = 3^Ls sits on the threshold, where no theorem bounds anything, so it is never an answer.
"""
from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from typing import Callable

from .shapes import Shape, params
from .theory import (
    LN3,
    LOG3_2,
    THRESHOLD,
    Bounds,
    bounds,
    compare_pow3,
    log3_sep_lower_efficient,
    log3_sep_lower_inefficient,
    log3_sep_upper_efficient,
    log3_sep_upper_inefficient,
)

LOG10_3 = math.log10(3.0)
EXACT_LIMIT = 2**53  # integers above this are not exact in JSON consumers or in float evaluation
SEARCH_CAP = 2**100  # Theorem-2 widths beyond this are never searched (answers lie far below)
CLOSED_FORM_ONLY = 15.5  # log10 widths above this come from the closed form alone, never as integers
# The inequality is decided only when its two sides differ by more than this many ulps of the target.
_MARGIN_ULPS = 64


@dataclass(frozen=True)
class Width:
    """A solved width: ``width`` is the exact integer when double precision decides it (and it is
    at most 2^53), ``log10_width`` is always given when a width exists, ``theorem`` is the one
    valid at the answer, ``notes`` say why something is missing."""

    width: int | None
    log10_width: float | None
    theorem: int | None
    notes: tuple[str, ...] = ()


def _nothing(note: str) -> Width:
    return Width(None, None, None, (note,))


def _theorem2_first(f: Callable[[float], float], holds: Callable[[float], bool], lo: int, hi: int, heads: int) -> int | None:
    """Smallest integer x in [lo, hi] with holds(f(x)), for a Theorem-2 bound f of the width:
    convex on (H, 2H], concave above 2H (both Theorem-2 bounds are; UB2 is concave throughout)."""
    split = min(hi, 2 * heads)
    if lo <= split:  # convex part: falls then rises
        if holds(f(lo)):
            return lo
        bottom = _turning_point(f, lo, split, highest=False)
        if holds(f(split)):
            return _first_rising(f, holds, bottom, split)
    lo = max(lo, split + 1)
    if lo <= hi:  # concave part: rises then falls
        if holds(f(lo)):
            return lo
        top = _turning_point(f, lo, hi, highest=True)
        if holds(f(top)):
            return _first_rising(f, holds, lo, top)
    return None


def _turning_point(f, lo: int, hi: int, highest: bool) -> int:
    """Integer argmax (argmin) of a concave (convex) f on [lo, hi], by ternary search."""
    sign = 1.0 if highest else -1.0
    while hi - lo > 2:
        third = (hi - lo) // 3
        left, right = lo + third, hi - third
        if sign * f(left) < sign * f(right):
            lo = left + 1
        else:
            hi = right
    return max(range(lo, hi + 1), key=lambda x: sign * f(x))


def _first_rising(f, holds, lo: int, hi: int) -> int:
    """Bisection for the smallest x in [lo, hi] with holds(f(x)), given holds(f(hi)).

    The answer always satisfies holds and its predecessor in [lo, hi] does not."""
    if holds(f(lo)):
        return lo
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if holds(f(mid)):
            hi = mid
        else:
            lo = mid
    return hi


@dataclass(frozen=True)
class _Side:
    """Which bound of the shallow network is compared with the deep target, and how."""

    theorem1: Callable  # the bound's Theorem-1 formula (increasing in x)
    theorem2: Callable  # the bound's Theorem-2 formula (convex then concave in x)
    log3_needed: Callable[[float, int], float]  # Theorem-1 inverse: log3(x + head_sign·H) must reach this
    head_sign: int
    strict: bool  # surpass needs bound > target, replicate bound >= target


def _solve(side: _Side, target: float, depth: int, heads: int) -> Width:
    """Smallest width x at depth Ls with the side's bound at (Ls, x, H) reaching the target."""
    holds = (lambda v: v > target) if side.strict else (lambda v: v >= target)
    threshold_width = 3**depth

    # Theorem-2 piece: H < x < 3^Ls.
    lo, hi = heads + 1, min(threshold_width - 1, SEARCH_CAP)
    theorem2 = lambda x: side.theorem2(depth, float(x), heads)
    if lo <= hi:
        x = _theorem2_first(theorem2, holds, lo, hi, heads)
        if x is not None:
            return _as_width(x, 2, theorem2, target, previous_valid=x > lo)
        if threshold_width - 1 > SEARCH_CAP:
            return _nothing(f"no width up to 2^100 at depth {depth}; wider widths were not searched")

    # Theorem-1 piece: x > max(3^Ls, H), where the bound increases and inverts in closed form.
    first = max(threshold_width, heads) + 1
    log10_needed = _log10_of_power3_minus(side.log3_needed(target, depth), side.head_sign * heads)
    if log10_needed is not None and log10_needed > max(math.log10(first), CLOSED_FORM_ONLY):
        return Width(None, log10_needed, 1, ("too large to be an exact integer: given as log10",))
    theorem1 = lambda x: side.theorem1(depth, float(x), heads)
    x = first if log10_needed is None else max(first, math.ceil(10.0**log10_needed))
    while x - 1 >= first and holds(theorem1(x - 1)):
        x -= 1
    while not holds(theorem1(x)):
        x += 1
    return _as_width(x, 1, theorem1, target, previous_valid=x > first)


def _log10_of_power3_minus(log3_value: float, offset: int) -> float | None:
    """log10(3^log3_value - offset), None when that is not positive; safe for huge log3_value."""
    if log3_value * LOG10_3 > 300:
        return log3_value * LOG10_3  # offset < 10^15 is invisible next to 10^300
    value = 3.0**log3_value - offset
    return math.log10(value) if value > 0 else None


def _as_width(x: int, theorem: int, bound, target: float, previous_valid: bool) -> Width:
    """Report x exactly only when double precision decides both x and x - 1 with margin to spare."""
    margin = _MARGIN_ULPS * sys.float_info.epsilon * max(1.0, abs(target))
    decided = x <= EXACT_LIMIT and abs(bound(x) - target) > margin and not (previous_valid and abs(bound(x - 1) - target) <= margin)
    if decided:
        return Width(x, math.log10(x), theorem)
    return Width(None, math.log10(x), theorem, ("the bound changes by less than rounding error between neighbouring widths here: given as log10",))


def _replicate_log3_width(target: float, depth: int) -> float:
    """Corollary 1 closed form: ((3^Ls - 1)/2)·log3(x + H) >= LB  <=>  log3(x + H) >= 2·LB/(3^Ls - 1)."""
    return math.exp(math.log(2.0 * target) - math.log(3**depth - 1)) if target > 0 else 0.0


def _surpass_log3_width(target: float, depth: int) -> float:
    """Theorem 1 lower bound inverted: 3^(Ls-2)·(log3(x - H) + 2 - Ls - log3 2) > UB."""
    scaled = math.exp(math.log(target) - (depth - 2) * LN3) if target > 0 else 0.0
    return scaled + depth - 2 + LOG3_2


# Corollary 1 compares the shallow upper bound, ((3^Ls-1)/2)·log3(x + H), with the deep lower bound;
# Corollary 2 the shallow lower bound, 3^(Ls-2)·(log3(x - H) + ...), with the deep upper bound.
_REPLICATE = _Side(log3_sep_upper_efficient, log3_sep_upper_inefficient, _replicate_log3_width, +1, strict=False)
_SURPASS = _Side(log3_sep_lower_efficient, log3_sep_lower_inefficient, _surpass_log3_width, -1, strict=True)


def replicate_width(deep_depth: int, deep_width: int, deep_heads: int, shallow_depth: int, shallow_heads: int | None = None) -> Width:
    """Corollary 1: the smallest width at depth Ls whose upper bound reaches the deep lower bound.

    Below this width the shallower network provably cannot realize the deep network's function.
    """
    deep = bounds(deep_depth, deep_width, deep_heads)
    heads = deep_heads if shallow_heads is None else shallow_heads
    if deep.regime == THRESHOLD:
        return _nothing("the deep network sits on the threshold d = 3^L: no lower bound to replicate")
    answer = _solve(_REPLICATE, deep.log3_sep_lower, shallow_depth, heads)
    if deep.lower_vacuous:
        return Width(answer.width, answer.log10_width, answer.theorem,
                     answer.notes + ("the deep network's lower bound is vacuous: no width is provably too small",))
    return answer


def surpass_width(deep_depth: int, deep_width: int, deep_heads: int, shallow_depth: int, shallow_heads: int | None = None) -> Width:
    """Corollary 2, numerically: the smallest width at depth Ls whose lower bound exceeds the deep upper bound."""
    deep = bounds(deep_depth, deep_width, deep_heads)
    heads = deep_heads if shallow_heads is None else shallow_heads
    if deep.log3_sep_upper is None:
        reason = "sits on the threshold" if deep.regime == THRESHOLD else "has no usable upper bound (see its notes)"
        return _nothing(f"the deep network {reason}: nothing to surpass")
    return _solve(_SURPASS, deep.log3_sep_upper, shallow_depth, heads)


def corollary2_beta1(deep_depth: int, deep_width: int) -> float:
    """Corollary 2's depth factor beta1 = log3(d_deep)/L_deep (a surpassing depth is beta1·L + beta2)."""
    return math.log(deep_width) / LN3 / deep_depth


@dataclass(frozen=True)
class Equivalence:
    """The equiv record: widths a network of ``shallow_depth`` layers needs against the deep one."""

    deep: str
    shallow_depth: int
    shallow_heads: int
    replicate_width: int | None
    replicate_log10_width: float | None
    replicate_params: int | None
    replicate_log10_params: float | None
    surpass_width: int | None
    surpass_log10_width: float | None
    surpass_params: int | None
    surpass_log10_params: float | None
    beta1: float
    notes: tuple[str, ...]


def _log10_params(depth: int, width: Width) -> float | None:
    """log10 of 12·L·x² for a solved width x."""
    return None if width.log10_width is None else math.log10(12 * depth) + 2 * width.log10_width


def _exact_params(depth: int, width: Width) -> int | None:
    """12·L·x² when the width is an exact integer."""
    return None if width.width is None else params(depth, width.width)


def equivalence(deep: Shape, shallow_depth: int, shallow_heads: int | None = None) -> Equivalence:
    """Corollaries 1 and 2 at one shallow depth, with the parameter counts the widths imply."""
    heads = deep.heads if shallow_heads is None else shallow_heads
    replicate = replicate_width(deep.depth, deep.width, deep.heads, shallow_depth, heads)
    surpass = surpass_width(deep.depth, deep.width, deep.heads, shallow_depth, heads)
    notes = tuple(f"replicate: {n}" for n in replicate.notes) + tuple(f"surpass: {n}" for n in surpass.notes)
    return Equivalence(
        deep=str(deep), shallow_depth=shallow_depth, shallow_heads=heads,
        replicate_width=replicate.width, replicate_log10_width=replicate.log10_width,
        replicate_params=_exact_params(shallow_depth, replicate), replicate_log10_params=_log10_params(shallow_depth, replicate),
        surpass_width=surpass.width, surpass_log10_width=surpass.log10_width,
        surpass_params=_exact_params(shallow_depth, surpass), surpass_log10_params=_log10_params(shallow_depth, surpass),
        beta1=corollary2_beta1(deep.depth, deep.width), notes=notes,
    )


DEEP_WINS = "deep-more-expressive"
SHALLOW_WINS = "shallow-more-expressive"
NO_SEPARATION = "no-provable-separation"


@dataclass(frozen=True)
class Comparison:
    """The compare object: both shape records, the provable verdict, and the equivalence widths."""

    deep: Bounds
    shallow: Bounds
    params_ratio: float
    verdict: str
    log3_gap: float | None
    replicate_width: int | None
    replicate_log10_width: float | None
    surpass_width: int | None
    surpass_log10_width: float | None
    deep_respects_threshold: bool
    shallow_respects_threshold: bool
    deep_empirical_depth: float
    shallow_empirical_depth: float
    notes: tuple[str, ...]


def _margin(lower: float | None, upper: float | None) -> float | None:
    """How far one network's lower bound clears the other's upper bound (None when either is missing)."""
    return None if lower is None or upper is None else lower - upper


def compare_shapes(deep: Shape, shallow: Shape) -> Comparison:
    """Provable separation between two shapes: a lower bound above the other's upper bound.

    ``log3_gap`` is that margin for the verdict given; with no provable separation it is the
    closer (largest, negative) of the two margins, i.e. how far the bounds are from proving one.
    """
    from .planner import empirical_optimum

    deep_bounds = bounds(deep.depth, deep.width, deep.heads)
    shallow_bounds = bounds(shallow.depth, shallow.width, shallow.heads)
    deep_margin = _margin(deep_bounds.log3_sep_lower, shallow_bounds.log3_sep_upper)
    shallow_margin = _margin(shallow_bounds.log3_sep_lower, deep_bounds.log3_sep_upper)
    if deep_margin is not None and deep_margin > 0:
        verdict, gap = DEEP_WINS, deep_margin
    elif shallow_margin is not None and shallow_margin > 0:
        verdict, gap = SHALLOW_WINS, shallow_margin
    else:
        known = [m for m in (deep_margin, shallow_margin) if m is not None]
        verdict, gap = NO_SEPARATION, max(known) if known else None
    replicate = replicate_width(deep.depth, deep.width, deep.heads, shallow.depth, shallow.heads)
    surpass = surpass_width(deep.depth, deep.width, deep.heads, shallow.depth, shallow.heads)
    notes = []
    if shallow.depth >= deep.depth:
        notes.append("the 'shallow' shape is not shallower than the 'deep' one: the widths below answer the same question at its depth")
    for name, record in (("deep", deep_bounds), ("shallow", shallow_bounds)):
        side = "respects" if compare_pow3(record.depth, record.width) >= 0 else "sits below"
        notes.append(f"{name} {record.depth}x{record.width}: depth {record.depth} {side} the threshold log3({record.width}) = {record.threshold_depth:.3f}")
    notes += [f"replicate: {n}" for n in replicate.notes] + [f"surpass: {n}" for n in surpass.notes]
    return Comparison(
        deep=deep_bounds, shallow=shallow_bounds, params_ratio=deep_bounds.params / shallow_bounds.params,
        verdict=verdict, log3_gap=gap,
        replicate_width=replicate.width, replicate_log10_width=replicate.log10_width,
        surpass_width=surpass.width, surpass_log10_width=surpass.log10_width,
        deep_respects_threshold=compare_pow3(deep.depth, deep.width) >= 0,
        shallow_respects_threshold=compare_pow3(shallow.depth, shallow.width) >= 0,
        deep_empirical_depth=empirical_optimum(deep_bounds.params)[0],
        shallow_empirical_depth=empirical_optimum(shallow_bounds.params)[0],
        notes=tuple(notes),
    )
