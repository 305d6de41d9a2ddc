"""The catalogue of published architectures: data sanity, lookup, filtering and sorting."""
import dataclasses
import json

import pytest

from depthwidth.arch.catalog import CATALOG_PATH, SORT_KEYS, Model, filter_models, load_models, lookup, sort_models
from depthwidth.core.errors import InputError
from depthwidth.theory.shapes import Shape

# The reference card's "Published architectures" list, verbatim: name -> (depth, width, heads).
REFERENCE_CARD = {
    "bert-base": (12, 768, 12), "bert-large": (24, 1024, 16),
    "gpt2-small": (12, 768, 12), "gpt2-medium": (24, 1024, 16), "gpt2-large": (36, 1280, 20), "gpt2-xl": (48, 1600, 25),
    "gpt3-small": (12, 768, 12), "gpt3-medium": (24, 1024, 16), "gpt3-large": (24, 1536, 16), "gpt3-xl": (24, 2048, 24),
    "gpt3-2.7b": (32, 2560, 32), "gpt3-6.7b": (32, 4096, 32), "gpt3-13b": (40, 5140, 40), "gpt3-175b": (96, 12288, 96),
    "t5-base": (12, 768, 12), "t5-large": (24, 1024, 16),
    "llama-7b": (32, 4096, 32), "llama-13b": (40, 5120, 40), "llama-33b": (60, 6656, 52), "llama-65b": (80, 8192, 64),
    "chinchilla-70b": (80, 8192, 64), "gopher-280b": (80, 16384, 128), "mt-nlg-530b": (105, 20480, 128),
    "palm-540b": (118, 18432, 48),
}
ALSO_REQUIRED = ["llama2-7b", "llama2-13b", "llama2-70b", "llama3-8b", "llama3-70b", "mistral-7b", "t5-small", "t5-3b", "t5-11b"]
MODELS = load_models()


def test_catalogue_is_large_and_matches_the_reference_card():
    assert len(MODELS) >= 35
    names = {m.name for m in MODELS}
    assert set(REFERENCE_CARD) | set(ALSO_REQUIRED) <= names
    for name, shape in REFERENCE_CARD.items():
        model = lookup(name)
        assert (model.depth, model.width, model.heads) == shape, name


def test_pinned_rows():
    assert lookup("bert-base").shape == Shape(12, 768, 12)
    assert lookup("gpt3-175b").shape == Shape(96, 12288, 96)
    assert lookup("gpt3-13b").width == 5140 and "5140" in lookup("gpt3-13b").source
    assert lookup("llama2-70b").kv_heads == 8
    assert lookup("llama-7b").ffn == 11008 and lookup("llama-7b").gated_ffn
    assert lookup("mistral-7b").kv_heads == 8 and lookup("mistral-7b").ffn == 14336


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.name)
def test_every_row_is_valid(model):
    whole = lambda value: isinstance(value, int) and not isinstance(value, bool) and value >= 1
    assert model.name == model.name.strip().lower() and " " not in model.name
    assert model.display_name and model.family and model.source.strip()
    assert all(whole(v) for v in (model.year, model.depth, model.width, model.heads))
    assert 1 <= model.heads < model.width
    assert all(v is None or whole(v) for v in (model.kv_heads, model.head_dim, model.ffn, model.vocab))
    assert model.kv_heads is None or (model.kv_heads < model.heads and model.heads % model.kv_heads == 0)
    assert model.head_dim is None or model.head_dim * model.heads != model.width  # null when it is width/heads
    assert isinstance(model.gated_ffn, bool) and (model.ffn is not None or not model.gated_ffn)
    assert model.params is None or (isinstance(model.params, float) and model.params > 0)
    assert 2017 <= model.year <= 2030
    assert model.tied in (True, False, None) and isinstance(model.encoder_only, bool)
    assert model.decoder_depth == (model.depth if model.family == "T5" else 0)
    assert model.shape == Shape(model.depth, model.width, model.heads)
    assert model.aspect == model.width / model.depth


def _structural_params(model: Model) -> float:
    """Weights implied by the row's own structure (plus one embedding matrix), to catch typos."""
    head_dim = model.head_dim or model.width / model.heads
    kv_heads = model.kv_heads or model.heads
    attention = 2 * model.width * head_dim * (model.heads + kv_heads)
    feed_forward = (3 if model.gated_ffn else 2) * model.width * (model.ffn or 4 * model.width)
    layers = model.depth * (attention + feed_forward)
    if model.family == "T5":  # the decoder: as many layers, with cross-attention
        layers += model.depth * (2 * attention + feed_forward)
    return layers + (model.vocab or 0) * model.width


