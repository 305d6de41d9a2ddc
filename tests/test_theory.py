"""Theorems 1 and 2 of Levine et al. 2020 against the reference card's computed values."""
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from depthwidth.theory.separation import (
    C2_READINGS, CONSISTENT, EFFICIENT, INEFFICIENT, LITERAL, THRESHOLD, bounds, compare_pow3, regime, threshold_depth,
)

# (L, d, H) -> (regime, log3-sep lower, upper), "computed" on the reference card (consistent c2).
CARD = {
    (12, 768, 12): (INEFFICIENT, 1681.565, 11206.654),
    (6, 1086, 17): (EFFICIENT, 139.119, 2321.208),
    (6, 1000, 16): (EFFICIENT, 133.010, 2293.986),
    (24, 1024, 16): (INEFFICIENT, 8148.015, 38988.163),
}
# The same shapes' upper bounds under the literal reading (Theorem 1 shapes do not involve c2).
CARD_LITERAL_UPPER = {(12, 768, 12): 9053.928, (6, 1086, 17): 2321.208, (6, 1000, 16): 2293.986, (24, 1024, 16): 36117.861}
K = math.sqrt(2 * math.sqrt(2 * math.e))


def log3(x):
    return math.log(x) / math.log(3)


def theorem2_upper(L, d, reading):
    """Theorem 2's upper bound written out: 2dL + L + c2, c2 = -2d·log3(d/(2K)) + log3 d (consistent)
    or -2d·log3((d/2)·K) + log3 d (literal)."""
    argument = d / (2 * K) if reading == CONSISTENT else d / 2 * K
    return 2 * d * L + L - 2 * d * log3(argument) + log3(d)


@pytest.mark.parametrize("shape, expected", CARD.items())
def test_card_bounds(shape, expected):
    record = bounds(*shape)
    assert (record.regime, round(record.log3_sep_lower, 3), round(record.log3_sep_upper, 3)) == expected
    assert not record.lower_vacuous and record.notes == ()
    assert record.theorem == (1 if expected[0] == EFFICIENT else 2)


def test_threshold_depth_near_6_3_for_width_1000():
    assert threshold_depth(1000) == pytest.approx(6.2877, abs=1e-4)


@pytest.mark.parametrize("depth", range(1, 41))
def test_regime_exact_at_every_power_of_three(depth):
    power = 3**depth
    assert regime(depth, power) == THRESHOLD
    assert regime(depth, power + 1) == EFFICIENT
    assert regime(depth, power - 1) == INEFFICIENT


def test_regime_does_not_trust_float_logs():
    # The trap the exact comparison avoids: on CPython 3.11, log(3**5, 3) and log(3**10, 3) fall
    # short (the reference card's log(729, 3) example happens to come out exact here).
    assert math.log(243, 3) < 5 and math.log(3**10, 3) < 10
    assert regime(5, 243) == THRESHOLD and regime(10, 3**10) == THRESHOLD
    assert compare_pow3(10**6, 10**15) == 1


def test_threshold_shape_has_no_bounds():
    record = bounds(6, 729, 9)
    assert record.regime == THRESHOLD and record.theorem is None
    assert record.log3_sep_lower is None and record.log3_sep_upper is None
    assert "neither Theorem 1" in record.notes[0]


@pytest.mark.parametrize("shape, literal", CARD_LITERAL_UPPER.items())
def test_card_literal_upper_bounds(shape, literal):
    record = bounds(*shape, reading=LITERAL)
    assert record.c2_reading == LITERAL and round(record.log3_sep_upper, 3) == literal
    assert record.log3_sep_lower == bounds(*shape).log3_sep_lower  # the reading only touches UB2


@pytest.mark.parametrize("reading", C2_READINGS)
@pytest.mark.parametrize("shape", [(12, 768, 12), (24, 1024, 16), (7, 1000, 16), (30, 10**6, 64), (5, 200, 1)])
def test_theorem2_upper_matches_the_formula_written_here(shape, reading):
    record = bounds(*shape, reading=reading)
    assert record.theorem == 2 and record.c2_reading == reading
    assert record.log3_sep_upper == pytest.approx(theorem2_upper(shape[0], shape[1], reading), rel=1e-12)


def test_unknown_reading_is_a_programming_error():
    with pytest.raises(ValueError, match="consistent, literal"):
        bounds(12, 768, 12, reading="Consistent")


@pytest.mark.parametrize("shape", [(6, 704, 11), (7, 2186, 34)])
def test_gap_below_threshold_width(shape):
    """Just below d = 3^L the lower bound is vacuous; the consistent upper bound stays positive,
    while the literal one is negative there (in about (0.926·3^L, 3^L)) and reported as unavailable."""
    L, d, _ = shape
    record = bounds(*shape)
    assert record.regime == INEFFICIENT
    assert record.lower_vacuous and record.log3_sep_lower == 0.0
    assert record.log3_sep_upper == pytest.approx(theorem2_upper(L, d, CONSISTENT)) and record.log3_sep_upper > 0
    assert any("vacuous" in n for n in record.notes) and not any("unavailable" in n for n in record.notes)
    literal = bounds(*shape, reading=LITERAL)
    assert theorem2_upper(L, d, LITERAL) < 0 and literal.log3_sep_upper is None
    assert any("unavailable" in n for n in literal.notes)


@pytest.mark.parametrize("shape, value", [((2, 10, 9), -0.63), ((3, 30, 29), -1.63)])
def test_theorem1_positivity_aside_fails_for_heads_near_width(shape, value):
    """The paper says log3(d - H) + a > 0 whenever L < log3 d; with H near d it is negative."""
    L, d, H = shape
    assert 3**L < d
    aside = log3(d - H) - L + 2 - log3(2)
    assert aside == pytest.approx(value, abs=0.005)
    record = bounds(*shape)
    assert record.theorem == 1 and record.lower_vacuous and record.log3_sep_lower == 0.0
    assert any("log3(d - H) + a > 0" in n for n in record.notes)


def test_params_follow_kaplan_convention():
    assert bounds(12, 768, 12).params_12Ld2 == 12 * 12 * 768**2


shapes = st.integers(1, 10**4).flatmap(
    lambda L: st.integers(2, 10**12).flatmap(lambda d: st.tuples(st.just(L), st.just(d), st.integers(1, min(d - 1, 10**6)))))


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(shapes)
def test_bounds_are_ordered_finite_and_nonnegative(shape):
    record = bounds(*shape)
    values = [v for v in (record.log3_sep_lower, record.log3_sep_upper, record.threshold_depth) if v is not None]
    assert all(math.isfinite(v) for v in values)
    if record.regime != THRESHOLD:
        assert record.log3_sep_lower >= 0
        assert record.log3_sep_upper is not None  # the consistent reading: never below the lower bound
        assert record.log3_sep_lower <= record.log3_sep_upper
    assert record.lower_vacuous == (record.log3_sep_lower == 0.0 and record.regime != THRESHOLD)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 60), st.integers(2, 10**15))
def test_regime_matches_big_integer_truth(depth, width):
    truth = 3**depth
    expected = EFFICIENT if truth < width else INEFFICIENT if truth > width else THRESHOLD
    assert regime(depth, width) == expected
