"""export with transformers itself (optional: DEPTHWIDTH_TRANSFORMERS=1): every written Hugging Face
config is loaded by transformers (no warnings allowed), every count is recomputed here from the fields
transformers read, and `depthwidth inspect` must read every file back to the same shape and counts.

The default test run never imports transformers (developers' guide); tests/test_export.py checks the
same counts against golden data transformers produced (tests/golden/make_export_counts.py).
"""
from __future__ import annotations

import json
import logging
import os
import warnings
from dataclasses import replace

import pytest

if not os.environ.get("DEPTHWIDTH_TRANSFORMERS"):
    pytest.skip("transformers tests run with DEPTHWIDTH_TRANSFORMERS=1 (optional extra)", allow_module_level=True)
transformers = pytest.importorskip("transformers")
from transformers import AutoConfig, GPT2Config, LlamaConfig, MistralConfig, MixtralConfig, Qwen2Config  # noqa: E402

from depthwidth.arch import blocks, presets  # noqa: E402

from depthwidth.loop import export, export_blocks

from depthwidth.advice import planner
from depthwidth.arch.blocks import Architecture  # noqa: E402
from depthwidth.core.errors import InputError  # noqa: E402
from conftest import run  # noqa: E402

HF_FORMATS = ("hf-llama", "hf-mistral", "hf-qwen2", "hf-gpt2", "hf-mixtral")
ALL_FORMATS = HF_FORMATS
PRESET_OF = {"hf-llama": "llama", "hf-mistral": "mistral", "hf-qwen2": "qwen2", "hf-gpt2": "gpt2",
             "hf-mixtral": "mixtral", "nanogpt": "gpt2"}
CLASS_OF = {"hf-llama": LlamaConfig, "hf-mistral": MistralConfig, "hf-qwen2": Qwen2Config, "hf-gpt2": GPT2Config,
            "hf-mixtral": MixtralConfig}
# nanoGPT's GPTConfig (karpathy/nanoGPT, model.py): these seven fields and no others.
NANOGPT_FIELDS = {"block_size", "vocab_size", "n_layer", "n_head", "n_embd", "dropout", "bias"}
SHAPES = ("12x768", "24x2048x16", "32x4096x32")
BUDGETS = ("1e8", "1e9", "1e10", "1e11")


# ---- helpers -------------------------------------------------------------------------------------

class _Collect(logging.Handler):
    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def load_quietly(directory):
    """AutoConfig.from_pretrained(directory) and every warning transformers raised or logged meanwhile."""
    logger = logging.getLogger("transformers")
    handler, level = _Collect(), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.WARNING)  # even if TRANSFORMERS_VERBOSITY=error is set outside
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            config = AutoConfig.from_pretrained(str(directory), local_files_only=True)
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    return config, handler.messages + [str(w.message) for w in caught]


def expected_counts(cfg, gated: bool) -> tuple[int, int]:
    """(all, active) non-embedding weights of the stack transformers would build from ``cfg``:
    q and o are d x (H·h), k and v d x (G·h); the MLP 3·d·f gated, 2·d·f plain; Mixtral E experts
    of size f and a d x E router, top-k of them per token."""
    d, L, H = cfg.hidden_size, cfg.num_hidden_layers, cfg.num_attention_heads
    G = getattr(cfg, "num_key_value_heads", None) or H
    h = getattr(cfg, "head_dim", None) or d // H
    f = cfg.n_inner if cfg.model_type == "gpt2" else cfg.intermediate_size
    attention = 2 * d * H * h + 2 * d * G * h
    mlp = (3 if gated else 2) * d * f
    if cfg.model_type == "mixtral":
        E, k = cfg.num_local_experts, cfg.num_experts_per_tok
        return L * (attention + E * mlp + d * E), L * (attention + k * mlp + d * E)
    return L * (attention + mlp), L * (attention + mlp)


def inspect_json(path) -> dict:
    result = run(["inspect", str(path), "--format", "json"])
    assert result.code == 0, result.stderr
    records = json.loads(result.stdout)
    return records[0] if isinstance(records, list) else records


def export_json(args: list[str]) -> dict:
    result = run(["export", *args, "--format", "json"])
    assert result.code == 0, result.stderr
    records = json.loads(result.stdout)
    assert isinstance(records, list) and len(records) == 1
    return records[0]


