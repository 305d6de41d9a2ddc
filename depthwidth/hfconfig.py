"""Hugging Face ``config.json`` -> Shape and a real non-embedding parameter count.

Reading of the config (keys tried in order, the first non-null one wins):
- depth ``num_hidden_layers | n_layer | num_layers``, width ``hidden_size | n_embd | d_model``,
  heads ``num_attention_heads | n_head | num_heads``, feed-forward size
  ``intermediate_size | n_inner | d_ff`` (absent or null, as GPT-2's ``n_inner``, means 4·width),
  key/value heads ``num_key_value_heads`` (default: heads), head size ``head_dim | d_kv``
  (default: width / heads), ``vocab_size``.
- Gated feed-forward (SwiGLU/GeGLU, three matrices): a LLaMA-style ``model_type``, a T5
  ``feed_forward_proj`` starting with "gated-", or ``hidden_act`` silu/swish/swiglu with an
  ``intermediate_size``.
- T5-style encoder-decoders (``model_type`` t5/mt5/umt5/longt5, or a ``num_decoder_layers``
  key): depth is the encoder's ``num_layers``; ``params_real`` counts the encoder and the
  ``num_decoder_layers`` decoder layers (default: as many), whose cross-attention adds a second
  attention block; ``params_convention`` stays 12·L·d² for the encoder alone.
- Mixtral-style ``num_local_experts``: every expert's feed-forward and the router are counted
  (other mixture-of-experts layouts are counted as dense, with a note).
- A multimodal config without the top-level keys is read from its ``text_config``.

Counted per layer: attention d·(H·d_head) for Q and for O, d·(kv_heads·d_head) for K and for V;
feed-forward 2·d·ffn, or 3·d·ffn gated. Ignored: biases, layer norms, position and token
embeddings, relative-attention biases and the output head (so the count is non-embedding).
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass

from .errors import InputError
from .shapes import Shape, make_shape, params

MAX_CONFIG_BYTES = 10_000_000  # real config.json files are a few KB
MAX_SIZE = 10**15  # largest layer count or dimension read from a config
EXPECTED = "expected a Hugging Face config.json"

DEPTH_KEYS = ("num_hidden_layers", "n_layer", "num_layers")
WIDTH_KEYS = ("hidden_size", "n_embd", "d_model")
HEADS_KEYS = ("num_attention_heads", "n_head", "num_heads")
FFN_KEYS = ("intermediate_size", "n_inner", "d_ff")
HEAD_DIM_KEYS = ("head_dim", "d_kv")
GATED_MODEL_TYPES = frozenset({
    "llama", "mistral", "mixtral", "qwen2", "qwen3", "gemma", "gemma2", "gemma3_text",
    "phi3", "olmo", "olmo2", "cohere", "internlm2", "granite",
})
OTHER_EXPERT_KEYS = ("num_experts", "n_routed_experts", "moe_intermediate_size")  # not modelled
GATED_ACTIVATIONS = frozenset({"silu", "swish", "swiglu"})
T5_MODEL_TYPES = frozenset({"t5", "mt5", "umt5", "longt5"})


@dataclass(frozen=True)
class ConfigModel:
    """What a config.json says about a model, with its real non-embedding parameter count."""

    source: str
    model_type: str | None
    depth: int
    width: int
    heads: int
    kv_heads: int
    head_dim: int
    ffn: int
    gated_ffn: bool
    vocab: int | None
    params_real: int
    params_convention: int
    notes: tuple[str, ...] = ()

    @property
    def shape(self) -> Shape:
        """The (depth, width, heads) the theory works with."""
        return make_shape(self.depth, self.width, self.heads, f"{self.depth}x{self.width}x{self.heads} (from {self.source})")


def read_config_bytes(data: bytes, source: str) -> dict:
    """Decode UTF-8 (a BOM is allowed) and parse with read_config."""
    if len(data) > MAX_CONFIG_BYTES:
        raise InputError("config", source, f"larger than {MAX_CONFIG_BYTES // 1_000_000} MB; {EXPECTED} (a few KB)")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InputError("config", source, f"not UTF-8 text (a binary file?); {EXPECTED}") from None
    return read_config(text, source)


def read_config(text: str, source: str) -> dict:
    """Parse config.json text into a dict; ``source`` names the input in error messages."""
    if len(text) > MAX_CONFIG_BYTES:
        raise InputError("config", source, f"larger than {MAX_CONFIG_BYTES // 1_000_000} MB; {EXPECTED} (a few KB)")
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


def read_config_file(path: str | os.PathLike, source: str | None = None) -> dict:
    """Read and parse a config.json (a directory means its config.json), at most 10 MB."""
    source = source if source is not None else str(path)
    if os.path.isdir(path):
        path = os.path.join(path, "config.json")
    try:
        with open(path, "rb") as file:
            data = file.read(MAX_CONFIG_BYTES + 1)
    except OSError as err:
        raise InputError("config", source, f"cannot read it ({err.strerror or err}); {EXPECTED}") from None
    return read_config_bytes(data, source)


def _first(cfg: dict, keys: tuple[str, ...]) -> tuple[str, object] | None:
    """(key, value) of the first of ``keys`` present with a non-null value."""
    for key in keys:
        if cfg.get(key) is not None:
            return key, cfg[key]
    return None


def _whole(key: str, value: object, source: str) -> int:
    """A positive integer config value (bools, floats and strings are rejected)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_SIZE:
        shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:36] + "..."
        raise InputError("config", source, f"{key} = {shown} is not a whole number from 1 to 10^15; {EXPECTED}")
    return value


