"""`plan` with every candidate timed by the performance model (issues 30, 31). Expected values from
formulas written here:

- days = train FLOPs / (MFU x peak x GPUs) / 86,400: the definition of model FLOPs utilization
  (Chowdhery et al. 2022, App. B), with the H100 SXM's 989.5 TFLOPS dense BF16 (its datasheet's 1,979
  "with sparsity", halved) and the FLOPs per token 6·12·L·d² + 12·L·T·d of the paper's block;
- a flat MFU gives every shape of one FLOPs count the same time per FLOP: the model must not;
- --pp p not dividing L: the flat time x p·ceil(L/p)/L (every stage waits for the most loaded);
- the billed ratio: the geometric mean of the published runs' ratios (cost/billed.py's three);
- --flops C alone: the pick trained on its tokens spends C FLOPs as the costs count them.
"""
from __future__ import annotations

import json
import math
import random

import pytest

from conftest import run

H100_BF16 = 989.5e12


def plan_json(*args):
    out = run(["plan", *args, "--format", "json"])
    assert out.code == 0, out.stderr
    [record] = json.loads(out.stdout)
    return record


def paper_flops_per_token(depth, width, context=2048):
    return 6 * 12 * depth * width**2 + 12 * depth * context * width


def test_candidates_days_are_the_models_not_a_flat_mfu():
    """Issue 30's done-when: in plan --params 1e9 --tokens 2e10 --gpus 64 the candidates' days differ by
    the model's account of their shapes."""
    record = plan_json("--params", "1e9", "--tokens", "2e10", "--gpus", "64", "--gpu", "h100")
    assert record["setup"]["time_model"] == "performance model" and record["setup"]["mfu"] is None
    seconds_per_flop = []
    for c in record["candidates"]:
        flops = paper_flops_per_token(c["depth"], c["width"]) * 2e10
        assert c["run"]["train_flops"] == pytest.approx(flops, rel=1e-12)
        assert 0 < c["run"]["mfu"] < 1
        assert c["run"]["train_days"] == pytest.approx(flops / (c["run"]["mfu"] * H100_BF16 * 64) / 86400, rel=1e-9)
        assert c["run"]["train_days"] == pytest.approx(2e10 / c["run"]["tokens_per_second"] / 86400, rel=1e-9)
        layout = c["run"]["layout"]
        assert layout["tp"] * layout["pp"] * layout["dp"] * layout["cp"] == 64
        assert c["serve"]["decode_seconds_per_token"] > 0
        seconds_per_flop.append(c["run"]["train_days"] / flops)
    # a flat MFU makes days/FLOPs one constant; the model separates shapes by more than 5%
    assert max(seconds_per_flop) / min(seconds_per_flop) > 1.05
    rec = next(c for c in record["candidates"] if (c["depth"], c["width"]) == (record["recommended"]["depth"], record["recommended"]["width"]))
    assert record["recommended"]["run"]["mfu"] == rec["run"]["mfu"] and record["recommended"]["run"]["layout"] == rec["run"]["layout"]
    assert record["recommended"]["run"]["train_days"] == rec["run"]["train_days"]


def test_mfu_overrides_the_model():
    record = plan_json("--params", "1e9", "--tokens", "2e10", "--gpus", "64", "--mfu", "0.4")
    assert record["setup"]["mfu"] == 0.4 and record["recommended"]["run"]["mfu"] == 0.4
    for c in record["candidates"]:
        assert c["run"]["mfu"] == 0.4 and c["run"]["layout"]["dp"] == 64  # the layout given (--mfu: none searched)
        # the step and the throughput follow from the utilization (tests/test_flat_mfu.py: every command alike)
        assert c["run"]["tokens_per_second"] == pytest.approx(0.4 * H100_BF16 * 64 / c["run"]["train_flops_per_token"], rel=1e-12)
        assert c["run"]["train_days"] == pytest.approx(c["run"]["train_flops"] / (0.4 * H100_BF16 * 64) / 86400, rel=1e-12)