def check_written(fmt: str, directory, record: dict) -> None:
    """The file at directory/config.json against the record: transformers reads the same block,
    the counts recomputed from what it read match, and inspect reads the same shape and counts."""
    if fmt == "nanogpt":
        data = json.loads((directory / "config.json").read_text())
        assert set(data) == NANOGPT_FIELDS
        assert (data["n_layer"], data["n_embd"], data["n_head"]) == (record["depth"], record["width"], record["heads"])
        assert (data["block_size"], data["vocab_size"]) == (record["context"], record["vocab"])
        d, L = data["n_embd"], data["n_layer"]
        assert record["params_nonembedding"] == record["params_active"] == L * (4 * d * d + 2 * d * 4 * d)  # MHA + 4d MLP
    else:
        cfg, messages = load_quietly(directory)
        assert messages == [], messages
        assert isinstance(cfg, CLASS_OF[fmt])
        assert cfg.hidden_size == record["width"] and cfg.num_hidden_layers == record["depth"]
        assert cfg.num_attention_heads == record["heads"]
        assert (getattr(cfg, "num_key_value_heads", None) or cfg.num_attention_heads) == record["kv_heads"]
        assert (cfg.n_inner if fmt == "hf-gpt2" else cfg.intermediate_size) == record["ffn"]
        assert cfg.vocab_size == record["vocab"] and cfg.tie_word_embeddings == record["tied"]
        assert cfg.max_position_embeddings == record["context"]
        if fmt in ("hf-llama", "hf-mistral", "hf-mixtral"):
            assert cfg.head_dim == record["head_dim"]
        else:
            assert cfg.hidden_size // cfg.num_attention_heads == record["head_dim"]
        if fmt == "hf-mixtral":
            assert (cfg.num_local_experts, cfg.num_experts_per_tok) == (record["experts"], record["top_k"])
        assert expected_counts(cfg, gated=fmt != "hf-gpt2") == (record["params_nonembedding"], record["params_active"])
    seen = inspect_json(directory)
    assert (seen["depth"], seen["width"], seen["heads"]) == (record["depth"], record["width"], record["heads"])
    assert seen["params_nonembedding"] == record["params_nonembedding"]
    if "params_active" in seen:
        assert seen["params_active"] == record["params_active"]


# ---- every format at a few sizes -----------------------------------------------------------------

@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("fmt", ALL_FORMATS)
def test_export_loads_in_transformers_and_reads_back(fmt, shape, tmp_path):
    out = tmp_path / "model"
    record = export_json([shape, "--to", fmt, "--out", str(out)])
    assert record["path"] == str(out / "config.json") and os.path.isfile(record["path"])
    parts = [int(p) for p in shape.split("x")]
    head_size = presets.preset(PRESET_OF[fmt]).head_dim
    heads = parts[2] if len(parts) == 3 else parts[1] // head_size  # an explicit H, else the preset's head size
    assert (record["depth"], record["width"], record["heads"]) == (parts[0], parts[1], heads)
    assert record["head_dim"] == parts[1] // heads
    block = export_blocks.export_architecture(fmt, parts[0], parts[1], parts[2] if len(parts) == 3 else None)
    assert record["params_nonembedding"] == blocks.params_nonembedding(block)
    assert record["params_active"] == blocks.params_active(block)
    assert record["params_embedding"] == blocks.params_embedding(block)
    check_written(fmt, out, record)


def test_acceptance_24x2048x16_llama_round_trip(tmp_path):
    result = run(["export", "24x2048x16", "--to", "hf-llama", "--out", str(tmp_path)])
    assert result.code == 0, result.stderr
    seen = inspect_json(tmp_path)
    assert (seen["depth"], seen["width"], seen["heads"]) == (24, 2048, 16)


@pytest.mark.parametrize("fmt", ALL_FORMATS)
def test_overrides_reach_the_file(fmt, tmp_path):
    args = ["32x4096x32", "--to", fmt, "--out", str(tmp_path / "m.json"), "--context", "4096", "--vocab", "50304"]
    if fmt not in ("hf-gpt2", "nanogpt"):
        args += ["--kv-heads", "4", "--tied"]
    record = export_json(args)
    assert record["path"] == str(tmp_path / "m.json")
    assert (record["context"], record["vocab"]) == (4096, 50304)
    if fmt not in ("hf-gpt2", "nanogpt"):
        assert record["kv_heads"] == 4 and record["tied"] is True
        d, L, h = 4096, 32, 128
        attention = 2 * d * 32 * h + 2 * d * 4 * h
        assert record["params_embedding"] == 50304 * d  # tied: one V x d matrix
        assert record["params_nonembedding"] - record["params_active"] == (
            L * 6 * 3 * d * record["ffn"] if fmt == "hf-mixtral" else 0)  # 8 - 2 idle experts
        assert record["params_active"] - L * attention == L * (3 * d * record["ffn"] * (2 if fmt == "hf-mixtral" else 1)
                                                                + (d * 8 if fmt == "hf-mixtral" else 0))
    os.rename(tmp_path / "m.json", tmp_path / "config.json")
    check_written(fmt, tmp_path, record)


# ---- the recommended shapes of `plan` ------------------------------------------------------------

