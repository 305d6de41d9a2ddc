"""Hugging Face config.json reading: shapes, exact non-embedding parameter counts, clear errors."""
import dataclasses
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from depthwidth.arch.catalog import lookup
from depthwidth.core.errors import InputError
from depthwidth.hf.config import ConfigModel, inspect_config
from depthwidth.hf.read import MAX_CONFIG_BYTES, read_config, read_config_bytes, read_config_file
from depthwidth.theory.shapes import Shape

CONFIGS = Path(__file__).with_name("configs")


def load(name: str) -> ConfigModel:
    return inspect_config(read_config_file(CONFIGS / name, name), name)


def plain_layer(d: int, ffn: int) -> int:
    """4d² attention + 2·d·ffn feed-forward."""
    return 4 * d * d + 2 * d * ffn


def test_llama_7b_is_pinned():
    model = load("llama-7b.json")
    assert model.params_nonembedding == 6_476_005_376 == 32 * (4 * 4096**2 + 3 * 4096 * 11008)
    assert (model.depth, model.width, model.heads, model.kv_heads, model.head_dim) == (32, 4096, 32, 32, 128)
    assert model.ffn == 11008 and model.gated and model.vocab == 32000 and model.model_type == "llama"
    assert model.params_convention == 12 * 32 * 4096**2
    assert model.shape == Shape(32, 4096, 32) == lookup("llama-7b").shape


def test_bert_base():
    model = load("bert-base.json")
    assert model.params_nonembedding == 12 * plain_layer(768, 3072) == 84_934_656
    assert model.params_nonembedding == model.params_convention  # a 4x MLP is exactly the 12·L·d² convention
    assert not model.gated and model.ffn == 3072 and model.vocab == 30522
    assert model.shape == lookup("bert-base").shape


def test_gpt2_null_n_inner_means_four_times_width():
    model = load("gpt2.json")
    assert model.ffn == 4 * 768 and not model.gated
    assert model.params_nonembedding == 12 * plain_layer(768, 3072) == 84_934_656
    assert any("4·width" in note for note in model.notes)
    assert model.shape == lookup("gpt2").shape


def test_t5_base_counts_encoder_and_decoder():
    model = load("t5-base.json")
    d, ffn, heads, d_kv = 768, 3072, 12, 64
    attention = 4 * d * heads * d_kv
    encoder = 12 * (attention + 2 * d * ffn)
    decoder = 12 * (2 * attention + 2 * d * ffn)  # self- and cross-attention
    assert model.params_nonembedding == encoder + decoder == 198_180_864
    assert model.depth == 12 and model.head_dim == 64 and not model.gated and model.vocab == 32128
    assert model.params_convention == 12 * 12 * 768**2
    assert any("encoder" in note and "decoder" in note for note in model.notes)
    assert model.shape == lookup("t5-base").shape


def test_mistral_7b_grouped_query_attention():
    model = load("mistral-7b.json")
    d, head_dim = 4096, 128
    attention = 2 * d * 32 * head_dim + 2 * d * 8 * head_dim
    assert model.kv_heads == 8 and model.gated and model.ffn == 14336
    assert model.params_nonembedding == 32 * (attention + 3 * d * 14336) == 6_979_321_856


def test_t5_v1_1_gated_and_wide_attention():
    cfg = {"model_type": "t5", "d_model": 1024, "d_kv": 128, "num_heads": 32, "num_layers": 24,
           "d_ff": 16384, "feed_forward_proj": "gated-gelu"}  # T5-3B sizes, gated as in v1.1
    model = inspect_config(cfg, "t5-3b-gated")
    attention = 4 * 1024 * 32 * 128
    assert model.gated and model.head_dim == 128
    assert model.params_nonembedding == 24 * (attention + 3 * 1024 * 16384) + 24 * (2 * attention + 3 * 1024 * 16384)


def test_explicit_head_dim_and_silu_activation():
    cfg = {"model_type": "custom", "hidden_act": "silu", "hidden_size": 3072, "intermediate_size": 24576,
           "num_attention_heads": 16, "num_key_value_heads": 16, "head_dim": 256, "num_hidden_layers": 28}
    model = inspect_config(cfg, "gemma-like")
    assert model.gated and model.head_dim == 256
    assert model.params_nonembedding == 28 * (4 * 3072 * 16 * 256 + 3 * 3072 * 24576)


def test_mixtral_counts_every_expert():
    cfg = {"model_type": "mixtral", "hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32,
           "num_key_value_heads": 8, "num_hidden_layers": 32, "num_local_experts": 8}
    model = inspect_config(cfg, "mixtral")
    attention = 2 * 4096 * 4096 + 2 * 4096 * 1024
    assert model.params_nonembedding == 32 * (attention + 8 * 3 * 4096 * 14336 + 4096 * 8)


def test_multimodal_text_config():
    cfg = {"model_type": "llava", "text_config": json.loads((CONFIGS / "llama-7b.json").read_text())}
    assert inspect_config(cfg, "llava").params_nonembedding == 6_476_005_376


def test_config_model_is_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        load("bert-base.json").depth = 1


def test_reading_a_directory_means_its_config_json(tmp_path):
    (tmp_path / "config.json").write_text((CONFIGS / "gpt2.json").read_text())
    assert inspect_config(read_config_file(tmp_path), "dir").depth == 12


# --- errors -----------------------------------------------------------------------------


def raises_input_error(call, *fragments):
    with pytest.raises(InputError) as caught:
        call()
    message = str(caught.value)
    assert caught.value.what == "config"
    for fragment in fragments:
        assert fragment in message, message
    return message


@pytest.mark.parametrize("text", ["", "   \n\t"])
def test_empty(text):
    raises_input_error(lambda: read_config(text, "empty.json"), "empty.json", "empty")
    raises_input_error(lambda: read_config_bytes(text.encode(), "empty.json"), "empty")


