"""Serving (issue 30): prefill time for a prompt, decode time per token at a batch, tokens/s per GPU.

Reference card, "Performance model": prefill is compute-bound (the forward pass of the prompt, timed
by ``perf.layer_forward``'s rooflines, with tensor parallelism's 2 all-reduces per layer); decode is
memory-bound: every step reads the weights of its tensor-parallel shard and the batch's KV cache
(``blocks.kv_bytes_per_token``) from HBM, or is compute-bound at 2 FLOPs per active weight per sequence
when the batch is large; plus a fixed cost per layer and step (kernel launches and the all-reduces'
latency) that grows with depth: LAYER_OVERHEAD, an assumption (unverified; printed where used).
"""
from __future__ import annotations

from ..arch import blocks
from . import comm
from .perf import BYTES, STEP_EFFICIENCY, Layout, gemm_seconds, layer_forward

LAYER_OVERHEAD = 20e-6  # seconds per layer per decode step (assumed: ~10 kernels of a few microseconds each)


def serving_tp(arch, hw, context: int, batch: int, given: int | None = None) -> int:
    """The tensor-parallel degree a server runs: ``given``, else the smallest valid one within a node
    whose share of the weights and KV cache fits in HBM (the largest valid one when none fits)."""
    from ..arch.hardware import tp_sizes

    if given:
        return given
    weights = BYTES * (blocks.params_nonembedding(arch) + (blocks.params_embedding(arch) or 0))
    kv = (blocks.kv_bytes_per_token(arch, BYTES) or 0) * context * batch
    sizes = [t for t in tp_sizes(arch) if t <= min(hw.gpus_per_node, 8)] or [1]
    return next((t for t in sizes if (weights + kv) / t <= 0.9 * hw.hbm_bytes), sizes[-1])


def serving(arch, hw, context: int, batch: int, tp: int | None = None) -> dict:
    """Prefill seconds of one ``context``-token prompt, decode seconds per token (one step of ``batch``
    sequences at a cache of ``context`` tokens), and decode tokens/s for the tp group and per GPU, at
    tensor-parallel degree ``tp`` (None: ``serving_tp``'s)."""
    tp = serving_tp(arch, hw, context, batch, tp)
    depth = arch.depth + arch.decoder_depth
    layout = Layout(tp=tp, micro_batch=1)
    gemm, core, elementwise, _ = layer_forward(arch, hw, layout, context)
    allreduce = 2 * comm.all_reduce(hw, 1, tp, context * arch.width * BYTES)
    head = 0.0 if arch.vocab is None else gemm_seconds(1, arch.vocab / tp, arch.width, hw)
    prefill = depth * ((gemm + core + elementwise) / STEP_EFFICIENCY + allreduce) + head
    weights = BYTES * (blocks.params_active(arch) + (arch.vocab or 0) * arch.width) / tp
    kv = (blocks.kv_bytes_per_token(arch, BYTES) or 0) * context * batch / tp
    memory = (weights + kv) / hw.hbm_bandwidth
    compute = 2.0 * batch * (blocks.params_active(arch) + (arch.vocab or 0) * arch.width) / tp / (hw.bf16_flops * hw.gemm_efficiency)
    attention = 2.0 * batch * blocks.attention_blocks(arch) * context * arch.heads * (arch.qk_head_dim + arch.value_head_dim) / tp
    compute = compute + attention / (hw.bf16_flops * hw.gemm_efficiency)
    small = 2 * depth * comm.all_reduce(hw, 1, tp, batch * arch.width * BYTES) if tp > 1 else 0.0
    decode = float(max(memory, compute)) + small + depth * LAYER_OVERHEAD
    return {"prefill_seconds": float(prefill), "decode_seconds_per_token": decode,
            "decode_tokens_per_second": batch / decode, "decode_tokens_per_second_per_gpu": batch / decode / tp,
            "serving_tp": tp}
