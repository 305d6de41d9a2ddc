"""Reading a Hugging Face ``config.json``: parsing with clear errors, the keys ``hf.config`` reads.

Every role (depth, width, heads, ...) is a list of key names; the first non-null one wins.
``READ_KEYS`` are all the keys the tool reads: benchmarks/hf_defaults.py records transformers'
default of each, per model type (hf_defaults.json).
"""
from __future__ import annotations

import json
import os

from ..core.errors import InputError
from .families import ACTIVATION_KEYS, ROPE_KEYS
from ..core.userfile import LIMIT_TEXT, STDIN
from ..core.userfile import MAX_BYTES as MAX_CONFIG_BYTES  # the one limit for every file depthwidth reads (configs are a few KB)

MAX_SIZE = 10**15  # largest layer count or dimension read from a config
EXPECTED = "expected a Hugging Face config.json"

DEPTH_KEYS = ("num_hidden_layers", "n_layer", "num_layers", "n_layers", "encoder_layers", "depth", "layers")
WIDTH_KEYS = ("hidden_size", "n_embd", "d_model", "dim", "n_embed", "emb_dim", "embed_dim")
HEADS_KEYS = ("num_attention_heads", "n_head", "num_heads", "n_heads", "encoder_attention_heads", "attention_heads")
FFN_KEYS = ("intermediate_size", "n_inner", "d_ff", "ffn_dim", "ffn_hidden_size", "d_inner", "hidden_dim", "encoder_ffn_dim",
            "dff", "dim_ff")
HEAD_DIM_KEYS = ("head_dim", "d_kv", "d_head", "kv_channels", "dim_head")
KV_HEADS_KEYS = ("num_key_value_heads", "num_kv_heads", "n_head_kv", "n_kv_heads")
EXPERTS_KEYS = ("num_local_experts", "num_experts", "n_routed_experts", "moe_num_experts")
TOP_K_KEYS = ("num_experts_per_tok", "moe_top_k", "experts_per_token", "moe_topk", "moe_k", "top_k_experts",
              "num_experts_per_token")
VOCAB_KEYS = ("vocab_size", "padded_vocab_size", "src_vocab_size")
NESTED_KEYS = ("text_config", "llm_config", "language_config", "thinker_config", "vlm_config", "encoder_config",
               "encoder")  # the language model first; else the first stack of a composite config
ROLES = (DEPTH_KEYS, WIDTH_KEYS, HEADS_KEYS, FFN_KEYS, HEAD_DIM_KEYS, KV_HEADS_KEYS, EXPERTS_KEYS, TOP_K_KEYS, VOCAB_KEYS)
OTHER_KEYS = (  # read one by one (the role keys above are read as groups)
    "tie_word_embeddings", "feed_forward_proj", "moe_intermediate_size", "n_shared_experts", "shared_expert_intermediate_size",
    "shared_intermediate_size", "first_k_dense_replace", "moe_layer_freq", "decoder_sparse_step", "mlp_only_layers",
    "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim", "num_hidden_groups",
    "inner_group_num", "embedding_size", "word_embed_proj_dim", "num_decoder_layers", "decoder_layers", "decoder_ffn_dim",
    "decoder_attention_heads", "encoder_ffn_dim", "encoder_attention_heads", "multi_query", "new_decoder_architecture",
    "multi_query_attention", "multi_query_group_num", "max_position_embeddings", "n_positions", "type_vocab_size",
    "position_embedding_type", "relative_attention_num_buckets", "layer_types", "expansion_ratio",
    "max_source_positions", "max_target_positions", "sinusoidal_pos_embds", "is_decoder") + ACTIVATION_KEYS + ROPE_KEYS
READ_KEYS = tuple(dict.fromkeys(k for keys in ROLES for k in keys)) + OTHER_KEYS  # benchmarks/hf_defaults.py records these
OTHER_DEFAULTS_UNSAID = frozenset(ACTIVATION_KEYS + ROPE_KEYS + ("max_position_embeddings", "n_positions", "is_decoder",
                                                                 "type_vocab_size", "position_embedding_type"))
EXPERT_HINTS = ("expert", "moe")  # a key with these in its name and a true value: a mixture of experts
# Bidirectional encoders: no key/value cache (BERT-style token types, masked-LM heads, vision encoders).
ENCODER_ARCHITECTURE_HINTS = ("MaskedLM", "ForImageClassification", "ForTokenClassification", "ForPreTraining")
DECODER_ARCHITECTURE_HINTS = ("CausalLM", "LMHead", "ConditionalGeneration", "Seq2Seq")


def read_config_bytes(data: bytes, source: str) -> dict:
    """Decode UTF-8 (a BOM is allowed) and parse with read_config."""
    if len(data) > MAX_CONFIG_BYTES:
        raise InputError("config", source, f"larger than {LIMIT_TEXT}")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InputError("config", source, f"not UTF-8 text (a binary file?); {EXPECTED}") from None
    return read_config(text, source)