def _optional(cfg: dict, keys: tuple[str, ...], source: str) -> int | None:
    """The first of ``keys`` as a positive integer, or None when none is given."""
    found = _first(cfg, keys)
    return None if found is None else _whole(*found, source)


def _gating(cfg: dict, model_type: str | None, ffn_key: str | None) -> str | None:
    """Why the feed-forward is gated (three matrices), or None if it is a plain two-matrix MLP."""
    projection = cfg.get("feed_forward_proj")
    if isinstance(projection, str):
        return f"feed_forward_proj {projection!r}" if projection.startswith("gated-") else None
    if model_type in GATED_MODEL_TYPES:
        return f"model_type {model_type!r}"
    activation = cfg.get("hidden_act")
    if ffn_key == "intermediate_size" and isinstance(activation, str) and activation.lower() in GATED_ACTIVATIONS:
        return f"hidden_act {activation!r}"
    return None


def inspect_config(cfg: dict, source: str) -> ConfigModel:
    """Shape, structure and real non-embedding parameter count of a parsed config.json."""
    if not isinstance(cfg, dict):
        raise InputError("config", source, f"not a JSON object; {EXPECTED}")
    notes: list[str] = []
    if _first(cfg, DEPTH_KEYS) is None and isinstance(cfg.get("text_config"), dict):
        cfg = {"model_type": cfg.get("model_type"), **cfg["text_config"]}
        notes.append("read from text_config (the language model of a multimodal config)")

    roles = (("depth", DEPTH_KEYS), ("width", WIDTH_KEYS), ("heads", HEADS_KEYS))
    found = {role: _first(cfg, keys) for role, keys in roles}
    missing = [f"{role} (one of {', '.join(keys)})" for role, keys in roles if found[role] is None]
    if missing:
        raise InputError("config", source, f"missing keys: {', '.join(missing)}; {EXPECTED}")
    depth, width, heads = (_whole(*found[role], source) for role, _ in roles)
    make_shape(depth, width, heads, f"{depth}x{width}x{heads} (from {source})")  # H < d, depth range

    model_type = cfg.get("model_type") if isinstance(cfg.get("model_type"), str) else None
    kv_heads = _optional(cfg, ("num_key_value_heads",), source) or heads
    if kv_heads > heads:
        raise InputError("config", source, f"num_key_value_heads = {kv_heads} exceeds {heads} attention heads; {EXPECTED}")
    head_dim = _optional(cfg, HEAD_DIM_KEYS, source)
    if head_dim is None:
        if width % heads:
            raise InputError("config", source, f"width {width} is not a multiple of {heads} heads and no head_dim is given; {EXPECTED}")
        head_dim = width // heads
    elif head_dim * heads != width:
        notes.append(f"head size {head_dim}: attention spans {heads}·{head_dim} = {heads * head_dim}, not the width {width}")

    ffn_found = _first(cfg, FFN_KEYS)
    if ffn_found is None:
        ffn = 4 * width
        notes.append(f"no feed-forward size given ({', '.join(FFN_KEYS)} absent or null): 4·width = {ffn} assumed")
    else:
        ffn = _whole(*ffn_found, source)
    gating = _gating(cfg, model_type, ffn_found[0] if ffn_found else None)
    if gating:
        notes.append(f"gated feed-forward ({gating}): 3·width·ffn parameters per layer")

    attention = 2 * width * heads * head_dim + 2 * width * kv_heads * head_dim
    feed_forward = (3 if gating else 2) * width * ffn
    experts = _optional(cfg, ("num_local_experts",), source)
    if experts is not None and experts > 1:
        feed_forward = experts * feed_forward + width * experts
        notes.append(f"mixture of {experts} experts: all experts and the router counted (total, not active, parameters)")
    elif any(cfg.get(key) for key in OTHER_EXPERT_KEYS):
        notes.append("mixture-of-experts keys not modelled here: the feed-forward is counted as one dense block")

    if model_type in T5_MODEL_TYPES or "num_decoder_layers" in cfg:
        decoder_depth = _optional(cfg, ("num_decoder_layers",), source) or depth
        params_real = depth * (attention + feed_forward) + decoder_depth * (2 * attention + feed_forward)
        notes.append(
            f"encoder-decoder: depth is the {depth} encoder layers; params_real adds {decoder_depth} decoder layers "
            "(self- and cross-attention); params_convention is 12·L·d² for the encoder only"
        )
    else:
        params_real = depth * (attention + feed_forward)

    return ConfigModel(
        source=source,
        model_type=model_type,
        depth=depth,
        width=width,
        heads=heads,
        kv_heads=kv_heads,
        head_dim=head_dim,
        ffn=ffn,
        gated_ffn=gating is not None,
        vocab=_optional(cfg, ("vocab_size",), source),
        params_real=params_real,
        params_convention=params(depth, width),
        notes=tuple(notes),
    )
