"""Hugging Face config.json reading: shapes, exact non-embedding parameter counts, clear errors."""
import dataclasses
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from depthwidth.catalog import lookup
from depthwidth.errors import InputError
from depthwidth.hfconfig import (
    MAX_CONFIG_BYTES,
    ConfigModel,
    inspect_config,
    read_config,
    read_config_bytes,
    read_config_file,
)
from depthwidth.shapes import Shape

CONFIGS = Path(__file__).with_name("configs")


def load(name: str) -> ConfigModel:
    return inspect_config(read_config_file(CONFIGS / name, name), name)


def plain_layer(d: int, ffn: int) -> int:
    """4d² attention + 2·d·ffn feed-forward."""
    return 4 * d * d + 2 * d * ffn


def test_llama_7b_is_pinned():
    model = load("llama-7b.json")
    assert model.params_real == 6_476_005_376 == 32 * (4 * 4096**2 + 3 * 4096 * 11008)
    assert (model.depth, model.width, model.heads, model.kv_heads, model.head_dim) == (32, 4096, 32, 32, 128)
    assert model.ffn == 11008 and model.gated_ffn and model.vocab == 32000 and model.model_type == "llama"
    assert model.params_convention == 12 * 32 * 4096**2
    assert model.shape == Shape(32, 4096, 32) == lookup("llama-7b").shape


def test_bert_base():
    model = load("bert-base.json")
    assert model.params_real == 12 * plain_layer(768, 3072) == 84_934_656
    assert model.params_real == model.params_convention  # a 4x MLP is exactly the 12·L·d² convention
    assert not model.gated_ffn and model.ffn == 3072 and model.vocab == 30522
    assert model.shape == lookup("bert-base").shape


def test_gpt2_null_n_inner_means_four_times_width():
    model = load("gpt2.json")
    assert model.ffn == 4 * 768 and not model.gated_ffn
    assert model.params_real == 12 * plain_layer(768, 3072) == 84_934_656
    assert any("4·width" in note for note in model.notes)
    assert model.shape == lookup("gpt2").shape


def test_t5_base_counts_encoder_and_decoder():
    model = load("t5-base.json")
    d, ffn, heads, d_kv = 768, 3072, 12, 64
    attention = 4 * d * heads * d_kv
    encoder = 12 * (attention + 2 * d * ffn)
    decoder = 12 * (2 * attention + 2 * d * ffn)  # self- and cross-attention
    assert model.params_real == encoder + decoder == 198_180_864
    assert model.depth == 12 and model.head_dim == 64 and not model.gated_ffn and model.vocab == 32128
    assert model.params_convention == 12 * 12 * 768**2
    assert any("encoder" in note and "decoder" in note for note in model.notes)
    assert model.shape == lookup("t5-base").shape


def test_mistral_7b_grouped_query_attention():
    model = load("mistral-7b.json")
    d, head_dim = 4096, 128
    attention = 2 * d * 32 * head_dim + 2 * d * 8 * head_dim
    assert model.kv_heads == 8 and model.gated_ffn and model.ffn == 14336
    assert model.params_real == 32 * (attention + 3 * d * 14336) == 6_979_321_856


def test_t5_v1_1_gated_and_wide_attention():
    cfg = {"model_type": "t5", "d_model": 1024, "d_kv": 128, "num_heads": 32, "num_layers": 24,
           "d_ff": 16384, "feed_forward_proj": "gated-gelu"}  # T5-3B sizes, gated as in v1.1
    model = inspect_config(cfg, "t5-3b-gated")
    attention = 4 * 1024 * 32 * 128
    assert model.gated_ffn and model.head_dim == 128
    assert model.params_real == 24 * (attention + 3 * 1024 * 16384) + 24 * (2 * attention + 3 * 1024 * 16384)


def test_explicit_head_dim_and_silu_activation():
    cfg = {"model_type": "custom", "hidden_act": "silu", "hidden_size": 3072, "intermediate_size": 24576,
           "num_attention_heads": 16, "num_key_value_heads": 16, "head_dim": 256, "num_hidden_layers": 28}
    model = inspect_config(cfg, "gemma-like")
    assert model.gated_ffn and model.head_dim == 256
    assert model.params_real == 28 * (4 * 3072 * 16 * 256 + 3 * 3072 * 24576)


def test_mixtral_counts_every_expert():
    cfg = {"model_type": "mixtral", "hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32,
           "num_key_value_heads": 8, "num_hidden_layers": 32, "num_local_experts": 8}
    model = inspect_config(cfg, "mixtral")
    attention = 2 * 4096 * 4096 + 2 * 4096 * 1024
    assert model.params_real == 32 * (attention + 8 * 3 * 4096 * 14336 + 4096 * 8)


def test_multimodal_text_config():
    cfg = {"model_type": "llava", "text_config": json.loads((CONFIGS / "llama-7b.json").read_text())}
    assert inspect_config(cfg, "llava").params_real == 6_476_005_376


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
    raises_input_error(lambda: read_config(huge, "huge.json"), "10 MB")
    raises_input_error(lambda: read_config_bytes(huge.encode(), "huge.json"), "10 MB")


def test_huge_file_is_not_read_whole(tmp_path):
    path = tmp_path / "big.json"
    path.write_bytes(b" " * (MAX_CONFIG_BYTES + 10))
    raises_input_error(lambda: read_config_file(path), "10 MB")


def test_missing_file(tmp_path):
    raises_input_error(lambda: read_config_file(tmp_path / "nope.json"), "cannot read")


def test_tokenizer_config_names_every_missing_key():
    message = raises_input_error(
        lambda: load("not-a-config.json"),
        "missing keys",
        "depth (one of num_hidden_layers, n_layer, num_layers)",
        "width (one of hidden_size, n_embd, d_model)",
        "heads (one of num_attention_heads, n_head, num_heads)",
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
    assert model.params_real > 0 and 1 <= model.heads < model.width and model.kv_heads <= model.heads


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=64) | st.text(max_size=64).map(str.encode))
def test_any_bytes_give_a_dict_or_an_input_error(data):
    try:
        assert isinstance(read_config_bytes(data, "fuzz"), dict)
    except InputError:
        pass
