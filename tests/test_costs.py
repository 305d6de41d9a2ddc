"""costs.py (issue 23): training FLOPs, memory per GPU, KV cache and time against published figures
and against Megatron-LM's own formulas, re-derived here from its source (never from costs.py).

Sources, each checked with the search tool:
- Hoffmann et al. 2022 (Chinchilla), abstract and Sec. 4: Chinchilla (70B, 1.4T tokens) uses the
  same compute budget as Gopher, 5.76e23 FLOPs (second-hand: quoted by several paper summaries).
  Architecture from their Table 4: 80 layers, d_model 8192, 64 heads of 128, ffw_size 32768.
- Llama Team 2024, "The Llama 3 Herd of Models", Sec. 1: "pre-trained using 3.8 x 10^25 FLOPs ...
  405B trainable parameters on 15.6T text tokens" (verified: the paper's text in several copies);
  126 layers, width 16384, 128 heads, 8 KV heads, ffn 53248, vocab 128256, pre-training context 8192.
- Touvron et al. 2023 (Llama 2), Table 2: Llama 2 7B took 184,320 A100-80GB GPU-hours for 2T
  tokens (second-hand: aiportalx.com quotes the figure); context 4096.
- Korthikanti et al. 2022, Table 2 (activation memory per layer) and Sec. 4.2 ("for GPT-3, 5as/h =
  80", selective recomputation saves 70%); second-hand: the table as reproduced in several notes and
  in the AWS Neuron docs.
- Rajbhandari et al. 2020 (ZeRO), Figure 1: 7.5B parameters, N_d = 64, K = 12: 120 GB, 31.4 GB,
  16.6 GB, 1.9 GB per device (second-hand: the figure as reproduced in several write-ups).
- NVIDIA/Megatron-LM, megatron/training/theoretical_memory_usage.py (read at commit
  00caa53af30912914981c86f39db123961678bbd) and num_floating_point_operations in
  megatron/training/training.py (read at commit 001b00c2734d8f0fad096fe48a382fedf755d321).
"""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from depthwidth.arch import blocks, presets

from depthwidth.cost import run as costs
from depthwidth.arch.blocks import Architecture
from depthwidth.cost.run import RunSpec, run_costs
from depthwidth.core.errors import InputError

CHINCHILLA = Architecture(80, 8192, 64, 64, 128, 32768, False, vocab=32000, tied=False)
LLAMA3_405B = Architecture(126, 16384, 128, 8, 128, 53248, True, vocab=128256, tied=False)
LLAMA2_7B = Architecture(32, 4096, 32, 32, 128, 11008, True, vocab=32000, tied=False)


# ---- published training FLOPs and GPU-hours --------------------------------------------------

def test_chinchilla_70b_on_1_4t_tokens_is_about_5_8e23_flops():
    """Hoffmann et al. 2022: 5.76e23 FLOPs (Gopher's budget) for 70B on 1.4T tokens."""
    c = run_costs(CHINCHILLA, RunSpec(tokens=1.4e12, context=2048))
    assert c.train_flops == pytest.approx(5.76e23, rel=0.05)
    # the convention written out: 6·N·D + 12·L·H·h·T·D (full T x T) + 6·d·V·D
    n = 80 * (4 * 8192**2 + 2 * 8192 * 32768)
    assert c.train_flops == 1.4e12 * (6 * n + 12 * 80 * 64 * 128 * 2048 + 6 * 8192 * 32000)


def test_llama3_405b_on_15_6t_tokens_is_about_3_8e25_flops():
    """Llama 3 paper, Sec. 1: 3.8e25 FLOPs. At its 8192-token context the PaLM convention (full
    T x T attention) gives 4.1e25 (+8%); halving attention for the causal mask (Megatron-LM) 3.9e25."""
    full = run_costs(LLAMA3_405B, RunSpec(tokens=15.6e12, context=8192))
    causal = run_costs(LLAMA3_405B, RunSpec(tokens=15.6e12, context=8192, causal=True))
    assert causal.train_flops == pytest.approx(3.8e25, rel=0.05)
    assert full.train_flops == pytest.approx(3.8e25, rel=0.10)
    attention = 12 * 126 * 128 * 128 * 8192  # PaLM's 12·L·H·h·T per token
    assert full.train_flops - causal.train_flops == pytest.approx(15.6e12 * attention / 2, rel=1e-12)


