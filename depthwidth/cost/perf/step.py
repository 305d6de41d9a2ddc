"""Performance model of training: the time of one optimizer step of one shape, on one
accelerator, in one parallel layout. Pure; every layout field may be a NumPy array (the layout search
evaluates hundreds of layouts of one shape at once). Split as Calculon does (Isaev et al., SC'23): the
model (``blocks.Architecture``), the system (``hardware.Accelerator``), the execution (``Layout``).

Compute (reference card, "Performance model"):
- every matrix multiply of a layer (q/k/v, attention output, feed-forward or experts, the output head)
  is timed on a roofline, max(FLOPs / (peak·eff), bytes / HBM bandwidth). eff is the accelerator's best
  measured share of peak (MAMF, ``Accelerator.gemm_efficiency``) times tile quantization (each of the
  output's dimensions padded to a 128-wide tile, 16-wide below 128) and wave quantization (tiles spread over the compute
  units in whole waves): NVIDIA, "Matrix Multiplication Background User's Guide", Sec. 2.3 and 3;
  Anthony et al. 2024, arXiv 2401.14489;
- the attention core: ``flash`` (FlashAttention, Dao et al. 2022/2023: one fused kernel, causal half of
  the T x T scores computed, ``Accelerator.flash_efficiency`` of peak) or ``unfused`` (Megatron-LM 2021/2022: the score
  and context batched products on the roofline, the full T x T matrix, its softmax and dropout moved
  through HBM);
- element-wise work (norms, activation, residual adds, dropout) from the bytes it reads and writes;
- backward = 2 x forward, but a flash kernel's backward 2.5 x its forward (FLASH_BACKWARD: it recomputes the
  scores); full recomputation adds a forward, selective the unfused attention core, op every second of the
  forward's matrix multiplies and its element-wise work (``op_recompute_share``) (Korthikanti et al.
  2022, Sec. 5);
- the output head: its three products and the fp32 loss over the vocabulary, LOSS_BYTES per logit
  through HBM.
Communication in ``comm.py``; the pipeline, data parallelism and the step here.
"""
from __future__ import annotations


from ...arch import blocks
from . import comm
from ...core.num import lib
from ...core.frozen import frozen

SMALL_TILE = 16  # tensor-core operands come in multiples of 8 (fp16) elements: NVIDIA guide Sec. 2.2; 16 assumed
TILE = 128  # cuBLAS tile edge (NVIDIA Matrix Multiplication Background guide, Sec. 2.3: 256x128, 128x128 typical)
BYTES = 2  # bf16 weights, activations and gradients
# a fused attention kernel's backward does 2.5x its forward's FLOPs: it recomputes the scores and takes five
# products to the forward's two (Dao-AILab/flash-attention benchmarks/benchmark_flash_attention.py @0469c727,
# flops(): "2.5 * f if mode == 'bwd'"); the rest of a layer's backward is 2x its forward
FLASH_BACKWARD = 2.5
# the loss over the vocabulary runs in fp32 (Megatron-LM megatron/model/gpt_model.py: vocab_parallel_cross_entropy(
# output.float(), labels), read in forks of it; PyTorch docs amp.html, "CUDA Ops that can autocast to float32":
# cross_entropy, log_softmax, nll_loss, read in copies of the page): per logit,
# each pass counted once, the upcast (read 2 + write 4 bytes), the softmax (4 + 4), its backward (4 + 4) and the
# gradient back to bf16 (4 + 2): 28 bytes, a lower bound (in-place passes of a stack add more)
LOSS_BYTES = 28
ADAM_BYTES_PER_PARAM = 36  # optimizer step: reads 2+4+12 and writes 2+4... of bf16 weight, fp32 grad/master, m, v
RECOMPUTE_CODE = {"none": 0, "selective": 1, "full": 2, "op": 1}  # "op": selective's code and memory, Layout.recompute_op
# The share of the modelled compute time a real training step achieves: what the model leaves out (kernel
# launches and synchronisation, the loss and optimizer kernels, data loading, stragglers, clocks below boost
# under sustained load). ONE constant for every accelerator and run, set once so that the median error over
# the published-runs table (tests/data/published_runs.json) is near zero: calibrated, not sourced.
STEP_EFFICIENCY = 0.82


