"""Costs of a training run: FLOPs, memory per GPU, KV cache and time for one shape.

Pure: numbers in, numbers out; imports only blocks, hardware and errors. The formulas are written
once, as functions of plain numbers that accept NumPy arrays too, so ``run_costs`` (one
``blocks.Architecture``) and ``vanilla_costs`` (the paper's block over arrays of shapes) share them.

Conventions (README "Costs of a training run"):

- Training FLOPs per token = ``blocks.flops_per_token`` (PaLM, Chowdhery et al. 2022, App. B:
  6·N over the non-embedding weights a token passes through, active experts only for MoE, plus
  6·L·T·H·(d_qk + d_v) for attention over the full T x T matrix) + the logits 6·V·d
  (``blocks.logits_flops_per_token``; Megatron-LM counts them too). This is Kaplan et al. 2020's
  6·N·D with the attention and output-head terms written out. ``RunSpec.causal`` halves the
  attention term, as Megatron-LM's ``num_floating_point_operations`` does for the causal mask.
- Model states per GPU, mixed-precision Adam (Rajbhandari et al. 2020, ZeRO, Sec. 3.1): 2 bytes of
  16-bit weights, ``gradient_bytes`` (2; Megatron-LM keeps fp32 gradients, 4) and 12 of optimizer
  state (fp32 master weights, momentum, variance): 16 bytes per parameter. ZeRO stage 1 shards the
  optimizer states over the data-parallel degree N_d, stage 2 also the gradients, stage 3 also the
  weights. Tensor parallelism t splits every matrix t ways (embeddings vocabulary-parallel);
  pipeline parallelism p gives each stage ceil(L/p) layers; the first stage also holds the input
  embedding, the last the output head (a tied head too: Megatron-LM keeps a copy there), so the
  most loaded stage holds ceil(L/p) layers + one V·d matrix (both, with p = 1). Norms and biases are
  not counted (blocks' convention). Expert parallelism is not modelled. KV heads fewer than t are
  counted as split, not replicated.
- Activations per layer (Korthikanti et al. 2022, "Reducing Activation Recomputation", Table 2),
  16-bit, s context, b micro-batch, h width, a heads, f feed-forward size (Megatron-LM's
  ``theoretical_memory_usage.py`` generalizes their 34 = 18 + 4·4 to 18 + 4·f/h):
  no recomputation s·b·h·(10 + (8 + 4f/h)/t + 5as/(ht)), with sequence parallelism
  s·b·h·(18 + 4f/h + 5as/h)/t; selective recomputation drops the 5as/h term; full recomputation
  keeps the layer input, 2·s·b·h (/t with sequence parallelism). For t = 1 this is s·b·h·(34 + 5as/h)
  at f = 4h. Per token an MoE layer's f is top_k·f_e + the shared experts'. GQA/MLA and gated
  feed-forwards are counted as Megatron-LM counts them (by f alone).
  The first pipeline stage keeps p micro-batches in flight (1F1B), i.e. p·ceil(L/p) layers' worth.
  Added as Megatron-LM does: the embedding's input and dropout, (8·s·b + s·b·h)·p, and with p = 1
  the output layer and loss, 4·s·b·(h + V); divided by t with sequence parallelism.
- Inference memory: 16-bit weights (all parameters, embeddings included) + the KV cache at
  ``context`` x ``batch`` (``blocks.kv_bytes_per_token``: MLA caches its latent); per GPU split
  evenly over t·p.
- Time: GPU-hours = train FLOPs / (peak dense FLOP/s x MFU) / 3600, days = GPU-hours / gpus / 24; a
  pipeline degree p that does not divide the depth L runs at the pace of its most loaded stage, so the
  time is multiplied by the imbalance p·ceil(L/p)/L (the performance model, ``perf.step.train_step``, costs
  the same slowest stage).
"""
from __future__ import annotations

import math

from ..arch import blocks
from ..core.errors import InputError
from ..arch.hardware import MFU_ACCEPTED, MIN_MFU, Accelerator, accelerator, tp_conflicts
from ..core.frozen import frozen