def read_config(text: str, source: str) -> dict:
    """Parse config.json text into a dict; ``source`` names the input in error messages."""
    if len(text) > MAX_CONFIG_BYTES:
        raise InputError("config", source, f"larger than {LIMIT_TEXT}")
    if not text.strip():
        raise InputError("config", source, f"empty; {EXPECTED}")
    try:
        cfg = json.loads(text)
    except json.JSONDecodeError as err:
        raise InputError("config", source, f"not JSON ({err.msg} at line {err.lineno} column {err.colno}); {EXPECTED}") from None
    except (ValueError, RecursionError) as err:  # e.g. integers over 4300 digits, absurd nesting
        raise InputError("config", source, f"unreadable JSON ({type(err).__name__}); {EXPECTED}") from None
    if not isinstance(cfg, dict):
        kind = {list: "list", str: "string", bool: "boolean", type(None): "null"}.get(type(cfg), "number")
        raise InputError("config", source, f"a JSON {kind}, not an object; {EXPECTED}")
    return cfg


def read_config_file(path: str | os.PathLike, source: str | None = None, stdin=None) -> dict:
    """Read and parse a config.json (a directory means its config.json; ``-`` standard input)
    through the one bounded reader (``userfile``): regular files only, so a FIFO never blocks."""
    from ..core.userfile import read_bytes

    path = str(path)
    source = source if source is not None else (STDIN if path == "-" else path)
    accepted = "a Hugging Face config.json (a regular file or model folder), or - for standard input"
    if path != "-" and os.path.isdir(path):
        if not os.path.lexists(os.path.join(path, "config.json")):
            raise InputError("config", source, f"a folder with no config.json; expected {accepted}")
        path = os.path.join(path, "config.json")
    return read_config_bytes(read_bytes(path, "config", accepted, stdin=stdin), source)


def _first(cfg: dict, keys: tuple[str, ...]) -> tuple[str, object] | None:
    """(key, value) of the first of ``keys`` present with a non-null value."""
    for key in keys:
        if cfg.get(key) is not None:
            return key, cfg[key]
    return None


def shown(value: object) -> str:
    """repr() of a config value, cut to 40 characters (the value in an error line)."""
    text = repr(value)
    return text if len(text) <= 40 else text[:36] + "..."


FLAG_KEYS = ("tie_word_embeddings", "is_decoder", "multi_query", "multi_query_attention", "new_decoder_architecture",
             "sinusoidal_pos_embds")  # read as yes/no by hf/config.py and hf/layers.py


def plainly_valid(cfg: object) -> bool:
    """True when ``cfg`` certainly passes ``hf.files.ConfigFile`` (which imports Pydantic, ~0.2 s):
    a JSON object of string keys whose role keys are whole numbers from 1 (experts 0) to 10^15,
    yes/no keys true, false, 0 or 1, ``architectures`` a list of strings, ``model_type`` a string,
    nested configs (NESTED_KEYS) valid configs; null anywhere is as good as absent. False asks for
    ConfigFile's check, which names the problem (or, for a value this test is unsure of, accepts it)."""
    if type(cfg) is not dict or any(type(key) is not str for key in cfg):
        return False
    for keys in ROLES:
        lowest = 0 if keys is EXPERTS_KEYS else 1
        if any(cfg.get(k) is not None and (type(cfg[k]) is not int or not lowest <= cfg[k] <= MAX_SIZE) for k in keys):
            return False
    if any(cfg.get(k) is not None and type(cfg[k]) is not bool and not (type(cfg[k]) is int and cfg[k] in (0, 1))
           for k in FLAG_KEYS):
        return False
    names = cfg.get("architectures")
    if names is not None and (type(names) is not list or any(type(n) is not str for n in names)):
        return False
    if cfg.get("model_type") is not None and type(cfg["model_type"]) is not str:
        return False
    return all(cfg.get(k) is None or plainly_valid(cfg[k]) for k in NESTED_KEYS)


def _whole(key: str, value: object, source: str, lowest: int = 1) -> int:
    """A whole config value from ``lowest`` to 10^15 (bools, floats and strings are rejected).

    The file's role keys were checked by ``hf.files.ConfigFile`` already; this guards what the model
    does not see: keys read only in some layouts, family defaults, values derived from others."""
    if isinstance(value, bool) or not isinstance(value, int) or not lowest <= value <= MAX_SIZE:
        raise InputError("config", source, f"{key} = {shown(value)} is not a whole number from {lowest} to 10^15; {EXPECTED}")
    return value


def _optional(cfg: dict, keys: tuple[str, ...], source: str, lowest: int = 1) -> int | None:
    """The first of ``keys`` as a whole number, or None when none is given."""
    found = _first(cfg, keys)
    return None if found is None else _whole(*found, source, lowest)
