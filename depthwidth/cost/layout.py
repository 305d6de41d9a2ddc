"""Layout search (issue 30): the fastest parallel layout of one shape on a cluster that fits in memory.

Enumerates, as NumPy arrays evaluated at once by ``perf.training_rates``: tensor-parallel degrees the
heads, KV heads and feed-forward allow (``hardware.tp_sizes``) within one node; context-parallel degrees
for long contexts; every pipeline degree that leaves a whole data-parallel degree (one that does not
divide the depth is costed with its most loaded stage); interleaved stages 1, 2, 4, 8 (at least one layer
per virtual stage); micro-batches of powers of two and the divisors of a replica's share of the batch (up to 64); recomputation none/selective/full; ZeRO 0-3. What the
caller fixes stays fixed. Memory per GPU is ``cost.run``'s model (Korthikanti et al. 2022 activations,
ZeRO model states), divided by cp for the activations; a layout fits when it is <= the HBM bytes.

Global batch default (sequences = tokens / context): GPT-3's batch sizes in tokens by model size,
Brown et al. 2020, Table 2.1: 0.5M up to 760M parameters, 1M to 2.7B, 2M to 13B, 3.2M above.
"""
from __future__ import annotations

import numpy as np

from ..arch import blocks
from ..arch.hardware import tp_sizes
from . import run
from .perf import RECOMPUTE_CODE, Layout, attention_kernel, training_rates

RECOMPUTE_NAMES = ("none", "selective", "full")
BATCH_TOKENS = ((0.76e9, 0.5e6), (2.7e9, 1e6), (13e9, 2e6), (float("inf"), 3.2e6))  # Brown et al. 2020, Table 2.1
LONG_CONTEXT = 32768  # context parallelism is searched from this context up (Llama 3 used it at 131,072)


def default_global_batch(params: float, context: int) -> int:
    """GPT-3's batch in tokens for a model of ``params`` parameters, in sequences of ``context`` tokens (>= 1)."""
    tokens = next(t for limit, t in BATCH_TOKENS if params <= limit)
    return max(1, round(tokens / context))


def _divisors(n: int) -> list[int]:
    return [k for k in range(1, n + 1) if n % k == 0]


