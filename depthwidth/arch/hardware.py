"""Shapes that train well on real hardware: alignment and tensor-parallel validity.

Conventions (each a default the user can change; sources in README "Shapes you can train"):
- head dimension 64 or 128 (GPT-2/BERT use 64, LLaMA/Mistral/Qwen2 128);
- width a multiple of 128 (tensor-core tiles) and of the head dimension;
- feed-forward size a multiple of the preset's ``ffn_multiple`` (LLaMA rounds to 256);
- vocabulary padded to a multiple of 64 or 128 (Megatron-LM's make-vocab-size-divisible-by);
- tensor parallelism of degree t (Megatron-LM, Shoeybi et al. 2019) splits attention heads and
  feed-forward columns: t | H, t | ffn, t | E or t | expert size, and t | G or G | t for the
  key/value heads (fewer KV heads than t are replicated, as vLLM and Megatron do).

Everything here reads an architecture by attribute (depth, width, heads, kv_heads, head_dim, ffn,
experts, expert_ffn, dense_layers), so it works on ``blocks.Architecture`` and catalogue rows alike.
"""
from __future__ import annotations


from ..theory.primes import is_prime
from ..core.frozen import frozen

TP_LIMIT = 128  # tp_sizes lists degrees up to this
DEFAULT_MULTIPLE = 128
# --mfu, one range for every command (cost, plan, sweep, compare, inspect): below 0.1% a run's GPU-hours
# pass any real run by 100x and overflow to inf for the largest budgets (1e-308 would print "inf GPU-h"
# and rank on NaN)
MIN_MFU = 0.001
MFU_ACCEPTED = f"expected a model FLOPs utilization from {MIN_MFU:g} to 1, such as 0.4"
# Shapes that shard: a shape of 1B non-embedding parameters or more must allow tensor
# parallelism of 8 (one 8-GPU node: heads divisible by 8, key/value heads a multiple or a divisor of 8,
# feed-forward divisible by 8), as Llama 3.2 1B (32/8), Llama 3 8B (32/8) and Mistral-7B (32/8) do
# (presets.PRESETS sources). Smaller shapes may not: plans and sweeps then say so in a note.
SHARD_TP = 8
SHARD_FROM = 1e9


@frozen
class Constraints:
    """The alignment a shape must satisfy; ``None`` switches a rule off.

    ``composite_heads``: the head count is 1, 2 or composite, never a prime >= 3 that only shards
    1 or H ways (the 40x1472x23 of depthwidth 0.1).
    ``shard_from``: a shape with this many non-embedding parameters or more allows tensor
    parallelism of ``SHARD_TP`` (``shards_ways``).
    """

    multiple: int | None = DEFAULT_MULTIPLE
    head_dim: int | None = None
    ffn_multiple: int | None = None
    tp: int = 1
    vocab_multiple: int | None = None
    composite_heads: bool = True
    shard_from: float | None = SHARD_FROM

    def at_budget(self, budget: float) -> "Constraints":
        """These constraints for the shapes a plan of ``budget`` lists: at a budget of ``shard_from`` or
        more every one must split ``SHARD_TP`` ways, also those a little below it."""
        from dataclasses import replace

        if self.shard_from is None or budget < self.shard_from or self.shard_from == 0:
            return self
        return replace(self, shard_from=0)


def _dense_ffn(arch) -> int | None:
    """The dense feed-forward size that tensor parallelism splits, None when every layer is MoE."""
    experts = getattr(arch, "experts", None)
    if experts and not getattr(arch, "dense_layers", 0):
        return None
    return getattr(arch, "ffn", None)


def tp_conflicts(arch, tp: int) -> list[str]:
    """Why tensor parallelism of degree ``tp`` cannot split this architecture (empty: it can)."""
    out = []
    heads, kv_heads = arch.heads, getattr(arch, "kv_heads", None) or arch.heads
    if heads % tp:
        out.append(f"{heads} attention heads are not divisible by tp {tp}")
    if kv_heads != heads and kv_heads % tp and tp % kv_heads:  # (with G = H the line above says it)
        out.append(f"{kv_heads} key/value heads and tp {tp}: needs tp | kv_heads or kv_heads | tp")
    ffn = _dense_ffn(arch)
    if ffn and ffn % tp:
        out.append(f"feed-forward size {ffn} is not divisible by tp {tp}")
    experts = getattr(arch, "experts", None)
    if experts:
        expert_ffn = getattr(arch, "expert_ffn", None)
        if experts % tp and (not expert_ffn or expert_ffn % tp):
            out.append(f"{experts} experts of size {expert_ffn} and tp {tp}: needs tp | experts or tp | expert size")
    return out