RECOMPUTE = ("none", "selective", "full", "op")  # "op": torchtitan's op-level selective (perf.op_recompute_share)
ADAM_OPTIMIZER_BYTES = 12  # fp32 master weights + Adam's m and v (Rajbhandari et al. 2020, K = 12)
WEIGHT_BYTES = 2  # bf16/fp16 weights, activations and KV cache

@frozen
class RunSpec:
    """How the model is trained and served; every field has the CLI option of the same name.

    ``zero`` defaults to 1: sharding the optimizer states costs no communication beyond plain data
    parallelism (Rajbhandari et al. 2020, Sec. 7) and is what Megatron-LM's distributed optimizer
    does. ``sequence_parallel`` defaults to True (Korthikanti et al. 2022 pair it with tensor
    parallelism; it changes nothing at tp 1). ``gpus`` None: no wall-clock time, and a
    data-parallel degree of 1 for ZeRO. ``micro_batch`` is the training micro-batch (activations);
    ``batch`` the inference batch (KV cache). ``causal`` halves the attention FLOPs (Megatron-LM).
    What only the performance model reads (``modeled.modeled_costs``, ``predict.Cluster``): ``global_batch``
    in sequences (None: ``layout.default_global_batch``), ``attention`` (None: ``perf.step.attention_kernel``'s
    default) and ``efficiency``, the stack's share of the modelled compute time (None: ``perf.step.STEP_EFFICIENCY``;
    a calibration profile's, ``cost/perf/calibration.py``, with ``calibrated_on``, what it was measured on)."""

    tokens: float | None = None
    gpu: str = "h100"
    gpus: int | None = None
    tp: int = 1
    pp: int = 1
    zero: int = 1
    recompute: str = "selective"
    sequence_parallel: bool = True
    mfu: float = 0.4
    context: int = blocks.DEFAULT_CONTEXT
    batch: int = 1
    micro_batch: int = 1
    gradient_bytes: int = 2
    precision: str = "bf16"
    causal: bool = False
    global_batch: int | None = None
    attention: str | None = None
    efficiency: float | None = None
    calibrated_on: str | None = None  # the calibration profile's line: what the efficiency was measured on
    serving_efficiency: float | None = None  # a profile's serving section: modelled over measured decode step (cost/serve_calibrate.py)

    def __post_init__(self):
        for name in ("tp", "pp", "context", "batch", "micro_batch"):
            _whole(f"--{name.replace('_', '-')}", getattr(self, name))
        if self.global_batch is not None:
            _whole("--global-batch", self.global_batch)
        if self.attention not in (None, "flash", "unfused"):
            raise InputError("--attention", self.attention, "expected flash or unfused")
        if self.efficiency is not None and not (isinstance(self.efficiency, float) and 0 < self.efficiency <= 10):
            raise InputError("efficiency", self.efficiency, "expected a share of the modelled compute time above 0, such as 0.8")
        if self.serving_efficiency is not None and not (isinstance(self.serving_efficiency, float) and 0 < self.serving_efficiency <= 10):
            raise InputError("serving efficiency", self.serving_efficiency, "expected a modelled/measured decode ratio above 0, such as 0.9")
        if self.gpus is not None:
            _whole("--gpus", self.gpus)
            if self.gpus % (self.tp * self.pp):
                raise InputError("--gpus", self.gpus, f"must be a multiple of tp x pp = {self.tp} x {self.pp} = {self.tp * self.pp} "
                                 "(the data-parallel degree is gpus / (tp x pp))")
        if self.tokens is not None and (isinstance(self.tokens, bool) or not isinstance(self.tokens, (int, float))
                                        or not math.isfinite(self.tokens) or self.tokens <= 0):
            raise InputError("--tokens", self.tokens, "expected a number of training tokens above 0, such as 2e12")
        if isinstance(self.zero, bool) or self.zero not in (0, 1, 2, 3):
            raise InputError("--zero", self.zero, "expected a ZeRO stage 0, 1, 2 or 3")
        if self.recompute not in RECOMPUTE:
            raise InputError("--recompute", self.recompute, "expected one of " + ", ".join(RECOMPUTE))
        if isinstance(self.mfu, bool) or not isinstance(self.mfu, (int, float)) or not MIN_MFU <= self.mfu <= 1:
            raise InputError("--mfu", self.mfu, MFU_ACCEPTED)
        if self.gradient_bytes not in (2, 4):
            raise InputError("gradient bytes", self.gradient_bytes, "expected 2 (bf16/fp16) or 4 (fp32, as Megatron-LM keeps them)")
        if self.precision not in ("bf16", "fp8"):
            raise InputError("precision", self.precision, "expected bf16 or fp8")
        hw = accelerator(self.gpu)  # raises InputError naming the accepted values
        if self.precision == "fp8" and hw.fp8_flops is None:
            raise InputError("precision", self.precision, f"{hw.label} has no FP8 matrix unit; use bf16")

    @property
    def dp(self) -> int | None:
        """The data-parallel degree gpus / (tp·pp); None without ``gpus``."""
        return None if self.gpus is None else self.gpus // (self.tp * self.pp)

    @property
    def hardware(self) -> Accelerator:
        """The accelerator row of ``gpu``."""
        return accelerator(self.gpu)

    @property
    def peak_flops(self) -> float:
        """Peak dense FLOP/s per GPU at ``precision``."""
        hw = self.hardware
        return hw.fp8_flops if self.precision == "fp8" else hw.bf16_flops


