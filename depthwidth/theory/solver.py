"""Width equivalence between a deep and a shallower self-attention network.

Corollary 1 (replicate) and Corollary 2 (surpass) of Levine et al. 2020, "Limits to Depth
Efficiencies of Self-Attention" (arXiv 2006.12467, Sec. 4), solved as inequalities between the
bounds of Theorems 1-2 and decided exactly at the integer boundary (docs/theory.md, "Exact widths").

At shallow depth Ls the candidate widths x split into two pieces:
- H < x < 3^Ls, Theorem 2: LB2 is convex on (H, 2H] and concave above 2H, UB2 concave
  throughout, so the bound rises, peaks and falls before 3^Ls; the first crossing is found by
  ternary search for the turning point and bisection on the rising side;
- x > 3^Ls, Theorem 1: the bound increases with x and inverts in closed form (x = 3^y -/+ H),
  carried as log10 when it is beyond 2^53 (y can be in the millions).
x = 3^Ls sits on the threshold, where no theorem bounds anything, so it is never an answer.

Every comparison is decided in double precision when the two sides differ by far more than its
rounding error, and otherwise with ``decimal`` at 50 digits and more, and, for a tie, exactly:
all tie-capable bounds are rational combinations of log3 of integers (UB2 carries log3 of
sqrt(2·sqrt(2e)), which no such combination equals, e being transcendental), and such a
combination is zero exactly when a product of integer powers is 1, checked over a coprime basis.
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Callable

from .exact import (Form, decimal_value, exact_sign, make_form, form_lower_efficient, form_lower_inefficient, form_upper_efficient,
                    form_upper_inefficient)
from .separation import (
    CONSISTENT,
    EFFICIENT,
    INEFFICIENT,
    LN3,
    THRESHOLD,
    Bounds,
    bounds,
    log3_sep_lower_efficient,
    log3_sep_lower_inefficient,
    log3_sep_upper_efficient,
    log3_sep_upper_inefficient,
    regime,
)
from ..core.frozen import frozen

LOG10_3 = math.log10(3.0)
LOG10_2 = math.log10(2.0)
EXACT_LIMIT = 2**53  # widths below this come back as exact integers; above it as log10 only
SEARCH_CAP = 2**100  # Theorem-2 widths beyond this are never searched (answers lie far below)
COROLLARY_1 = "Corollary 1"
COROLLARY_2 = "Corollary 2"
FROM_BOUNDS = "from the bounds"


@frozen
class Width:
    """A solved width: ``width`` is the exact integer when it is below 2^53, ``log10_width`` is
    given whenever a width exists, ``theorem`` is the one valid at the answer, ``basis`` says
    whether the corollary's own condition holds ("Corollary 1" / "Corollary 2") or the width only
    follows from the bounds ("from the bounds"), ``notes`` say why something is missing."""

    width: int | None
    log10_width: float | None
    theorem: int | None
    basis: str | None = None
    notes: tuple[str, ...] = ()


def _nothing(note: str, basis: str | None = None) -> Width:
    return Width(None, None, None, basis, (note,))


# ---- the bound of the shallow network at width x --------------------------------------------

def _size_efficient(depth: int, x: float, heads: int) -> float:
    return 3.0**depth * (math.log(x + heads) / LN3 + depth + 3)


def _size_inefficient(depth: int, x: float, heads: int) -> float:
    return x * (2 * depth + 2 * math.log(x) / LN3 + 6) + depth * (heads + 4)


@frozen
class _Side:
    """Which bound of the shallow network is compared with the deep target, and how."""

    efficient: Callable  # float formula, Theorem 1 (increasing in x)
    inefficient: Callable  # float formula, Theorem 2
    efficient_form: Callable
    inefficient_form: Callable
    convex_below_2h: bool  # LB2 is convex on (H, 2H]; UB2 is concave throughout
    strict: bool  # surpass needs bound > target, replicate bound >= target


_REPLICATE = _Side(log3_sep_upper_efficient, log3_sep_upper_inefficient, form_upper_efficient, form_upper_inefficient,
                   convex_below_2h=False, strict=False)
_SURPASS = _Side(log3_sep_lower_efficient, log3_sep_lower_inefficient, form_lower_efficient, form_lower_inefficient,
                 convex_below_2h=True, strict=True)


class _Problem:
    """The shallow side's bound at depth Ls, heads H, against one deep target, with exact decisions."""

    def __init__(self, side: _Side, depth: int, heads: int, reading: str, target: float, target_size: float, target_form: Form):
        self.side, self.depth, self.heads, self.reading = side, depth, heads, reading
        self.target, self.target_size, self.target_form = target, target_size, target_form

    def value(self, theorem: int, x: int) -> float:
        if theorem == 1:
            return self.side.efficient(self.depth, float(x), self.heads)
        return self.side.inefficient(self.depth, float(x), self.heads, reading=self.reading) if self.side is _REPLICATE \
            else self.side.inefficient(self.depth, float(x), self.heads)

    def size(self, theorem: int, x: int) -> float:
        return (_size_efficient if theorem == 1 else _size_inefficient)(self.depth, float(x), self.heads)

    def form(self, theorem: int, x: int) -> Form:
        if theorem == 1:
            return self.side.efficient_form(self.depth, x, self.heads)
        if self.side is _REPLICATE:
            return self.side.inefficient_form(self.depth, x, self.heads, self.reading)
        return self.side.inefficient_form(self.depth, x, self.heads)

    def holds(self, theorem: int, x: int) -> bool:
        """bound(x) >= target (replicate) or > target (surpass), decided exactly."""
        sign = exact_sign(self.value(theorem, x) - self.target, self.size(theorem, x) + self.target_size,
                          lambda: self.form(theorem, x) - self.target_form)
        return sign > 0 or (sign == 0 and not self.side.strict)

    def compare(self, theorem: int, a: int, b: int) -> int:
        """sign(bound(a) - bound(b)), exactly."""
        return exact_sign(self.value(theorem, a) - self.value(theorem, b), self.size(theorem, a) + self.size(theorem, b),
                          lambda: self.form(theorem, a) - self.form(theorem, b))