def tp_sizes(arch, limit: int = TP_LIMIT) -> tuple[int, ...]:
    """The valid tensor-parallel degrees up to ``limit``: divisors t of H passing ``tp_conflicts``."""
    heads = arch.heads
    return tuple(t for t in range(1, min(heads, limit) + 1) if heads % t == 0 and not tp_conflicts(arch, t))


def violations(arch, constraints: Constraints) -> list[str]:
    """Each constraint in force that ``arch`` breaks, named (empty: a valid shape)."""
    c = constraints
    out = []
    width, heads = arch.width, arch.heads
    head_dim = getattr(arch, "head_dim", None) or (width // heads if width % heads == 0 else None)
    if c.multiple and width % c.multiple:
        out.append(f"width {width} is not a multiple of {c.multiple}")
    if c.head_dim and head_dim != c.head_dim:
        out.append(f"head dimension {head_dim} is not {c.head_dim}")
    if head_dim is None or heads * head_dim != width:
        out.append(f"width {width} is not heads x head_dim ({heads} x {head_dim})")
    ffn = getattr(arch, "ffn", None)
    if c.ffn_multiple and ffn and ffn % c.ffn_multiple:
        out.append(f"feed-forward size {ffn} is not a multiple of {c.ffn_multiple}")
    vocab = getattr(arch, "vocab", None)
    if c.vocab_multiple and vocab and vocab % c.vocab_multiple:
        out.append(f"vocabulary {vocab} is not padded to a multiple of {c.vocab_multiple}")
    if c.composite_heads and heads > 2 and is_prime(heads):
        out.append(f"{heads} heads is a prime: it shards only 1 or {heads} ways")
    out += tp_conflicts(arch, c.tp)
    if c.shard_from is not None and c.tp % SHARD_TP:
        out += shard_conflicts(arch, c.shard_from)
    return out


def shard_conflicts(arch, shard_from: float = SHARD_FROM) -> list[str]:
    """Why a shape of ``shard_from`` non-embedding parameters or more cannot split ``SHARD_TP`` ways
    (empty: it can, or it is smaller)."""
    broken = tp_conflicts(arch, SHARD_TP)
    if not broken:
        return []
    from .blocks import params_nonembedding

    count = params_nonembedding(arch)
    if count < shard_from:
        return []
    return [f"a shape of {count:.3g} parameters (from {shard_from:.3g}) must split {SHARD_TP} ways: " + "; ".join(broken)]


def heads_ok(heads: int, constraints: Constraints) -> bool:
    """The head-count rules of ``violations`` alone (composite, t | H, and SHARD_TP | H where every shape
    must split SHARD_TP ways: ``shard_from`` 0, a plan of 1B or more): a cheap test a planner can run
    before it builds an architecture."""
    if constraints.shard_from == 0 and constraints.tp % SHARD_TP and heads % SHARD_TP:
        return False  # shard_conflicts: tp_conflicts(arch, SHARD_TP) names the heads, at any count
    return heads % constraints.tp == 0 and not (constraints.composite_heads and heads > 2 and is_prime(heads))


def shards_ways(arch) -> int:
    """The largest of 1, 2, 4, 8 that tensor parallelism splits the shape by (GPUs per node come in these numbers)."""
    return next((t for t in (SHARD_TP, 4, 2) if not tp_conflicts(arch, t)), 1)


def width_step(constraints: Constraints, head_dim: int) -> int:
    """The spacing of candidate widths: lcm of the width multiple and the head dimension."""
    from math import lcm

    return lcm(constraints.multiple or 1, head_dim)


# ---- accelerators ------------------------------------------------------------------------------

@frozen
class Accelerator:
    """One accelerator's datasheet row: peak dense (no 2:4 sparsity) tensor FLOP/s, HBM capacity
    in bytes (the datasheet's GB read as 10^9 bytes) and bandwidth in bytes/s. ``fp8_flops`` is None
    where the part has no FP8 matrix unit. ``verified`` says how each number was checked."""

    name: str
    label: str
    bf16_flops: float
    fp8_flops: float | None
    hbm_bytes: float
    hbm_bandwidth: float
    source: str
    verified: str
    # the system around it (the performance model; sources in SYSTEM_SOURCES): GPUs one intra-node link
    # reaches (NVLink/xGMI/PCIe; a TPU's ICI slice), per-GPU per-direction bandwidth of that link and of the
    # network, the best measured share of peak in one large matrix multiply (MAMF / peak), and the units a
    # GEMM's tiles are spread over
    gpus_per_node: int = 8
    link_bandwidth: float = 300e9
    network_bandwidth: float = 25e9
    gemm_efficiency: float = 0.80
    compute_units: int | None = None
    # HBM bandwidth a decode step achieves, measured by a published benchmark (source in SYSTEM_SOURCES);
    # None: the datasheet's times ACHIEVED_SHARE (``achievable_bandwidth``)
    hbm_achievable: float | None = None
    # chips one host (server, VM) drives, and the GPUs one NVLink (or xGMI, PCIe) fabric joins in a fixed
    # system: a DGX's 8, an NVL72 rack's 72; None where the fast link is sized per job (a TPU's ICI slice).
    # A run without --gpus is costed on one NVLink domain, or one host without one (``node_gpus``)
    chips_per_host: int = 8
    nvlink_domain: int | None = 8
    # share of peak a fused (flash) attention kernel reaches (SYSTEM_SOURCES)
    flash_efficiency: float = 0.35
    aliases: tuple[str, ...] = ()


ACCELERATORS: dict[str, Accelerator] = {a.name: a for a in (
    Accelerator("a100-80gb", "NVIDIA A100 80GB SXM", 312e12, None, 80e9, 2.039e12,
                "NVIDIA A100 Tensor Core GPU datasheet (nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf): "
                "BF16 Tensor Core 312 TFLOPS (624 with sparsity), 80GB HBM2e, 2,039 GB/s (SXM); no FP8",
                "second-hand: the datasheet's figures as quoted with its link by glennklockwood.com/garden/processors/A100",
                gpus_per_node=8, link_bandwidth=300e9, network_bandwidth=25e9, gemm_efficiency=0.859, compute_units=108,
                hbm_achievable=1481.87e9, flash_efficiency=0.5, aliases=("a100", "a100-80gb-sxm")),
    Accelerator("a100-40gb", "NVIDIA A100 40GB SXM", 312e12, None, 40e9, 1.555e12,
                "NVIDIA A100 datasheet: BF16 Tensor Core 312 TFLOPS (624 with sparsity), 40GB HBM2 at 1,555 GB/s (SXM)",
                "second-hand: upb-pc2.atlassian.net/wiki/spaces/PC2DOK/pages/1900609 (the datasheet table) and "
                "glennklockwood.com/garden/processors/A100",
                gpus_per_node=8, link_bandwidth=300e9, network_bandwidth=25e9, gemm_efficiency=0.859, compute_units=108,
                flash_efficiency=0.5),
    Accelerator("h100", "NVIDIA H100 SXM", 989.5e12, 1979e12, 80e9, 3.35e12,
                "NVIDIA H100 Tensor Core GPU datasheet: BF16 1,979 and FP8 3,958 TFLOPS shown with sparsity "
                "(footnote: dense is half), 80GB HBM3, 3.35 TB/s (SXM)",
                "second-hand: the datasheet table as reproduced by archive-lib.hpctech.co.jp; dense 989.4 TFLOPS "
                "also in glennklockwood.com/garden/processors/h100",
                gpus_per_node=8, link_bandwidth=450e9, network_bandwidth=50e9, gemm_efficiency=0.801, compute_units=132,
                hbm_achievable=1904.75e9, aliases=("h100-sxm",)),
    Accelerator("h100-pcie", "NVIDIA H100 PCIe", 756.5e12, 1513e12, 80e9, 2.0e12,
                "NVIDIA H100 datasheet (PCIe column): BF16 1,513 TFLOPS with sparsity (756 dense), 80GB, 2.0 TB/s; "
                "PCIe Gen5 x16 between GPUs, 63 GB/s per direction",
                "second-hand: stas00/ml-engineering compute/accelerator/README.md @007447327a0c (dense table) and "
                "network/README.md @0030e63f5275 (PCIe table); the NVLink bridge is not assumed; network unverified "
                "(assumed 400 Gb/s per GPU like DGX H100)",
                gpus_per_node=8, link_bandwidth=63e9, network_bandwidth=50e9, gemm_efficiency=0.801, compute_units=114),
    Accelerator("h200", "NVIDIA H200 SXM", 989.5e12, 1979e12, 141e9, 4.8e12,
                "NVIDIA H200 Tensor Core GPU datasheet: BF16 1,979 and FP8 3,958 TFLOPS with sparsity (dense half), "
                "141GB HBM3e, 4.8 TB/s",
                "second-hand: several spec summaries agree (lzwjava.github.io, ai-hpc.github.io); vendor page not reached",
                gpus_per_node=8, link_bandwidth=450e9, network_bandwidth=50e9, gemm_efficiency=0.803, compute_units=132,
                aliases=("h200-sxm",)),
    Accelerator("b200", "NVIDIA B200 (HGX, 1000 W)", 2.25e15, 4.5e15, 180e9, 8e12,
                "NVIDIA HGX B200 / DGX B200 datasheet: FP16/BF16 2.25 PFLOPS and FP8 4.5 PFLOPS dense per GPU "
                "(4.5 / 9 with sparsity), 180GB HBM3e per GPU (1,440GB per 8-GPU DGX), 8 TB/s",
                "second-hand: glennklockwood.com/garden/processors/B200 (HGX at 1,000 W) and hmc-tech.com; "
                "the 180GB (192GB physical) from NVIDIA's DGX B200 total; vendor page not reached",
                gpus_per_node=8, link_bandwidth=900e9, network_bandwidth=50e9, gemm_efficiency=0.776, compute_units=148),
    Accelerator("mi300x", "AMD Instinct MI300X", 1307.4e12, 2614.9e12, 192e9, 5.3e12,
                "AMD Instinct MI300X data sheet: peak BF16 1,307.4 TFLOPS and FP8 2,614.9 TFLOPS dense "
                "(2,614.9 / 5,229.8 with sparsity), 192GB HBM3, 5.3 TB/s",
                "second-hand: 192GB and 5.3 TB/s in several summaries, ~1.3 PFLOPS BF16 / ~2.6 PFLOPS FP8 in "
                "jaredwatkins.com; exact decimals from the AMD data sheet not reached (unverified)",
                gpus_per_node=8, link_bandwidth=448e9, network_bandwidth=50e9, gemm_efficiency=0.601, compute_units=304),
    Accelerator("tpu-v5p", "Google Cloud TPU v5p (per chip)", 459e12, None, 95e9, 2.765e12,
                "Google Cloud TPU v5p documentation (cloud.google.com/tpu/docs/v5p): peak compute per chip "
                "(bf16) 459 TFLOPs, HBM2e 95GB at 2765 GBps; no FP8 (int8 only)",
                "verified: cloud.google.com/tpu/docs/v5p-training, key specifications table",
                gpus_per_node=6144, link_bandwidth=600e9, network_bandwidth=6.25e9, gemm_efficiency=0.80, compute_units=None,
                chips_per_host=4, nvlink_domain=None),
)}


DEFAULT_GPU = "h100"
ALIASES = {alias: a.name for a in ACCELERATORS.values() for alias in a.aliases}

# Where the system fields come from. Per direction, per GPU; "uni" = one direction.
SYSTEM_SOURCES = {
    "link_bandwidth": "NVLink 3/4/5 300/450/900 GB/s, MI300X xGMI 448 GB/s, PCIe 5 x16 63 GB/s per direction: "
                      "stas00/ml-engineering network/README.md @0030e63f5275 (intra-node tables); TPU v5p ICI 4,800 Gbps "
                      "per chip: cloud.google.com/tpu/docs/v5p",
    "gpus_per_node": "8 per DGX/HGX A100, H100, H200, B200 and MI300X OAM platform (NVIDIA DGX BasePOD reference "
                     "architecture, core components); TPU v5p: the ICI domain of one slice, up to 6,144 chips "
                     "(cloud.google.com/tpu/docs/v5p-training, slice shapes)",
    "network_bandwidth": "one NIC per GPU: 200 Gb/s HDR InfiniBand on DGX A100 (Korthikanti et al. 2022, Sec. 6), "
                         "400 Gb/s ConnectX-7 on DGX H100/H200/B200 (DGX BasePOD core components); MI300X assumed "
                         "alike (unverified); TPU v5p DCN 50 Gbps per chip between slices",
    "gemm_efficiency": "Maximum Achievable Matmul FLOPS / peak, BF16: A100 267.9/312, H100 792.1/989, H200 794.5/989, "
                       "B200 1745/2250, MI300X 781.9/1300 (stas00/ml-engineering compute/accelerator/README.md, MAMF "
                       "table); TPU v5p: no MAMF published, H100's assumed (unverified)",
    "hbm_achievable": "A100-80GB: 1,481.87 GB/s, the highest decode bandwidth pytorch-labs/gpt-fast reports (README.md "
                      "@c9f683ed, Tensor Parallelism: Llama-2-70B bf16 on 2 GPUs, batch 1, model bytes x tokens/s; "
                      "8xA100-80GB power-limited to 330 W), 72.7% of the datasheet (smaller models read less per kernel "
                      "and reach less: 1,397 GB/s for Llama-2-7B, which serve.LAYER_OVERHEAD accounts for); H100 SXM: "
                      "1,904.75 GB/s, torchao's Llama-3.1-8B bf16 decode at batch 1 (pytorch/ao "
                      "torchao/quantization/README.md @fd6e4b1f, 'CUDA backend | NVIDIA-H100 GPU'), 56.9% of the "
                      "datasheet; other parts: no decode benchmark read, A100's share assumed (ACHIEVED_SHARE, unverified)",
    "chips_per_host": "8 GPUs per DGX/HGX A100, H100, H200, B200 and MI300X OAM platform (as gpus_per_node); TPU v5p: "
                      "4 chips per VM host (cloud.google.com/tpu/docs/v5p, 'VM, host and slice properties')",
    "nvlink_domain": "the 8 GPUs of one DGX/HGX joined by NVSwitch (NVLink 3/4/5), of one MI300X platform by xGMI, of one "
                     "H100 PCIe server by PCIe (stas00/ml-engineering network/README.md @0030e63f5275, intra-node); TPU "
                     "v5p: none, its ICI slice is chosen per job (gpus_per_node holds the largest)",
    "flash_efficiency": "FlashAttention-2 '50-73% of the theoretical maximum FLOPs/s on A100' (Dao 2023, arXiv "
                        "2307.08691, abstract; second-hand: the abstract as quoted by pristren.com), low end, for "
                        "Ampere; 'FlashAttention-2 achieving only 35% utilization on the H100 GPU' (Shah et al. 2024, "
                        "FlashAttention-3, arXiv 2407.08608, abstract) for Hopper and later parts (assumed for B200, "
                        "MI300X, TPU: unverified)",
    "compute_units": "streaming multiprocessors: A100 108 (NVIDIA A100 whitepaper; NVIDIA/cutlass issue 335), H100 SXM "
                     "132, H100 PCIe 114, B200 148 (NVIDIA whitepapers, second-hand); MI300X 304 compute units (AMD "
                     "CDNA 3 whitepaper, second-hand); TPU: none (no wave quantization)",
}


ACHIEVED_SHARE = 1481.87e9 / 2.039e12  # A100-80GB's measured decode bandwidth over its datasheet (SYSTEM_SOURCES)


def achievable_bandwidth(hw) -> float:
    """Bytes/s an accelerator's HBM delivers to a decode step: ``hbm_achievable`` where a benchmark
    measured it, else the datasheet's times ACHIEVED_SHARE."""
    return hw.hbm_achievable or ACHIEVED_SHARE * hw.hbm_bandwidth


def node_gpus(name, multiple: int = 1) -> int:
    """The chips of one node of accelerator ``name`` (or an Accelerator), rounded up to a multiple of
    ``multiple`` (tp x pp): what a run without --gpus is costed on. A node is one NVLink domain
    (``nvlink_domain``: a DGX's 8 GPUs, an NVL72 rack's 72), or one host where the fast link has no
    fixed domain (``chips_per_host``: a TPU v5p host's 4 chips)."""
    hw = accelerator(name) if isinstance(name, str) else name
    size = hw.nvlink_domain or hw.chips_per_host
    return -(-size // multiple) * multiple


def accelerator(name: str) -> Accelerator:
    """The accelerator called ``name`` (case-insensitive, a few aliases such as h100-sxm); InputError
    naming the accepted values."""
    from ..core.errors import not_one_of

    key = name.strip().lower() if isinstance(name, str) else None
    found = ACCELERATORS.get(ALIASES.get(key, key)) if key is not None else None
    if found is None:
        raise not_one_of("--gpu", name, ACCELERATORS)
    return found


def gpu_help() -> str:
    """The ``--gpu`` help, from the table: every name, the default marked."""
    names = ", ".join(f"{n} (default)" if n == DEFAULT_GPU else n for n in ACCELERATORS)
    return f"Accelerator for memory and time: {names}."
