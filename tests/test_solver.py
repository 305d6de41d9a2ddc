"""Corollaries 1 and 2: replicate and surpass widths, exact at the integer boundary."""
import math

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from depthwidth.shapes import parse_shape
from depthwidth.solver import (
    NO_SEPARATION, compare_shapes, corollary2_beta1, equivalence, replicate_width, surpass_width,
)
from depthwidth.theory import THRESHOLD, bounds, log3_sep_lower_efficient, log3_sep_lower_inefficient, log3_sep_upper_efficient, log3_sep_upper_inefficient, regime


def test_worked_example_depth_3_is_76137():
    """Card: LB(6, 1000, 16) = 133.01 gives 76137 at Ls = 3 (the paper quotes ~2·10^5)."""
    answer = replicate_width(6, 1000, 16, 3)
    assert answer.width == 76137 and answer.theorem == 1


def test_worked_example_depth_2_is_only_a_log():
    """About 7.34·10^15 (the paper quotes ~2·10^17): rounding error hides the exact integer."""
    answer = replicate_width(6, 1000, 16, 2)
    assert answer.width is None
    assert answer.log10_width == pytest.approx(15.8655, abs=1e-4)
    assert 10 ** (answer.log10_width - 15) == pytest.approx(7.34, abs=0.01)


def test_surpass_24x1024_at_depth_12_is_just_past_the_threshold():
    assert surpass_width(24, 1024, 16, 12).width == 3**12 + 1 == 531442


def test_closed_form_matches_card_formula():
    """Efficient regime: ds = 3^(2·LB/(3^Ls - 1)) - Hs."""
    lower = bounds(6, 1000, 16).log3_sep_lower
    closed = 3 ** (2 * lower / (3**3 - 1)) - 16
    assert replicate_width(6, 1000, 16, 3).width == math.ceil(closed)


def _upper(L, x, H):
    r = regime(L, x)
    return None if r == THRESHOLD else (log3_sep_upper_efficient if 3**L < x else log3_sep_upper_inefficient)(L, float(x), H)


def _lower(L, x, H):
    r = regime(L, x)
    return None if r == THRESHOLD else (log3_sep_lower_efficient if 3**L < x else log3_sep_lower_inefficient)(L, float(x), H)


deep_shapes = st.tuples(st.integers(2, 60), st.integers(64, 20000)).flatmap(
    lambda t: st.tuples(st.just(t[0]), st.just(t[1]), st.integers(1, max(1, t[1] // 32)), st.integers(1, t[0] - 1)))


@settings(max_examples=300, deadline=None)
@given(deep_shapes)
def test_replicate_answer_holds_and_its_predecessor_does_not(case):
    L, d, H, Ls = case
    target = bounds(L, d, H).log3_sep_lower
    assume(target is not None)
    answer = replicate_width(L, d, H, Ls)
    assume(answer.width is not None)
    x = answer.width
    assert _upper(Ls, x, H) >= target
    before = _upper(Ls, x - 1, H) if x - 1 > H else None
    assert before is None or before < target


@settings(max_examples=300, deadline=None)
@given(deep_shapes)
def test_surpass_answer_holds_and_its_predecessor_does_not(case):
    L, d, H, Ls = case
    target = bounds(L, d, H).log3_sep_upper
    assume(target is not None)
    answer = surpass_width(L, d, H, Ls)
    assume(answer.width is not None)
    x = answer.width
    assert _lower(Ls, x, H) > target
    before = _lower(Ls, x - 1, H) if x - 1 > H else None
    assert before is None or before <= target


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 12), st.integers(2, 300), st.integers(1, 8))
def test_smallest_by_brute_force(Ls, d, H):
    """Against a linear scan of every width up to 3^Ls + 200, across the regime boundary."""
    L = Ls + 3
    assume(H < d)
    target = bounds(L, d, H).log3_sep_lower
    assume(target is not None)
    answer = replicate_width(L, d, H, Ls)
    scan = next((x for x in range(H + 1, 3**Ls + 200) if (u := _upper(Ls, x, H)) is not None and u >= target), None)
    if scan is not None:
        assert answer.width == scan


def test_answers_beyond_float_range_stay_finite():
    answer = replicate_width(40, 10**8, 10**8 // 64, 2)
    assert answer.width is None and math.isfinite(answer.log10_width) and answer.log10_width > 10**8
    big = replicate_width(10**4, 10**12, 1, 1)
    assert math.isfinite(big.log10_width) and big.log10_width > 10**12


def test_no_target_means_no_width():
    assert surpass_width(6, 704, 11, 3).width is None  # no usable upper bound
    assert replicate_width(6, 729, 9, 3).log10_width is None  # threshold: no lower bound
    assert "vacuous" in replicate_width(6, 704, 11, 3).notes[-1]


def test_equivalence_record_and_beta1():
    record = equivalence(parse_shape("6x1000x16"), 3)
    assert (record.shallow_depth, record.shallow_heads, record.replicate_width) == (3, 16, 76137)
    assert record.replicate_params == 12 * 3 * 76137**2
    assert record.replicate_log10_params == pytest.approx(math.log10(12 * 3 * 76137**2))
    assert record.surpass_params is None and record.surpass_log10_params > 700
    assert record.beta1 == pytest.approx(math.log(1000, 3) / 6) == corollary2_beta1(6, 1000)


def test_compare_issue_example():
    result = compare_shapes(parse_shape("12x768"), parse_shape("6x1086"))
    assert result.verdict == NO_SEPARATION
    assert result.shallow.heads == 17 and result.deep.heads == 12
    assert result.log3_gap == pytest.approx(1681.565375 - 2321.207608, abs=1e-5)
    assert result.deep_respects_threshold and not result.shallow_respects_threshold
    assert result.params_ratio == pytest.approx(12 * 768**2 / (6 * 1086**2))


def test_compare_finds_provable_separation():
    deep_wins = compare_shapes(parse_shape("24x1024x16"), parse_shape("2x1024x16"))
    assert deep_wins.verdict == "deep-more-expressive" and deep_wins.log3_gap > 0
    shallow_wins = compare_shapes(parse_shape("2x64x1"), parse_shape("24x1024x16"))
    assert shallow_wins.verdict == "shallow-more-expressive" and shallow_wins.log3_gap > 0