@frozen
class RunCosts:
    """One shape's run costs; field names are the JSON contract (bytes, FLOPs, hours, days).

    None means not computable: ``train_*`` without ``tokens``, ``train_days`` without ``gpus``,
    KV fields for an encoder-only stack; ``notes`` says why and what was assumed."""

    tokens: float | None
    train_flops_per_token: int
    train_flops: float | None
    train_gpu_hours: float | None
    train_days: float | None
    weights_bytes_per_gpu: int
    gradients_bytes_per_gpu: int
    optimizer_bytes_per_gpu: int
    activations_bytes_per_gpu: int
    train_memory_per_gpu_bytes: int
    fits_on_gpu: bool
    kv_cache_bytes_per_sequence: int | None
    inference_weights_bytes: int
    inference_kv_cache_bytes: int | None
    inference_memory_bytes: int
    inference_memory_per_gpu_bytes: int
    data_parallel: int | None
    pipeline_divides_depth: bool
    notes: tuple[str, ...]


def check_stages(pp: int, depth: int, name: str) -> None:
    """More pipeline stages than layers leave a stage with no layer, a layout no framework runs
    (Megatron-LM splits the layers over the stages): an input error naming the shape
    (not a memory per GPU for a layout that cannot exist). ``name`` says whose ``depth`` it is."""
    if pp > depth:
        raise InputError("--pp", pp, f"more pipeline stages than the {depth:,} layers of {name}; expected at most {depth:,} "
                                     "(each stage holds at least one layer)")


# ---- the formulas: plain numbers or NumPy arrays ---------------------------------------------

def train_flops(flops_per_token, tokens):
    """Total training FLOPs: FLOPs per token x tokens."""
    return flops_per_token * tokens


def gpu_hours(flops, peak_flops, mfu):
    """GPU-hours at a model FLOPs utilization: flops / (peak·mfu) / 3600."""
    return flops / (peak_flops * mfu) / 3600


def imbalance(depth, pp):
    """The pipeline's time factor p·ceil(L/p)/L: every stage waits for the most loaded one (1 when p divides L)."""
    if hasattr(depth, "shape"):  # NumPy arrays of depths (vanilla_costs)
        import numpy as np

        return np.ceil(depth / pp) * pp / depth
    return math.ceil(depth / pp) * pp / depth