def test_prefer_changes_the_pick_on_the_cluster():
    """Issue 31's done-when: changing --prefer can change the pick. Here serve, which weighs depth and KV cache
    beside the time, goes shallower than balanced (at 1e9 on this cluster both pick the fastest shape)."""
    args = ("--params", "7e9", "--arch", "llama", "--tokens", "2e12", "--gpus", "512", "--gpu", "h100")
    balanced, serve = plan_json(*args), plan_json(*args, "--prefer", "serve")
    assert (balanced["recommended"]["depth"], balanced["recommended"]["width"]) != (serve["recommended"]["depth"], serve["recommended"]["width"])


def test_flops_alone_costs_within_the_budget():
    """Before: plan --flops 3.06e22 --arch llama costed its pick at 3.22e22 FLOPs (6·N·D left out the
    attention and the logits). Now the pick's costed FLOPs are the budget, at about 20 tokens per parameter."""
    for arch in ("llama", "vanilla"):
        record = plan_json("--flops", "3.06e22", "--arch", arch)
        assert record["recommended"]["run"]["train_flops"] <= 3.06e22 * (1 + 1e-9)
        assert record["recommended"]["run"]["train_flops"] == pytest.approx(3.06e22, rel=1e-6)
        count = record["recommended"]["params_nonembedding"]
        assert 17 <= record["setup"]["tokens"] / count <= 23  # compute-optimal: 20 per parameter (Hoffmann et al. 2022), ±snapping
        assert record["budget"]["value"] < math.sqrt(3.06e22 / 120)  # smaller than 6·N·D alone would say


def test_days_budget_sizes_the_run_for_that_time():
    record = plan_json("--days", "7", "--gpus", "256", "--gpu", "h100", "--tokens", "1e12")
    assert record["budget"]["source"] == "days" and record["setup"]["tokens"] == 1e12
    assert record["recommended"]["run"]["train_days"] == pytest.approx(7, rel=0.02)
    record = plan_json("--days", "30", "--gpus", "64", "--gpu", "h100", "--arch", "llama")
    assert record["recommended"]["run"]["train_days"] == pytest.approx(30, rel=0.02)
    assert 17 <= record["setup"]["tokens"] / record["budget"]["value"] <= 23  # 20 tokens per parameter (Hoffmann et al. 2022)
    assert run(["plan", "--days", "7", "--params", "1e9", "--tokens", "2e10"]).code == 2  # --params --days alone answers tokens
    assert run(["plan", "--days", "-3", "--gpus", "8"]).code == 2


def test_pipeline_degree_that_does_not_divide_is_costed():
    """Flat MFU: time x p·ceil(L/p)/L. Model: the layout keeps the given pp, and a depth p does not divide
    runs its stage of ceil(L/p) layers: no faster per token than the next depth p divides, same width."""
    record = plan_json("--params", "1e9", "--tokens", "2e10", "--gpus", "64", "--pp", "4", "--mfu", "0.4")
    odd = [c for c in record["candidates"] if c["depth"] % 4]
    assert odd
    for c in record["candidates"]:
        even = c["run"]["train_flops"] / (0.4 * H100_BF16 * 64) / 86400
        assert c["run"]["train_days"] == pytest.approx(even * math.ceil(c["depth"] / 4) * 4 / c["depth"], rel=1e-12)
    record = plan_json("--params", "1e9", "--tokens", "2e10", "--gpus", "64", "--pp", "4")
    for c in record["candidates"]:
        assert c["run"]["layout"]["pp"] == 4
    c = next(c for c in record["candidates"] if c["depth"] % 4)
    padded = math.ceil(c["depth"] / 4) * 4
    out = run(["cost", f"{c['depth']}x{c['width']}", f"{padded}x{c['width']}", "--gpus", "64", "--pp", "4", "--format", "json"])
    mine, full = (row["run"] for row in json.loads(out.stdout))
    # the same stage of ceil(L/4) layers: tokens/s within a few percent (the head and gradients differ a little)
    assert mine["tokens_per_second"] == pytest.approx(full["tokens_per_second"], rel=0.05)
    assert mine["mfu"] < full["mfu"]