@frozen
class Layout:
    """A parallel layout: tensor tp, pipeline pp (``interleave`` stages per device), data dp, context cp
    and expert ep degrees, micro-batch (sequences), recomputation (0 none, 1 selective, 2 full), ZeRO
    stage, sequence parallelism, whether gradient reduction overlaps the backward pass, attention kernel.
    Fields may be NumPy arrays of one length (many layouts at once)."""

    tp: object = 1
    pp: object = 1
    dp: object = 1
    cp: object = 1
    micro_batch: object = 1
    recompute: object = 1
    zero: object = 1
    interleave: object = 1
    ep: object = 1
    sequence_parallel: bool = True
    overlap: bool = True
    attention: str | None = None
    dropout: bool | None = None
    efficiency: float | None = None  # the stack's share of the modelled compute time (None: STEP_EFFICIENCY; a calibration's)
    recompute_op: bool = False  # with selective recomputation: torchtitan's op-level policy (``op_recompute_share``)


def recompute_options(recompute: str | None) -> dict:
    """The Layout fields a recomputation name brings beyond its code: ``op`` sets ``recompute_op``; {} for the others."""
    return {"recompute_op": True} if recompute == "op" else {}


def op_recompute_share(arch) -> float:
    """The share of a layer's forward matrix-multiply FLOPs that torchtitan's op-level selective recomputation runs
    again: its policy "Saves output of all compute ops, except every second mm" (pytorch/torchtitan
    torchtitan/parallelisms/parallelize_llama.py @004b3148, ``_apply_ac_to_transformer_block``), counting a block's
    products in the order its forward calls them: wq, wk, wv, wo, then w1, w3, w2 (gated; ``models/llama/model.py``)
    or up, down; so wk, wo and w3 (or down) are recomputed. Latent attention or experts: half, by count."""
    if arch.latent or arch.moe:
        return 0.5
    d, q, kv, f = arch.width, arch.heads * arch.head_dim, arch.kv_heads * arch.head_dim, arch.ffn
    products = [d * q, d * kv, d * kv, q * d] + ([d * f, d * f, f * d] if arch.gated else [d * f, f * d])
    return sum(products[1::2]) / sum(products)


def step_efficiency(layout: Layout) -> float:
    """The share of the modelled compute time the layout's stack achieves: a calibration's, else STEP_EFFICIENCY."""
    return STEP_EFFICIENCY if layout.efficiency is None else layout.efficiency


MEGATRON_FAMILIES = ("vanilla", "gpt2")  # blocks trained the GPT-3/Megatron-LM way: dropout


def attention_kernel(arch, layout: Layout) -> str:
    """The layout's attention kernel; by default ``flash`` for every block, as engineers train today
    (the published runs of Megatron-LM 2021-22, which had no fused kernel, say ``unfused``)."""
    return layout.attention or "flash"


def gemm_seconds(m, n, k, hw, batch=1.0):
    """Time of ``batch`` products (m x k)·(k x n) in bf16 on ``hw``: the roofline with tile and wave
    quantization (module docstring)."""
    np = lib(m, n, k, batch)
    m = np.maximum(np.asarray(m, dtype=np.float64), 1.0)
    n = np.maximum(np.asarray(n, dtype=np.float64), 1.0)
    k = np.maximum(np.asarray(k, dtype=np.float64), 1.0)
    # a dimension below one tile runs in a skinny kernel padded to SMALL_TILE (matrix-vector products stay memory-bound)
    em, en = np.where(m < TILE, SMALL_TILE, TILE), np.where(n < TILE, SMALL_TILE, TILE)
    tm, tn = np.ceil(m / em), np.ceil(n / en)
    eff = hw.gemm_efficiency * (m / (tm * em)) * (n / (tn * en))
    if hw.compute_units:
        waves = tm * tn * batch / hw.compute_units
        eff = eff * waves / np.ceil(waves)
    flops = 2.0 * m * n * k * batch
    traffic = BYTES * (m * k + k * n + m * n) * batch
    return np.maximum(flops / (hw.bf16_flops * eff), traffic / hw.hbm_bandwidth)


