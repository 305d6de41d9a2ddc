"""Communication of a parallel layout: collective times per GPU. Pure; NumPy arrays in.

Conventions (reference card, "Performance model"):
- ranks are ordered tensor (innermost), context, data, pipeline (outermost), as Megatron-LM orders
  them; a group of n ranks at stride ``inner`` stays inside one node when inner·n <= GPUs per node;
- a ring all-reduce moves 2·(n-1)/n of the bytes, reduce-scatter and all-gather (n-1)/n, each at the
  group's bus bandwidth (NCCL's convention, NVIDIA/nccl-tests doc/PERFORMANCE.md @03a204a1): the
  intra-node link, or the network, each times the share of it NCCL reaches (BUS_EFFICIENCY);
  a group that spans nodes runs at the slowest link's pace: the network card of one GPU;
- tensor parallelism: 2 all-reduces forward and 2 backward per layer of tokens·d·2 bytes (sequence
  parallelism: reduce-scatter + all-gather of the same volume), 2 more with full recomputation;
  not overlapped with compute (Megatron-LM);
- pipeline: each micro-batch sends its activations forward and its gradients back across each stage
  boundary (divided by t: Megatron-LM's scatter/gather), v times with v interleaved stages;
- data parallelism: gradients reduced once per step (ZeRO 0-2), overlapped with the last micro-batch's
  backward when the framework does (``Layout.overlap``); ZeRO-3 gathers the weights forward and
  backward and reduce-scatters the gradients for every micro-batch (3 x the weights' bytes,
  ``zero3_bytes``), prefetched layer by layer behind compute but for the first gather and the last
  reduce-scatter;
- context parallelism: keys and values of the other cp-1 chunks exchanged for every layer, hidden
  behind the attention core when it is longer; expert parallelism: 2 all-to-alls per pass.
"""
from __future__ import annotations

from ...core.num import Scalars, lib

# share of the link's bandwidth an all-reduce reaches: 8x A100 NVLink busbw 235 of 300 GB/s; AWS EFA
# "effective 340 Gbps" of 400 (stas00/ml-engineering network/README.md @0030e63f5275, verified)
BUS_EFFICIENCY_LINK = 0.78
BUS_EFFICIENCY_NETWORK = 0.85


def bus_bandwidth(hw, inner, n):
    """Bus bandwidth of a group of ``n`` ranks at stride ``inner`` (module docstring)."""
    np = lib(inner, n)
    inner, n = np.asarray(inner, dtype=np.float64), np.asarray(n, dtype=np.float64)
    node = hw.gpus_per_node
    inside = inner * n <= node
    return np.where(inside, hw.link_bandwidth * BUS_EFFICIENCY_LINK, hw.network_bandwidth * BUS_EFFICIENCY_NETWORK)


def all_reduce(hw, inner, n, nbytes):
    """Seconds of a ring all-reduce of ``nbytes`` over ``n`` ranks at stride ``inner``."""
    np = lib(n)
    n = np.asarray(n, dtype=np.float64)
    return 2.0 * (n - 1) / np.maximum(n, 1.0) * nbytes / bus_bandwidth(hw, inner, n)


def gather(hw, inner, n, nbytes):
    """Seconds of a reduce-scatter or an all-gather of ``nbytes`` (the whole buffer) over ``n`` ranks."""
    np = lib(n)
    n = np.asarray(n, dtype=np.float64)
    return (n - 1) / np.maximum(n, 1.0) * nbytes / bus_bandwidth(hw, inner, n)


def tp_seconds(hw, tp, nbytes, collectives, layout):
    """Tensor parallelism's all-reduces of one layer and one micro-batch."""
    return collectives * all_reduce(hw, 1, tp, nbytes)


