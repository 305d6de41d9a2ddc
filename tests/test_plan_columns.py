"""The threshold rule over budget arrays (plan_columns.plan_many) against one budget's plan, row by row.

The reference is the scalar path: ``planner.plan`` itself (``scalar``), or the threshold steps
plan() builds its threshold record from (``threshold_steps``: ``theory_for`` / ``planned_shape``, and
again without the 8-way rule where it leaves no shape; also ``scalar``'s answer where ``plan`` refuses a
budget for its rule's recommendation, which plan_many does not compute): every column must equal the
scalar record's field, and every refusal must carry the scalar InputError's text. The steps cost a
twentieth of a plan(); the tests that compare with them alone also check, on a sample of their budgets,
that plan() gives the steps' record (``assert_plan_takes_the_threshold_steps``; the two agreed on all
2,400 budgets of this file when every test compared with plan()). A few checks also use formulas
written here.

The scalar plans are made with ``perf=False`` (candidates timed at the flat MFU, not by the layout
search): the threshold record is computed before any shape is costed, so it is the same either way
(``test_the_threshold_record_does_not_depend_on_the_time_model`` checks that on a spread of budgets),
and the reference costs a fifth of the CPU.
"""
import math
from dataclasses import replace

import numpy as np
import pytest

from depthwidth.arch.blocks import flops_per_token, kv_bytes_per_token, params_active, params_embedding, params_nonembedding
from depthwidth.arch.presets import preset
from depthwidth.core.errors import InputError
from depthwidth.arch.hardware import Constraints, tp_sizes
from depthwidth.advice.planner import PlanOptions, plan
from depthwidth.arch.spending import Spending
from depthwidth.advice.threshold import planned_shape, theory_for
from depthwidth.advice.plan_columns import plan_many, rule_refusals
from depthwidth.theory.separation import REGIME_CODES, regime

PRESETS = ["vanilla", "gpt2", "llama", "mistral", "qwen2", "gemma", "mixtral", "deepseek"]


def options(arch, count="total", tp=1, multiple=128, overrides=()):
    """What `plan --arch ARCH --count COUNT --tp TP --multiple M` builds (cli.plan_options: the head size is a
    constraint only when given; the preset's follows each budget's size, issue 33)."""
    head_dim = dict(overrides).get("head_dim")
    return PlanOptions(spending=Spending(arch, tuple(sorted(overrides)), count),
                       constraints=Constraints(multiple=multiple, head_dim=head_dim, tp=tp))


def threshold_steps(budget, opts):
    """(fields, None) from plan()'s threshold steps (``theory_for``, ``planned_shape``, and once more
    without the 8-way rule where that rule leaves no shape), or (None, error text) when they refuse."""
    opts = opts.at_budget(budget)  # the preset's size for this budget, as plan() and plan_many take it
    try:
        theory = theory_for(budget, opts.spending)
        try:
            snapped = planned_shape(budget, opts.spending, opts.constraints, theory)
        except InputError:
            if opts.constraints.shard_from is None:
                raise
            snapped = planned_shape(budget, opts.spending, opts.without_shard_rule().constraints, theory)
    except InputError as err:
        return None, str(err)
    arch = snapped.arch
    return dict(min_depth=theory.min_depth, min_depth_exact=theory.min_depth_exact, width_exact=theory.width_exact,
                width=arch.width, heads=arch.heads, kv_heads=arch.kv_heads, head_dim=arch.head_dim, ffn=arch.ffn,
                params_nonembedding=params_nonembedding(arch), params_active=params_active(arch),
                params_embedding=params_embedding(arch), budget_deviation=snapped.deviation,
                flops_per_token=flops_per_token(arch, opts.context), kv_bytes_per_token=kv_bytes_per_token(arch),
                tp_sizes=tuple(tp_sizes(arch)), regime=regime(arch.depth, arch.width)), None


def scalar(budget, opts):
    """(fields, None) from the scalar path ``plan()``, or its threshold steps where ``plan`` refuses the
    budget for its rule's recommendation (which plan_many does not compute); (None, error text) when
    those refuse it too."""
    try:
        t = plan(budget, replace(opts.at_budget(budget), perf=False)).threshold  # the threshold record does not depend on the time model
    except InputError:
        return threshold_steps(budget, opts)
    return dict(min_depth=t.min_depth, min_depth_exact=t.min_depth_exact, width_exact=t.width_exact, width=t.width,
                heads=t.heads, kv_heads=t.kv_heads, head_dim=t.head_dim, ffn=t.ffn,
                params_nonembedding=t.params_nonembedding, params_active=t.params_active,
                params_embedding=t.params_embedding, budget_deviation=t.budget_deviation,
                flops_per_token=t.flops_per_token, kv_bytes_per_token=t.kv_bytes_per_token, tp_sizes=tuple(t.tp_sizes),
                regime=t.regime), None