@pytest.mark.parametrize("budget", BUDGETS)
@pytest.mark.parametrize("fmt", ALL_FORMATS)
def test_export_plan_matches_plan_and_reads_back(fmt, budget, tmp_path):
    if not hasattr(planner, "plan_architecture"):
        pytest.skip("planner.plan_architecture is not available yet")
    record = export_json(["--plan", budget, "--to", fmt, "--out", str(tmp_path)])
    planned = run(["plan", "--params", budget, "--arch", PRESET_OF[fmt], "--format", "json"])
    assert planned.code == 0, planned.stderr
    plan = json.loads(planned.stdout)[0]
    assert (record["depth"], record["width"], record["heads"]) == (
        plan["recommended"]["depth"], plan["recommended"]["width"], plan["recommended"]["heads"])
    if "recommended_kv_heads" in plan:
        assert record["kv_heads"] == plan["recommended"]["kv_heads"]
    if "recommended_params" in plan:
        assert record["params_nonembedding"] == plan["recommended_params"]
    check_written(fmt, tmp_path, record)


def test_grouped_kv_heads_refused_by_formats_without_them():
    block = presets.preset("gpt2").architecture(12, 768, kv_heads=4)
    with pytest.raises(InputError, match="multi-head attention only"):
        export.config_for(block, "hf-gpt2")
    with pytest.raises(InputError, match="multi-head attention only"):
        export.config_for(block, "nanogpt")


def test_head_dim_apart_from_the_width():
    """Mistral and Mixtral carry head_dim (2048 = 16 heads of 96 + more); Qwen2 has no field for it,
    and LlamaConfig itself rejects a width its heads do not divide."""
    block = Architecture(depth=4, width=2048, heads=16, kv_heads=8, head_dim=96, ffn=5632, gated=True, vocab=32000, tied=False)
    with pytest.raises(InputError, match="no head_dim field"):
        export.config_for(block, "hf-qwen2")
    config = export.config_for(block, "hf-mistral")
    assert config["head_dim"] == 96
    odd = replace(block, heads=24, kv_heads=8, head_dim=128)
    with pytest.raises(InputError, match="LlamaConfig requires it"):
        export.config_for(odd, "hf-llama")
    as_llama = {**export.config_for(odd, "hf-mistral"), "model_type": "llama", "architectures": ["LlamaForCausalLM"]}
    as_llama.pop("sliding_window")
    with pytest.raises(Exception, match="not a multiple of the number of attention heads"):
        LlamaConfig(**{k: v for k, v in as_llama.items() if k not in ("model_type", "architectures", "rope_theta")})


def test_bad_context_and_format_are_input_errors():
    block = export_blocks.export_architecture("hf-llama", 24, 2048, 16)
    with pytest.raises(InputError, match="--context"):
        export.config_for(block, "hf-llama", context=0)
    with pytest.raises(InputError, match="bad format .llama.: expected one of hf-llama"):
        export.config_for(block, "llama")


# ---- family defaults come from transformers' own classes ----------------------------------------

def _rope_theta(config) -> float:
    parameters = getattr(config, "rope_parameters", None)  # transformers 5
    return parameters["rope_theta"] if parameters else config.rope_theta


@pytest.mark.parametrize("fmt", ("hf-llama", "hf-mistral", "hf-qwen2", "hf-mixtral"))
def test_family_defaults_are_the_configuration_class_defaults(fmt):
    fixed, reference = dict(export.TARGETS[fmt].fixed), CLASS_OF[fmt]()
    assert fixed["rms_norm_eps"] == reference.rms_norm_eps
    assert fixed["rope_theta"] == _rope_theta(reference)
    assert fixed["hidden_act"] == reference.hidden_act == "silu"
    assert export.TARGETS[fmt].default_vocab == reference.vocab_size
    assert export.TARGETS[fmt].model_type == reference.model_type


def test_gpt2_defaults_are_gpt2config_defaults():
    fixed, reference = dict(export.TARGETS["hf-gpt2"].fixed), GPT2Config()
    assert fixed["layer_norm_epsilon"] == reference.layer_norm_epsilon
    assert fixed["activation_function"] == reference.activation_function
    assert export.TARGETS["hf-gpt2"].default_vocab == reference.vocab_size
    assert reference.eos_token_id == reference.vocab_size - 1  # why eos = vocab - 1 is written


def test_gpt2_small_vocab_loads_without_token_warnings(tmp_path):
    record = export_json(["12x768", "--to", "hf-gpt2", "--vocab", "1000", "--out", str(tmp_path)])
    cfg, messages = load_quietly(tmp_path)
    assert messages == [] and cfg.eos_token_id == cfg.bos_token_id == 999 and record["vocab"] == 1000