def _turning_point(problem: _Problem, lo: int, hi: int, highest: bool, exact: bool = False) -> int:
    """Integer argmax (argmin) of the concave (convex) Theorem-2 bound on [lo, hi], by ternary search:
    comparing doubles (each wrong step near the turning point costs at most its rounding error), or
    comparing exactly when the turning point's own value decides the answer."""
    sign = 1 if highest else -1

    def compare(a: int, b: int) -> int:
        if exact:
            return problem.compare(2, a, b)
        fa, fb = problem.value(2, a), problem.value(2, b)
        return (fa > fb) - (fa < fb)

    while hi - lo > 2:
        third = (hi - lo) // 3
        left, right = lo + third, hi - third
        if sign * compare(left, right) < 0:
            lo = left + 1
        else:
            hi = right
    best = lo
    for x in range(lo + 1, hi + 1):
        if sign * compare(x, best) > 0:
            best = x
    return best


def _near_target(problem: _Problem, x: int) -> bool:
    """Whether bound(x) is within 2^-30 of the terms' size from the target: far more than the
    rounding a float ternary search can lose (about 2^-52 per step), so outside it that search's
    turning point answers the same as the exact one."""
    return abs(problem.value(2, x) - problem.target) <= 2.0**-30 * (problem.size(2, x) + problem.target_size)


def _first_holding(problem: _Problem, theorem: int, lo: int, hi: int) -> int:
    """Bisection for the smallest x in (lo, hi] that holds, given lo fails and hi holds on a rising stretch."""
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if problem.holds(theorem, mid):
            hi = mid
        else:
            lo = mid
    return hi


def _theorem2_first(problem: _Problem, lo: int, hi: int) -> int | None:
    """Smallest integer x in [lo, hi] that holds, for a Theorem-2 bound (convex then concave, or concave)."""
    split = min(hi, 2 * problem.heads) if problem.side.convex_below_2h else lo - 1
    if lo <= split:  # convex part: falls then rises
        if problem.holds(2, lo):
            return lo
        if problem.holds(2, split):
            bottom = _turning_point(problem, lo, split, highest=False)
            if problem.holds(2, bottom):  # only near a tie: find the true bottom exactly
                bottom = _turning_point(problem, lo, split, highest=False, exact=True)
            return _first_holding(problem, 2, bottom, split)
    lo = max(lo, split + 1)
    if lo <= hi:  # concave part: rises then falls
        if problem.holds(2, lo):
            return lo
        top = _turning_point(problem, lo, hi, highest=True)
        if _near_target(problem, top):  # the peak's value decides: find the true peak exactly
            top = _turning_point(problem, lo, hi, highest=True, exact=True)
        if problem.holds(2, top):
            return _first_holding(problem, 2, lo, top)
    return None


