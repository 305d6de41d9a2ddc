"""Budgets in the terms a team has: a time on a cluster, or a FLOP count the costed run spends.

- ``plan --days D --gpus G --gpu X``: the parameter count N (and its training length: the compute-optimal
  20 tokens per parameter, Hoffmann et al. 2022, unless --tokens gives it) whose recommended shape trains
  in D days on G GPUs by the performance model (each shape in its best layout, ``cost/perf/modeled.py``).
  Method: start from the flat-MFU answer (C = D·86,400·G·peak·0.4, N = sqrt(C/120), or C/(6·tokens)), plan
  it, and rescale N by (D / the recommended shape's predicted days)^(1/2) (time ∝ N·D ∝ N² at 20 tokens
  per parameter; ^1 with a fixed token count) until the pick's days are within ``DAYS_TOLERANCE`` of D
  (at most ``MOST_STEPS`` plans). The model's MFU changes with size and the pick is discrete, so the
  final days are D within that tolerance, printed in the plan.
- ``plan --flops C`` alone: N is sized with the FLOPs the costs count (``cost.run.train_flops_per_token``:
  6·N plus attention over the context and the logits), not C = 6·N·D, and the training length is then
  the one at which the recommended shape spends exactly C: tokens = C / its FLOPs per token. Without
  this, 6·N·D undercounts and the costed run spends more than the budget it was given.
- ``plan --params N --days D --gpus G``: the tokens (and tokens per parameter) the plan's recommended shape
  trains on in D days on that cluster, by the one performance model, at the step time the plan reports:
  tokens = D·86,400 / step_seconds · global_batch · context. Method: plan N at 20 tokens per parameter,
  scale the length by D / the pick's predicted days (a shape's step time does not depend on the run's
  length) and plan again at that length, until the pick's days are D (``tokens_for_days``).
Pure (no I/O); it calls the planner, so it lives above it.
"""
from __future__ import annotations

import math

from ..core.budgets import FLOPS_PER_PARAM_TOKEN, TOKENS_PER_PARAM

DAYS_TOLERANCE = 0.02
MOST_STEPS = 8
FLAT_MFU = 0.4  # the first guess only; the performance model replaces it


def _plan(budget: float, options, tokens: float, source: str):
    from .planner import plan

    return plan(int(round(budget)), options, source, tokens)


def size_for_days(days: float, options, tokens: float | None = None) -> tuple[int, float, object]:
    """(N, training tokens, the plan) whose recommended shape trains in about ``days`` on the plan's cluster."""
    from ..arch.hardware import accelerator, node_gpus

    spec = options.run
    gpus = spec.gpus or node_gpus(spec.gpu, spec.tp * spec.pp)
    compute = days * 86400 * gpus * accelerator(spec.gpu).bf16_flops * (spec.mfu if not options.perf else FLAT_MFU)
    n = compute / (FLOPS_PER_PARAM_TOKEN * tokens) if tokens else math.sqrt(compute / (FLOPS_PER_PARAM_TOKEN * TOKENS_PER_PARAM))
    power = 1.0 if tokens else 0.5
    best = None
    for _ in range(MOST_STEPS):
        length = tokens or float(TOKENS_PER_PARAM * round(n))
        p = _plan(n, options, length, "days")
        predicted = p.recommended.run.train_days
        miss = abs(predicted / days - 1)
        if best is None or miss < best[0]:
            best = (miss, int(round(n)), length, p)
        if miss <= DAYS_TOLERANCE:
            break
        n *= (days / predicted) ** power
    return best[1], best[2], best[3]


def flops_within(budget_flops: float, options, source: str = "flops") -> tuple[int, float]:
    """(N, tokens) for ``plan --flops C`` alone: the recommended shape trained on ``tokens`` spends C FLOPs
    as the costs count them, at about 20 tokens per parameter (module docstring)."""
    n = math.sqrt(budget_flops / (FLOPS_PER_PARAM_TOKEN * TOKENS_PER_PARAM))
    p = _plan(n, options, TOKENS_PER_PARAM * n, source)
    per_token = p.recommended.run.train_flops_per_token  # the costed FLOPs per token of the pick at N
    count = getattr(p.recommended, p.budget.count)
    ratio = per_token / (FLOPS_PER_PARAM_TOKEN * count)  # > 1: attention and logits on top of 6·N
    n = math.sqrt(budget_flops / (FLOPS_PER_PARAM_TOKEN * TOKENS_PER_PARAM * ratio))
    tokens = TOKENS_PER_PARAM * n
    for _ in range(3):  # the pick at the new length: the length that makes it spend C exactly
        p = _plan(n, options, tokens, source)
        exact = budget_flops / p.recommended.run.train_flops_per_token
        if abs(exact / tokens - 1) < 1e-12:
            break
        tokens = exact
    return int(round(n)), tokens


def tokens_for_days(budget: int, days: float, options, source: str = "params"):
    """The plan of ``budget`` whose training length is the tokens its recommended shape trains on in
    ``days`` on the plan's cluster (module docstring): the pick's predicted days equal ``days``."""
    tokens = float(TOKENS_PER_PARAM * budget)
    best = None
    for _ in range(MOST_STEPS):
        p = _plan(budget, options, tokens, source)
        predicted = p.recommended.run.train_days
        if not predicted:  # no time without a layout that runs the shape on the cluster
            from ..core.errors import InputError

            raise InputError("--days", f"{days:g}", f"the recommended {p.recommended.depth}x{p.recommended.width} has no "
                                                    "predicted time on this cluster, so no tokens can be fitted to the days")
        miss = abs(predicted / days - 1)
        if best is None or miss < best[0]:
            best = (miss, p)
        if miss <= 1e-9:
            break
        tokens *= days / predicted
    return best[1]