def gemm_floor(m, n, k, hw, batch=1.0):
    """A lower bound of ``gemm_seconds`` that is proportional to m·batch: the roofline without tile and
    wave quantization, at the accelerator's GEMM ceiling, with the traffic of the activations only (the
    weights' k·n read left out). What the layout search orders layouts by before it times them."""
    np = lib(m, n, k, batch)
    compute = 2.0 * m * n * k * batch / (hw.bf16_flops * hw.gemm_efficiency)
    return np.maximum(compute, BYTES * (m * k + m * n) * batch / hw.hbm_bandwidth)


def layer_forward(arch, hw, layout: Layout, context: int, gemm=None):
    """Forward seconds of one layer on one micro-batch, per GPU: (matrix multiplies, attention core,
    element-wise work, MoE all-to-all bytes) for the average layer of the stack. ``gemm``: how a matrix
    product is timed (default ``gemm_seconds``; ``gemm_floor`` gives a lower bound proportional to the
    micro-batch, the layout search's)."""
    gemm = gemm or gemm_seconds
    np = lib(layout.tp, layout.cp, layout.micro_batch, layout.ep)
    t, c, b = (np.asarray(x, dtype=np.float64) for x in (layout.tp, layout.cp, layout.micro_batch))
    d, h, hd = arch.width, arch.heads, arch.head_dim
    tokens = b * context / c
    heads = h / t
    kv = np.ceil(arch.kv_heads / t)  # fewer KV heads than t: replicated
    if arch.latent:
        qk, v = arch.qk_head_dim, arch.value_head_dim
        q = (gemm(tokens, arch.q_lora_rank, d, hw) + gemm(tokens, heads * qk, arch.q_lora_rank, hw)
             if arch.q_lora_rank else gemm(tokens, heads * qk, d, hw))
        proj = (q + gemm(tokens, arch.kv_lora_rank + arch.qk_rope_head_dim, d, hw)
                + gemm(tokens, heads * (arch.qk_nope_head_dim + v), arch.kv_lora_rank, hw)
                + gemm(tokens, d, heads * v, hw))
    else:
        qk = v = hd
        proj = gemm(tokens, (heads + 2 * kv) * hd, d, hw) + gemm(tokens, d, heads * hd, hw)
    # attention core over the context: scores (s/c x s) and context (s/c x v) per head
    kv_len = float(context)
    if attention_kernel(arch, layout) == "flash":
        flops = 0.5 * 2.0 * b * heads * (context / c) * kv_len * (qk + v)
        core = flops / (hw.bf16_flops * hw.flash_efficiency)
        core_bytes = 0.0
    else:
        core = (gemm(context / c, kv_len, qk, hw, b * heads) + gemm(context / c, v, kv_len, hw, b * heads))
        core_bytes = 9.0 * b * heads * (context / c) * kv_len  # softmax read+write 4, dropout read+write+mask 5
    # feed-forward: dense, or the experts a token is routed to
    ffn_time, ffn_width, a2a = _ffn(arch, hw, tokens, t, layout, gemm)
    split = t if layout.sequence_parallel else 1.0
    dropout = arch.family in MEGATRON_FAMILIES if layout.dropout is None else layout.dropout
    per_token = (2 * 4 * d + 2 * 3 * d + (6 * d if dropout else 0)) / split + (3 if arch.gated else 2) * ffn_width / t
    elementwise = BYTES * per_token * tokens / hw.hbm_bandwidth
    return proj + ffn_time, core + core_bytes / hw.hbm_bandwidth, elementwise, a2a


