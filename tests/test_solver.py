"""Corollaries 1 and 2: replicate and surpass widths, exact at the integer boundary.

Expected values come from integer arithmetic written here (where both bounds are Theorem 1 the
inequality is a comparison of integer powers) or from a 80-digit ``decimal`` reference of the
card's formulas, written independently of the solver.
"""
import math
import random
from decimal import Decimal, localcontext

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from depthwidth.theory.shapes import parse_shape
from depthwidth.theory.comparison import DEEP_WINS, NO_SEPARATION, compare_shapes, equivalence
from depthwidth.theory.solver import (
    COROLLARY_1, COROLLARY_2, EXACT_LIMIT, FROM_BOUNDS, corollary2_beta1, replicate_width, surpass_width,
)
from depthwidth.theory.separation import (
    CONSISTENT, LITERAL, THRESHOLD, bounds, log3_sep_upper_efficient, log3_sep_upper_inefficient, regime,
)


def test_worked_example_depth_3_is_76137():
    """LB(6, 1000, 16) = 81·(log3(984/2) - 4); UB(3, x, 16) = 13·log3(x + 16): the replicate width is the
    smallest x with (x + 16)^13 · 3^324 >= 492^81, an integer comparison (the paper quotes ~2·10^5)."""
    answer = replicate_width(6, 1000, 16, 3)
    x = answer.width
    assert (x + 16) ** 13 * 3**324 >= 492**81 > (x + 15) ** 13 * 3**324
    assert x == 76137 and answer.theorem == 1 and answer.basis == COROLLARY_1


def test_worked_example_depth_2_is_exact_below_2_to_the_53():
    """At depth 2: 4·log3(x + 16) >= 81·log3(492) - 324, i.e. (x + 16)^4 · 3^324 >= 492^81 (paper: ~2·10^17)."""
    answer = replicate_width(6, 1000, 16, 2)
    x = answer.width
    assert x is not None and x < EXACT_LIMIT
    assert (x + 16) ** 4 * 3**324 >= 492**81 > (x + 15) ** 4 * 3**324
    assert x == 7336209056879055 and answer.log10_width == pytest.approx(math.log10(x))


def test_5x5000x10_at_depth_2_is_exact():
    """LB(5, 5000, 10) = 27·(log3(4990/2) - 3); UB(2, x, 10) = 4·log3(x + 10): (x + 10)^4 · 3^81 >= 2495^27."""
    x = replicate_width(5, 5000, 10, 2).width
    assert (x + 10) ** 4 * 3**81 >= 2495**27 > (x + 9) ** 4 * 3**81
    assert x == 18557557041854


def test_tie_at_depth_1_is_exact():
    """2x20x2: LB = log3(18) - log3(2) = 2 exactly; UB(1, x, 2) = log3(x + 2) >= 2 first at x = 7 (a tie)."""
    answer = replicate_width(2, 20, 2, 1)
    assert answer.width == 7 and answer.theorem == 1


def test_surpass_tie_is_excluded_exactly():
    """UB(2, 10, 2) = 4·log3(12); LB(1, x, 2) = (log3((x - 2)/2) + 1)/3 > it  <=>  3(x - 2)/2 > 12^12:
    at x = 2·12^12/3 + 2 the two sides are equal, so the answer is the next width."""
    answer = surpass_width(2, 10, 2, 1)
    assert answer.width == 2 * 12**12 // 3 + 3
    assert answer.basis == FROM_BOUNDS  # Corollary 2 is stated for L > log3 d; 2 < log3 10


def test_surpass_24x1024_at_depth_12_is_just_past_the_threshold():
    answer = surpass_width(24, 1024, 16, 12)
    assert answer.width == 3**12 + 1 == 531442 and answer.basis == COROLLARY_2


def test_closed_form_matches_card_formula():
    """Efficient regime: ds = 3^(2·LB/(3^Ls - 1)) - Hs."""
    lower = bounds(6, 1000, 16).log3_sep_lower
    closed = 3 ** (2 * lower / (3**3 - 1)) - 16
    assert replicate_width(6, 1000, 16, 3).width == math.ceil(closed)


# ---- an exact reference written here: the card's formulas at 80 digits ---------------------------

DIGITS = 80


def _constants_at_80_digits() -> tuple[Decimal, Decimal]:
    """ln 3 and Theorem 2's K = sqrt(2·sqrt(2e)), computed once (ref_bound computed them on every call)."""
    with localcontext() as ctx:
        ctx.prec = DIGITS
        return Decimal(3).ln(), (2 * (2 * Decimal(1).exp()).sqrt()).sqrt()


LN3_80, K_80 = _constants_at_80_digits()


