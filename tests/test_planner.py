"""Minimal depth per budget (Lambert W) and the empirical rule of the NeurIPS version."""
import math
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from depthwidth.core.budgets import params_from_flops, params_from_tokens
from depthwidth.core.errors import InputError
from depthwidth.advice.planner import PlanOptions, candidate_depths, plan
from depthwidth.advice.rules.builtin import empirical_optimum

LEVINE = PlanOptions(rule="levine-fit")  # the 0.2 default rule, still selectable with --rule levine-fit
from depthwidth.theory.separation import compare_pow3, lambert_w, min_depth, min_depth_exact, width_for


@pytest.mark.parametrize("budget, exact, integer, width", [
    (10**9, 7.390, 8, 3227.5), (10**7, 5.434, 6, 372.7), (10**12, 10.380, 11, 87038.8),
])
def test_card_minimal_depths(budget, exact, integer, width):
    assert round(min_depth_exact(budget), 3) == exact
    assert min_depth(budget) == integer
    assert round(width_for(budget, integer), 1) == width


def test_plan_1e9():
    p = plan(10**9, LEVINE)
    assert (p.threshold.min_depth, p.threshold.width, p.threshold.heads) == (8, 3200, 50)  # 3200 = 25·128, the multiple of 128 nearest 3227.5
    assert p.threshold.width_exact == pytest.approx(3227.486, abs=1e-3)
    assert p.threshold.params_nonembedding == 12 * 8 * 3200**2 and p.threshold.budget_deviation == pytest.approx(-0.01696)
    assert p.rule.empirical_depth == pytest.approx(40.2, abs=0.1) and p.rule.empirical_width == pytest.approx(1440, abs=5)
    depths = [c.depth for c in p.candidates]
    # 8x3200's 50 heads cannot split 8 ways (the listed shapes of a 1B plan do): 9x3072 is the shallowest listed
    # (widths in steps of 512 = 8 heads of 64: the deepest, 35x1536, is the recommended shape, below the fit's 40.2)
    assert depths[0] == 9 and p.candidates[0].width == 3072 and depths[-1] == p.recommended.depth and depths == sorted(set(depths))
    assert all(c.aspect_ratio == c.width / c.depth for c in p.candidates)
    assert all(c.params_nonembedding == c.params_12Ld2 == 12 * c.depth * c.width**2 for c in p.candidates)


def test_empirical_rule_reproduces_the_papers_claims():
    """1T -> width ~30K (depth ~95); GPT-3 175B's size -> depth ~80 < its 96 layers."""
    depth, width = empirical_optimum(10**12)
    assert depth == pytest.approx(95, abs=1) and width == pytest.approx(29.7e3, rel=0.01)
    depth, _ = empirical_optimum(12 * 96 * 12288**2)
    assert depth == pytest.approx(80, abs=1) and depth < 96


@pytest.mark.parametrize("z", [1e-12, 0.1, 1.0, math.e, 10.0, 1e6, 1e100, 1e300])
def test_lambert_w_inverts_w_exp_w(z):
    w = lambert_w(z)
    assert w + math.log(w) == pytest.approx(math.log(z), rel=1e-14, abs=1e-14) if z > 1 else w * math.exp(w) == pytest.approx(z, rel=1e-14)


def test_lambert_w_rejects_bad_arguments():
    for z in (-1.0, math.inf, math.nan):
        with pytest.raises(ValueError):
            lambert_w(z)


@settings(max_examples=300, deadline=None)
@given(st.integers(100, 10**40))
def test_min_depth_is_the_smallest_depth_meeting_the_rule(budget):
    depth = min_depth(budget)
    assert 12 * depth * 9**depth >= budget
    assert depth == 1 or 12 * (depth - 1) * 9 ** (depth - 1) < budget
    assert depth - 1 <= min_depth_exact(budget) <= depth + 1e-9


