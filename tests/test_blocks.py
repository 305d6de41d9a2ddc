"""blocks.py: exact parameter, FLOP and KV-cache counts of real Transformer blocks, and the presets.

Every expected value is written out from the counting convention (reference card, "Beyond
12·L·d²"), not taken from the code."""
import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from depthwidth.arch import blocks
from depthwidth.arch.blocks import Architecture, flops_per_token, kv_bytes_per_token, params_active, params_embedding, params_nonembedding
from depthwidth.arch.presets import PRESETS, ffn_size, preset
from depthwidth.core.errors import InputError


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 200), st.integers(1, 64), st.sampled_from([32, 64, 128]))
def test_vanilla_block_is_twelve_d_squared_per_layer(depth, heads, head_dim):
    width = heads * head_dim
    arch = preset("vanilla").architecture(depth, width, head_dim=head_dim) if width > head_dim else blocks.vanilla(depth, width, heads)
    assert params_nonembedding(arch) == params_active(arch) == 12 * depth * width**2
    assert flops_per_token(arch, 2048) == 6 * 12 * depth * width**2 + 12 * depth * 2048 * width  # PaLM: 6N + 12·L·T·d
    assert kv_bytes_per_token(arch) == 2 * depth * width * 2


def test_vanilla_with_heads_not_dividing_the_width_still_counts_d_squared():
    arch = blocks.vanilla(6, 1086, 17)
    assert params_nonembedding(arch) == 12 * 6 * 1086**2


def test_llama_feed_forward_rule():
    # meta-llama/llama3 model.py: int(2·4d/3), times ffn_dim_multiplier, rounded up to multiple_of
    assert ffn_size(4096, True, 1.3, 1024) == 14336  # Llama 3 8B
    assert ffn_size(8192, True, 1.3, 4096) == 28672  # Llama 3 70B
    assert ffn_size(16384, True, 1.2, 4096) == 53248  # Llama 3 405B
    assert ffn_size(4096, True, 1.0, 256) == 11008  # LLaMA 7B: 256·ceil(10922/256)
    assert ffn_size(768, False) == 3072


@pytest.mark.parametrize("name, depth, width, shape", [
    ("llama", 32, 4096, (32, 8, 128, 14336)),  # Llama 3 8B (params.json: ffn_dim_multiplier 1.3, multiple_of 1024)
    ("mistral", 32, 4096, (32, 8, 128, 14336)),
    ("qwen2", 28, 3584, (28, 4, 128, 18944)),
    ("gemma", 18, 2048, (8, 8, 256, 16384)),
    ("mixtral", 32, 4096, (32, 8, 128, 14336)),
    ("gpt2", 12, 768, (12, 12, 64, 3072)),
])
def test_presets_reproduce_their_source_models(name, depth, width, shape):
    arch = preset(name).architecture(depth, width)
    assert (arch.heads, arch.kv_heads, arch.head_dim, arch.ffn) == shape
    heads, kv, hd, f = shape
    layer = 2 * width * heads * hd + 2 * width * kv * hd + (3 if arch.gated else 2) * width * f
    if arch.experts:
        layer += (arch.experts - 1) * 3 * width * f + width * arch.experts
    assert params_nonembedding(arch) == depth * layer


def test_llama_preset_with_llama3_multiplier_matches_llama3_8b():
    arch = preset("llama").architecture(32, 4096, ffn_mult=1.3)  # ffn_dim_multiplier 1.3: 14198 -> 14336
    d = 4096
    assert params_nonembedding(arch) == 32 * (2 * d * d + 2 * d * 1024 + 3 * d * 14336) == 6_979_321_856
    assert params_embedding(arch) == 2 * 128256 * d  # untied
    assert kv_bytes_per_token(arch) == 2 * 32 * 8 * 128 * 2 == 131_072
    assert kv_bytes_per_token(arch, 1) == 65_536