def cp_seconds(hw, tp, cp, arch, micro_batch, context, core, passes):
    """Context parallelism's key/value exchange for one layer and one micro-batch, what the attention
    core (``core`` seconds per pass) does not hide."""
    np = lib(tp, cp, micro_batch, core)
    if np is Scalars and cp <= 1:  # nothing to exchange (the where below, without computing its other branch)
        return 0.0
    cp = np.asarray(cp, dtype=np.float64)
    kv = arch.kv_lora_rank + arch.qk_rope_head_dim if arch.latent else 2 * np.ceil(arch.kv_heads / tp) * arch.head_dim
    nbytes = 2.0 * micro_batch * context * kv  # all chunks' keys and values, bf16
    exposed = np.maximum(gather(hw, tp, cp, nbytes) - core, 0.0)
    return np.where(cp > 1, passes * exposed, 0.0)


def ep_seconds(hw, tp, ep, nbytes, count):
    """Expert parallelism's all-to-alls (dispatch and combine) for one layer and one micro-batch."""
    np = lib(tp, ep, nbytes)
    if np is Scalars and ep <= 1:
        return 0.0
    ep = np.asarray(ep, dtype=np.float64)
    return np.where(ep > 1, count * gather(hw, tp, ep, nbytes), 0.0)


def p2p_seconds(hw, tp, cp, dp, pp, nbytes, layout, interleave):
    """Pipeline sends of one micro-batch across a stage boundary, forward and backward."""
    np = lib(tp, cp, dp, pp, nbytes, interleave)
    if np is Scalars and pp <= 1:
        return 0.0
    pp = np.asarray(pp, dtype=np.float64)
    inner = np.asarray(tp, dtype=np.float64) * cp * dp
    bandwidth = np.where(inner >= hw.gpus_per_node, hw.network_bandwidth * BUS_EFFICIENCY_NETWORK,
                         hw.link_bandwidth * BUS_EFFICIENCY_LINK)
    return np.where(pp > 1, 2.0 * interleave * nbytes / tp / bandwidth, 0.0)


def zero3_bytes(param_bytes, dp, micro):
    """Bytes one GPU sends per step under ZeRO-3 for ``param_bytes`` of (bf16) parameters sharded over
    ``dp`` ranks: per micro-batch the weights gathered forward and again backward and the gradients
    reduce-scattered, 3 x (dp-1)/dp of the bytes each (ZeRO-3 moves 3 Psi, 1.5x plain data
    parallelism's 2 Psi: Rajbhandari et al. 2020, arXiv 1910.02054, Sec. 7.2.2; ring collectives as
    NCCL counts them). Gradient accumulation does not save it: every micro-batch gathers again."""
    return micro * 3.0 * (dp - 1) / dp * param_bytes


def dp_seconds(hw, tp, cp, dp, pp, grad_bytes, zero, micro, stage, backward_last, layout, units=1):
    """Data parallelism's exposed seconds per step: gradient reduction (all-reduce, or reduce-scatter
    + all-gather of the weights with ZeRO 1-2: the same volume), minus what hides behind the last
    backward; ZeRO-3: per micro-batch, 2 all-gathers and a reduce-scatter (``zero3_bytes``) behind that
    micro-batch's compute, of which the first unit's gather (nothing to compute until its weights
    arrive) and the last unit's reduce-scatter (nothing left to compute behind it) are never hidden:
    a layer-by-layer prefetch pipeline, ``units`` layers deep (pytorch/pytorch docs/source/notes/fsdp.rst,
    "FSDP Prefetch Nuances": "layer 1 all-gather can overlap with layer 0 forward compute", layer 0's
    with nothing; the backward mirrors it)."""
    np = lib(tp, cp, dp, pp, grad_bytes, zero, micro, stage)
    if np is Scalars and dp <= 1:
        return 0.0
    inner = np.asarray(tp, dtype=np.float64) * cp
    reduce = all_reduce(hw, inner, dp, grad_bytes)
    hidden = backward_last if layout.overlap else 0.0
    plain = np.maximum(reduce - hidden, 0.0)
    z3 = 3.0 * gather(hw, inner, dp, grad_bytes)
    ends = 2.0 * z3 / 3.0 / units  # the first unit's gather and the last unit's reduce-scatter
    z3 = micro * (ends + np.maximum(z3 - ends - stage, 0.0) if layout.overlap else z3)
    return np.where(np.asarray(dp) > 1, np.where(np.asarray(zero) >= 3, z3, plain), 0.0)
