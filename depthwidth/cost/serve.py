"""Serving: time to first token, decode time per token at a batch, tokens/s per GPU.

The decode step of one tensor-parallel rank, term by term (docs/performance.md, "Serving"):

- weights: every step reads the rank's share of the active weights and the output head from HBM, at the
  accelerator's *achievable* bandwidth (``hardware.achievable_bandwidth``: a published decode benchmark,
  not the datasheet), or is compute-bound at 2 FLOPs per weight and sequence (the GEMM ceiling of
  ``perf``) when the batch is large: max(bytes / bandwidth, FLOPs / (peak x MAMF share));
- KV cache: the batch's keys and values of the rank's KV heads (fewer KV heads than tp are replicated),
  read by the attention kernel at the same bandwidth, or the kernel's arithmetic when that is slower:
  decode attention (one query per sequence) runs as matrix-vector products, on the CUDA cores, at
  DECODE_ATTENTION_SHARE of the tensor peak; grouped-query models at large batch hit that bound;
- activations: a few vectors of d per layer and sequence, read by the same kernels: left out (< 0.1% of
  the weights' bytes at batch 1; at large batch the GEMM ceiling above covers those kernels);
- tensor parallelism: 2 all-reduces per layer of batch x d values, each a fixed latency
  (ALLREDUCE_LATENCY, plus ALLREDUCE_HOP_LATENCY per step of the ring's 2(n-1)) and the ring's bytes at
  the link's bus bandwidth (``comm.all_reduce``); small messages are latency-bound;
- kernel launches: LAYER_OVERHEAD per layer and step, the time a layer's ~10 small kernels spend beyond
  their bytes (launch, ramp-up and tail); the engines hide the CPU's launch cost (CUDA graphs in gpt-fast,
  a TensorRT engine, TurboMind's C++ loop), so what remains is a few microseconds per layer;
- time to first token: the forward pass of the prompt (``perf.step.layer_forward``'s rooflines at the achievable
  bandwidth, over PREFILL_EFFICIENCY; 2 all-reduces per layer) + REQUEST_OVERHEAD, the fixed cost per
  request. That fits to 0 once each engine's definition is read: LMDeploy streams its first token after
  the first decode step (its 1-token prompts take one decode step; the table's rows say so), which is the
  fixed cost that made 128-token prompts 33-37% low before.

The constants without a datasheet or a benchmark of their own (LAYER_OVERHEAD, ALLREDUCE_*,
DECODE_ATTENTION_SHARE, PREFILL_EFFICIENCY, REQUEST_OVERHEAD) are fitted once on
tests/data/published_serving.json (47 measurements from gpt-fast, torchao, TensorRT-LLM and LMDeploy on
A100-80GB, one on H100);
the test refits them, recomputes the errors quoted below (MEASURED_ERROR) and the leave-one-engine-out
errors (docs/performance.md, "Serving"). A measured decode rate or time per output token fixes an
engine's ``efficiency`` (``serve_calibrate.fit_efficiency``): the modelled step over the measured one,
applied to every decode figure.
"""
from __future__ import annotations

from ..arch import blocks
from .perf import comm
from .perf.step import BYTES, Layout, gemm_seconds, layer_forward

LAYER_OVERHEAD = 9e-6  # seconds per layer per decode step: kernel launches and tails beyond the bytes: fitted
ALLREDUCE_LATENCY = 20e-6  # seconds per small all-reduce (NCCL launch + synchronisation): fitted, A100 NVLink
ALLREDUCE_HOP_LATENCY = 0.2e-6  # seconds per step of the ring (2(n-1) steps, NCCL's ring all-reduce): fitted
DECODE_ATTENTION_SHARE = 0.013  # decode attention FLOP/s over the bf16 tensor peak (~21% of A100's 19.5 TFLOP/s FP32): fitted
REQUEST_OVERHEAD = 0.0  # seconds per request before the first token beyond the prompt's forward pass: fitted 0
PREFILL_EFFICIENCY = 0.91  # share of the rooflines (MAMF-based GEMMs, flash attention) a prompt's forward pass reaches: fitted

# What the model missed on the published table, out of the box (tests/test_serving_table.py recomputes
# these from tests/data/published_serving.json and asserts they are equal): decode rows (output tokens/s
# of a batch, prefill included) and time to first token, median and largest |error|, and the decode
# median when the engine's other rows are predicted from one calibrated row.
MEASURED_ERROR = {"decode_rows": 35, "decode_median": 0.036, "decode_max": 0.219, "ttft_rows": 12,
                  "ttft_median": 0.045, "calibrated_decode_median": 0.049}
ERROR_NOTE = ("serving: against 47 published measurements (A100-80GB, one H100; gpt-fast, torchao, TensorRT-LLM, LMDeploy; "
              "tests/data/published_serving.json) decode tokens/s is off by a median {decode_median:.1%} "
              "(worst {decode_max:.0%}), time to first token by {ttft_median:.1%}; calibrated on one measured "
              "decode rate of the engine, {calibrated_decode_median:.1%} (docs/performance.md, Serving)")


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