def _exact_or_log(x: int, theorem: int, basis: str) -> Width:
    if x < EXACT_LIMIT:
        return Width(x, math.log10(x), theorem, basis)
    return Width(None, math.log10(x), theorem, basis,
                 (f"the width is at least 2^53 = {EXACT_LIMIT:,}: given as log10 only (integers beyond it are not exact in JSON readers)",))


def _log3_needed(problem: _Problem, digits: int = 50):
    """Theorem 1 inverted, in decimal: the y with bound(x) = target at log3(x -/+ H) = y, and the offset.

    Replicate: ((3^Ls - 1)/2)·log3(x + H) >= T  <=>  x >= 3^y - H,  y = 2T/(3^Ls - 1).
    Surpass: 3^(Ls-2)·(log3((x - H)/2) + 2 - Ls) > U  <=>  x > 2·3^y + H,  y = U/3^(Ls-2) + Ls - 2.
    """
    from decimal import Context, Decimal

    ctx = Context(prec=digits)
    target, _ = decimal_value(problem.target_form, digits)
    Ls = problem.depth
    if problem.side is _REPLICATE:
        return ctx.divide(ctx.multiply(Decimal(2), target), Decimal(3**Ls - 1)), ctx
    scale = Fraction(3) ** (2 - Ls)
    return ctx.add(ctx.divide(ctx.multiply(target, Decimal(scale.numerator)), Decimal(scale.denominator)), Decimal(Ls - 2)), ctx


def _theorem1_first(problem: _Problem, first: int, basis: str) -> Width:
    """Smallest x >= first holding on the increasing Theorem-1 piece: closed form, then exact steps.

    The closed form comes from doubles when the width is below 10^12 (a few widths off at most)
    and from decimal above; the steps that follow decide each neighbour exactly either way."""
    from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal

    replicate, Ls = problem.side is _REPLICATE, problem.depth
    y = 2.0 * problem.target / (3**Ls - 1) if replicate else problem.target * 3.0 ** (2 - Ls) + Ls - 2
    log10_guess = y * LOG10_3 + (0.0 if replicate else LOG10_2)
    if log10_guess > max(17.0, math.log10(first) + 1):  # far beyond 2^53 (~10^15.95): the log10 is all we give
        return Width(None, log10_guess, 1, basis,
                     (f"the width is about 10^{log10_guess:.6g}, beyond 2^53 = {EXACT_LIMIT:,}: given as log10 only",))
    if log10_guess < 12:
        x = math.ceil(3.0**y - problem.heads) if replicate else math.floor(2.0 * 3.0**y + problem.heads) + 1
    else:
        y, ctx = _log3_needed(problem)
        power = ctx.exp(ctx.multiply(y, ctx.ln(Decimal(3))))
        if replicate:  # x >= 3^y - H
            x = int(ctx.subtract(power, Decimal(problem.heads)).to_integral_value(rounding=ROUND_CEILING))
        else:  # x > 2·3^y + H
            x = int(ctx.add(ctx.multiply(Decimal(2), power), Decimal(problem.heads)).to_integral_value(rounding=ROUND_FLOOR)) + 1
    x = max(first, x)
    while x - 1 >= first and problem.holds(1, x - 1):
        x -= 1
    while not problem.holds(1, x):
        x += 1
    return _exact_or_log(x, 1, basis)


def _solve(side: _Side, target_form: Form, target: float, target_size: float, depth: int, heads: int,
           reading: str, basis: str) -> Width:
    """Smallest width x at depth Ls with the side's bound at (Ls, x, H) reaching the target."""
    problem = _Problem(side, depth, heads, reading, target, target_size, target_form)
    threshold_width = 3**depth
    lo, hi = heads + 1, min(threshold_width - 1, SEARCH_CAP)
    if lo <= hi:  # Theorem-2 piece: H < x < 3^Ls
        x = _theorem2_first(problem, lo, hi)
        if x is not None:
            return _exact_or_log(x, 2, basis)
        if threshold_width - 1 > SEARCH_CAP:
            return _nothing(f"no width up to 2^100 reaches the target at depth {depth}; wider widths were not searched", basis)
    return _theorem1_first(problem, max(threshold_width, heads) + 1, basis)