@pytest.mark.parametrize("data", [b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe", b"\xff\xfe\x00\x00", bytes(range(256))])
def test_binary_bytes(data):
    raises_input_error(lambda: read_config_bytes(data, "weights.bin"), "weights.bin", "UTF-8")


@pytest.mark.parametrize("text", ["{not json", "\x00\x01\x02", "{'single': 'quotes'}", "{}}", "[" * 100_000])
def test_not_json(text):
    raises_input_error(lambda: read_config(text, "junk"), "junk", "JSON")


@pytest.mark.parametrize("text,kind", [("[1, 2, 3]", "list"), ('"config"', "string"), ("12", "number"), ("null", "null")])
def test_json_that_is_not_an_object(text, kind):
    raises_input_error(lambda: read_config(text, "x.json"), kind, "object")


def test_byte_order_mark_is_accepted():
    assert read_config_bytes(b"\xef\xbb\xbf" + (CONFIGS / "bert-base.json").read_bytes(), "bom")["hidden_size"] == 768


def test_huge_input_is_rejected_before_parsing():
    huge = " " * MAX_CONFIG_BYTES + "{}"
    raises_input_error(lambda: read_config(huge, "huge.json"), "50 MiB")
    raises_input_error(lambda: read_config_bytes(huge.encode(), "huge.json"), "50 MiB")


def test_huge_file_is_not_read_whole(tmp_path):
    path = tmp_path / "big.json"
    path.write_bytes(b" " * (MAX_CONFIG_BYTES + 10))
    raises_input_error(lambda: read_config_file(path), "50 MiB")


def test_missing_file(tmp_path):
    raises_input_error(lambda: read_config_file(tmp_path / "nope.json"), "no such file")


def test_tokenizer_config_names_every_missing_key():
    message = raises_input_error(
        lambda: load("not-a-config.json"),
        "missing keys",
        "depth (one of num_hidden_layers, n_layer, num_layers",
        "width (one of hidden_size, n_embd, d_model",
        "heads (one of num_attention_heads, n_head, num_heads",
        "expected a Hugging Face config.json",
    )
    assert "not-a-config.json" in message


def test_only_the_missing_keys_are_named():
    cfg = {"hidden_size": 768, "num_attention_heads": 12}
    message = raises_input_error(lambda: inspect_config(cfg, "partial"), "depth (one of")
    assert "width (" not in message and "heads (" not in message


def bert_with(**changes):
    cfg = json.loads((CONFIGS / "bert-base.json").read_text())
    cfg.update(changes)
    return cfg


@pytest.mark.parametrize("value", [-12, 0, 12.5, 12.0, "12", True, [12], {"n": 12}, 10**20])
def test_bad_layer_counts_name_the_key_and_value(value):
    raises_input_error(lambda: inspect_config(bert_with(num_hidden_layers=value), "bert"), "num_hidden_layers", repr(value)[:10])


@pytest.mark.parametrize(
    "key,value",
    [("hidden_size", -768), ("num_attention_heads", 1.5), ("intermediate_size", 0), ("vocab_size", "30522"),
     ("num_key_value_heads", -1), ("head_dim", 0)],
)
def test_bad_values_of_other_keys(key, value):
    raises_input_error(lambda: inspect_config(bert_with(**{key: value}), "bert"), key)


def test_inconsistent_structures():
    raises_input_error(lambda: inspect_config(bert_with(num_key_value_heads=24), "bert"), "num_key_value_heads")
    raises_input_error(lambda: inspect_config(bert_with(num_attention_heads=7), "bert"), "not a multiple")
    with pytest.raises(InputError, match="heads"):
        inspect_config(bert_with(num_attention_heads=768), "bert")  # H < d is required
    with pytest.raises(InputError, match="depth"):
        inspect_config(bert_with(num_hidden_layers=10**7), "bert")


def test_non_dict_config():
    raises_input_error(lambda: inspect_config([1, 2], "list"), "object")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 10**6) | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3),
    max_leaves=8,
)
config_keys = st.sampled_from(
    ["num_hidden_layers", "n_layer", "num_layers", "hidden_size", "n_embd", "d_model", "num_attention_heads",
     "n_head", "num_heads", "intermediate_size", "n_inner", "d_ff", "num_key_value_heads", "head_dim", "d_kv",
     "vocab_size", "model_type", "hidden_act", "feed_forward_proj", "num_decoder_layers", "num_local_experts"]
)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(config_keys, json_values | st.integers(1, 64), max_size=12))
def test_any_config_gives_a_result_or_an_input_error(cfg):
    try:
        model = inspect_config(cfg, "fuzz")
    except InputError:
        return
    assert 1 <= model.heads < model.width and model.kv_heads <= model.heads
    if model.params_nonembedding is None:  # e.g. experts without a top-k: null, and the note says why
        assert any("unavailable" in note for note in model.notes)
    else:
        assert model.params_nonembedding > 0


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=64) | st.text(max_size=64).map(str.encode))
def test_any_bytes_give_a_dict_or_an_input_error(data):
    try:
        assert isinstance(read_config_bytes(data, "fuzz"), dict)
    except InputError:
        pass


# --- real config.json files, counted by an independent formula ---------------------------------
# Key names and values as in the public config.json of each model (Hugging Face Hub). The expected
# counts are written here from the counting convention, never taken from depthwidth.


def attn(d, heads, kv, hd):
    """q and o: d·H·h each; k and v: d·G·h each."""
    return 2 * d * heads * hd + 2 * d * kv * hd


def mlp(d, f, gated=False):
    return (3 if gated else 2) * d * f


def mla(d, heads, q_rank, kv_rank, nope, rope, v):
    q = d * q_rank + q_rank * heads * (nope + rope) if q_rank else d * heads * (nope + rope)
    return q + d * (kv_rank + rope) + kv_rank * heads * (nope + v) + heads * v * d