@pytest.mark.parametrize("model", [m for m in MODELS if m.params is not None], ids=lambda m: m.name)
def test_published_params_agree_with_the_structure(model):
    # 10%: Gopher and Chinchilla carry a d² relative-position projection per layer (+8%).
    assert _structural_params(model) == pytest.approx(model.params, rel=0.10)


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.name)
def test_block_description_counts_by_the_convention(model):
    from depthwidth.arch.blocks import kv_bytes_per_token, params_active, params_embedding, params_nonembedding

    arch = model.architecture
    head_dim = model.head_dim or model.width / model.heads  # GPT-3 XL: 2048/24, attention spans the width
    kv_heads = model.kv_heads or model.heads
    attention = 2 * model.width * head_dim * (model.heads + kv_heads)
    feed_forward = (3 if model.gated_ffn else 2) * model.width * (model.ffn or 4 * model.width)
    expected = model.depth * (attention + feed_forward) + model.decoder_depth * (2 * attention + feed_forward)
    assert params_nonembedding(arch) == params_active(arch) == expected
    if model.vocab is None or model.tied is None:
        assert params_embedding(arch) is None
    else:
        # the token table (twice if untied), plus the position tables transformers builds (issue 21): GPT-2's
        # n_positions x d, BERT's positions and token types x d, T5's buckets x heads bias in each stack
        stacks = 2 if model.decoder_depth else 1
        positions = (model.positions + model.token_types) * model.width + stacks * model.relative_buckets * model.heads
        assert params_embedding(arch) == model.vocab * model.width * (1 if model.tied else 2) + positions
    kv = kv_bytes_per_token(arch)
    assert (kv is None) == model.encoder_only
    assert kv is None or kv == 2 * (model.decoder_depth or model.depth) * kv_heads * head_dim * 2


def test_pinned_blocks():
    from depthwidth.arch.blocks import params_embedding, params_nonembedding

    assert params_nonembedding(lookup("llama-7b").architecture) == 6_476_005_376
    assert params_embedding(lookup("llama3-8b").architecture) == 2 * 128256 * 4096  # untied
    assert params_nonembedding(lookup("palm-540b").architecture) == 118 * (
        18432 * 48 * 256 * 2 + 2 * 18432 * 256 + 3 * 18432 * 73728)  # MQA, head size 256
    assert lookup("bert-base").encoder_only and not lookup("gpt2-small").encoder_only
    assert lookup("gopher-280b").tied is None


def test_find_is_lookup_without_errors():
    from depthwidth.arch.catalog import find

    assert find("LLaMA-7B") is lookup("llama-7b") and find("12x768") is None and find(None) is None


def test_names_and_aliases_are_unique_and_lowercase():
    keys = [key for m in MODELS for key in (m.name, *m.aliases)]
    assert len(keys) == len(set(keys))
    assert all(key == key.lower() and key.strip() == key for key in keys)
    assert "bert" not in keys  # ambiguous between base and large


def test_json_rows_have_exactly_the_model_fields():
    fields = [f.name for f in dataclasses.fields(Model)]
    rows = json.loads(CATALOG_PATH.read_text(encoding="utf-8"))
    for row in rows:
        optional = {"aliases", "positions", "token_types", "relative_buckets"}  # defaults: none, 0, 0, 0
        assert set(fields) - optional <= set(row) <= set(fields), row.get("name")


def test_load_models_is_cached_and_frozen():
    assert load_models() is load_models()
    with pytest.raises(dataclasses.FrozenInstanceError):
        MODELS[0].depth = 1


@pytest.mark.parametrize("text", ["BERT-Base", "bert-base", "  bert-base ", "Bert_Base", "bert-base-uncased"])
def test_lookup_is_case_insensitive_and_knows_aliases(text):
    assert lookup(text).name == "bert-base"


def test_aliases():
    assert lookup("GPT3").name == "gpt3-175b"
    assert lookup("gpt2").name == "gpt2-small"
    assert lookup("llama-30b").name == "llama-33b"
    assert lookup("GPT3 175B").name == "gpt3-175b"