def vector_row(cols, i):
    return dict(min_depth=int(cols.min_depth[i]), min_depth_exact=float(cols.min_depth_exact[i]),
                width_exact=float(cols.width_exact[i]), width=int(cols.width[i]), heads=int(cols.heads[i]),
                kv_heads=int(cols.kv_heads[i]), head_dim=int(cols.head_dim[i]), ffn=int(cols.ffn[i]),
                params_nonembedding=int(cols.params_nonembedding[i]), params_active=int(cols.params_active[i]),
                params_embedding=cols.params_embedding[i], budget_deviation=float(cols.budget_deviation[i]),
                flops_per_token=cols.flops_per_token[i], kv_bytes_per_token=cols.kv_bytes_per_token[i],
                tp_sizes=tuple(cols.tp_sizes[i]), regime=REGIME_CODES[cols.regime_code[i]])


def assert_matches(budgets, opts, reference=threshold_steps):
    """plan_many's rows against the scalar reference, budget by budget (``scalar``: plan() itself)."""
    cols = plan_many(budgets, opts)
    assert len(cols.min_depth) == len(budgets)
    for i, budget in enumerate(budgets):
        expected, error = reference(budget, opts)
        if error is not None:
            assert str(cols.error[i]) == error, budget
            continue
        assert cols.error[i] is None, (budget, cols.error[i])
        got = vector_row(cols, i)
        assert got["min_depth_exact"] == pytest.approx(expected["min_depth_exact"], rel=1e-12, abs=0), budget
        got.pop("min_depth_exact"), expected.pop("min_depth_exact")
        assert got == expected, budget
    return cols


def assert_plan_takes_the_threshold_steps(budgets, opts):
    """plan()'s threshold record (or refusal) is the threshold steps' for these budgets: what lets the
    tests compare plan_many with the steps alone, at a twentieth of the CPU of a plan() per budget."""
    for budget in budgets:
        assert scalar(budget, opts) == threshold_steps(budget, opts), budget


def log_uniform(seed, n, low=1e6, high=1e14):
    rng = np.random.default_rng(seed)
    return [int(x) for x in np.exp(rng.uniform(math.log(low), math.log(high), n))]


def counts_for(arch):
    return ["total", "active"] + (["with-embeddings"] if preset(arch).vocab is not None else [])


@pytest.mark.parametrize("arch", PRESETS)
@pytest.mark.parametrize("tp", [1, 8])
def test_random_budgets_match_the_scalar_plan(arch, tp):
    for j, count in enumerate(counts_for(arch)):
        assert_matches(log_uniform(PRESETS.index(arch) * 10 + tp + j, 12), options(arch, count, tp), reference=scalar)


@pytest.mark.slow
@pytest.mark.parametrize("arch", PRESETS)
@pytest.mark.parametrize("tp", [2, 4])
def test_many_random_budgets_every_tp_and_count(arch, tp):
    """The tensor-parallel degrees the test above leaves out (it takes 1 and 8), every count; plan()
    itself on the first four budgets of each."""
    for j, count in enumerate(counts_for(arch)):
        budgets, opts = log_uniform(1000 + PRESETS.index(arch) * 10 + tp + j, 20), options(arch, count, tp)
        assert_matches(budgets, opts)
        assert_plan_takes_the_threshold_steps(budgets[:4], opts)


OVERRIDDEN = [
    ("llama", "total", 1, 128, (("kv_heads", 4),)),
    ("llama", "total", 2, 128, (("head_dim", 64), ("ffn_mult", 1.3))),
    ("qwen2", "total", 1, 1000, ()),
    ("mixtral", "total", 1, 128, (("experts", 4), ("top_k", 1))),
    ("deepseek", "total", 2, 128, (("experts", 0),)),
    ("vanilla", "total", 1, 128, (("experts", 8),)),
    ("gpt2", "total", 4, 64, (("gated", True), ("vocab", 32000), ("tied", False))),
    ("vanilla", "with-embeddings", 1, 256, (("vocab", 50000),)),
]