@pytest.mark.parametrize("part", range(2))  # 200 random budgets in two tests of 100 that workers share
@settings(max_examples=100, deadline=None)
@given(budget=st.integers(100, 10**30))
def test_planned_shape_respects_the_threshold_and_stays_finite(part, budget):
    try:  # the candidates timed at the flat MFU: the threshold and the rule do not depend on the time model
        p = plan(budget, replace(LEVINE, perf=False))
    except InputError as err:  # below every valid shape (widths in steps of 128): refused, naming the smallest budget
        assert "too small" in str(err) and 12 * min_depth(budget) * 128**2 > 1.5 * budget
        return
    if compare_pow3(p.threshold.min_depth, p.threshold.width) < 0:  # depth < log3(width): only when no multiple of 128 near the budget keeps it
        assert any(f"{p.threshold.width} is past 3^{p.threshold.min_depth}" in n for n in p.notes)
        in_range = [w for w in range(128, 3 ** p.threshold.min_depth + 1, 128) if w > 3 ** (p.threshold.min_depth - 1)]
        assert all(abs(12 * p.threshold.min_depth * w * w / budget - 1) > 0.5 for w in in_range)
    if p.threshold.width_exact >= 1024:  # far from tiny budgets the threshold guarantee always holds
        assert compare_pow3(p.threshold.min_depth, p.threshold.width) >= 0
    assert 1 <= p.threshold.heads < p.threshold.width and p.threshold.width % 128 == 0 and p.threshold.heads * 64 == p.threshold.width
    for value in (p.threshold.min_depth_exact, p.threshold.width_exact, p.rule.empirical_depth, p.rule.empirical_width, p.threshold.budget_deviation):
        assert math.isfinite(value)


def test_tiny_and_huge_budgets():
    with pytest.raises(InputError, match="smallest budget it can plan"):  # 2x6 spends it, but widths come in steps of 128
        plan(1000)
    small = plan(700_000)  # 12·5·128² = 983,040 (+40%, within the 50% a plan may miss by): planned, with a warning
    assert (small.threshold.min_depth, small.threshold.width) == (5, 128) and any("+40.4% from the budget" in w for w in small.warnings)
    huge = plan(10**30)
    assert huge.threshold.min_depth == 29 and math.isfinite(huge.threshold.width_exact)
    assert huge.threshold.width % 128 == 0 and abs(huge.threshold.width / huge.threshold.width_exact - 1) < 1e-6


def test_compute_optimal_conversions():
    assert params_from_tokens(2e10) == 1e9
    assert params_from_flops(120 * 1e18) == pytest.approx(1e9)


def test_candidate_depth_ladder():
    assert candidate_depths(8, 40.2) == [8, 12, 16, 24, 32, 40, 48]
    assert len(candidate_depths(29, 454.0)) <= 12


def test_recommended_shape_is_the_empirical_optimum_snapped():
    """0.1 recommended 40x1472x23 (23 heads, a prime; 1472 not a multiple of 128). Now the nearest
    valid shape within 5% of the budget: at a 1B budget every shape splits 8 ways (issue 42), so widths
    are multiples of 512 (8 heads of 64); near the fit's 1440 that is 1536, at depth N/(12·1536²) =
    35.3 -> 35, -0.9% from the budget, 24 heads of 64."""
    p = plan(10**9, LEVINE)
    assert (p.recommended.depth, p.recommended.width, p.recommended.heads) == (35, 1536, 24)
    assert p.recommended.params_nonembedding == 12 * 35 * 1536**2
    assert p.recommended.budget_deviation == pytest.approx(12 * 35 * 1536**2 / 1e9 - 1)
    tiny = plan(1_000_000, LEVINE)  # the fit's optimum (depth ~0) is below the threshold rule: never recommend that
    assert tiny.recommended.depth >= tiny.threshold.min_depth


@pytest.mark.parametrize("z", [1e-6, 0.3, 1.0, 7.0, 1e3, 1e9, 1e50, 1e300])
def test_lambert_w_agrees_with_scipy(z):
    """An independent check of the Newton/Halley iteration (SciPy is not used at run time)."""
    special = pytest.importorskip("scipy.special")
    assert lambert_w(z) == pytest.approx(special.lambertw(z).real, rel=4e-16, abs=1e-300)