def _ffn(arch, hw, tokens, t, layout, gemm):
    """(seconds, width a token passes through, all-to-all bytes) of one layer's feed-forward."""
    d = arch.width
    up = 2 if arch.gated else 1
    dense = gemm(tokens, up * arch.ffn / t, d, hw) + gemm(tokens, d, arch.ffn / t, hw)
    if not arch.moe:
        return dense, float(arch.ffn), 0.0
    np = lib(tokens, t, layout.ep)
    ep = np.asarray(layout.ep, dtype=np.float64)
    local = arch.experts / ep  # experts on this GPU; each sees top_k·tokens·ep/E tokens when balanced
    per_expert = arch.top_k * tokens * ep / arch.experts
    fe = arch.expert_ffn
    moe = local * (gemm(per_expert, up * fe / t, d, hw) + gemm(per_expert, d, fe / t, hw))
    moe = moe + gemm(tokens, arch.experts, d, hw)
    if arch.shared_experts:
        fs = arch.shared_expert_ffn
        moe = moe + arch.shared_experts * (gemm(tokens, up * fs / t, d, hw) + gemm(tokens, d, fs / t, hw))
    frac = arch.dense_layers / arch.depth
    width = frac * arch.ffn + (1 - frac) * (arch.top_k * fe + arch.shared_experts * (arch.shared_expert_ffn or 0))
    a2a = (1 - frac) * BYTES * arch.top_k * tokens * d / t  # dispatch (and combine) volume per GPU
    return frac * dense + (1 - frac) * moe, width, a2a


def head_seconds(arch, hw, tokens, tp, gemm=None, efficiency: float = STEP_EFFICIENCY):
    """The output head's three passes over ``tokens`` tokens on one GPU (vocabulary split by tp) and the fp32
    loss over its logits (LOSS_BYTES each through HBM); ``gemm`` as in ``layer_forward``; ``efficiency``:
    ``step_efficiency``'s."""
    gemm = gemm or gemm_seconds
    if arch.vocab is None:
        return 0.0
    loss = LOSS_BYTES * tokens * arch.vocab / tp / hw.hbm_bandwidth
    return (3.0 * gemm(tokens, arch.vocab / tp, arch.width, hw) + loss) / efficiency


def stage_params_per_gpu(arch, nonembedding, embedding, stage_layers, pp, tp):
    """Parameters on one GPU of the most loaded stage: its layers' share, the embedding (split between
    the first and last stages when pp > 1), over tp."""
    np = lib(stage_layers, pp, tp)
    return (nonembedding * stage_layers / (arch.depth + arch.decoder_depth) + embedding / np.where(pp > 1, 2.0, 1.0)) / tp


def optimizer_seconds(hw, params_gpu, divisor):
    """The optimizer step reading and writing its states for ``params_gpu`` / ``divisor`` parameters."""
    return ADAM_BYTES_PER_PARAM * params_gpu / divisor / hw.hbm_bandwidth