def test_llama2_7b_gpu_hours_recovered_at_an_mfu_between_0_35_and_0_45():
    """Llama 2 paper, Table 2: 184,320 A100-80GB GPU-hours for 7B on 2T tokens; A100 BF16 dense
    peak 312 TFLOPS (NVIDIA A100 datasheet)."""
    c = run_costs(LLAMA2_7B, RunSpec(tokens=2e12, context=4096, gpu="a100-80gb", mfu=0.4))
    implied_mfu = c.train_flops / (184_320 * 3600 * 312e12)
    assert 0.35 <= implied_mfu <= 0.45
    assert c.train_gpu_hours == pytest.approx(184_320 * implied_mfu / 0.4, rel=1e-12)
    at_implied = run_costs(LLAMA2_7B, RunSpec(tokens=2e12, context=4096, gpu="a100-80gb", mfu=implied_mfu))
    assert at_implied.train_gpu_hours == pytest.approx(184_320, rel=1e-9)


def test_days_are_gpu_hours_over_gpus_and_24_and_null_without_gpus():
    c = run_costs(LLAMA2_7B, RunSpec(tokens=2e12, gpus=512, tp=8))
    assert c.train_days == pytest.approx(c.train_gpu_hours / 512 / 24, rel=1e-15)
    hours = c.train_flops / (989.5e12 * 0.4) / 3600  # H100 SXM dense BF16 (datasheet: 1,979 with sparsity)
    assert c.train_gpu_hours == pytest.approx(hours, rel=1e-15)
    without = run_costs(LLAMA2_7B, RunSpec(tokens=2e12))
    assert without.train_days is None and without.train_gpu_hours == pytest.approx(hours, rel=1e-15)
    assert any("no --gpus" in n for n in without.notes)
    untimed = run_costs(LLAMA2_7B, RunSpec())
    assert untimed.train_flops is None and untimed.train_gpu_hours is None and untimed.tokens is None


def test_logits_are_six_v_d_per_token_and_none_without_a_vocabulary():
    assert blocks.logits_flops_per_token(LLAMA2_7B) == 6 * 32000 * 4096
    assert blocks.logits_flops_per_token(blocks.vanilla(12, 768, 12)) is None
    c = run_costs(blocks.vanilla(12, 768, 12), RunSpec(tokens=1e9))
    assert c.train_flops_per_token == 6 * 12 * 12 * 768**2 + 12 * 12 * 2048 * 768
    assert any("vocabulary unknown" in n for n in c.notes)


def test_moe_flops_use_the_active_experts():
    """Mixtral-like: 2 of 8 experts per token; the FLOPs count the router and 2 experts only."""
    moe = presets.preset("mixtral").architecture(32, 4096)
    per_layer_active = (2 * 4096 * 4096 + 2 * 4096 * 8 * 128) + 2 * 3 * 4096 * 14336 + 4096 * 8
    expected = 6 * 32 * per_layer_active + 12 * 32 * 32 * 128 * 2048 + 6 * 32000 * 4096
    assert run_costs(moe, RunSpec()).train_flops_per_token == expected


# ---- Korthikanti et al. 2022, Table 2 ---------------------------------------------------------

GPT3 = dict(s=2048, b=1, h=12288, a=96, t=8)


@pytest.mark.parametrize("sp, recompute, table2", [
    (False, "none", lambda s, b, h, a, t: s * b * h * (10 + 24 / t + 5 * a * s / (h * t))),
    (True, "none", lambda s, b, h, a, t: s * b * h * (34 / t + 5 * a * s / (h * t))),
    (False, "selective", lambda s, b, h, a, t: s * b * h * (10 + 24 / t)),
    (True, "selective", lambda s, b, h, a, t: s * b * h * 34 / t),
    (False, "full", lambda s, b, h, a, t: 2 * s * b * h),
])
def test_korthikanti_table2_per_layer_activations_for_gpt3_175b(sp, recompute, table2):
    s, b, h, a, t = GPT3.values()
    got = costs.activation_bytes_per_layer(s, b, h, a, 4 * h, t, sp, recompute)
    assert got == pytest.approx(table2(s, b, h, a, t), rel=1e-12)