def test_mixtral_total_and_active_from_the_reference_card():
    arch = preset("mixtral").architecture(32, 4096)
    assert params_nonembedding(arch) == 32 * (41_943_040 + 8 * 3 * 4096 * 14336 + 4096 * 8) == 46_440_382_464
    assert params_active(arch) == 32 * (41_943_040 + 2 * 3 * 4096 * 14336 + 32_768) == 12_617_515_008
    assert flops_per_token(arch, 4096) == 6 * 12_617_515_008 + 6 * 32 * 4096 * 32 * 256


def test_deepseek_preset_is_deepseek_v3():
    arch = preset("deepseek").architecture(61, 7168)
    d, H = 7168, 128
    assert (arch.heads, arch.experts, arch.top_k, arch.expert_ffn, arch.dense_layers, arch.ffn) == (H, 256, 8, 2048, 3, 18432)
    attention = (d * 1536 + 1536 * H * 192) + (d * (512 + 64) + 512 * H * (128 + 128)) + H * 128 * d
    expert = 3 * d * 2048
    total = 61 * attention + 3 * 3 * d * 18432 + 58 * (256 * expert + expert + d * 256)
    active = 61 * attention + 3 * 3 * d * 18432 + 58 * (8 * expert + expert + d * 256)
    assert params_nonembedding(arch) == total and round(total / 1e9, 1) == 669.2
    assert params_active(arch) == active
    assert kv_bytes_per_token(arch) == 61 * (512 + 64) * 2
    assert flops_per_token(arch, 2048) == 6 * active + 6 * 61 * 2048 * H * (192 + 128)


def test_albert_shared_layers_count_once_but_run_depth_times():
    arch = Architecture(12, 768, 12, 12, 64, 3072, False, layer_groups=1, vocab=30000, embedding_width=128, encoder_only=True)
    layer = 4 * 768**2 + 2 * 768 * 3072
    assert params_nonembedding(arch) == layer
    assert params_embedding(arch) == 30000 * 128 + 128 * 768
    assert flops_per_token(arch, 512) == 6 * 12 * layer + 12 * 12 * 512 * 768
    assert kv_bytes_per_token(arch) is None and "encoder-only" in blocks.kv_cache_note(arch)


def test_encoder_decoder_has_cross_attention():
    arch = Architecture(12, 768, 12, 12, 64, 3072, False, decoder_depth=6)
    attention, ffn = 4 * 768**2, 2 * 768 * 3072
    assert params_nonembedding(arch) == 12 * (attention + ffn) + 6 * (2 * attention + ffn)
    assert kv_bytes_per_token(arch) == 2 * 6 * 768 * 2  # the decoder's self-attention
    assert flops_per_token(arch, 100) == 6 * params_nonembedding(arch) + 12 * (12 + 2 * 6) * 100 * 768


def test_shared_experts_gate_and_dense_layers():
    arch = Architecture(4, 64, 4, 2, 16, 256, True, experts=8, top_k=2, expert_ffn=32, shared_experts=1,
                        shared_expert_ffn=128, shared_expert_gate=True, dense_layers=1)
    attention = 2 * 64 * 64 + 2 * 64 * 32
    moe = 8 * 3 * 64 * 32 + 3 * 64 * 128 + 64 * 8 + 64
    assert params_nonembedding(arch) == 4 * attention + 3 * 64 * 256 + 3 * moe
    moe_active = 2 * 3 * 64 * 32 + 3 * 64 * 128 + 64 * 8 + 64
    assert params_active(arch) == 4 * attention + 3 * 64 * 256 + 3 * moe_active