def allreduce_seconds(hw, tp: int, nbytes: float) -> float:
    """One all-reduce of ``nbytes`` over ``tp`` ranks of a node: latency + the ring's bytes (module docstring)."""
    if tp <= 1:
        return 0.0
    return ALLREDUCE_LATENCY + 2 * (tp - 1) * ALLREDUCE_HOP_LATENCY + float(comm.all_reduce(hw, 1, tp, nbytes))


def _kv_share(arch, tp: int) -> float:
    """The share of the KV cache one rank holds: its ceil(G/tp) of G key/value heads (latent: all)."""
    if arch.latent:
        return 1.0
    return -(-arch.kv_heads // tp) / arch.kv_heads


def decode_terms(arch, hw, tp: int, batch: int, context: int, replicated_head: bool = False) -> dict:
    """Seconds of one decode step of ``batch`` sequences at a cache of ``context`` tokens on one rank of
    ``tp``, by term (module docstring): weights, kv_cache, allreduce, overhead and their sum, step.
    The output head is split by tp (Megatron-LM, TensorRT-LLM), or read whole by every rank with
    ``replicated_head`` (gpt-fast's tp.py shards only attention and feed-forward)."""
    from ..arch.hardware import achievable_bandwidth

    bandwidth = achievable_bandwidth(hw)
    depth = arch.depth + arch.decoder_depth
    weights = blocks.params_active(arch) / tp + (arch.vocab or 0) * arch.width / (1 if replicated_head else tp)
    gemm = max(BYTES * weights / bandwidth, 2.0 * batch * weights / (hw.bf16_flops * hw.gemm_efficiency))
    kv_bytes = (blocks.kv_bytes_per_token(arch, BYTES) or 0) * _kv_share(arch, tp) * context * batch
    flops = 2.0 * batch * blocks.attention_blocks(arch) * context * arch.heads * (arch.qk_head_dim + arch.value_head_dim) / tp
    kv = max(kv_bytes / bandwidth, flops / (hw.bf16_flops * DECODE_ATTENTION_SHARE))
    allreduce = 2 * depth * allreduce_seconds(hw, tp, batch * arch.width * BYTES)
    overhead = depth * LAYER_OVERHEAD
    return {"weights": gemm, "kv_cache": kv, "allreduce": allreduce, "overhead": overhead,
            "step": gemm + kv + allreduce + overhead}


def prefill_seconds(arch, hw, tp: int, batch: int, prompt: int) -> float:
    """Seconds from the requests to their first tokens: ``batch`` prompts of ``prompt`` tokens at once."""
    from dataclasses import replace
    from ..arch.hardware import achievable_bandwidth

    hw = replace(hw, hbm_bandwidth=achievable_bandwidth(hw))  # the weights' read at the achievable rate
    depth = arch.depth + arch.decoder_depth
    gemm, core, elementwise, _ = layer_forward(arch, hw, Layout(tp=tp, micro_batch=batch), prompt)
    allreduce = 2 * allreduce_seconds(hw, tp, batch * prompt * arch.width * BYTES)
    head = 0.0 if arch.vocab is None else gemm_seconds(batch, arch.vocab / tp, arch.width, hw)
    return REQUEST_OVERHEAD + depth * ((gemm + core + elementwise) / PREFILL_EFFICIENCY + allreduce) + head


def output_rate(arch, hw, tp: int, batch: int, prompt: int, output: int, efficiency: float = 1.0,
                replicated_head: bool = False) -> float:
    """Output tokens/s of a batch served start to end (what the engines' benchmarks report): batch x
    output over the prefill and output - 1 decode steps at the mean cache of prompt + output / 2."""
    step = decode_terms(arch, hw, tp, batch, prompt + output / 2, replicated_head)["step"] / efficiency
    return batch * output / (prefill_seconds(arch, hw, tp, batch, prompt) + (output - 1) * step)


def serving(arch, hw, context: int, batch: int, tp: int | None = None, efficiency: float = 1.0) -> dict:
    """Time to first token of one ``context``-token prompt, decode seconds per token (one step of
    ``batch`` sequences at a cache of ``context`` tokens, divided by a calibrated ``efficiency``), and
    decode tokens/s for the tp group and per GPU, at tensor-parallel degree ``tp`` (None: ``serving_tp``'s)."""
    tp = serving_tp(arch, hw, context, batch, tp)
    decode = decode_terms(arch, hw, tp, batch, context)["step"] / efficiency
    return {"prefill_seconds": float(prefill_seconds(arch, hw, tp, 1, context)), "decode_seconds_per_token": decode,
            "decode_tokens_per_second": batch / decode, "decode_tokens_per_second_per_gpu": batch / decode / tp,
            "serving_tp": tp}
