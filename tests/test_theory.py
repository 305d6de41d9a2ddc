"""Theorems 1 and 2 of Levine et al. 2020 against the reference card's computed values."""
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from depthwidth.theory import (
    EFFICIENT, INEFFICIENT, THRESHOLD, bounds, compare_pow3, regime, threshold_depth,
)

# (L, d, H) -> (regime, log3-sep lower, upper), "computed" on the reference card (literal c2).
CARD = {
    (12, 768, 12): (INEFFICIENT, 1681.565, 9053.928),
    (6, 1086, 17): (EFFICIENT, 139.119, 2321.208),
    (6, 1000, 16): (EFFICIENT, 133.010, 2293.986),
    (24, 1024, 16): (INEFFICIENT, 8148.015, 36117.861),
}


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


@pytest.mark.parametrize("shape", [(6, 704, 11), (7, 2186, 34)])
def test_gap_below_threshold_width_is_vacuous_and_unavailable(shape):
    """With the literal reading of c2 the upper bound is negative in (0.93·3^L, 3^L)."""
    record = bounds(*shape)
    assert record.regime == INEFFICIENT
    assert record.lower_vacuous and record.log3_sep_lower == 0.0
    assert record.log3_sep_upper is None
    assert any("vacuous" in n for n in record.notes) and any("unavailable" in n for n in record.notes)


def test_params_follow_kaplan_convention():
    assert bounds(12, 768, 12).params == 12 * 12 * 768**2


shapes = st.integers(1, 10**4).flatmap(
    lambda L: st.integers(2, 10**12).flatmap(lambda d: st.tuples(st.just(L), st.just(d), st.integers(1, min(d - 1, 10**6)))))


@settings(max_examples=400, deadline=None)
@given(shapes)
def test_bounds_are_ordered_finite_and_nonnegative(shape):
    record = bounds(*shape)
    values = [v for v in (record.log3_sep_lower, record.log3_sep_upper, record.threshold_depth) if v is not None]
    assert all(math.isfinite(v) for v in values)
    if record.regime != THRESHOLD:
        assert record.log3_sep_lower >= 0
        if record.log3_sep_upper is not None:
            assert record.log3_sep_lower <= record.log3_sep_upper
        else:
            assert any("unavailable" in n for n in record.notes)
    assert record.lower_vacuous == (record.log3_sep_lower == 0.0 and record.regime != THRESHOLD)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 60), st.integers(2, 10**15))
def test_regime_matches_big_integer_truth(depth, width):
    truth = 3**depth
    expected = EFFICIENT if truth < width else INEFFICIENT if truth > width else THRESHOLD
    assert regime(depth, width) == expected