def test_korthikanti_no_parallelism_and_the_70_percent_of_selective_recomputation():
    """Table 2, first row, sbh(34 + 5as/h); Sec. 4.2: for GPT-3 5as/h = 80 and selective
    recomputation cuts activation memory by 70%."""
    s, b, h, a, _ = GPT3.values()
    for sp in (True, False):
        assert costs.activation_bytes_per_layer(s, b, h, a, 4 * h, 1, sp, "none") == pytest.approx(s * b * h * (34 + 5 * a * s / h))
    assert 5 * a * s / h == 80
    saved = 1 - costs.activation_bytes_per_layer(s, b, h, a, 4 * h, 8, True, "selective") / \
        costs.activation_bytes_per_layer(s, b, h, a, 4 * h, 8, True, "none")
    assert round(saved, 2) == 0.70


# ---- mixed-precision Adam and ZeRO (Rajbhandari et al. 2020, Figure 1) -----------------------

@pytest.mark.parametrize("stage, gigabytes", [(0, 120.0), (1, 31.4), (2, 16.6), (3, 1.9)])
def test_zero_figure_1_per_device_model_states(stage, gigabytes):
    """Psi = 7.5B, N_d = 64, K = 12: (2 + 2 + K)·Psi, 2Psi + 2Psi + K·Psi/N_d, 2Psi + (2 + K)·Psi/N_d,
    (2 + 2 + K)·Psi/N_d bytes."""
    total = sum(costs.model_state_bytes(7.5e9, stage, 64))
    assert round(total / 1e9, 1) == gigabytes


def test_sixteen_bytes_per_parameter_without_sharding():
    arch = blocks.vanilla(24, 2048, 16)
    c = run_costs(arch, RunSpec(zero=0))
    n = 12 * 24 * 2048**2
    assert (c.weights_bytes_per_gpu, c.gradients_bytes_per_gpu, c.optimizer_bytes_per_gpu) == (2 * n, 2 * n, 12 * n)


def test_zero_without_gpus_shards_nothing_and_says_so():
    arch = blocks.vanilla(24, 2048, 16)
    c = run_costs(arch, RunSpec(zero=3))
    assert c.weights_bytes_per_gpu == 2 * 12 * 24 * 2048**2 and c.data_parallel is None
    assert any("data-parallel degree 1 assumed" in n for n in c.notes)
    sharded = run_costs(arch, RunSpec(zero=3, gpus=8))
    assert sharded.weights_bytes_per_gpu == 2 * 12 * 24 * 2048**2 // 8 and sharded.data_parallel == 8


# ---- Megatron-LM's formulas, re-derived from its source ---------------------------------------

class Args:
    """The Megatron-LM arguments the two formulas read (dense GPT; no MoE, MTP or virtual pipeline)."""

    def __init__(self, **kw):
        self.__dict__.update(kw)


def megatron_weight_and_optimizer_bytes(a: Args, norm_size: int) -> float:
    """compute_weight_and_optimizer_memory (theoretical_memory_usage.py): parameters of the most
    loaded shard x (18, or 6 + 12/dp with the distributed optimizer). ``norm_size`` 1 for RMSNorm,
    2 for LayerNorm; 0 drops the norms, which blocks.py does not count."""
    q = a.kv_channels * a.num_attention_heads
    attention = 2 * a.hidden_size * a.hidden_size * ((1 + a.num_query_groups / a.num_attention_heads) * q / a.hidden_size)
    mlp = 2 * a.hidden_size * (a.ffn_hidden_size * (1.5 if a.swiglu else 1) + norm_size)
    block = (mlp + attention) * a.num_layers + norm_size * a.hidden_size
    embedding = a.hidden_size * a.padded_vocab_size
    shard = (block / a.pipeline_model_parallel_size + embedding) / a.tensor_model_parallel_size
    if a.untie_embeddings_and_output_weights and a.pipeline_model_parallel_size == 1:
        shard += embedding / a.tensor_model_parallel_size
    per_param = 6 + 12 / a.data_parallel_size if a.use_distributed_optimizer else 18
    return shard * per_param