def train_step(arch, hw, layout: Layout, context: int, global_batch: int, forward: tuple | None = None,
               counts: tuple | None = None) -> dict:
    """One optimizer step of ``global_batch`` sequences of ``context`` tokens: seconds and its parts.

    Pipeline (Narayanan et al. 2021, Sec. 2.2): m = B / (dp·b) micro-batches; 1F1B takes
    (m + (p - 1)/v)·t_stage with t_stage the slowest stage's forward+backward of one micro-batch
    (ceil(L/p) layers, the last stage also the output head). Data parallelism (``comm.dp_seconds``):
    gradient reduction, overlapped with the last micro-batch's backward when ``overlap``; ZeRO-3 also
    gathers the weights for every micro-batch. Then the optimizer step reads and writes its states.
    ``forward``: ``layer_forward``'s result for this layout, when the caller has it (the layout search
    shares it between the layouts of one tensor-parallel degree, context split and micro-batch); ``counts``:
    ``(params_nonembedding, params_embedding or 0, flops_per_token)`` of ``arch`` at ``context``, likewise."""
    np = lib(layout.tp, layout.pp, layout.dp, layout.cp, layout.micro_batch, layout.recompute, layout.zero,
             layout.interleave, layout.ep)
    tp, pp, dp, cp, b, rc, zero, v = (np.asarray(x, dtype=np.float64) for x in (
        layout.tp, layout.pp, layout.dp, layout.cp, layout.micro_batch, layout.recompute, layout.zero, layout.interleave))
    depth = arch.depth + arch.decoder_depth
    gemm, core, elementwise, a2a = forward or layer_forward(arch, hw, layout, context)
    full, selective = rc == 2, rc == 1
    recompute_core = selective & (attention_kernel(arch, layout) != "flash")
    efficiency = step_efficiency(layout)
    gemm, core, elementwise = gemm / efficiency, core / efficiency, elementwise / efficiency
    forward = gemm + core + elementwise
    passes = 3.0 + full  # forward, backward (2x), and with full recomputation the forward again
    flash_backward = FLASH_BACKWARD - 2.0 if attention_kernel(arch, layout) == "flash" else 0.0
    layer = passes * forward + flash_backward * core + np.where(recompute_core, core, 0.0)
    op = op_recompute_share(arch) if layout.recompute_op else 0.0
    if op:  # op-level selective recomputation: that share of the multiplies and the element-wise work, again
        layer = layer + np.where(selective, op * gemm + elementwise, 0.0)
    tokens = b * context / cp
    layer = layer + comm.tp_seconds(hw, tp, tokens * arch.width * BYTES, 4 + 2 * full, layout)
    layer = layer + comm.cp_seconds(hw, tp, cp, arch, b, context, core, passes)
    layer = layer + comm.ep_seconds(hw, tp, layout.ep, a2a, 2 * passes)
    stage_layers = np.ceil(depth / pp)
    head = head_seconds(arch, hw, tokens, tp, efficiency=efficiency)
    stage = stage_layers * layer + head + comm.p2p_seconds(hw, tp, cp, dp, pp, tokens * arch.width * BYTES, layout, v)
    micro = np.ceil(global_batch / (dp * b))
    pipeline = (micro + (pp - 1) / v) * stage
    nonembedding, embedding, flops = counts or (blocks.params_nonembedding(arch), blocks.params_embedding(arch) or 0,
                                                 blocks.flops_per_token(arch, context))
    params_gpu = stage_params_per_gpu(arch, nonembedding, embedding, stage_layers, pp, tp)
    backward_last = 2.0 * stage / passes
    data = comm.dp_seconds(hw, tp, cp, dp, pp, params_gpu * BYTES, zero, micro, stage, backward_last, layout, stage_layers)
    optimizer = optimizer_seconds(hw, params_gpu, np.where(zero >= 1, dp, 1.0))
    step = pipeline + data + optimizer
    hardware_per_token = flops * (passes / 3.0) + (np.where(selective, op * blocks.flops_per_token(arch, 1) / 3.0, 0.0) if op else 0.0)
    return {"step_seconds": step, "pipeline_seconds": pipeline, "bubble_seconds": (pp - 1) / v * stage,
            "data_parallel_seconds": data, "optimizer_seconds": optimizer, "micro_batches": micro,
            "hardware_flops_per_token": hardware_per_token}


def training_rates(arch, hw, layout: Layout, context: int, global_batch: int, gpus, forward: tuple | None = None,
                   counts: tuple | None = None) -> dict:
    """``train_step`` with tokens per second for the whole cluster, MFU (model FLOPs: 6N + attention +
    logits, cost.run.train_flops_per_token) and HFU (with recomputation's extra forward); ``forward``
    and ``counts`` as in ``train_step``."""
    from ..run import train_flops_per_token

    out = train_step(arch, hw, layout, context, global_batch, forward, counts)
    np = lib(out["step_seconds"], gpus)
    rate = global_batch * context / out["step_seconds"]
    model = train_flops_per_token(arch, context)
    logits = blocks.logits_flops_per_token(arch) or 0
    hardware = out["hardware_flops_per_token"] + logits
    peak = hw.bf16_flops * np.asarray(gpus, dtype=np.float64)
    out.update(tokens_per_second=rate, mfu=rate * model / peak, hfu=rate * hardware / peak)
    return out
