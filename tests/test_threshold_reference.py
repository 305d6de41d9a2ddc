"""The threshold rule's step of the planner (``advice/threshold.py``, one code for one budget and
for arrays) against a reference written here, one budget at a time, from the definitions:

- the minimal depth: the smallest L with count(L, 3^L) >= N, in exact Fractions (Levine et al.
  2020: 3^L >= d(L); for the paper's block count = 12·L·d²);
- its real crossing L*: SciPy's ``lambertw`` (L* = W(ln3·N/6)/(2·ln3) for the paper's block) or
  SciPy's ``brentq`` on log3(d(L)) - L for any other block;
- the minimal-depth shape: the multiples of the width step within 12 steps of the ideal width,
  sorted nearest first; among the valid ones (``snapping.valid_arch``, hardware.py's verdict)
  within 5% of the budget the most shardable, then the nearest the budget; else the nearest the
  budget; first inside 3^(L-1) < width <= 3^L, else anywhere when that is within 50%.
"""
import math
from dataclasses import replace
from fractions import Fraction

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.special import lambertw

from depthwidth.advice.plan_columns import plan_many
from depthwidth.advice.planner import PlanOptions
from depthwidth.arch.spending import Spending
from depthwidth.advice.threshold import planned_shape, theory_for
from depthwidth.arch.hardware import Constraints, width_step
from depthwidth.arch.snapping import shardability, valid_arch
from depthwidth.arch.spending import quadratic
from depthwidth.core.errors import InputError

LN3 = math.log(3)
PRESETS = ["vanilla", "gpt2", "llama", "mistral", "qwen2", "gemma", "mixtral", "deepseek"]


def reference_depth(budget, model):
    return next(L for L in range(1, 200) if Fraction(model.value(L, 3**L)) >= budget)


def reference_crossing(budget, spending, model):
    if spending.paper_block:
        return float(lambertw(LN3 * budget / 6).real) / (2 * LN3)
    gap = lambda L: math.log(model.width(float(budget), L)) / LN3 - L
    return brentq(gap, 0.25, 200, xtol=1e-14, rtol=1e-15)


def reference_snap(budget, spending, constraints, depth, center, lo=2, hi=None):
    step = width_step(constraints, spending.head_dim)
    k0 = max(1, round(center / step))
    widths = sorted((k * step for k in range(max(1, k0 - 12), k0 + 13) if k * step >= lo and (hi is None or k * step <= hi)),
                    key=lambda w: abs(w - center))
    shapes = []
    for width in widths:
        arch = valid_arch(spending, constraints, depth, width)
        if arch is not None:
            shapes.append((arch, spending.params(arch) / budget - 1))
    within = [s for s in shapes if abs(s[1]) <= 0.05]
    if within:
        return min(within, key=lambda s: (-shardability(s[0]), abs(s[1])))
    return min(shapes, key=lambda s: abs(s[1]), default=None)


def reference_shape(budget, spending, constraints, depth, center):
    """(arch, deviation) at the minimal depth, or None; a shape 50% or more off is returned as found."""
    shape = reference_snap(budget, spending, constraints, depth, center, lo=3 ** (depth - 1) + 1 if depth > 1 else 2, hi=3**depth)
    if shape is None or abs(shape[1]) > 0.5:
        anywhere = reference_snap(budget, spending, constraints, depth, center)
        if shape is None or (anywhere is not None and abs(anywhere[1]) <= 0.5):
            shape = anywhere
    return shape


def budgets_for(seed, n=30, low=1e5, high=1e14):
    rng = np.random.default_rng(seed)
    return [int(x) for x in np.exp(rng.uniform(math.log(low), math.log(high), n))]


@pytest.mark.parametrize("arch", PRESETS)
@pytest.mark.parametrize("tp", [1, 8])
def test_the_threshold_step_matches_the_reference(arch, tp):
    opts = PlanOptions(spending=Spending(arch), constraints=Constraints(tp=tp))
    budgets = budgets_for(PRESETS.index(arch) * 10 + tp)
    columns = plan_many(budgets, opts)
    for i, budget in enumerate(budgets):
        o = opts.at_budget(budget)
        spending, constraints = o.spending, o.constraints
        model = quadratic(spending)
        depth = reference_depth(budget, model)
        theory = theory_for(budget, spending)
        assert theory.min_depth == depth == columns.min_depth[i], budget
        assert theory.min_depth_exact == pytest.approx(reference_crossing(budget, spending, model), rel=1e-12)
        tries = [constraints] + ([replace(constraints, shard_from=None)] if constraints.shard_from is not None else [])
        for constraints in tries:  # as plan and plan_many: refused under the 8-way rule, once more without it
            expected = reference_shape(budget, spending, constraints, depth, theory.width_exact)
            try:
                planned = planned_shape(budget, spending, constraints, theory)
                break
            except InputError:  # refused: no shape, or one more than 50% off the budget
                assert expected is None or abs(expected[1]) > 0.5, budget
        else:
            assert columns.error[i] is not None
            continue
        arch_, deviation = expected
        assert (planned.arch, planned.deviation) == (arch_, deviation), budget
        assert (columns.width[i], columns.budget_deviation[i]) == (arch_.width, deviation), budget


def test_the_papers_block_at_its_exact_ties():
    """N = 12·L·9^L ± 1: d(L) = 3^L exactly at the tie, so the minimal depth steps there."""
    budgets = [12 * L * 9**L + d for L in range(2, 15) for d in (-1, 0, 1)]
    columns = plan_many(budgets, PlanOptions(spending=Spending("vanilla")))
    for i, budget in enumerate(budgets):
        expected = next(L for L in range(1, 99) if 12 * L * 9**L >= budget)
        assert theory_for(budget, Spending("vanilla")).min_depth == expected == columns.min_depth[i]