@pytest.mark.parametrize("arch, count, tp, multiple, overrides", OVERRIDDEN)
def test_overrides_and_multiples_match_the_scalar_plan(arch, count, tp, multiple, overrides):
    budgets, opts = log_uniform(7, 25), options(arch, count, tp, multiple, overrides)
    assert_matches(budgets, opts)
    assert_plan_takes_the_threshold_steps(budgets[::5], opts)


TIES = [12 * L * 9**L + d for L in range(1, 34) for d in (-1, 0, 1)]  # N = 12·L·9^L: d(L) = 3^L exactly


def test_exact_ties_of_the_papers_block():
    cols = assert_matches(TIES, options("vanilla"))
    assert_plan_takes_the_threshold_steps(TIES[::3], options("vanilla"))
    for i, budget in enumerate(TIES):
        if cols.error[i] is None:  # the smallest L with 12·L·9^L >= N, written out here
            assert cols.min_depth[i] == next(L for L in range(1, 99) if 12 * L * 9**L >= budget)


@pytest.mark.parametrize("arch", ["llama", "deepseek", "mixtral"])
def test_threshold_counts_of_other_blocks(arch):
    """Budgets at and around the block's count at (L, 3^L), where its minimal depth steps."""
    from depthwidth.arch.spending import quadratic

    model = quadratic(Spending(arch))
    budgets = [math.floor(model.value(L, 3**L)) + d for L in range(2, 30) for d in (0, 1)]  # the last at L, the first past it
    assert_matches(budgets, options(arch))
    assert_plan_takes_the_threshold_steps(budgets[::4], options(arch))


@pytest.mark.parametrize("arch, tp", [("vanilla", 1), ("vanilla", 8), ("llama", 8)])
def test_budgets_at_the_tolerance_edges(arch, tp):
    """Budgets that put a valid shape's count exactly 5% or 50% off, and one either side."""
    budgets = []
    for L, d in [(8, 3200), (6, 384), (11, 87040), (4, 128), (13, 512000), (9, 10112)]:
        count = 12 * L * d * d
        for factor in (1.05, 0.95, 1.5, 0.5):
            b = round(count / factor)
            budgets += [b - 1, b, b + 1]
    assert_matches(budgets, options(arch, tp=tp))
    assert_plan_takes_the_threshold_steps(budgets[::4], options(arch, tp=tp))


@pytest.mark.parametrize("arch", PRESETS)
def test_small_and_huge_budgets(arch):
    """From the smallest accepted budget (100) to 10^50: no-valid-shape and too-large refusals,
    and counts past 2^53 and 2^63 (Python ints)."""
    budgets = log_uniform(11, 15, 100, 1e6) + log_uniform(12, 15, 1e14, 1e50) \
        + [100, 2**53 - 1, 2**53, 2**53 + 1, 2**63 - 1, 2**63, 10**50]
    cols = assert_matches(budgets, options(arch, tp=2), reference=scalar)
    assert any(e is not None for e in cols.error.tolist())  # some of these are refused


def threshold_or_refusal(budget, opts):
    try:
        return plan(budget, opts).threshold
    except InputError as err:
        return str(err)


@pytest.mark.parametrize("arch", PRESETS)
def test_the_threshold_record_does_not_depend_on_the_time_model(arch):
    """The references above time candidates at the flat MFU (``perf=False``): the performance model's
    layout search gives the same threshold record and the same refusals (small, ordinary, 1B+ and huge
    budgets, where the 8-way rule and its fallback apply; tp 1 and 8)."""
    for tp in (1, 8):
        opts = options(arch, tp=tp)
        for budget in log_uniform(PRESETS.index(arch) + 50, 3, 1e5, 1e13) + [2 * 10**9]:
            o = opts.at_budget(budget)
            assert threshold_or_refusal(budget, o) == threshold_or_refusal(budget, replace(o, perf=False)), budget


def test_too_large_budget_refusal_text():
    cols = plan_many([10**9, 10**40], options("vanilla"))
    assert cols.error[0] is None
    with pytest.raises(InputError) as err:
        plan(10**40)
    assert str(cols.error[1]) == str(err.value) and cols.error[1].what == err.value.what == "budget"
    assert "too large to plan" in str(cols.error[1]) and "1e+40" in str(cols.error[1])