def test_embeddings_unknown_vocab_and_tying():
    arch = preset("gpt2").architecture(12, 768)  # + GPT-2's wpe: 2048 rows (DEFAULT_CONTEXT) x d
    assert params_embedding(arch) == 50257 * 768 + 2048 * 768
    assert params_embedding(preset("gpt2").architecture(12, 768, tied=False)) == 2 * 50257 * 768 + 2048 * 768
    assert params_embedding(preset("gpt2").architecture(12, 768, 1024, vocab=1000)) == 1000 * 768 + 1024 * 768
    assert params_embedding(preset("llama").architecture(12, 1024, 1024)) == 2 * 128256 * 1024  # rotary: no table
    assert params_embedding(preset("vanilla").architecture(12, 768)) is None


def test_overrides():
    arch = preset("llama").architecture(16, 2048, kv_heads=2, head_dim=64, ffn_mult=1.0, vocab=32000, tied=True)
    # int(2·4·2048/3) = 5461 rounded up to Llama 3 8B's multiple_of 1024 (the preset's own size, issue 33)
    assert (arch.heads, arch.kv_heads, arch.head_dim, arch.ffn, arch.vocab, arch.tied) == (32, 2, 64, 6144, 32000, True)
    plain = preset("llama").architecture(16, 2048, gated=False, ffn_mult=1.0)
    assert not plain.gated and plain.ffn == 8192
    moe = preset("llama").architecture(16, 2048, experts=4)
    assert (moe.experts, moe.top_k, moe.expert_ffn) == (4, 2, moe.ffn)
    dense = preset("mixtral").architecture(8, 1024, experts=0)
    assert dense.experts is None and params_active(dense) == params_nonembedding(dense)
    assert preset("mixtral").architecture(8, 1024, top_k=1).top_k == 1


@pytest.mark.parametrize("overrides, fragments", [
    (dict(kv_heads=3), ["--kv-heads", "divide the 16 query heads", "1, 2, 4, 8, 16"]),
    (dict(kv_heads=32), ["--kv-heads"]),
    (dict(head_dim=96), ["width", "multiple of 96"]),
    (dict(top_k=2), ["--top-k", "no experts"]),
    (dict(experts=4, top_k=5), ["--top-k", "more than the 4 experts"]),
    (dict(experts=1), ["--experts", "at least 2"]),
    (dict(ffn_mult=0), ["--ffn-mult"]),
    (dict(vocab=0), ["--vocab"]),
    (dict(heads=3), ["override", "heads"]),
])
def test_impossible_overrides_teach(overrides, fragments):
    with pytest.raises(InputError) as caught:
        preset("llama").architecture(8, 2048, **overrides)
    for fragment in fragments:
        assert fragment in str(caught.value), str(caught.value)


def test_latent_attention_has_no_kv_heads_to_set():
    with pytest.raises(InputError, match="latent attention"):
        preset("deepseek").architecture(8, 896, kv_heads=2)


def test_width_must_be_a_multiple_of_head_dim():
    with pytest.raises(InputError, match="multiple of 128"):
        preset("llama").architecture(8, 1000)


def test_preset_lookup():
    assert set(PRESETS) == {"vanilla", "gpt2", "llama", "mistral", "qwen2", "gemma", "mixtral", "deepseek"}
    assert preset(" LLaMA ") is PRESETS["llama"]
    assert PRESETS["llama"].ffn_multiple == 1024 and PRESETS["llama"].head_dim == 128  # Llama 3 8B's
    assert (PRESETS["llama"].at_size(0).head_dim, PRESETS["llama"].at_size(0).ffn_multiple) == (64, 256)  # Llama 3.2 1B's
    assert all(p.source for p in PRESETS.values())
    with pytest.raises(InputError, match="vanilla, gpt2, llama"):
        preset("gpt5")


def test_bad_context_and_bytes():
    arch = preset("vanilla").architecture(2, 128)
    for bad in (0, -1, 2.5, True):
        with pytest.raises(InputError):
            flops_per_token(arch, bad)
        with pytest.raises(InputError):
            kv_bytes_per_token(arch, bad)


def test_architecture_is_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        preset("llama").architecture(8, 1024).depth = 3