def test_near_miss_suggests_the_model():
    with pytest.raises(InputError) as caught:
        lookup("bert-bas")
    assert caught.value.what == "model name" and caught.value.value == "bert-bas"
    assert "did you mean 'bert-base'" in str(caught.value)
    assert "depthwidth models" in str(caught.value)


def test_ambiguous_prefix_suggests_its_models():
    with pytest.raises(InputError, match="bert-base.*bert-large|bert-large.*bert-base"):
        lookup("bert")


def test_far_miss_points_to_the_list():
    with pytest.raises(InputError) as caught:
        lookup("zzzzqqqq")
    assert "did you mean" not in str(caught.value)
    assert "see `depthwidth models` for the list" in str(caught.value)


@pytest.mark.parametrize("bad", ["", "   ", None, 12])
def test_lookup_rejects_non_names(bad):
    with pytest.raises(InputError):
        lookup(bad)


def test_filter_by_substring_glob_and_family():
    assert {m.name for m in filter_models(MODELS, "gpt2")} == {"gpt2-small", "gpt2-medium", "gpt2-large", "gpt2-xl"}
    assert {m.name for m in filter_models(MODELS, "LLAMA2-*")} == {"llama2-7b", "llama2-13b", "llama2-70b"}
    assert {m.family for m in filter_models(MODELS, "llama")} == {"LLaMA", "Llama 2", "Llama 3", "Llama 3.2"}
    assert {m.name for m in filter_models(MODELS, "t5-?b")} == {"t5-3b"}
    assert filter_models(MODELS, None) == MODELS
    assert filter_models(MODELS, "no-such-thing") == ()


def test_filter_by_params():
    big = filter_models(MODELS, min_params=100e9)
    assert big and all(m.params >= 100e9 for m in big)
    assert "gpt3-175b" in {m.name for m in big} and "llama-65b" not in {m.name for m in big}
    small = filter_models(MODELS, "bert-*", max_params=200e6)
    assert {m.name for m in small} == {"bert-base"}
    assert {m.name for m in filter_models(MODELS, min_params=7e9, max_params=7e9)} == {"llama2-7b"}
    with pytest.raises(InputError, match="minimum"):
        filter_models(MODELS, min_params=2e9, max_params=1e9)


def test_sort_models():
    by_params = sort_models(MODELS, "params")
    assert by_params[0].params == min(m.params for m in MODELS)
    assert by_params[-1].params == max(m.params for m in MODELS)
    assert [m.depth for m in sort_models(MODELS, "depth")] == sorted(m.depth for m in MODELS)
    assert [m.width for m in sort_models(MODELS, "width", descending=True)] == sorted((m.width for m in MODELS), reverse=True)
    assert [m.year for m in sort_models(MODELS, "year")] == sorted(m.year for m in MODELS)
    aspects = [m.aspect for m in sort_models(MODELS, "aspect")]
    assert aspects == sorted(aspects)
    assert [m.name for m in sort_models(MODELS, "name")] == sorted(m.name for m in MODELS)
    assert set(sort_models(MODELS, "NAME")) == set(MODELS)
    ties = [m.name for m in sort_models(MODELS, "depth") if m.depth == 12]
    assert ties == sorted(ties)  # equal keys fall back to the name


@pytest.mark.parametrize("key", ["size", "", "params;", "Aspect ratio"])
def test_bad_sort_key_names_the_accepted_keys(key):
    with pytest.raises(InputError) as caught:
        sort_models(MODELS, key)
    assert caught.value.what == "sort key"
    assert all(k in str(caught.value) for k in SORT_KEYS)


def test_current_small_families_count_what_their_model_cards_say():
    """Issue 33: the model cards' non-embedding counts (Qwen2.5-0.5B 0.36B, Qwen2.5-Coder-1.5B 1.31B, as copied
    in Abandon-ht/LLM-tutorial and ZHUI/paddlenlp_model_readme) and Llama 3.2 1B's tied 128256 x 2048 table."""
    from depthwidth.arch.blocks import params_embedding, params_nonembedding

    assert params_nonembedding(lookup("qwen2.5-0.5b").architecture) == pytest.approx(0.36e9, rel=0.02)
    assert params_nonembedding(lookup("qwen2.5-1.5b").architecture) == pytest.approx(1.31e9, rel=0.01)
    assert params_embedding(lookup("llama3.2-1b").architecture) == 128256 * 2048
    assert {"Llama 3.2", "Qwen2.5", "SmolLM2", "Gemma 2", "OLMo 2"} <= {m.family for m in MODELS}