def ref_bound(which: str, L: int, d: int, H: int, reading: str = CONSISTENT):
    """Theorem 1 or 2 (by 3^L against d) lower or upper bound on log3(sep), at 80 digits; None on the threshold."""
    with localcontext() as ctx:
        ctx.prec = DIGITS
        log3 = lambda v: Decimal(v).ln() / LN3_80  # noqa: E731
        if 3**L < d:
            if which == "lower":
                return Decimal(3) ** (L - 2) * (log3(d - H) + 2 - L - log3(2))
            return (Decimal(3) ** L - 1) / 2 * log3(d + H)
        if 3**L > d:
            if which == "lower":
                return Decimal(d) * L / 2 - L * (Decimal(H) / 2 + 1) - d * (1 + log3(Decimal(d - H) / 2) / 2)
            argument = Decimal(d) / (2 * K_80) if reading == CONSISTENT else Decimal(d) / 2 * K_80
            return 2 * Decimal(d) * L + L - 2 * d * log3(argument) + log3(d)
        return None


def ref_holds(which: str, Ls: int, x: int, H: int, target: Decimal, strict: bool, reading: str) -> bool | None:
    """Whether the shallow bound at width x reaches the target (None: no bound at x)."""
    if x <= H:
        return None
    value = ref_bound(which, Ls, x, H, reading)
    if value is None:
        return None
    difference = value - target
    size = abs(value) + abs(target) + 1
    if abs(difference) <= size * Decimal(10) ** (20 - DIGITS):  # a tie: equal to 60 digits
        return not strict
    return difference > 0


def check_answer(kind: str, L: int, d: int, H: int, Ls: int, reading: str) -> str:
    """The solver's answer holds, its predecessor does not, and nothing below 2^53 is left as a log."""
    solve = replicate_width if kind == "replicate" else surpass_width
    answer = solve(L, d, H, Ls, None, reading)
    if answer.log10_width is None:
        return "none"
    if answer.width is None:
        assert answer.log10_width > math.log10(EXACT_LIMIT) - 1e-9, (kind, L, d, H, Ls, answer)
        return "log"
    x = answer.width
    if kind == "replicate":
        which, strict = "upper", False
        target = max(ref_bound("lower", L, d, H, reading), Decimal(0))
    else:
        which, strict = "lower", True
        target = ref_bound("upper", L, d, H, reading)
    assert ref_holds(which, Ls, x, H, target, strict, reading) is True, (kind, L, d, H, Ls, reading, x)
    assert ref_holds(which, Ls, x - 1, H, target, strict, reading) in (False, None), (kind, L, d, H, Ls, reading, x)
    return "exact"