def model_state_bytes(params_per_gpu, zero, dp, gradient_bytes=2):
    """(weights, gradients, optimizer) bytes per GPU for mixed-precision Adam under ZeRO ``zero``
    over ``dp`` data-parallel ranks (Rajbhandari et al. 2020, Sec. 5: P_os, P_os+g, P_os+g+p)."""
    weights = WEIGHT_BYTES * params_per_gpu / (dp if zero >= 3 else 1)
    gradients = gradient_bytes * params_per_gpu / (dp if zero >= 2 else 1)
    optimizer = ADAM_OPTIMIZER_BYTES * params_per_gpu / (dp if zero >= 1 else 1)
    return weights, gradients, optimizer


def activation_bytes_per_layer(seq, micro_batch, width, heads, ffn, tp=1, sequence_parallel=True, recompute="selective"):
    """Activation bytes of one layer per GPU (Korthikanti et al. 2022, Table 2, with Megatron-LM's
    18 + 4·f/h for the 34 of f = 4h); see the module docstring."""
    sbh = seq * micro_batch * width
    attention = 5 * heads * seq / width if recompute == "none" else 0
    if recompute == "full":
        return 2 * sbh / (tp if sequence_parallel else 1)
    parallel = 8 + 4 * ffn / width + attention  # the parts tensor parallelism splits
    if sequence_parallel:
        return sbh * (10 + parallel) / tp
    return sbh * (10 + parallel / tp)