def test_billed_ratio_with_its_source_next_to_the_times():
    ratios = {"Llama 2 7B": 1.44, "Llama 3 8B": 2.64, "Llama 3.1 405B": 1.02}  # cost/billed.py, recomputed in test_perf.py
    mean = math.exp(sum(map(math.log, ratios.values())) / 3)
    record = plan_json("--params", "1e9", "--tokens", "2e10", "--gpus", "64")
    assert record["setup"]["billed_ratio"] == pytest.approx(mean, abs=0.05)
    assert "Llama 3.1 405B" in record["setup"]["billed_note"] and "docs/performance.md" in record["setup"]["billed_note"]
    screen = run(["plan", "--params", "1e9", "--tokens", "2e10", "--gpus", "64"]).stdout
    billed = [line for line in screen.splitlines() if line.startswith("billed")]
    assert billed and "1.0-2.6x" in billed[0]


def _drawn_budgets(seed: int = 29, n: int = 100) -> list[str]:
    rng = random.Random(seed)
    return [f"{10 ** rng.uniform(6, 13):.6g}" for _ in range(n)]


MANY_BUDGETS = _drawn_budgets()[::2]
BUDGET_RANGES = [(1e6, 1e11), (1e11, 1e12), (1e12, 1.4e12), (1.4e12, 3e12), (3e12, 5.5e12), (5.5e12, 1e13)]


@pytest.mark.parametrize("low, high", BUDGET_RANGES)
def test_many_budgets_in_one_run_give_each_budget_its_own_answer(low, high):
    """The full plan over budgets from stdin answers each budget as a run of that budget alone (the
    layout search's memos and answers are shared across a run's budgets and must not change an answer).
    50 budgets spread over 10^6-10^13 (every other one of the first 100 of the 200 drawn before: the
    eight runs of those took 17% of the suite's CPU), in six runs by budget range (each test under
    10 s: the layout search of a budget of 10^12 takes a second, of 10^8 a twentieth); each alone with
    the memos emptied, as a new process has them. The reuse is between budgets of nearby widths, so
    runs of neighbouring budgets find an entry another budget of the run made more often than the two
    runs of 25 drawn budgets did before (5,040 against 3,257 lookups that hit, over the memos and the
    per-width tables, counted as the hits of the run minus those of its budgets alone)."""
    from depthwidth.cost.perf import layout

    budgets = [b for b in MANY_BUDGETS if low <= float(b) < high]
    together = run(["plan", "--params", "-", "--format", "jsonl"], input="\n".join(budgets) + "\n")
    assert together.code == 0, together.stderr
    lines = together.stdout.splitlines()
    assert len(lines) == len(budgets)
    for budget, line in zip(budgets, lines):
        layout._SHARED.clear()
        layout._ORDERED.clear()
        layout._ANSWERS.clear()
        alone = run(["plan", "--params", budget, "--format", "jsonl"])
        assert alone.code == 0, alone.stderr
        assert alone.stdout.strip() == line, budget


def test_the_budget_ranges_hold_the_fifty_budgets():
    assert len(MANY_BUDGETS) == 50 and len(set(MANY_BUDGETS)) == 50
    assert sum(len([b for b in MANY_BUDGETS if low <= float(b) < high]) for low, high in BUDGET_RANGES) == 50


@pytest.mark.parametrize("args, same", [
    ((), ("soonest", "(wall-clock)")),
    (("--prefer", "train"), ("soonest", "(GPU-hours)")),
    (("--prefer", "serve"), ("KV cache", "decode latency", "prefer=serve")),
    (("--loss-tolerance", "0.01"), ("fastest", "within", "1.00%")),
])
def test_notes_and_why_describe_the_same_pick(args, same):
    """The consensus note says how the pick that runs chooses (target.score), as the why does; not the
    cost ranking ("the cheapest ... GPU-hours and memory") of a pick that no longer runs."""
    record = plan_json("--params", "7e9", *args)
    [note] = [n for n in record["notes"] if n.startswith("recommended by the consensus")]
    lo, hi = record["band"]["low"], record["band"]["high"]
    for text in (note, record["why"]):
        assert f"[{lo}, {hi}]" in text
        assert all(word in text for word in same), text
    assert "cheapest" not in note and "memory" not in note