def megatron_activation_bytes_sp(a: Args) -> float:
    """compute_activation_memory (the sequence-parallel + selective path), num_microbatches None,
    no virtual pipeline."""
    sbh = a.seq_length * a.micro_batch_size * a.hidden_size
    total = sbh * (18 + 4 * a.ffn_hidden_size / a.hidden_size) * a.num_layers
    total += 8 * a.seq_length * a.micro_batch_size * a.pipeline_model_parallel_size
    total += sbh * a.pipeline_model_parallel_size
    if a.pipeline_model_parallel_size == 1:
        total += sbh * 4 * (1 + a.padded_vocab_size / a.hidden_size)
    return total / a.tensor_model_parallel_size


def megatron_flops(a: Args, batch_size: int) -> int:
    """transformer_flops in num_floating_point_operations (training.py), dense MHA/GQA: 3 (fwd +
    wgrad + dgrad) x 2 (FMA) x [MLP + qkv + causal core attention (half the T x T) + out proj] + logits."""
    q = a.kv_channels * a.num_attention_heads
    kv = a.kv_channels * a.num_query_groups
    attention = 3 * 2 * (a.hidden_size * (q + kv + kv) + q * a.seq_length // 2 * 2 + q * a.hidden_size)
    mlp = 3 * 2 * a.hidden_size * a.ffn_hidden_size * (3 if a.swiglu else 2) * a.num_layers
    logits = 3 * 2 * a.hidden_size * a.padded_vocab_size
    return batch_size * a.seq_length * (mlp + attention * a.num_layers + logits)


MEGATRON_SHAPES = [
    # GPT-3 175B (Brown et al. 2020): tied embeddings, LayerNorm; Korthikanti's tp 8, pp 8
    (Architecture(96, 12288, 96, 96, 128, 49152, False, vocab=51200, tied=True),
     dict(tp=8, pp=8, dp=16, seq=2048, mb=1, dist=False, norm=2)),
    # Llama 2 70B: GQA 8 groups, SwiGLU, untied, RMSNorm
    (Architecture(80, 8192, 64, 8, 128, 28672, True, vocab=32000, tied=False),
     dict(tp=8, pp=4, dp=8, seq=4096, mb=1, dist=True, norm=1)),
    # Llama 3 8B: GQA 8 groups, SwiGLU, untied, pp 1 (both embeddings on the stage), micro-batch 2
    (Architecture(32, 4096, 32, 8, 128, 14336, True, vocab=128256, tied=False),
     dict(tp=2, pp=1, dp=64, seq=8192, mb=2, dist=True, norm=1)),
]


def _megatron_args(arch: Architecture, p: dict) -> Args:
    return Args(hidden_size=arch.width, num_attention_heads=arch.heads, num_query_groups=arch.kv_heads,
                kv_channels=arch.head_dim, ffn_hidden_size=arch.ffn, swiglu=arch.gated, num_layers=arch.depth,
                padded_vocab_size=arch.vocab, untie_embeddings_and_output_weights=not arch.tied,
                tensor_model_parallel_size=p["tp"], pipeline_model_parallel_size=p["pp"], data_parallel_size=p["dp"],
                use_distributed_optimizer=p["dist"], seq_length=p["seq"], micro_batch_size=p["mb"])


def _megatron_spec(p: dict) -> RunSpec:
    """Megatron-LM keeps fp32 gradients (4 bytes); its distributed optimizer is ZeRO stage 1."""
    return RunSpec(gpus=p["tp"] * p["pp"] * p["dp"], tp=p["tp"], pp=p["pp"], zero=1 if p["dist"] else 0, gradient_bytes=4,
                   recompute="selective", sequence_parallel=True, context=p["seq"], micro_batch=p["mb"], causal=True)


@pytest.mark.parametrize("arch, p", MEGATRON_SHAPES)
def test_weight_and_optimizer_memory_agrees_with_megatron(arch, p):
    c = run_costs(arch, _megatron_spec(p))
    ours = c.weights_bytes_per_gpu + c.gradients_bytes_per_gpu + c.optimizer_bytes_per_gpu
    args = _megatron_args(arch, p)
    assert ours == pytest.approx(megatron_weight_and_optimizer_bytes(args, norm_size=0), abs=3)  # ceil of three terms
    # with Megatron's norms counted the gap is the norms' 18 (or 6 + 12/dp) bytes each: under 1e-4
    assert ours == pytest.approx(megatron_weight_and_optimizer_bytes(args, norm_size=p["norm"]), rel=1e-4)


@pytest.mark.parametrize("arch, p", MEGATRON_SHAPES)
def test_activation_memory_agrees_with_megatron(arch, p):
    c = run_costs(arch, _megatron_spec(p))
    assert c.activations_bytes_per_gpu == pytest.approx(megatron_activation_bytes_sp(_megatron_args(arch, p)), abs=1)


@pytest.mark.parametrize("arch, p", MEGATRON_SHAPES)
def test_training_flops_agree_with_megatron(arch, p):
    """Megatron-LM halves the core attention for the causal mask: RunSpec(causal=True)."""
    c = run_costs(arch, _megatron_spec(p))
    per_batch = megatron_flops(_megatron_args(arch, p), batch_size=3)
    assert c.train_flops_per_token * 3 * p["seq"] == per_batch


def test_per_layer_without_sequence_parallelism_agrees_with_megatron():
    """compute_activation_memory_without_sp: s·b·h·(10 + 24/t) per layer (f = 4h, selective)."""
    s, b, h, a, t = GPT3.values()
    assert costs.activation_bytes_per_layer(s, b, h, a, 4 * h, t, False, "selective") == pytest.approx(s * b * h * (10 + 24 / t))


# ---- pipeline, KV cache, inference ------------------------------------------------------------

def test_a_pipeline_degree_that_does_not_divide_the_depth_is_flagged():
    arch = blocks.vanilla(30, 1024, 16)
    c = run_costs(arch, RunSpec(pp=4, zero=0))
    assert c.pipeline_divides_depth is False
    assert any("does not divide the 30 layers" in n for n in c.notes)
    assert c.weights_bytes_per_gpu == 2 * 12 * 8 * 1024**2  # ceil(30/4) = 8 layers on the busiest stage
    assert run_costs(arch, RunSpec(pp=5)).pipeline_divides_depth is True


def test_kv_cache_per_sequence_gqa_mla_and_encoder_only():
    llama70 = Architecture(80, 8192, 64, 8, 128, 28672, True, vocab=32000, tied=False)
    c = run_costs(llama70, RunSpec(context=4096, batch=8))
    assert c.kv_cache_bytes_per_sequence == 2 * 80 * 8 * 128 * 2 * 4096  # K and V, 8 KV heads, bf16
    assert c.inference_kv_cache_bytes == 8 * c.kv_cache_bytes_per_sequence
    deepseek = presets.preset("deepseek").architecture(61, 7168)
    assert run_costs(deepseek, RunSpec()).kv_cache_bytes_per_sequence == 61 * (512 + 64) * 2 * 2048  # latent + rope key
    encoder = dataclass_replace(blocks.vanilla(12, 768, 12), encoder_only=True)
    e = run_costs(encoder, RunSpec())
    assert e.kv_cache_bytes_per_sequence is None and e.inference_kv_cache_bytes is None
    assert any("encoder-only" in n for n in e.notes)


def dataclass_replace(arch, **kw):
    import dataclasses

    return dataclasses.replace(arch, **kw)


def test_inference_memory_is_weights_plus_kv_cache_split_over_tp_and_pp():
    c = run_costs(LLAMA2_7B, RunSpec(context=4096, batch=4, tp=2))
    weights = 2 * (32 * (4 * 4096**2 + 3 * 4096 * 11008) + 2 * 32000 * 4096)
    kv = 2 * 32 * 4096 * 2 * 4096 * 4
    assert c.inference_weights_bytes == weights and c.inference_memory_bytes == weights + kv
    assert c.inference_memory_per_gpu_bytes == math.ceil((weights + kv) / 2)


def test_fits_compares_with_the_accelerator_hbm():
    small = run_costs(blocks.vanilla(12, 768, 12), RunSpec(gpu="a100-80gb"))
    big = run_costs(LLAMA3_405B, RunSpec(gpu="h100", zero=0))
    assert small.fits_on_gpu is True and big.fits_on_gpu is False
    assert big.train_memory_per_gpu_bytes > 80e9


# ---- the record, validation, arrays -----------------------------------------------------------

def test_record_is_strict_json_with_nulls():
    rec = costs.record(run_costs(LLAMA2_7B, RunSpec()))
    text = json.dumps(rec, allow_nan=False)
    assert json.loads(text)["train_flops"] is None and json.loads(text)["train_days"] is None
    for field in ("tokens", "train_flops", "train_gpu_hours", "train_days", "train_memory_per_gpu_bytes",
                  "fits_on_gpu", "kv_cache_bytes_per_sequence"):
        assert field in rec


@pytest.mark.parametrize("kwargs, what", [
    (dict(gpu="v100"), "--gpu"), (dict(gpus=12, tp=8), "--gpus"), (dict(zero=4), "--zero"),
    (dict(recompute="some"), "--recompute"), (dict(mfu=0), "--mfu"), (dict(mfu=1.5), "--mfu"),
    (dict(tp=0), "--tp"), (dict(context=0), "--context"), (dict(tokens=-1.0), "--tokens"),
    (dict(tokens=float("nan")), "--tokens"), (dict(precision="fp8", gpu="tpu-v5p"), "precision"),
])
def test_bad_run_specs_are_input_errors_naming_the_option(kwargs, what):
    with pytest.raises(InputError) as err:
        RunSpec(**kwargs)
    assert str(err.value).startswith(f"bad {what} ")


def test_unknown_gpu_names_the_accepted_values():
    with pytest.raises(InputError, match="a100-80gb, a100-40gb, h100, h100-pcie, h200, b200, mi300x, tpu-v5p"):
        RunSpec(gpu="v100")
    assert RunSpec(gpu=" H100 ").peak_flops == 989.5e12


SPECS = [RunSpec(), RunSpec(tokens=1e12, gpus=64, tp=4, pp=2, zero=2, micro_batch=2),
         RunSpec(tokens=3e11, gpus=48, tp=2, pp=3, zero=3, recompute="none", sequence_parallel=False, context=4096),
         RunSpec(tp=8, recompute="full", sequence_parallel=False, causal=True, batch=16, gpu="mi300x"),
         RunSpec(tokens=5e10, gpus=16, pp=4, zero=0, recompute="full", gradient_bytes=4)]


@pytest.mark.parametrize("spec", SPECS)
@pytest.mark.parametrize("vocab, tied", [(None, True), (50304, True), (32000, False)])
def test_vectorized_and_scalar_agree_on_a_grid(spec, vocab, tied):
    shapes = [(L, d, H) for L in (1, 2, 7, 24, 48) for d, H in ((256, 4), (768, 12), (1536, 24), (4096, 32), (1000, 8))]
    depth, width, heads = (np.array(col) for col in zip(*shapes))
    arrays = costs.vanilla_costs(depth, width, heads, spec, vocab=vocab, tied=tied)
    for i, (L, d, H) in enumerate(shapes):
        one = costs.record(run_costs(blocks.vanilla(L, d, H, vocab=vocab, tied=tied), spec))
        for field, column in arrays.items():
            if column is None:
                assert one[field] is None, field
            else:
                assert column[i] == pytest.approx(one[field], rel=1e-12), (field, L, d, H)


def test_a_tensor_parallel_degree_the_shape_cannot_take_is_noted():
    c = run_costs(blocks.vanilla(12, 768, 12), RunSpec(tp=8))
    assert any("12 attention heads are not divisible by tp 8" in n for n in c.notes)
    assert not any(n.startswith("tp ") for n in run_costs(blocks.vanilla(12, 768, 12), RunSpec(tp=4)).notes)


@pytest.mark.parametrize("tied, pp, matrices", [(True, 1, 1), (False, 1, 2), (True, 2, 1), (False, 2, 1)])
def test_embedding_matrices_on_the_busiest_stage(tied, pp, matrices):
    """pp 1: one V·d matrix when tied, two when untied; pp > 1: the first stage's embedding (or the
    last stage's head, a copy when tied), one matrix either way (Megatron-LM's most loaded shard)."""
    arch = blocks.vanilla(12, 768, 12, vocab=50304, tied=tied)
    c = run_costs(arch, RunSpec(zero=0, pp=pp))
    assert c.weights_bytes_per_gpu == 2 * (12 * 12 * 768**2 // pp + matrices * 50304 * 768)