def _deep_target(deep: Bounds, lower: bool) -> tuple[float, float, Form]:
    """The deep network's bound (float, float size, exact form), with the lower bound clamped at 0."""
    L, d, H = deep.depth, deep.width, deep.heads
    if lower:
        if deep.lower_vacuous:
            return 0.0, 0.0, make_form(0, {})
        if deep.theorem == 1:
            return deep.log3_sep_lower, _size_efficient(L, d, H), form_lower_efficient(L, d, H)
        return deep.log3_sep_lower, _size_inefficient(L, d, H), form_lower_inefficient(L, d, H)
    if deep.theorem == 1:
        return deep.log3_sep_upper, _size_efficient(L, d, H), form_upper_efficient(L, d, H)
    return deep.log3_sep_upper, _size_inefficient(L, d, H), form_upper_inefficient(L, d, H, deep.c2_reading)


def replicate_width(deep_depth: int, deep_width: int, deep_heads: int, shallow_depth: int, shallow_heads: int | None = None,
                    reading: str = CONSISTENT) -> Width:
    """Corollary 1: the smallest width at depth Ls whose upper bound reaches the deep lower bound.

    Below this width the shallower network provably cannot realize the deep network's function.
    The corollary is stated for a deep network with d > 3^L; elsewhere the width follows from the
    same inequality between the bounds and ``basis`` says "from the bounds".
    """
    deep = bounds(deep_depth, deep_width, deep_heads, reading)
    heads = deep_heads if shallow_heads is None else shallow_heads
    basis = COROLLARY_1 if deep.regime == EFFICIENT else FROM_BOUNDS
    if deep.regime == THRESHOLD:
        return _nothing(f"the deep network sits on the threshold d = 3^{deep.depth}: no lower bound to replicate", basis)
    answer, notes = _solved(deep, _REPLICATE, shallow_depth, heads, basis,
                            f"Corollary 1 is stated for a deep network with d > 3^L; {deep.depth}x{deep.width} is not one, "
                            "so this width follows from the bounds (UB of the shallow >= LB of the deep), not from the corollary")
    if deep.lower_vacuous:
        notes += ("the deep network's lower bound is vacuous: no width is provably too small",)
    return Width(answer.width, answer.log10_width, answer.theorem, basis, notes)


def _solved(deep, kind, shallow_depth: int, heads: int, basis: str, off_corollary: str):
    """The width a corollary solves for (``kind``: _REPLICATE reaches the deep lower bound, _SURPASS
    exceeds its upper bound) and its notes, with ``off_corollary`` when it follows from the bounds."""
    target, size, target_form = _deep_target(deep, lower=kind is _REPLICATE)
    answer = _solve(kind, target_form, target, size, int(shallow_depth), int(heads), deep.c2_reading, basis)
    return answer, answer.notes + ((off_corollary,) if basis == FROM_BOUNDS else ())


def surpass_width(deep_depth: int, deep_width: int, deep_heads: int, shallow_depth: int, shallow_heads: int | None = None,
                  reading: str = CONSISTENT) -> Width:
    """Corollary 2, numerically: the smallest width at depth Ls whose lower bound exceeds the deep upper bound.

    The corollary is stated for a deep network above the threshold (L > log3 d); elsewhere the
    width follows from the same inequality between the bounds and ``basis`` says "from the bounds".
    """
    deep = bounds(deep_depth, deep_width, deep_heads, reading)
    heads = deep_heads if shallow_heads is None else shallow_heads
    basis = COROLLARY_2 if deep.regime == INEFFICIENT else FROM_BOUNDS
    if deep.log3_sep_upper is None:
        reason = (f"sits on the threshold d = 3^{deep.depth}" if deep.regime == THRESHOLD
                  else f"has no usable upper bound ({'; '.join(deep.notes)})")
        return _nothing(f"the deep network {reason}: nothing to surpass", basis)
    answer, notes = _solved(deep, _SURPASS, shallow_depth, heads, basis,
                            f"Corollary 2 is stated for a deep network with L > log3 d; {deep.depth}x{deep.width} is not one "
                            f"(log3 d = {deep.threshold_depth:.3f}), so this width follows from the bounds "
                            "(LB of the shallow > UB of the deep), not from the corollary")
    return Width(answer.width, answer.log10_width, answer.theorem, basis, notes)


def corollary2_beta1(deep_depth: int, deep_width: int) -> float:
    """beta1 = log3(d_deep)/L_deep of Corollary 2 (a surpassing depth is beta1·L + beta2).

    The corollary needs beta1 < 1 (L > log3 d); this is only the formula: see ``corollary2_applies``.
    """
    return math.log(deep_width) / LN3 / deep_depth


def corollary2_applies(deep_depth: int, deep_width: int) -> bool:
    """Corollary 2's condition L > log3 d (beta1 < 1), decided exactly as 3^L > d."""
    return regime(deep_depth, deep_width) == INEFFICIENT

