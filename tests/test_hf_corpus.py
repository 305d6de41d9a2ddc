"""transformers' own config classes as a corpus: every model type's default config.json is either
read with finite counts or refused with a clear InputError; none crashes. A few well-known types are
cross-checked against the counting convention written out here. Needs ``transformers`` (the test
extra), not torch."""
import math

import pytest

transformers = pytest.importorskip("transformers")
from transformers import CONFIG_MAPPING, AutoConfig  # noqa: E402

from depthwidth.blocks import flops_per_token, kv_bytes_per_token  # noqa: E402
from depthwidth.errors import InputError  # noqa: E402
from depthwidth.hfconfig import EXPECTED, inspect_config  # noqa: E402

transformers.logging.set_verbosity_error()


def default_config(model_type: str) -> dict | None:
    """transformers' default config of a model type as a dict, None when transformers cannot build it."""
    try:
        return AutoConfig.for_model(model_type).to_dict()
    except Exception:  # transformers' own failures (missing sub-config types, validators) are not ours
        return None


@pytest.fixture(scope="module")
def corpus():
    configs = {t: default_config(t) for t in sorted(CONFIG_MAPPING.keys())}
    return {t: c for t, c in configs.items() if c is not None}


def test_every_model_type_is_read_or_refused_clearly(corpus):
    assert len(corpus) >= 300
    read = refused = uncounted = 0
    for model_type, cfg in corpus.items():
        try:
            model = inspect_config(cfg, model_type)
        except InputError as err:
            refused += 1
            assert err.what == "config" and EXPECTED in str(err) and "\n" not in str(err), (model_type, str(err))
            continue
        read += 1
        assert 1 <= model.heads < model.width and model.depth >= 1 and model.kv_heads <= model.heads, model_type
        if model.params_real is None:
            uncounted += 1
            assert any("unavailable" in note for note in model.notes), model_type
            continue
        arch = model.architecture
        assert 0 < model.params_active <= model.params_real, model_type
        assert model.params_embedding is None or model.params_embedding > 0
        flops = flops_per_token(arch)
        assert flops > 0 and math.isfinite(float(flops)), model_type
        kv = kv_bytes_per_token(arch)
        assert kv is None or kv > 0, model_type
    assert read > refused and read > uncounted > 20  # hybrids and unknown expert layouts are named, not miscounted


def layer(d, heads, kv, hd, f, gated):
    return 2 * d * heads * hd + 2 * d * kv * hd + (3 if gated else 2) * d * f


@pytest.mark.parametrize("model_type, keys", [
    ("llama", ("hidden_size", "num_attention_heads", "num_key_value_heads", "intermediate_size", True)),
    ("mistral", ("hidden_size", "num_attention_heads", "num_key_value_heads", "intermediate_size", True)),
    ("qwen2", ("hidden_size", "num_attention_heads", "num_key_value_heads", "intermediate_size", True)),
    ("bert", ("hidden_size", "num_attention_heads", None, "intermediate_size", False)),
    ("gpt_neox", ("hidden_size", "num_attention_heads", None, "intermediate_size", False)),
])
def test_well_known_defaults_match_the_formula(corpus, model_type, keys):
    cfg = corpus[model_type]
    width_key, heads_key, kv_key, ffn_key, gated = keys
    d, heads = cfg[width_key], cfg[heads_key]
    kv = cfg[kv_key] if kv_key else heads
    hd = cfg.get("head_dim") or d // heads
    expected = cfg["num_hidden_layers"] * layer(d, heads, kv, hd, cfg[ffn_key], gated)
    assert inspect_config(cfg, model_type).params_real == expected


def test_transformers_defaults_of_the_issue_families(corpus):
    gpt2 = corpus["gpt2"]  # n_inner None -> 4·n_embd
    assert inspect_config(gpt2, "gpt2").params_real == gpt2["n_layer"] * 12 * gpt2["n_embd"] ** 2
    falcon = corpus["falcon"]  # multi_query, not new_decoder_architecture: one KV head
    assert inspect_config(falcon, "falcon").params_real == 6_625_951_744
    mixtral = inspect_config(corpus["mixtral"], "mixtral")
    assert (mixtral.params_real, mixtral.params_active) == (46_440_382_464, 12_617_515_008)
    v3 = inspect_config(corpus["deepseek_v3"], "deepseek_v3")
    assert round(v3.params_real / 1e9, 1) == 669.2
    t5 = corpus["t5"]
    d, f, L = t5["d_model"], t5["d_ff"], t5["num_layers"]
    attention = 4 * d * t5["num_heads"] * t5["d_kv"]
    assert inspect_config(t5, "t5").params_real == L * (attention + 2 * d * f) + t5["num_decoder_layers"] * (2 * attention + 2 * d * f)
    for name in ("distilbert", "mpt", "bart", "whisper"):  # rejected as "missing keys" before
        assert inspect_config(corpus[name], name).params_real > 0
