"""Exact signs of differences of the bounds (docs/theory.md, "Exact widths").

Every tie-capable bound of Levine et al. 2020, Theorems 1-2, is a rational combination of log3
of integers, plus, for Theorem 2's upper bound, a multiple of log3 K with K = sqrt(2·sqrt(2e)),
which no such combination equals (e is transcendental). Such a combination is zero exactly when
a product of integer powers is 1, checked over a coprime basis; otherwise its sign is decided
in double precision when that clears the rounding error by far, else with ``decimal`` at 50
digits and more.
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Callable

from .separation import CONSISTENT, check_reading
from ..core.frozen import frozen

_FLOAT_REL = 2.0**-40  # a double decides a comparison when it clears this fraction of the terms' size
_PRECISIONS = (50, 100, 200, 400, 800, 1600, 3200)  # decimal digits, tried in turn near a tie


# ---- exact forms: const + sum(coef·log3(base)) + k·log3(K), K = sqrt(2·sqrt(2e)) ---------------

@frozen
class Form:
    const: Fraction
    terms: tuple[tuple[int, Fraction], ...]  # (integer base >= 2, rational coefficient)
    k: Fraction = Fraction(0)  # coefficient of log3(K): only Theorem 2's upper bound has one

    def __sub__(self, other: "Form") -> "Form":
        merged: dict[int, Fraction] = dict(self.terms)
        for base, coef in other.terms:
            merged[base] = merged.get(base, Fraction(0)) - coef
        return Form(self.const - other.const, tuple((b, c) for b, c in merged.items() if c), self.k - other.k)


def make_form(const, terms: dict, k=0) -> Form:
    merged: dict[int, Fraction] = {}
    for base, coef in terms.items():
        if base != 1 and coef:
            merged[int(base)] = merged.get(int(base), Fraction(0)) + Fraction(coef)
    return Form(Fraction(const), tuple((b, c) for b, c in merged.items() if c), Fraction(k))


def form_upper_efficient(depth: int, width: int, heads: int) -> Form:
    """Theorem 1 upper bound ((3^L - 1)/2)·log3(d + H), exactly."""
    return make_form(0, {width + heads: Fraction(3**depth - 1, 2)})


def form_lower_efficient(depth: int, width: int, heads: int) -> Form:
    """Theorem 1 lower bound 3^(L-2)·(log3(d - H) - log3 2 + 2 - L), exactly."""
    scale = Fraction(3) ** (depth - 2)
    return make_form(scale * (2 - depth), {width - heads: scale, 2: -scale})


def form_lower_inefficient(depth: int, width: int, heads: int) -> Form:
    """Theorem 2 lower bound d·L/2 - L·(H/2 + 1) - d - (d/2)·(log3(d - H) - log3 2), exactly."""
    return make_form(Fraction(width * depth, 2) - Fraction(depth * (heads + 2), 2) - width,
                 {width - heads: Fraction(-width, 2), 2: Fraction(width, 2)})


def form_upper_inefficient(depth: int, width: int, heads: int, reading: str = CONSISTENT) -> Form:
    """Theorem 2 upper bound 2dL + L - 2d·log3(d/(2K)) + log3 d (consistent; literal: d·K/2), exactly."""
    sign = 1 if check_reading(reading) == CONSISTENT else -1
    return make_form(2 * width * depth + depth, {width: 1 - 2 * width, 2: 2 * width}, sign * 2 * width)


def decimal_value(form: Form, digits: int):
    """(value, size): the form at ``digits`` decimal digits, and the sum of its terms' magnitudes."""
    from decimal import Context, Decimal

    ctx = Context(prec=digits)
    ln3 = ctx.ln(Decimal(3))
    total = ctx.divide(Decimal(form.const.numerator), Decimal(form.const.denominator))
    size = abs(total)
    parts = [(coef, ctx.ln(Decimal(base))) for base, coef in form.terms]
    if form.k:  # log3 K = (3·ln 2 + 1) / (4·ln 3)
        parts.append((form.k, ctx.divide(ctx.add(ctx.multiply(Decimal(3), ctx.ln(Decimal(2))), Decimal(1)), Decimal(4))))
    for coef, log in parts:
        term = ctx.divide(ctx.multiply(ctx.divide(Decimal(coef.numerator), Decimal(coef.denominator)), log), ln3)
        total = ctx.add(total, term)
        size += abs(term)
    return total, size


def _coprime_basis(numbers) -> list[int]:
    """Pairwise coprime integers > 1 of which every given number is a product of powers."""
    basis: list[int] = []
    pending = [n for n in numbers if n > 1]
    while pending:
        n = pending.pop()
        for i, b in enumerate(basis):
            g = math.gcd(n, b)
            if g > 1:
                basis.pop(i)
                pending += [m for m in (g, b // g, n // g) if m > 1]
                break
        else:
            basis.append(n)
    return basis


def is_zero(form: Form) -> bool:
    """Whether the form is exactly 0: 3^const · prod(base^coef) == 1 (and no log3 K term)."""
    if form.k:
        return False
    exponents = dict(form.terms)
    exponents[3] = exponents.get(3, Fraction(0)) + form.const
    exponents = {b: c for b, c in exponents.items() if c}
    if not exponents:
        return True
    scale = math.lcm(*(c.denominator for c in exponents.values()))
    totals: dict[int, int] = {}
    basis = _coprime_basis(exponents)
    for base, coef in exponents.items():
        power = int(coef * scale)
        for prime in basis:
            count = 0
            while base % prime == 0:
                base //= prime
                count += 1
            if count:
                totals[prime] = totals.get(prime, 0) + count * power
    return not any(totals.values())


def exact_sign(float_difference: float, float_size: float, form: Callable[[], Form]) -> int:
    """sign(a - b): by the double when it clears its rounding error by far, else in decimal, else exactly."""
    if abs(float_difference) > _FLOAT_REL * float_size:
        return 1 if float_difference > 0 else -1
    difference = form()
    for digits in _PRECISIONS:
        value, size = decimal_value(difference, digits)
        if abs(value) > size.scaleb(8 - digits):
            return 1 if value > 0 else -1
        if digits == _PRECISIONS[0] and is_zero(difference):
            return 0
    return 0  # not reached for these bounds: a nonzero difference below 10^-3190 of its terms