REAL = [  # (name, config, total non-embedding, active or None for "same as total")
    ("bert-base-uncased", {"architectures": ["BertForMaskedLM"], "model_type": "bert", "hidden_size": 768, "num_hidden_layers": 12,
     "num_attention_heads": 12, "intermediate_size": 3072, "hidden_act": "gelu", "type_vocab_size": 2, "vocab_size": 30522},
     12 * (attn(768, 12, 12, 64) + mlp(768, 3072)), None),
    ("bert-large-uncased", {"model_type": "bert", "hidden_size": 1024, "num_hidden_layers": 24, "num_attention_heads": 16,
     "intermediate_size": 4096, "type_vocab_size": 2, "vocab_size": 30522}, 24 * (4 * 1024**2 + mlp(1024, 4096)), None),
    ("roberta-base", {"model_type": "roberta", "hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12,
     "intermediate_size": 3072, "type_vocab_size": 1, "vocab_size": 50265}, 12 * (4 * 768**2 + mlp(768, 3072)), None),
    ("distilbert-base-uncased", {"model_type": "distilbert", "dim": 768, "n_layers": 6, "n_heads": 12, "hidden_dim": 3072,
     "vocab_size": 30522}, 6 * (4 * 768**2 + mlp(768, 3072)), None),
    ("albert-base-v2", {"model_type": "albert", "hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12,
     "intermediate_size": 3072, "embedding_size": 128, "num_hidden_groups": 1, "inner_group_num": 1, "vocab_size": 30000},
     4 * 768**2 + mlp(768, 3072), None),
    ("albert-xxlarge-v2", {"model_type": "albert", "hidden_size": 4096, "num_hidden_layers": 12, "num_attention_heads": 64,
     "intermediate_size": 16384, "embedding_size": 128, "num_hidden_groups": 1, "inner_group_num": 1, "vocab_size": 30000},
     4 * 4096**2 + mlp(4096, 16384), None),
    ("gpt2-medium", {"model_type": "gpt2", "n_embd": 1024, "n_layer": 24, "n_head": 16, "n_inner": None, "vocab_size": 50257},
     24 * 12 * 1024**2, None),
    ("gpt2-xl", {"model_type": "gpt2", "n_embd": 1600, "n_layer": 48, "n_head": 25, "n_inner": None, "vocab_size": 50257},
     48 * 12 * 1600**2, None),
    ("gpt-neo-1.3B", {"model_type": "gpt_neo", "hidden_size": 2048, "num_layers": 24, "num_heads": 16, "intermediate_size": None,
     "attention_types": [[["global", "local"], 12]], "vocab_size": 50257}, 24 * 12 * 2048**2, None),
    ("gpt-j-6b", {"model_type": "gptj", "n_embd": 4096, "n_layer": 28, "n_head": 16, "n_inner": None, "rotary_dim": 64,
     "vocab_size": 50400, "tie_word_embeddings": False}, 28 * 12 * 4096**2, None),
    ("gpt-neox-20b", {"model_type": "gpt_neox", "hidden_size": 6144, "num_hidden_layers": 44, "num_attention_heads": 64,
     "intermediate_size": 24576, "hidden_act": "gelu_fast", "vocab_size": 50432, "tie_word_embeddings": False},
     44 * (4 * 6144**2 + mlp(6144, 24576)), None),
    ("pythia-1b", {"model_type": "gpt_neox", "hidden_size": 2048, "num_hidden_layers": 16, "num_attention_heads": 8,
     "intermediate_size": 8192, "hidden_act": "gelu", "vocab_size": 50304}, 16 * (4 * 2048**2 + mlp(2048, 8192)), None),
    ("bloom-560m", {"model_type": "bloom", "hidden_size": 1024, "n_layer": 24, "n_head": 16, "vocab_size": 250880},
     24 * 12 * 1024**2, None),
    ("opt-1.3b", {"model_type": "opt", "hidden_size": 2048, "ffn_dim": 8192, "num_hidden_layers": 24, "num_attention_heads": 32,
     "word_embed_proj_dim": 2048, "vocab_size": 50272}, 24 * (4 * 2048**2 + mlp(2048, 8192)), None),
    ("opt-350m", {"model_type": "opt", "hidden_size": 1024, "ffn_dim": 4096, "num_hidden_layers": 24, "num_attention_heads": 16,
     "word_embed_proj_dim": 512, "vocab_size": 50272}, 24 * (4 * 1024**2 + mlp(1024, 4096)), None),
    ("falcon-7b", {"model_type": "falcon", "hidden_size": 4544, "num_hidden_layers": 32, "num_attention_heads": 71,
     "multi_query": True, "new_decoder_architecture": False, "parallel_attn": True, "bias": False, "vocab_size": 65024},
     32 * (4544 * 4544 + 2 * 4544 * 64 + 4544 * 4544 + 2 * 4544 * 18176), None),
    ("falcon-40b", {"model_type": "falcon", "hidden_size": 8192, "num_hidden_layers": 60, "num_attention_heads": 128,
     "num_kv_heads": 8, "multi_query": True, "new_decoder_architecture": True, "parallel_attn": True, "vocab_size": 65024},
     60 * (attn(8192, 128, 8, 64) + mlp(8192, 32768)), None),
    ("falcon-40b (RefinedWeb keys)", {"model_type": "RefinedWeb", "hidden_size": 8192, "n_layer": 60, "n_head": 128,
     "n_head_kv": 8, "new_decoder_architecture": True, "vocab_size": 65024}, 60 * (attn(8192, 128, 8, 64) + mlp(8192, 32768)), None),
    ("starcoder", {"model_type": "gpt_bigcode", "n_embd": 6144, "n_layer": 40, "n_head": 48, "n_inner": 24576,
     "multi_query": True, "vocab_size": 49152}, 40 * (attn(6144, 48, 1, 128) + mlp(6144, 24576)), None),
    ("mpt-7b", {"model_type": "mpt", "d_model": 4096, "n_heads": 32, "n_layers": 32, "expansion_ratio": 4,
     "attn_config": {"attn_type": "multihead_attention", "alibi": True}, "vocab_size": 50432}, 32 * 12 * 4096**2, None),
    ("Llama-2-13b", {"model_type": "llama", "hidden_size": 5120, "intermediate_size": 13824, "num_attention_heads": 40,
     "num_hidden_layers": 40, "num_key_value_heads": 40, "hidden_act": "silu", "vocab_size": 32000},
     40 * (4 * 5120**2 + mlp(5120, 13824, True)), None),
    ("Llama-2-70b", {"model_type": "llama", "hidden_size": 8192, "intermediate_size": 28672, "num_attention_heads": 64,
     "num_hidden_layers": 80, "num_key_value_heads": 8, "vocab_size": 32000}, 80 * (attn(8192, 64, 8, 128) + mlp(8192, 28672, True)), None),
    ("Meta-Llama-3-8B", {"model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32,
     "num_hidden_layers": 32, "num_key_value_heads": 8, "vocab_size": 128256, "tie_word_embeddings": False},
     32 * (attn(4096, 32, 8, 128) + mlp(4096, 14336, True)), None),
    ("Llama-3.2-1B", {"model_type": "llama", "hidden_size": 2048, "intermediate_size": 8192, "num_attention_heads": 32,
     "num_hidden_layers": 16, "num_key_value_heads": 8, "head_dim": 64, "vocab_size": 128256, "tie_word_embeddings": True},
     16 * (attn(2048, 32, 8, 64) + mlp(2048, 8192, True)), None),
    ("Mixtral-8x7B", {"model_type": "mixtral", "hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32,
     "num_hidden_layers": 32, "num_key_value_heads": 8, "num_local_experts": 8, "num_experts_per_tok": 2, "vocab_size": 32000},
     46_440_382_464, 12_617_515_008),
    ("Mixtral-8x22B", {"model_type": "mixtral", "hidden_size": 6144, "intermediate_size": 16384, "num_attention_heads": 48,
     "num_hidden_layers": 56, "num_key_value_heads": 8, "num_local_experts": 8, "num_experts_per_tok": 2, "vocab_size": 32768},
     56 * (attn(6144, 48, 8, 128) + 8 * mlp(6144, 16384, True) + 6144 * 8),
     56 * (attn(6144, 48, 8, 128) + 2 * mlp(6144, 16384, True) + 6144 * 8)),
    ("Qwen2-7B", {"model_type": "qwen2", "hidden_size": 3584, "intermediate_size": 18944, "num_attention_heads": 28,
     "num_hidden_layers": 28, "num_key_value_heads": 4, "vocab_size": 152064, "tie_word_embeddings": False},
     28 * (attn(3584, 28, 4, 128) + mlp(3584, 18944, True)), None),
    ("Qwen2-0.5B", {"model_type": "qwen2", "hidden_size": 896, "intermediate_size": 4864, "num_attention_heads": 14,
     "num_hidden_layers": 24, "num_key_value_heads": 2, "vocab_size": 151936, "tie_word_embeddings": True},
     24 * (attn(896, 14, 2, 64) + mlp(896, 4864, True)), None),
    ("Qwen1.5-MoE-A2.7B", {"model_type": "qwen2_moe", "hidden_size": 2048, "intermediate_size": 5632, "num_attention_heads": 16,
     "num_hidden_layers": 24, "num_key_value_heads": 16, "moe_intermediate_size": 1408, "shared_expert_intermediate_size": 5632,
     "num_experts": 60, "num_experts_per_tok": 4, "decoder_sparse_step": 1, "mlp_only_layers": [], "vocab_size": 151936},
     24 * (4 * 2048**2 + 60 * mlp(2048, 1408, True) + mlp(2048, 5632, True) + 2048 * 60 + 2048),
     24 * (4 * 2048**2 + 4 * mlp(2048, 1408, True) + mlp(2048, 5632, True) + 2048 * 60 + 2048)),
    ("Qwen3-30B-A3B", {"model_type": "qwen3_moe", "hidden_size": 2048, "intermediate_size": 6144, "num_attention_heads": 32,
     "num_hidden_layers": 48, "num_key_value_heads": 4, "head_dim": 128, "moe_intermediate_size": 768, "num_experts": 128,
     "num_experts_per_tok": 8, "decoder_sparse_step": 1, "mlp_only_layers": [], "vocab_size": 151936},
     48 * (attn(2048, 32, 4, 128) + 128 * mlp(2048, 768, True) + 2048 * 128),
     48 * (attn(2048, 32, 4, 128) + 8 * mlp(2048, 768, True) + 2048 * 128)),
    ("Qwen-MoE with mlp_only_layers", {"model_type": "qwen3_moe", "hidden_size": 256, "intermediate_size": 1024,
     "num_attention_heads": 4, "num_hidden_layers": 6, "num_key_value_heads": 2, "moe_intermediate_size": 128, "num_experts": 8,
     "num_experts_per_tok": 2, "decoder_sparse_step": 2, "mlp_only_layers": [5]},  # sparse: layers 1 and 3
     6 * attn(256, 4, 2, 64) + 4 * mlp(256, 1024, True) + 2 * (8 * mlp(256, 128, True) + 256 * 8),
     6 * attn(256, 4, 2, 64) + 4 * mlp(256, 1024, True) + 2 * (2 * mlp(256, 128, True) + 256 * 8)),
    ("OLMoE-1B-7B-0924", {"model_type": "olmoe", "hidden_size": 2048, "intermediate_size": 1024, "num_attention_heads": 16,
     "num_hidden_layers": 16, "num_key_value_heads": 16, "num_experts": 64, "num_experts_per_tok": 8, "vocab_size": 50304},
     16 * (4 * 2048**2 + 64 * mlp(2048, 1024, True) + 2048 * 64), 16 * (4 * 2048**2 + 8 * mlp(2048, 1024, True) + 2048 * 64)),
    ("Phi-3.5-MoE", {"model_type": "phimoe", "hidden_size": 4096, "intermediate_size": 6400, "num_attention_heads": 32,
     "num_hidden_layers": 32, "num_key_value_heads": 8, "num_local_experts": 16, "num_experts_per_tok": 2, "vocab_size": 32064},
     32 * (attn(4096, 32, 8, 128) + 16 * mlp(4096, 6400, True) + 4096 * 16),
     32 * (attn(4096, 32, 8, 128) + 2 * mlp(4096, 6400, True) + 4096 * 16)),
    ("DeepSeek-V3", {"model_type": "deepseek_v3", "hidden_size": 7168, "intermediate_size": 18432, "moe_intermediate_size": 2048,
     "num_hidden_layers": 61, "num_attention_heads": 128, "num_key_value_heads": 128, "n_shared_experts": 1,
     "n_routed_experts": 256, "num_experts_per_tok": 8, "first_k_dense_replace": 3, "moe_layer_freq": 1, "q_lora_rank": 1536,
     "kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128, "num_nextn_predict_layers": 1,
     "vocab_size": 129280, "tie_word_embeddings": False},
     61 * mla(7168, 128, 1536, 512, 128, 64, 128) + 3 * mlp(7168, 18432, True) + 58 * (257 * mlp(7168, 2048, True) + 7168 * 256),
     61 * mla(7168, 128, 1536, 512, 128, 64, 128) + 3 * mlp(7168, 18432, True) + 58 * (9 * mlp(7168, 2048, True) + 7168 * 256)),
    ("DeepSeek-V2-Lite", {"model_type": "deepseek_v2", "hidden_size": 2048, "intermediate_size": 10944,
     "moe_intermediate_size": 1408, "num_hidden_layers": 27, "num_attention_heads": 16, "num_key_value_heads": 16,
     "n_shared_experts": 2, "n_routed_experts": 64, "num_experts_per_tok": 6, "first_k_dense_replace": 1, "moe_layer_freq": 1,
     "q_lora_rank": None, "kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128,
     "vocab_size": 102400},
     27 * mla(2048, 16, None, 512, 128, 64, 128) + mlp(2048, 10944, True) + 26 * (66 * mlp(2048, 1408, True) + 2048 * 64),
     27 * mla(2048, 16, None, 512, 128, 64, 128) + mlp(2048, 10944, True) + 26 * (8 * mlp(2048, 1408, True) + 2048 * 64)),
    ("DeepSeek-V2", {"model_type": "deepseek_v2", "hidden_size": 5120, "intermediate_size": 12288, "moe_intermediate_size": 1536,
     "num_hidden_layers": 60, "num_attention_heads": 128, "num_key_value_heads": 128, "n_shared_experts": 2,
     "n_routed_experts": 160, "num_experts_per_tok": 6, "first_k_dense_replace": 1, "moe_layer_freq": 1, "q_lora_rank": 1536,
     "kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128, "vocab_size": 102400},
     60 * mla(5120, 128, 1536, 512, 128, 64, 128) + mlp(5120, 12288, True) + 59 * (162 * mlp(5120, 1536, True) + 5120 * 160),
     60 * mla(5120, 128, 1536, 512, 128, 64, 128) + mlp(5120, 12288, True) + 59 * (8 * mlp(5120, 1536, True) + 5120 * 160)),
    ("gemma-2b", {"model_type": "gemma", "hidden_size": 2048, "intermediate_size": 16384, "num_attention_heads": 8,
     "num_hidden_layers": 18, "num_key_value_heads": 1, "head_dim": 256, "hidden_act": "gelu", "vocab_size": 256000},
     18 * (attn(2048, 8, 1, 256) + mlp(2048, 16384, True)), None),
    ("gemma-7b", {"model_type": "gemma", "hidden_size": 3072, "intermediate_size": 24576, "num_attention_heads": 16,
     "num_hidden_layers": 28, "num_key_value_heads": 16, "head_dim": 256, "vocab_size": 256000},
     28 * (attn(3072, 16, 16, 256) + mlp(3072, 24576, True)), None),
    ("gemma-2-9b", {"model_type": "gemma2", "hidden_size": 3584, "intermediate_size": 14336, "num_attention_heads": 16,
     "num_hidden_layers": 42, "num_key_value_heads": 8, "head_dim": 256, "hidden_activation": "gelu_pytorch_tanh",
     "vocab_size": 256000}, 42 * (attn(3584, 16, 8, 256) + mlp(3584, 14336, True)), None),
    ("phi-2", {"model_type": "phi", "hidden_size": 2560, "intermediate_size": 10240, "num_attention_heads": 32,
     "num_hidden_layers": 32, "hidden_act": "gelu_new", "vocab_size": 51200}, 32 * (4 * 2560**2 + mlp(2560, 10240)), None),
    ("Phi-3-mini-4k", {"model_type": "phi3", "hidden_size": 3072, "intermediate_size": 8192, "num_attention_heads": 32,
     "num_hidden_layers": 32, "num_key_value_heads": 32, "hidden_act": "silu", "vocab_size": 32064},
     32 * (4 * 3072**2 + mlp(3072, 8192, True)), None),
    ("starcoder2-3b", {"model_type": "starcoder2", "hidden_size": 3072, "intermediate_size": 12288, "num_attention_heads": 24,
     "num_hidden_layers": 30, "num_key_value_heads": 2, "hidden_act": "gelu_pytorch_tanh", "vocab_size": 49152},
     30 * (attn(3072, 24, 2, 128) + mlp(3072, 12288)), None),
    ("t5-v1_1-base", {"model_type": "t5", "d_model": 768, "d_ff": 2048, "d_kv": 64, "num_heads": 12, "num_layers": 12,
     "feed_forward_proj": "gated-gelu", "tie_word_embeddings": False, "vocab_size": 32128},
     12 * (4 * 768**2 + mlp(768, 2048, True)) + 12 * (8 * 768**2 + mlp(768, 2048, True)), None),
    ("flan-t5-large", {"model_type": "t5", "d_model": 1024, "d_ff": 2816, "d_kv": 64, "num_heads": 16, "num_layers": 24,
     "num_decoder_layers": 24, "feed_forward_proj": "gated-gelu", "vocab_size": 32128},
     24 * (4 * 1024**2 + mlp(1024, 2816, True)) + 24 * (8 * 1024**2 + mlp(1024, 2816, True)), None),
    ("bart-large", {"model_type": "bart", "d_model": 1024, "encoder_layers": 12, "decoder_layers": 12,
     "encoder_attention_heads": 16, "decoder_attention_heads": 16, "encoder_ffn_dim": 4096, "decoder_ffn_dim": 4096,
     "vocab_size": 50265}, 12 * (4 * 1024**2 + mlp(1024, 4096)) + 12 * (8 * 1024**2 + mlp(1024, 4096)), None),
    ("whisper-small", {"model_type": "whisper", "d_model": 768, "encoder_layers": 12, "decoder_layers": 12,
     "encoder_attention_heads": 12, "decoder_attention_heads": 12, "encoder_ffn_dim": 3072, "decoder_ffn_dim": 3072,
     "num_mel_bins": 80, "vocab_size": 51865}, 12 * (4 * 768**2 + mlp(768, 3072)) + 12 * (8 * 768**2 + mlp(768, 3072)), None),
    ("opus-mt-en-de", {"model_type": "marian", "d_model": 512, "encoder_layers": 6, "decoder_layers": 6,
     "encoder_attention_heads": 8, "decoder_attention_heads": 8, "encoder_ffn_dim": 2048, "decoder_ffn_dim": 2048,
     "vocab_size": 58101}, 6 * (4 * 512**2 + mlp(512, 2048)) + 6 * (8 * 512**2 + mlp(512, 2048)), None),
    ("ModernBERT-base", {"architectures": ["ModernBertForMaskedLM"], "model_type": "modernbert", "hidden_size": 768,
     "intermediate_size": 1152, "num_attention_heads": 12, "num_hidden_layers": 22, "hidden_activation": "gelu",
     "vocab_size": 50368}, 22 * (4 * 768**2 + mlp(768, 1152, True)), None),
    ("xlnet-base-cased", {"model_type": "xlnet", "d_model": 768, "n_layer": 12, "n_head": 12, "d_head": 64, "d_inner": 3072,
     "vocab_size": 32000}, 12 * (5 * 768**2 + 2 * 768 + mlp(768, 3072)), None),  # + r (d x d) and segment embeddings (2 x d)
    ("chatglm2-6b", {"model_type": "chatglm", "num_layers": 28, "hidden_size": 4096, "num_attention_heads": 32,
     "kv_channels": 128, "ffn_hidden_size": 13696, "multi_query_attention": True, "multi_query_group_num": 2,
     "padded_vocab_size": 65024}, 28 * (attn(4096, 32, 2, 128) + mlp(4096, 13696, True)), None),
    ("gpt-oss-20b", {"model_type": "gpt_oss", "hidden_size": 2880, "intermediate_size": 2880, "num_attention_heads": 64,
     "num_hidden_layers": 24, "num_key_value_heads": 8, "head_dim": 64, "num_local_experts": 32, "num_experts_per_tok": 4,
     "experts_per_token": 4, "vocab_size": 201088},
     24 * (attn(2880, 64, 8, 64) + 32 * mlp(2880, 2880, True) + 2880 * 32),
     24 * (attn(2880, 64, 8, 64) + 4 * mlp(2880, 2880, True) + 2880 * 32)),
    ("llava-1.5-7b", {"model_type": "llava", "text_config": {"model_type": "llama", "hidden_size": 4096,
     "intermediate_size": 11008, "num_attention_heads": 32, "num_hidden_layers": 32, "vocab_size": 32064},
     "vision_config": {"hidden_size": 1024, "num_hidden_layers": 24}}, 6_476_005_376, None),
]


def test_the_corpus_is_large():
    assert len(REAL) + len(list(CONFIGS.glob("*.json"))) - 1 >= 40  # not-a-config.json is no config


@pytest.mark.parametrize("name, cfg, total, active", REAL, ids=[r[0] for r in REAL])
def test_real_configs_count_exactly(name, cfg, total, active):
    model = inspect_config(json.loads(json.dumps(cfg)), name)
    assert model.params_nonembedding == total
    assert model.params_active == (total if active is None else active)
    assert model.architecture is not None
    assert model.params_embedding is not None  # a vocabulary left out is the family's default


def test_pinned_acceptance_counts():
    by_name = {name: inspect_config(cfg, name) for name, cfg, _, _ in REAL}
    assert by_name["falcon-7b"].params_nonembedding == 6_625_951_744 and by_name["falcon-7b"].kv_heads == 1
    assert by_name["Mixtral-8x7B"].params_nonembedding == 46_440_382_464
    assert by_name["Mixtral-8x7B"].params_active == 12_617_515_008
    assert round(by_name["DeepSeek-V3"].params_nonembedding / 1e9, 1) == 669.2
    assert by_name["albert-base-v2"].params_nonembedding * 12 == 12 * (4 * 768**2 + 2 * 768 * 3072)  # counted once, not 12 times
    assert by_name["albert-base-v2"].params_embedding == 30000 * 128 + 128 * 768 + (512 + 2) * 128  # + positions, types
    assert by_name["bart-large"].decoder_depth == 12 and by_name["bart-large"].depth == 12


def test_kv_cache_and_embeddings_of_real_configs():
    by_name = {name: inspect_config(cfg, name) for name, cfg, _, _ in REAL}
    from depthwidth.arch.blocks import kv_bytes_per_token

    assert kv_bytes_per_token(by_name["Meta-Llama-3-8B"].architecture) == 2 * 32 * 8 * 128 * 2
    assert kv_bytes_per_token(by_name["DeepSeek-V3"].architecture) == 61 * (512 + 64) * 2
    assert kv_bytes_per_token(by_name["bert-base-uncased"].architecture) is None  # encoder-only
    assert kv_bytes_per_token(by_name["ModernBERT-base"].architecture) is None
    assert by_name["Meta-Llama-3-8B"].params_embedding == 2 * 128256 * 4096  # untied
    assert by_name["Llama-3.2-1B"].params_embedding == 128256 * 2048  # tied


@pytest.mark.parametrize("cfg, fragment", [
    ({"model_type": "zamba", "hidden_size": 3712, "num_hidden_layers": 76, "num_attention_heads": 16}, "zamba"),
    ({"model_type": "custom", "hidden_size": 1024, "num_hidden_layers": 8, "num_attention_heads": 16,
      "layer_types": ["full_attention", "mamba"] * 4}, "mamba"),
    ({"model_type": "dbrx", "d_model": 6144, "n_heads": 48, "n_layers": 40,
      "ffn_config": {"ffn_hidden_size": 10752, "moe_num_experts": 16, "moe_top_k": 4}}, "ffn_config.moe_num_experts"),
    ({"model_type": "bart", "d_model": 512, "encoder_layers": 6, "decoder_layers": 6, "encoder_attention_heads": 8,
      "decoder_attention_heads": 8, "encoder_ffn_dim": 2048, "decoder_ffn_dim": 1024}, "decoder_ffn_dim"),
])
def test_layouts_that_cannot_be_counted_give_none_and_say_why(cfg, fragment):
    model = inspect_config(cfg, "x")
    assert model.params_nonembedding is None and model.params_active is None and model.architecture is None
    assert any("unavailable" in n and fragment in n for n in model.notes), model.notes
    assert model.depth >= 1 and model.shape.width >= 2  # the shape is still read for the theory


def test_missing_top_k_takes_the_transformers_default():
    cfg = dict(REAL[[r[0] for r in REAL].index("Mixtral-8x7B")][1])
    del cfg["num_experts_per_tok"]
    model = inspect_config(cfg, "mixtral")
    assert model.top_k == 2 and model.params_active == 12_617_515_008
    assert any("default" in n for n in model.notes)


# --- family defaults, gating, positions, layouts (issue 21) --------------------------------------
# Expected values: the counting convention written out here, with transformers' class defaults quoted
# from its configuration_*.py (5.23); the corpus test checks the same against transformers' builds.

def test_unknown_model_type_is_counted_and_every_assumption_named():
    cfg = {"model_type": "exaone", "hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32,
           "num_layers": 32, "num_key_value_heads": 8, "vocab_size": 102400, "activation_function": "silu"}
    model = inspect_config(cfg, "exaone")
    assert model.params_nonembedding == 32 * (attn(4096, 32, 8, 128) + mlp(4096, 14336, True)) == 6_979_321_856
    said = " | ".join(model.assumptions)
    for fragment in ("'exaone' is not a transformers family", "tie_word_embeddings absent", "no head_dim",
                     "gated feed-forward (3·d·f) because of activation_function 'silu'", "no learned position table"):
        assert fragment in said, said
    assert all(a.startswith("assumed") and a in model.notes for a in model.assumptions)
    assert model.params_embedding == 102400 * 4096  # tied, as assumed


def test_known_family_makes_no_assumption():
    assert inspect_config({"model_type": "llama", "num_hidden_layers": 2}, "llama").assumptions == ()


@pytest.mark.parametrize("cfg, layer, embedding", [
    # mistral: num_key_value_heads 8, tie_word_embeddings false (MistralConfig defaults)
    ({"model_type": "mistral", "hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32,
      "num_hidden_layers": 1, "vocab_size": 32000}, attn(4096, 32, 8, 128) + mlp(4096, 14336, True), 2 * 32000 * 4096),
    # gemma: head_dim 256 (GemmaConfig), not width / heads = 192; tied
    ({"model_type": "gemma", "hidden_size": 3072, "intermediate_size": 24576, "num_attention_heads": 16,
      "num_key_value_heads": 16, "num_hidden_layers": 1, "vocab_size": 256000},
     attn(3072, 16, 16, 256) + mlp(3072, 24576, True), 256000 * 3072),
    # llama without intermediate_size: 11008 (LlamaConfig)
    ({"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "num_hidden_layers": 1},
     attn(4096, 32, 32, 128) + mlp(4096, 11008, True), 2 * 32000 * 4096),
])
def test_keys_left_out_take_the_family_default(cfg, layer, embedding):
    model = inspect_config(cfg, cfg["model_type"])
    assert model.params_nonembedding == layer and model.params_embedding == embedding
    assert any("transformers' defaults" in note for note in model.notes)


def test_mixtral_without_expert_keys_is_eight_experts_top_two():
    cfg = {"model_type": "mixtral", "hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32,
           "num_key_value_heads": 8, "num_hidden_layers": 32}
    model = inspect_config(cfg, "mixtral")
    assert (model.experts, model.top_k) == (8, 2)
    assert (model.params_nonembedding, model.params_active) == (46_440_382_464, 12_617_515_008)


def test_bloom_176b_n_embed():
    model = load("bloom-176b.json")
    assert (model.depth, model.width, model.heads) == (70, 14336, 112)
    assert model.params_nonembedding == 70 * 12 * 14336**2  # plain 4d feed-forward, MHA
    assert model.params_embedding == 250880 * 14336  # tied, ALiBi: no position table


def test_gemma_3_4b_text_config_left_to_defaults():
    model = load("gemma-3-4b.json")  # Gemma3TextConfig: 8 heads of 256, 4 KV heads, vocab 262208, tied
    assert (model.heads, model.kv_heads, model.head_dim) == (8, 4, 256) and model.gated
    assert model.params_nonembedding == 34 * (attn(2560, 8, 4, 256) + mlp(2560, 10240, True))
    assert model.params_embedding == 262208 * 2560


def test_llava_1_5_7b_text_config_left_to_llama_defaults():
    model = load("llava-1.5-7b.json")
    assert model.params_nonembedding == 6_476_005_376 and model.gated
    assert model.params_embedding == 2 * 32064 * 4096  # the outer tie_word_embeddings false


def test_llava_text_config_without_model_type_is_llama():
    cfg = {"model_type": "llava", "text_config": {"vocab_size": 32064}}
    model = inspect_config(cfg, "llava")
    assert model.model_type == "llama" and model.params_nonembedding == 6_476_005_376
    assert any("default 'llama'" in note for note in model.notes)


def test_glm_4_5_mixture_of_experts():
    model = load("glm-4.5.json")  # 96 heads of 128 at width 5120; 3 dense layers; 160 experts + 1 shared
    attention = attn(5120, 96, 8, 128)
    sparse = 160 * mlp(5120, 1536, True) + mlp(5120, 1536, True) + 5120 * 160
    assert model.params_nonembedding == 92 * attention + 3 * mlp(5120, 12288, True) + 89 * sparse
    assert model.params_active == 92 * attention + 3 * mlp(5120, 12288, True) + 89 * (sparse - 152 * mlp(5120, 1536, True))


@pytest.mark.parametrize("key", ["hidden_activation", "activation_function", "hidden_act"])
def test_gating_from_every_activation_key(key):
    cfg = {"model_type": "custom", "hidden_size": 256, "intermediate_size": 1024, "num_attention_heads": 4,
           "num_hidden_layers": 2, key: "silu"}
    assert inspect_config(cfg, "x").params_nonembedding == 2 * (4 * 256**2 + mlp(256, 1024, True))


def test_vaultgemma_is_gated_by_family():
    cfg = {"model_type": "vaultgemma", "hidden_size": 2304, "intermediate_size": 9216, "num_attention_heads": 8,
           "num_key_value_heads": 4, "head_dim": 256, "num_hidden_layers": 26, "hidden_activation": "gelu_pytorch_tanh"}
    assert inspect_config(cfg, "vaultgemma").params_nonembedding == 26 * (attn(2304, 8, 4, 256) + mlp(2304, 9216, True))


def test_position_tables_are_embeddings():
    model = load("gpt2.json")  # wte 50257 x 768, wpe 1024 x 768, tied head
    assert model.params_embedding == 50257 * 768 + 1024 * 768
    assert model.params_with_embeddings == 84_934_656 + 50257 * 768 + 1024 * 768
    bert = load("bert-base.json")  # word, position (512) and token-type (2) tables
    assert bert.params_embedding == (30522 + 512 + 2) * 768


def test_qwen3_moe_mlp_only_layers_from_defaults():
    cfg = {"model_type": "qwen3_moe", "hidden_size": 256, "intermediate_size": 1024, "moe_intermediate_size": 128,
           "num_attention_heads": 4, "num_key_value_heads": 2, "num_hidden_layers": 4, "num_experts": 8,
           "mlp_only_layers": [0, 3]}  # num_experts_per_tok left to Qwen3MoeConfig: 8
    model = inspect_config(cfg, "qwen3_moe")
    expected = 4 * attn(256, 4, 2, 64) + 2 * mlp(256, 1024, True) + 2 * (8 * mlp(256, 128, True) + 256 * 8)
    assert model.params_nonembedding == expected and model.top_k == 8


def test_attention_output_gate_and_dense_layer_list():
    cfg = {"model_type": "beam", "hidden_size": 512, "intermediate_size": 2048, "moe_intermediate_size": 256,
           "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 64, "num_hidden_layers": 4,
           "num_experts": 16, "num_experts_per_tok": 2, "mlp_layer_types": ["dense", "sparse", "sparse", "sparse"]}
    model = inspect_config(cfg, "beam")
    attention = attn(512, 8, 2, 64) + 512 * 8 * 64  # + the d x H·h output gate
    assert model.params_nonembedding == 4 * attention + mlp(512, 2048, True) + 3 * (16 * mlp(512, 256, True) + 512 * 16)


def test_trocr_decoder_has_cross_attention():
    cfg = {"model_type": "trocr", "d_model": 1024, "decoder_layers": 12, "decoder_attention_heads": 16,
           "decoder_ffn_dim": 4096, "vocab_size": 50265}
    assert inspect_config(cfg, "trocr").params_nonembedding == 12 * (2 * 4 * 1024**2 + mlp(1024, 4096))


@pytest.mark.parametrize("cfg, fragment", [
    ({"model_type": "wav2vec2", "hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12,
      "conv_dim": [512] * 7}, "convolutional feature encoder"),
    ({"model_type": "custom", "hidden_size": 256, "num_hidden_layers": 6, "num_attention_heads": 8,
      "backbone_config": {"model_type": "resnet"}}, "backbone"),
    ({"model_type": "parakeet_encoder", "hidden_size": 1024, "num_hidden_layers": 24, "num_attention_heads": 8},
     "Conformer"),
    ({"model_type": "blip", "text_config": {"hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12}},
     "several stacks"),
])
def test_models_that_are_not_one_stack_get_null_counts_with_the_reason(cfg, fragment):
    model = inspect_config(cfg, "x")
    assert model.params_nonembedding is None and model.params_with_embeddings is None
    assert any("unavailable" in n and fragment in n for n in model.notes), model.notes


def test_unmodelled_expert_layout_is_counted_with_its_assumption():
    cfg = {"model_type": "custom_moe", "hidden_size": 256, "intermediate_size": 512, "num_attention_heads": 4,
           "num_hidden_layers": 2, "num_experts": 4, "num_experts_per_tok": 1, "hidden_act": "silu"}
    model = inspect_config(cfg, "x")
    assert model.params_nonembedding == 2 * (4 * 256**2 + 4 * mlp(256, 512, True) + 256 * 4)
    assert any("expert layout" in a for a in model.assumptions)


def test_t5_head_is_tied_whatever_the_config_says():
    cfg = {"model_type": "t5", "d_model": 512, "d_ff": 1024, "d_kv": 64, "num_heads": 8, "num_layers": 2,
           "feed_forward_proj": "gated-gelu", "tie_word_embeddings": False, "vocab_size": 32128}
    model = inspect_config(cfg, "t5")  # T5Config: "we tie weights always"; relative biases 32 buckets x 8 heads x 2
    assert model.params_embedding == 32128 * 512 + 32 * 8 * 2


def test_gemma4_global_layers_shared_kv_and_per_layer_inputs():
    # Gemma4TextConfig: full-attention layers take global_head_dim; with attention_k_eq_v they use
    # num_global_key_value_heads and no v projection; the last num_kv_shared_layers have no k, v and
    # (use_double_wide_mlp) a feed-forward twice as wide; each layer has a d x p gate and p x d projection.
    d, heads, kv, hd, f, p = 1024, 8, 2, 128, 4096, 64
    types = ["sliding_attention", "sliding_attention", "full_attention"] * 2
    cfg = {"model_type": "gemma4_text", "hidden_size": d, "intermediate_size": f, "num_attention_heads": heads,
           "num_key_value_heads": kv, "head_dim": hd, "num_hidden_layers": 6, "layer_types": types,
           "global_head_dim": 256, "attention_k_eq_v": True, "num_global_key_value_heads": 1,
           "num_kv_shared_layers": 2, "use_double_wide_mlp": True, "hidden_size_per_layer_input": p,
           "vocab_size": 1000, "vocab_size_per_layer_input": 500, "tie_word_embeddings": True}
    model = inspect_config(cfg, "gemma4")
    sliding = 2 * d * heads * hd + 2 * d * kv * hd
    full = 2 * d * heads * 256 + d * 1 * 256  # k only
    expected = (3 * sliding + full  # layers 0-3
                + 2 * d * heads * hd + 2 * d * heads * 256  # layers 4 (sliding) and 5 (full) reuse k, v
                + 4 * mlp(d, f, True) + 2 * mlp(d, 2 * f, True) + 6 * 2 * d * p)
    assert model.params_nonembedding == expected
    assert model.params_embedding == 1000 * d + 500 * 6 * p + 6 * p * d


def test_hrm_shared_layers_are_counted_once_and_applied_every_time():
    from depthwidth.arch.blocks import flops_per_token
    cfg = {"model_type": "hrm_text", "hidden_size": 256, "intermediate_size": 512, "num_attention_heads": 4,
           "head_dim": 64, "num_hidden_layers": 12, "num_layers_per_stack": 2, "hidden_act": "silu"}
    model = inspect_config(cfg, "hrm")
    layer = 4 * 256**2 + 256 * 256 + mlp(256, 512, True)  # q, k, v, o + the d x d output gate + gated MLP
    assert model.params_nonembedding == 4 * layer  # two stacks of 2 distinct layers
    assert flops_per_token(model.architecture, 1) == 6 * 12 * layer + 6 * 12 * 1 * 4 * (64 + 64)  # 12 applications


def test_albert_inner_groups_apply_every_inner_layer():
    """transformers' AlbertTransformer.forward runs a whole AlbertLayerGroup (inner_group_num layers) at
    each of num_hidden_layers: 12 x 2 = 24 layers applied, 1 x 2 = 2 distinct ones counted."""
    from depthwidth.arch.blocks import DEFAULT_CONTEXT, flops_per_token

    d, f, layers = 768, 3072, 12
    model = inspect_config({"model_type": "albert", "hidden_size": d, "num_attention_heads": 12, "num_hidden_layers": layers,
                            "intermediate_size": f, "num_hidden_groups": 1, "inner_group_num": 2, "embedding_size": 128}, "x")
    layer = 4 * d * d + 2 * d * f
    assert model.depth == 24 and model.params_nonembedding == 2 * layer
    assert flops_per_token(model.architecture) == 6 * 24 * layer + 6 * 24 * DEFAULT_CONTEXT * 2 * d