def random_case(rng: random.Random):
    L = rng.randint(2, 16)
    if rng.random() < 0.3:  # next to a power of three, where the theorems change
        k = rng.randint(1, 13)
        d = max(3, 3**k + rng.randint(-3, 3))
    else:
        d = int(10 ** rng.uniform(0.5, 7))
    d = max(d, 3)
    H = rng.choice([1, 2, max(1, d // 64), rng.randint(1, d - 1)])
    return L, d, H, rng.randint(1, L - 1), rng.choice([CONSISTENT, CONSISTENT, LITERAL])


@pytest.mark.slow
def test_thousands_of_random_answers_against_the_exact_reference():
    rng = random.Random(20201)
    outcomes = {"exact": 0, "log": 0, "none": 0}
    for _ in range(2500):
        L, d, H, Ls, reading = random_case(rng)
        for kind in ("replicate", "surpass"):
            outcomes[check_answer(kind, L, d, H, Ls, reading)] += 1
    assert outcomes["exact"] >= 2000, outcomes


def _upper(L, x, H, reading=CONSISTENT):
    """The shallow network's upper bound in double precision, None on the threshold."""
    if regime(L, x) == THRESHOLD:
        return None
    return log3_sep_upper_efficient(L, float(x), H) if 3**L < x else log3_sep_upper_inefficient(L, float(x), H, reading=reading)


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 9), st.integers(2, 300), st.integers(1, 8), st.sampled_from([CONSISTENT, LITERAL]))
def test_smallest_by_brute_force(Ls, d, H, reading):
    """Against a linear scan of every width up to 3^Ls + 200, across the regime boundary (in
    doubles: cases where some width sits within 1e-9 of the target are left to the exact test)."""
    L = Ls + 3
    assume(H < d)
    target = bounds(L, d, H, reading).log3_sep_lower
    assume(target is not None)
    answer = replicate_width(L, d, H, Ls, None, reading)
    values = [(x, _upper(Ls, x, H, reading)) for x in range(H + 1, 3**Ls + 200)]
    assume(all(abs(u - target) > 1e-9 * max(1.0, abs(target)) for _, u in values if u is not None))
    scan = next((x for x, u in values if u is not None and u >= target), None)
    if scan is not None:
        assert answer.width == scan


def test_answers_beyond_float_range_stay_finite():
    answer = replicate_width(40, 10**8, 10**8 // 64, 2)
    assert answer.width is None and math.isfinite(answer.log10_width) and answer.log10_width > 10**8
    assert any("2^53" in n for n in answer.notes)  # the true reason it is not an integer
    big = replicate_width(10**4, 10**12, 1, 1)
    assert math.isfinite(big.log10_width) and big.log10_width > 10**12


def test_no_target_means_no_width():
    literal = surpass_width(6, 704, 11, 3, reading=LITERAL)
    assert literal.width is None and "no usable upper bound" in literal.notes[0]  # literal UB2 < 0 there
    assert surpass_width(6, 704, 11, 3).log10_width is not None  # the consistent one has a target
    threshold = replicate_width(6, 729, 9, 3)
    assert threshold.log10_width is None and "threshold" in threshold.notes[0]
    assert "vacuous" in replicate_width(6, 704, 11, 3).notes[-1]


def test_corollary_labels_follow_the_deep_regime():
    """Corollary 1 needs d > 3^L of the deep network, Corollary 2 L > log3 d; elsewhere: from the bounds."""
    efficient, inefficient = (6, 1000, 16), (12, 768, 12)
    assert replicate_width(*efficient, 3).basis == COROLLARY_1
    assert surpass_width(*efficient, 3).basis == FROM_BOUNDS
    assert replicate_width(*inefficient, 6).basis == FROM_BOUNDS
    assert surpass_width(*inefficient, 6).basis == COROLLARY_2
    assert any("Corollary 1 is stated" in n for n in replicate_width(*inefficient, 6).notes)


def test_equivalence_record_and_beta1():
    record = equivalence(parse_shape("6x1000x16"), 3)
    assert (record.shallow_depth, record.shallow_heads, record.replicate_width) == (3, 16, 76137)
    assert record.replicate_params == 12 * 3 * 76137**2
    assert record.replicate_log10_params == pytest.approx(math.log10(12 * 3 * 76137**2))
    assert record.surpass_params is None and record.surpass_log10_params > 700
    assert (record.replicate_basis, record.surpass_basis, record.c2_reading) == (COROLLARY_1, FROM_BOUNDS, CONSISTENT)
    # 6 < log3(1000): Corollary 2 does not apply, so no beta1 (it would be log3(1000)/6 = 1.048 >= 1)
    assert record.beta1 is None and corollary2_beta1(6, 1000) == pytest.approx(math.log(1000, 3) / 6)
    assert any("beta1 = log3(1000)/6 = 1.0480 > 1" in n for n in record.notes)
    deep = equivalence(parse_shape("12x768"), 6)
    assert deep.beta1 == pytest.approx(math.log(768, 3) / 12) and deep.beta1 < 1
    assert equivalence(parse_shape("6x729x9"), 3).beta1 is None  # on the threshold beta1 = 1 exactly


def test_compare_issue_example():
    result = compare_shapes(parse_shape("12x768"), parse_shape("6x1086"))
    assert result.verdict == NO_SEPARATION
    assert result.shallow.heads == 17 and result.deep.heads == 12
    assert result.log3_gap == pytest.approx(1681.565375 - 2321.207608, abs=1e-5)
    assert result.deep_respects_threshold and not result.shallow_respects_threshold
    assert result.params_ratio == pytest.approx(12 * 768**2 / (6 * 1086**2))
    assert result.c2_reading == CONSISTENT and result.deep.c2_reading == CONSISTENT


def test_compare_no_false_verdict_for_a_tiny_deep_network():
    """10x4827x16 has 0.8% of 10x53600x16's parameters: the literal reading called it provably more
    expressive (its LB 2114.3 above the literal UB 1981.7); the consistent UB is far above."""
    deep, shallow = parse_shape("10x4827x16"), parse_shape("10x53600x16")
    consistent = compare_shapes(deep, shallow)
    assert consistent.verdict == NO_SEPARATION and consistent.log3_gap < 0
    literal = compare_shapes(deep, shallow, LITERAL)
    assert literal.verdict == DEEP_WINS and literal.log3_gap == pytest.approx(2114.3 - 1981.7, abs=0.1)
    assert literal.c2_reading == LITERAL and any("literal" in n for n in literal.notes)


def test_compare_finds_provable_separation():
    deep_wins = compare_shapes(parse_shape("24x1024x16"), parse_shape("2x1024x16"))
    assert deep_wins.verdict == "deep-more-expressive" and deep_wins.log3_gap > 0
    shallow_wins = compare_shapes(parse_shape("2x64x1"), parse_shape("24x1024x16"))
    assert shallow_wins.verdict == "shallow-more-expressive" and shallow_wins.log3_gap > 0