def test_a_batch_equals_its_rows_one_by_one():
    """Rows do not interact: mixed small, ordinary and huge budgets give each row's own answer."""
    budgets = [150, 10**9, 3 * 10**20, 10**40, 7 * 10**12]
    opts = options("llama", tp=4)
    batch = plan_many(budgets, opts).records()
    for budget, row in zip(budgets, batch):
        assert repr(plan_many([budget], opts).records()[0]) == repr(row)  # repr: NaN in a refused row


def test_paper_block_values_from_the_formulas():
    """N = 12·L·d² (Levine et al. 2020): 1e9 -> L = 8 (12·8·9^8 >= 1e9 > 12·7·9^7), d* = sqrt(N/96),
    width 3200 = 25·128 (the multiple of 128 nearest 3227.5, composite 50 heads), 12·8·3200² spent."""
    cols = plan_many([10**9], options("vanilla"))
    assert cols.min_depth[0] == 8 and 12 * 8 * 9**8 >= 10**9 > 12 * 7 * 9**7
    assert cols.width_exact[0] == math.sqrt(10**9 / 96)
    assert (cols.width[0], cols.heads[0]) == (3200, 50)
    assert cols.params_nonembedding[0] == 12 * 8 * 3200**2 == cols.params_active[0]
    assert cols.budget_deviation[0] == 12 * 8 * 3200**2 / 10**9 - 1
    assert cols.regime[0] == "depth-inefficient"  # 3^8 = 6561 > 3200 (Theorem 2's side of d = 3^L)
    assert cols.params_embedding[0] is None and cols.params_with_embeddings[0] is None
    assert cols.budget_count == "params_nonembedding"


def test_records_and_count_names():
    cols = plan_many([10**9, 10**10], options("llama", count="with-embeddings", tp=8))
    rows = cols.records()
    assert [r["budget"] for r in rows] == [10**9, 10**10]
    assert all(r["budget_count"] == "params_with_embeddings" and r["error"] is None for r in rows)
    for r in rows:
        assert r["params_with_embeddings"] == r["params_nonembedding"] + r["params_embedding"]
        assert 8 in r["tp_sizes"] and r["heads"] % 8 == 0
        assert r["regime"] in REGIME_CODES


def test_an_impossible_count_is_refused_once_as_plan_refuses_it():
    opts = options("vanilla", count="with-embeddings")
    with pytest.raises(InputError) as scalar_err:
        plan(10**9, opts)
    with pytest.raises(InputError) as vector_err:
        plan_many([10**9, 10**10], opts)
    assert str(vector_err.value) == str(scalar_err.value)
    assert plan_many([], options("vanilla")).min_depth.size == 0


@pytest.mark.parametrize("arch, count", [("gpt2", "with-embeddings"), ("llama", "with-embeddings"),
                                         ("gemma", "with-embeddings"), ("deepseek", "active"), ("vanilla", "total")])
def test_every_refusal_of_plan_is_found(arch, count):
    """plan_many's errors plus rule_refusals are exactly the budgets plan() refuses, with its text
    (small budgets, where an embedding or deepseek's fixed latent sizes overspend the budget)."""
    budgets = log_uniform(31, 60, 100, 3e8) + [10**40]
    opts = replace(options(arch, count, tp=2), perf=False)  # refusals do not depend on the time model (test above)
    cols = plan_many(budgets, opts)
    refused = rule_refusals(cols, opts)
    for i, budget in enumerate(budgets):
        try:
            plan(budget, opts)
            expected = None
        except InputError as err:
            expected = str(err)
        assert ((None if cols.error[i] is None else str(cols.error[i])) or refused.get(i)) == expected, budget


def test_context_length_reaches_the_flops():
    """flops_per_token = 6·N + 6·L·T·H·(d_qk + d_v) (PaLM): the plan's context T is used."""
    from dataclasses import replace

    opts = replace(options("llama", tp=2), context=8192)
    cols = assert_matches(log_uniform(41, 10), opts)
    for i in range(10):
        arch = Spending("llama").at_budget(int(cols.budget[i])).architecture(int(cols.min_depth[i]), int(cols.width[i]))
        assert cols.flops_per_token[i] == 6 * params_nonembedding(arch) + 6 * arch.depth * 8192 * arch.heads * 2 * arch.head_dim