def activation_bytes_per_gpu(layer_bytes, depth, seq, micro_batch, width, vocab, tp=1, pp=1, sequence_parallel=True):
    """Activations on the first pipeline stage: p micro-batches in flight of ceil(L/p) layers, plus
    the embedding's input and dropout, and with p = 1 the output layer and loss (Megatron-LM)."""
    layers = -(-depth // pp) * pp
    extra = (8 * seq * micro_batch + seq * micro_batch * width) * pp
    if pp == 1:
        extra = extra + 4 * seq * micro_batch * (width + (vocab or 0))
    return layer_bytes * layers + extra / (tp if sequence_parallel else 1)


def stage_params(nonembedding, depth, embedding, head, pp=1, tied=True):
    """Parameters on the most loaded pipeline stage (before tensor parallelism): ceil(L/p) layers'
    share of the non-embedding weights, + the input embedding (first stage) or the output head
    (last stage; a tied head is a copy there, as in Megatron-LM), whichever is larger; with p = 1
    the embedding, + the head when untied."""
    layers = nonembedding * (-(-depth // pp)) / depth
    if pp == 1:
        return layers + embedding + (0 if tied else head)
    return layers + (embedding if embedding >= head else head)


# ---- one architecture ------------------------------------------------------------------------

def train_flops_per_token(arch: blocks.Architecture, context: int = blocks.DEFAULT_CONTEXT, causal: bool = False) -> int:
    """blocks.flops_per_token + the logits (6·V·d; 0 with the vocabulary unknown); ``causal``
    halves the attention term (the part of flops_per_token linear in the context)."""
    total = blocks.flops_per_token(arch, context) + (blocks.logits_flops_per_token(arch) or 0)
    if causal:
        per_context_token = blocks.flops_per_token(arch, 2) - blocks.flops_per_token(arch, 1)
        total -= per_context_token * context // 2
    return total


def _ffn_per_token(arch: blocks.Architecture) -> float:
    """The feed-forward size a token passes through, averaged over the layers (MoE: top-k experts +
    shared experts); activations scale with it."""
    if not arch.moe:
        return arch.ffn
    moe = arch.top_k * arch.expert_ffn + arch.shared_experts * (arch.shared_expert_ffn or 0)
    dense = arch.dense_layers
    return (dense * arch.ffn + (arch.depth - dense) * moe) / arch.depth


def _embedding_matrices(arch: blocks.Architecture) -> tuple[int, int]:
    """(input embedding, output head) parameters: V·e (+ e·d factorized) and V·d."""
    if arch.vocab is None:
        return 0, 0
    e = arch.embedding_width or arch.width
    embedding = arch.vocab * e + (e * arch.width if e != arch.width else 0)
    return embedding, arch.vocab * arch.width


def run_costs(arch: blocks.Architecture, spec: RunSpec) -> RunCosts:
    """Training FLOPs, GPU-hours and days, memory per GPU and inference memory of ``arch`` under
    ``spec`` (conventions in the module docstring)."""
    notes = []
    tp, pp, dp = spec.tp, spec.pp, spec.dp
    depth = arch.depth + arch.decoder_depth
    if arch.vocab is None:
        notes.append("vocabulary unknown: logits FLOPs, embeddings and the output layer's activations left out")
    if arch.decoder_depth:
        notes.append("encoder-decoder: encoder and decoder layers counted alike for activations and pipeline stages")
    divides = depth % pp == 0
    if not divides:
        notes.append(f"pipeline degree {pp} does not divide the {depth} layers: the most loaded stage holds {-(-depth // pp)}, "
                     f"so the time is costed {imbalance(depth, pp):.3f}x (p·ceil(L/p)/L)")
    if dp is None:
        dp_used = 1
        if spec.zero:
            notes.append(f"no --gpus: data-parallel degree 1 assumed, so ZeRO stage {spec.zero} shards nothing")
    else:
        dp_used = dp
    notes += [f"tp {tp}: {why} (memory counted as an even split)" for why in tp_conflicts(arch, tp)]
    if arch.moe:
        notes.append("mixture of experts: expert parallelism not modelled; experts split by tensor and pipeline parallelism only")

    per_token = train_flops_per_token(arch, spec.context, spec.causal)
    flops = None if spec.tokens is None else train_flops(per_token, spec.tokens)
    hours = None if flops is None else gpu_hours(flops, spec.peak_flops, spec.mfu) * imbalance(depth, pp)
    days = None if hours is None or spec.gpus is None else hours / spec.gpus / 24
    if spec.tokens is None:
        notes.append("no --tokens: training FLOPs, GPU-hours and days not computed")
    elif spec.gpus is None:
        notes.append("no --gpus: GPU-hours given, wall-clock days not")

    embedding, head = _embedding_matrices(arch)
    params = stage_params(blocks.params_nonembedding(arch), depth, embedding, head, pp, arch.tied) / tp
    weights, gradients, optimizer = model_state_bytes(params, spec.zero, dp_used, spec.gradient_bytes)
    layer = activation_bytes_per_layer(spec.context, spec.micro_batch, arch.width, arch.heads, _ffn_per_token(arch),
                                       tp, spec.sequence_parallel, spec.recompute)
    activations = activation_bytes_per_gpu(layer, depth, spec.context, spec.micro_batch, arch.width, arch.vocab,
                                           tp, pp, spec.sequence_parallel)
    memory = [math.ceil(x) for x in (weights, gradients, optimizer, activations)]
    total = sum(memory)

    kv_token = blocks.kv_bytes_per_token(arch, WEIGHT_BYTES)
    kv_sequence = None if kv_token is None else kv_token * spec.context
    kv_batch = None if kv_sequence is None else kv_sequence * spec.batch
    if kv_token is None:
        notes.append(blocks.kv_cache_note(arch))
    inference_weights = WEIGHT_BYTES * (blocks.params_nonembedding(arch) + (blocks.params_embedding(arch) or 0))
    inference = inference_weights + (kv_batch or 0)
    return RunCosts(tokens=spec.tokens, train_flops_per_token=per_token, train_flops=flops, train_gpu_hours=hours,
                    train_days=days, weights_bytes_per_gpu=memory[0], gradients_bytes_per_gpu=memory[1],
                    optimizer_bytes_per_gpu=memory[2], activations_bytes_per_gpu=memory[3],
                    train_memory_per_gpu_bytes=total, fits_on_gpu=total <= spec.hardware.hbm_bytes,
                    kv_cache_bytes_per_sequence=kv_sequence, inference_weights_bytes=inference_weights,
                    inference_kv_cache_bytes=kv_batch, inference_memory_bytes=inference,
                    inference_memory_per_gpu_bytes=math.ceil(inference / (tp * pp)), data_parallel=dp,
                    pipeline_divides_depth=divides, notes=tuple(notes))


# ---- the paper's block over arrays -------------------------------------------------------------

def vanilla_costs(depth, width, heads, spec: RunSpec, vocab: int | None = None, tied: bool = True) -> dict:
    """``run_costs`` of ``blocks.vanilla(L, d, H)`` over NumPy arrays of shapes (float64), for
    sweeps and plan candidates: the same formulas, columns named as RunCosts' fields. ``heads``
    must divide ``width`` (one head of size d otherwise, as blocks.vanilla does)."""
    import numpy as np

    depth, width, heads = (np.asarray(x, dtype=np.float64) for x in (depth, width, heads))
    heads = np.where(np.mod(width, heads) == 0, heads, 1.0)
    nonembedding = 12 * depth * width**2
    per_token = 6 * nonembedding + 12 * depth * spec.context * width + (6 * vocab * width if vocab else 0)
    if spec.causal:
        per_token = per_token - 6 * depth * spec.context * width
    dp = spec.dp or 1
    embedding = (vocab or 0) * width
    params = stage_params(nonembedding, depth, embedding, embedding, 1, tied) if spec.pp == 1 else \
        nonembedding * np.ceil(depth / spec.pp) / depth + embedding
    params = params / spec.tp
    weights, gradients, optimizer = model_state_bytes(params, spec.zero, dp, spec.gradient_bytes)
    layer = activation_bytes_per_layer(spec.context, spec.micro_batch, width, heads, 4 * width, spec.tp,
                                       spec.sequence_parallel, spec.recompute)
    layers = np.ceil(depth / spec.pp) * spec.pp
    extra = (8 * spec.context * spec.micro_batch + spec.context * spec.micro_batch * width) * spec.pp
    if spec.pp == 1:
        extra = extra + 4 * spec.context * spec.micro_batch * (width + (vocab or 0))
    activations = layer * layers + extra / (spec.tp if spec.sequence_parallel else 1)
    memory = [np.ceil(x) for x in (weights, gradients, optimizer, activations)]
    total = memory[0] + memory[1] + memory[2] + memory[3]
    flops = None if spec.tokens is None else train_flops(per_token, spec.tokens)
    hours = None if flops is None else gpu_hours(flops, spec.peak_flops, spec.mfu) * imbalance(depth, spec.pp)
    kv_sequence = 4 * depth * width * spec.context
    inference_weights = 2 * (nonembedding + embedding * (1 if tied else 2))
    inference = inference_weights + kv_sequence * spec.batch
    return {"train_flops_per_token": per_token, "train_flops": flops, "train_gpu_hours": hours,
            "train_days": None if hours is None or spec.gpus is None else hours / spec.gpus / 24,
            "weights_bytes_per_gpu": memory[0], "gradients_bytes_per_gpu": memory[1],
            "optimizer_bytes_per_gpu": memory[2], "activations_bytes_per_gpu": memory[3],
            "train_memory_per_gpu_bytes": total, "fits_on_gpu": total <= spec.hardware.hbm_bytes,
            "kv_cache_bytes_per_sequence": kv_sequence, "inference_weights_bytes": inference_weights,
            "inference_kv_cache_bytes": kv_sequence * spec.batch, "inference_memory_bytes": inference,
            "inference_memory_per_gpu_bytes": np.ceil(inference / (spec.tp * spec.pp)),
            "pipeline_divides_depth": np.mod(depth, spec.pp) == 0}


def record(costs: RunCosts) -> dict:
    """The JSON record of ``costs``: its fields in order, finite numbers or None (never NaN/Inf)."""
    out = {}
    for name in RunCosts.__dataclass_fields__:
        value = getattr(costs, name)
        if isinstance(value, float) and not math.isfinite(value):
            value = None
        out[name] = list(value) if isinstance(value, tuple) else value
    return out


def _whole(what: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InputError(what, value, "expected a whole number >= 1")
    return value