def candidates(arch, hw, gpus: int, context: int, global_batch: int, fixed: dict) -> dict:
    """Every layout to try, as equal-length arrays keyed by Layout field (before the memory check)."""
    depth = arch.depth + arch.decoder_depth
    tps = [fixed["tp"]] if fixed.get("tp") else [t for t in tp_sizes(arch) if t <= hw.gpus_per_node and gpus % t == 0]
    cps = [fixed["cp"]] if fixed.get("cp") else ([1, 2, 4, 8, 16] if context >= LONG_CONTEXT else [1])
    rows = []
    for tp in tps or [1]:
        for cp in cps:
            if gpus % (tp * cp):
                continue
            rest = gpus // (tp * cp)
            pps = [fixed["pp"]] if fixed.get("pp") else [p for p in _divisors(rest) if p <= depth]
            for pp in pps:
                if rest % pp:
                    continue
                dp = rest // pp
                vs = [fixed["interleave"]] if fixed.get("interleave") else [v for v in (1, 2, 4, 8) if v == 1 or (pp > 1 and pp * v <= depth)]
                share = -(-global_batch // dp)  # sequences per replica per step
                mbs = [fixed["micro_batch"]] if fixed.get("micro_batch") else sorted(
                    {b for b in (1, 2, 4, 8, 16, 32, 64) if b <= share} | {b for b in _divisors(share) if b <= 64})
                for v in vs:
                    for mb in mbs:
                        rows.append((tp, cp, pp, dp, v, mb))
    if not rows:
        return {}
    grid = np.array(rows, dtype=np.float64)
    rcs = [RECOMPUTE_CODE[fixed["recompute"]]] if fixed.get("recompute") else [0, 1, 2]
    zeros = [fixed["zero"]] if fixed.get("zero") is not None else [0, 1, 2, 3]
    n, k, z = len(grid), len(rcs), len(zeros)
    grid = np.repeat(grid, k * z, axis=0)
    rc = np.tile(np.repeat(np.array(rcs, dtype=np.float64), z), n)
    zero = np.tile(np.array(zeros, dtype=np.float64), n * k)
    return {"tp": grid[:, 0], "cp": grid[:, 1], "pp": grid[:, 2], "dp": grid[:, 3], "interleave": grid[:, 4],
            "micro_batch": grid[:, 5], "recompute": rc, "zero": zero}


def memory_per_gpu(arch, lay: dict, context: int, sequence_parallel: bool = True, flash: bool = False):
    """Training memory per GPU of each layout (bytes): cost.run's formulas over arrays. A flash attention
    kernel keeps no T x T scores (Dao et al. 2022), so without recomputation it stores what selective
    recomputation stores."""
    depth = arch.depth + arch.decoder_depth
    tp, pp, dp, cp, mb, rc, zero = (lay[k] for k in ("tp", "pp", "dp", "cp", "micro_batch", "recompute", "zero"))
    embedding, head = run._embedding_matrices(arch)
    nonembedding = blocks.params_nonembedding(arch)
    layers = nonembedding * np.ceil(depth / pp) / depth
    stage = np.where(pp == 1, layers + embedding + (0 if arch.tied else head), layers + max(embedding, head))
    weights, gradients, optimizer = run.model_state_bytes(stage / tp, 0, 1)
    weights = np.where(zero >= 3, weights / dp, weights)
    gradients = np.where(zero >= 2, gradients / dp, gradients)
    optimizer = np.where(zero >= 1, optimizer / dp, optimizer)
    ffn = run._ffn_per_token(arch)
    rc = np.where(flash & (rc == 0), 1, rc)
    per_layer = np.select([rc == 0, rc == 1, rc == 2], [
        run.activation_bytes_per_layer(context, mb, arch.width, arch.heads, ffn, tp, sequence_parallel, name)
        for name in RECOMPUTE_NAMES])
    in_flight = np.ceil(depth / pp) * pp
    extra = (8 * context * mb + context * mb * arch.width) * pp
    extra = extra + np.where(pp == 1, 4 * context * mb * (arch.width + (arch.vocab or 0)), 0.0)
    activations = (per_layer * in_flight + extra / (tp if sequence_parallel else 1)) / cp
    return weights + gradients + optimizer + activations


def search(arch, hw, gpus: int, context: int, global_batch: int, fixed: dict | None = None,
           attention: str | None = None, overlap: bool = True, memory_limit: float | None = None, **options):
    """The fastest layout that fits: (layout dict of plain numbers, rates dict, memory bytes, layouts tried,
    layouts that fit); None for the layout when nothing fits (the least memory one is then returned
    with ``fits`` False in the layout). ``options``: other Layout fields (sequence_parallel, dropout);
    ``memory_limit``: bytes per GPU (default the HBM; infinity: every layout fits, as a published run did)."""
    fixed = fixed or {}
    lay = candidates(arch, hw, gpus, context, global_batch, fixed)
    if not lay:
        return None
    layout = Layout(**lay, attention=attention, overlap=overlap, **options)
    memory = memory_per_gpu(arch, lay, context, options.get("sequence_parallel", True), attention_kernel(arch, layout) == "flash")
    rates = training_rates(arch, hw, layout, context, global_batch, gpus)
    step = np.asarray(rates["step_seconds"], dtype=np.float64)
    fits = memory <= (hw.hbm_bytes if memory_limit is None else memory_limit)
    if fits.any():
        order = np.lexsort((memory, np.where(fits, step, np.inf)))
    else:
        order = np.argsort(memory)
    i = int(order[0])
    chosen = {k: int(v[i]) for k, v in lay.items()}
    chosen["recompute"] = RECOMPUTE_NAMES[chosen["recompute"]]
    chosen["fits"] = bool(fits[i])
    picked = {k: float(np.broadcast_to(v, step.shape)[i]) for k, v in rates.items()}
    return chosen, picked, float(memory[i]), int(step.size), int(fits.sum())
