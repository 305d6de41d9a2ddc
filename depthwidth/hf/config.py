"""Hugging Face ``config.json`` -> ``blocks.Architecture``, its shape and its counts.

Every count comes from ``blocks.py``; this module reads keys (hf/read.py names them, hf/layers.py reads
heads, experts and latent attention). The first non-null key of each list wins, and a key the file
leaves out takes transformers' default for the family (hf_defaults.json, generated from transformers'
config classes by benchmarks/hf_defaults.py): ``tie_word_embeddings``, ``head_dim`` (Gemma: 256),
``num_key_value_heads`` (Mistral: 8), ``num_local_experts`` (Mixtral: 8), ``intermediate_size``
(LLaMA: 11008), a multimodal ``text_config``'s ``model_type`` (llava: llama), ...

- depth, width, heads, feed-forward, head size and key/value heads as in hf/read.py (GPT-2's null
  ``n_inner`` is 4·width; MPT's ``expansion_ratio``; BLOOM's ``n_embed``; CTRL's ``dff``).
- gated feed-forward (3·d·f): a family whose MLP is gated (families.GATED_MODEL_TYPES), T5's
  ``gated-`` ``feed_forward_proj``, or any activation key (``hidden_act``, ``hidden_activation``,
  ``activation_function``, ...) naming a GLU or SiLU/Swish.
- mixture of experts (layers._moe), dense layers from every key transformers uses for them.
- latent attention (DeepSeek-V2/V3), DSA indexers (DeepSeek-V3.2), attention output gates, ALBERT's
  shared layers, encoder-decoders (both stacks; depth is the encoder's), TrOCR-style cross-attention.
- ``params_embedding``: input table, untied head, learned position tables and token types, a
  factorized embedding's projections (families.position_embeddings); None when unknown.

A model that is not one attention + feed-forward stack (state-space or hybrid layers, convolutional
feature encoders, Conformers, audio codecs, detection backbones, several stacks of different sizes)
gets None counts and a note naming why; the shape is still read for the theory. A ``model_type``
transformers does not define is counted with every guess named in ``assumptions`` (and in ``notes``).
Checked against transformers' own builds: tests/test_hf_corpus.py.
"""
from __future__ import annotations


from ..arch import blocks
from ..arch.record import LAYOUT_FIELDS, repeats
from ..core.errors import InputError
from ..core.messages import Message
from .families import (ACTIVATION_KEYS, ATTENTION_GATES, ATTENTION_LAYER_TYPES, CROSS_ATTENTION_BLOCKS, DECODER_ONLY_TYPES,
                         GATED_ACTIVATIONS, GATED_MODEL_TYPES, GEMMA4_TYPES,
                         MOE_MODEL_TYPES, NOT_ATTENTION_KEYS, NOT_ATTENTION_TYPES, NOT_ONE_STACK_KEYS, NOT_ONE_STACK_TYPES,
                         ROPE_KEYS, T5_MODEL_TYPES, family_defaults, outer_tie, position_embeddings, sub_config_type)
from .layers import (_indexed_layers, _kv_heads, _latent, _moe, check_layer_schedule, codebook_tables, cross_attention_blocks,
                     gemma4_layers)
from .mixers import HYBRID_TYPES, hybrid_layout, nemotron_h_types
from .read import (DECODER_ARCHITECTURE_HINTS, DEPTH_KEYS, ENCODER_ARCHITECTURE_HINTS, EXPECTED, FFN_KEYS,
                     HEAD_DIM_KEYS, HEADS_KEYS, KV_HEADS_KEYS, MAX_SIZE, NESTED_KEYS, OTHER_DEFAULTS_UNSAID,
                     ROLES, VOCAB_KEYS, WIDTH_KEYS, _first, _optional, _whole, plainly_valid)
from ..theory.shapes import Shape, make_shape, params
from ..core.frozen import frozen

@frozen
@repeats(blocks.Architecture, LAYOUT_FIELDS, after="width")
class ConfigModel:
    """What a config.json says about a model: its shape, its block and its counts.

    ``params_nonembedding`` (every weight matrix in the layers, every expert), ``params_active``,
    ``params_embedding`` (input table, untied head, learned positions) and ``params_with_embeddings``
    are None when the layout cannot be counted exactly (``notes`` say why; ``architecture`` is then
    None); ``params_embedding`` alone may be None when the vocabulary or the position tables are
    unknown. ``assumptions`` names each guess made for a family transformers does not define (each
    also appears in ``notes``, a ``Message`` of kind "assumed").
    """

    source: str
    model_type: str | None
    depth: int
    width: int
    vocab: int | None
    params_nonembedding: int | None
    params_active: int | None
    params_embedding: int | None
    params_convention: int
    architecture: blocks.Architecture | None
    decoder_depth: int = 0
    attention_layers: int | None = None
    params_other_mixers: int | None = None
    notes: tuple[str, ...] = ()
    assumptions: tuple[str, ...] = ()

    @property
    def params_with_embeddings(self) -> int | None:
        """params_nonembedding + params_embedding (None when either is unknown)."""
        if self.params_nonembedding is None or self.params_embedding is None:
            return None
        return self.params_nonembedding + self.params_embedding

    @property
    def shape(self) -> Shape:
        """The (depth, width, heads) the theory works with."""
        return make_shape(self.depth, self.width, self.heads, f"{self.depth}x{self.width}x{self.heads} (from {self.source})")


def _gating(cfg: dict, model_type: str | None, source: str = "config") -> str | None:
    """Why the feed-forward is gated (three matrices), or None if it is a plain two-matrix MLP.

    T5's ``feed_forward_proj``; a family whose MLP is gated (GATED_MODEL_TYPES); else any activation
    key (hidden_act, hidden_activation, activation_function, ...) naming a GLU or SiLU/Swish."""
    projection = cfg.get("feed_forward_proj")
    if isinstance(projection, str):
        return f"feed_forward_proj {projection!r}" if projection.startswith("gated-") else None
    for key in ACTIVATION_KEYS:  # ["silu"] was taken (transformers' ACT2FN needs a name)
        value = cfg.get(key)
        if value is not None and not isinstance(value, str):
            raise InputError("config", source, f"{key} = {str(value)[:30]} is not an activation name such as \"silu\"; {EXPECTED}")
    if model_type in GATED_MODEL_TYPES:
        return f"model_type {model_type!r}"
    for key in ACTIVATION_KEYS:
        value = cfg.get(key)
        if isinstance(value, str) and (value.lower() in GATED_ACTIVATIONS or value.lower().endswith("glu")):
            return f"{key} {value!r}"
    return None


def _with_defaults(cfg: dict, model_type: str | None, notes: list[str] | None = None) -> dict:
    """``cfg`` with each key it leaves out set to transformers' default for the family.

    A role (depth, width, heads, ...) is filled only when no key of that role is given: BLOOM's
    ``n_embed`` is not overridden by the class's default ``hidden_size``."""
    defaults = family_defaults(model_type)
    if not defaults:
        return cfg
    filled = dict(cfg)
    roles = {key: keys for keys in ROLES for key in keys}
    for key, value in defaults.items():
        if key.startswith("_") or key in cfg:
            continue
        if key in roles and any(k in cfg for k in roles[key]):
            continue
        filled[key] = value
    used = [f"{k} = {v}" for k, v in filled.items() if k not in cfg and not isinstance(v, list) and k not in OTHER_DEFAULTS_UNSAID]
    if used and notes is not None:
        notes.append(f"keys left to transformers' defaults for {model_type}: {', '.join(used)}")
    return filled


def _unwrap(cfg: dict, notes: list[str], outer: list[str] | None = None) -> dict:
    """The language model's keys: a multimodal config's text_config (or llm_config, language_config).

    A sub-config without ``model_type`` (or an absent one) is the family's default sub-config
    (llava's text_config is llama), from the generated defaults table."""
    for _ in range(2):  # e.g. thinker_config -> text_config
        if _first(cfg, DEPTH_KEYS) is not None:
            return cfg
        parent = cfg.get("model_type") if isinstance(cfg.get("model_type"), str) else None
        if outer is not None and parent:
            outer.append(parent)
        for key in NESTED_KEYS:
            inner = cfg.get(key)
            default_type = sub_config_type(parent, key)
            if isinstance(inner, dict) or (inner is None and default_type and key == "text_config"):
                inner = inner or {}
                model_type = inner.get("model_type") or default_type or parent
                if not inner.get("model_type") and default_type:
                    notes.append(f"{key} of {parent} without model_type: transformers' default {default_type!r}")
                tie = outer_tie(cfg, inner, parent, model_type)
                cfg = {**inner, "model_type": model_type, **({} if tie is None else {"tie_word_embeddings": tie})}
                notes.append(f"read from {key} (the language model of a multimodal config)" if key in NESTED_KEYS[:5] else
                             f"read from {key} (the main stack of a composite config)")
                break
        else:
            return cfg
    return cfg


def _not_countable(cfg: dict, model_type: str | None) -> str | None:
    """Why this layout cannot be counted as attention + feed-forward layers (None: it can)."""
    if model_type in NOT_ATTENTION_TYPES:
        return f"model_type {model_type!r} has layers that are not the attention + feed-forward block depthwidth counts"
    if model_type in NOT_ONE_STACK_TYPES:
        return f"model_type {model_type!r} is not one attention + feed-forward stack: {NOT_ONE_STACK_TYPES[model_type]}"
    for key in NOT_ATTENTION_KEYS:
        if cfg.get(key):
            return f"the key {key!r} describes state-space, recurrent or hybrid layers, which depthwidth does not count"
    for key, why in NOT_ONE_STACK_KEYS.items():
        if cfg.get(key) and not (key == "hidden_size_per_layer_input" and model_type in GEMMA4_TYPES):
            return f"not one attention + feed-forward stack: {why}"
    layer_types = cfg.get("layer_types")
    if isinstance(layer_types, list):
        allowed = ATTENTION_LAYER_TYPES | ({"indexed_attention"} if cfg.get("index_n_heads") else set())
        other = sorted({str(t) for t in layer_types if t not in allowed})
        if other:
            return f"layer_types include {', '.join(other[:3])}: not attention layers depthwidth counts"
    return None


def _encoder_only(cfg: dict, model_type: str | None) -> bool:
    """A bidirectional encoder (no KV cache): BERT-style token types, masked-LM heads, vision encoders."""
    names = [a for a in cfg.get("architectures") or [] if isinstance(a, str)]
    if any(h in a for a in names for h in DECODER_ARCHITECTURE_HINTS):
        return False
    if any(h in a for a in names for h in ENCODER_ARCHITECTURE_HINTS):
        return True
    if cfg.get("is_decoder") is True:
        return False
    return "type_vocab_size" in cfg or model_type in {"albert", "distilbert", "modernbert", "xlnet", "deberta-v2"} or (
        "patch_size" in cfg and "vocab_size" not in cfg)


def _assumptions(cfg: dict, model_type: str | None) -> list[Message]:
    """What is guessed for a family transformers does not define: each default the tool falls back on."""
    said = [Message("assumed", f"assumed: model_type {model_type!r} is not a transformers family, so no family defaults were looked up; "
            "its layers are counted as one stack of attention (q, k, v, o) + feed-forward", family=model_type)]
    if cfg.get("tie_word_embeddings") is None:
        said.append(Message("assumed", "assumed: tie_word_embeddings absent, so the output head is tied to the input embeddings"))
    if _first(cfg, KV_HEADS_KEYS) is None and not cfg.get("multi_query") and not cfg.get("multi_query_attention"):
        said.append(Message("assumed", "assumed: no key/value head count (num_key_value_heads), so one per query head (multi-head attention)"))
    if _first(cfg, HEAD_DIM_KEYS) is None:
        said.append(Message("assumed", "assumed: no head_dim, so width / heads"))
    if _first(cfg, FFN_KEYS) is None and cfg.get("expansion_ratio") is None:
        said.append(Message("assumed", "assumed: no feed-forward size, so 4·width"))
    gating = _gating(cfg, None)
    said.append(Message("assumed", f"assumed: a gated feed-forward (3·d·f) because of {gating}" if gating else
                        "assumed: a plain feed-forward (2·d·f): no activation key names a gated unit (silu, swiglu, geglu)"))
    if not any(cfg.get(k) not in (None, False) for k in ROPE_KEYS) and cfg.get("position_embedding_type") is None:
        said.append(Message("assumed", "assumed: no learned position table (rotary or ALiBi positions)"))
    return said


def inspect_config(cfg: dict, source: str) -> ConfigModel:
    """Shape, block and counts of a parsed config.json (validated by ``hf.files.ConfigFile``; counts by ``blocks``)."""
    if not plainly_valid(cfg):  # Pydantic (~0.2 s to import) only for a config it must judge
        from .files import check_config

        check_config(cfg, source)
    notes: list[str] = []
    outer: list[str] = []
    cfg, own, model_type, cross_decoder = _language_model(cfg, source, notes, outer)
    known = family_defaults(model_type) is not None
    assumptions = [] if known else _assumptions(own, model_type)
    depth, width, heads = _shape(cfg, own, model_type, source, notes)
    kv_heads, latent, head_dim = _attention(cfg, model_type, width, heads, source, notes)
    ffn, gating = _feed_forward(cfg, model_type, width, source, notes)
    vocab = _optional(cfg, VOCAB_KEYS, source)
    fields = dict(vocab=vocab, tied=_tied(cfg, model_type, notes), family=model_type or "config",
                  encoder_only=_encoder_only(cfg, model_type))
    why = next((f"the language model of model_type {t!r}, which is not one attention + feed-forward stack: "
                f"{NOT_ONE_STACK_TYPES[t]}" for t in outer if t in NOT_ONE_STACK_TYPES), None)
    hybrid = hybrid_layout(cfg, model_type, depth, width, source, heads * head_dim) if why is None else None
    why = why or (None if hybrid else _not_countable(cfg, model_type))
    moe, moe_why = _moe(cfg, model_type, depth, ffn, source, notes, assumptions) if why is None else ({}, None)
    why = why or moe_why
    fields.update(moe)
    if hybrid is not None:
        ffn, hybrid_why = hybrid.apply(fields, ffn, cfg, notes)
        why = why or hybrid_why
    fields.update(latent)
    if latent:
        kv_heads = heads
        notes.append(f"latent attention (MLA): kv_lora_rank {fields['kv_lora_rank']}, q_lora_rank {fields['q_lora_rank']}")
    _shared_layers(cfg, model_type, depth, width, cross_decoder, source, fields, notes)
    why = _extra_layers(cfg, model_type, (depth, width, heads, kv_heads, head_dim, ffn), vocab, source, fields, notes, why)
    decoder, why = _decoder(cfg, model_type, depth, source, fields, notes, why)
    fields["position_params"] = _positions(cfg, model_type, (depth, width, heads), decoder, known, hybrid is not None,
                                           vocab, fields, notes)
    arch = blocks.Architecture(depth, width, heads, kv_heads, head_dim, ffn, gating is not None, **fields)
    if why is not None:
        notes.append(f"parameter counts unavailable: {why}")
        arch = None
    notes += [a for a in assumptions if a not in notes]
    return _config_model(source, model_type, (depth, width, heads, kv_heads, head_dim, ffn), gating is not None, fields,
                         arch, notes, assumptions)


def _language_model(given: dict, source: str, notes: list[str], outer: list[str]) -> tuple[dict, dict, str | None, bool]:
    """The language model's keys, with the family's defaults filled in: (keys, the file's own keys,
    model_type, whether it is a decoder whose every layer also attends to an encoder it lacks)."""
    cfg = _unwrap(given, notes, outer)
    model_type = cfg.get("model_type") if isinstance(cfg.get("model_type"), str) else None
    own = cfg  # the file's own keys, before the family's defaults: the layer schedule it gives is checked
    if cfg is not given or any(_first(cfg, keys) is not None for keys in (DEPTH_KEYS, WIDTH_KEYS, HEADS_KEYS)):
        # a file that names no shape key at all is refused rather than read as the family's default model
        cfg = _with_defaults(cfg, model_type, notes)
    cross_decoder = cfg.get("decoder_layers") is not None and (
        _first(cfg, DEPTH_KEYS) is None and "encoder_layers" not in cfg or model_type in DECODER_ONLY_TYPES)
    if cross_decoder:  # TrOCR: a decoder-only stack whose layers also attend to an image encoder
        cfg = {**cfg, "num_hidden_layers": cfg["decoder_layers"], "num_attention_heads": cfg.get("decoder_attention_heads"),
               "intermediate_size": cfg.get("decoder_ffn_dim"), "decoder_layers": None, "encoder_layers": None}
        notes.append("a decoder without an encoder stack (decoder_layers): every layer has self- and cross-attention")
    if model_type == "nemotron_h" and _first(cfg, DEPTH_KEYS) is None and nemotron_h_types(cfg):
        cfg = {**cfg, "num_hidden_layers": len(nemotron_h_types(cfg))}  # NemotronHConfig: the depth is the list's length
    if model_type == "mllama_vision_model" and _first(cfg, DEPTH_KEYS) is not None:  # MllamaVisionConfig: 8 by default
        extra = _whole("num_global_layers", cfg.get("num_global_layers", 8), source, lowest=0)
        cfg = {**cfg, "num_hidden_layers": _whole(*_first(cfg, DEPTH_KEYS), source) + extra}
        notes.append(f"Mllama vision: {extra} global layers after the local ones, the same block "
                     "(MllamaVisionModel.global_transformer; its gates are scalars): depth counts both")
    return cfg, own, model_type, cross_decoder


def _shape(cfg: dict, own: dict, model_type: str | None, source: str, notes: list[str]) -> tuple[int, int, int]:
    """Depth (layers applied), width and heads, checked as a shape and against the file's layer schedule."""
    roles = (("depth", DEPTH_KEYS), ("width", WIDTH_KEYS), ("heads", HEADS_KEYS))
    found = {role: _first(cfg, keys) for role, keys in roles}
    if found["heads"] is None and model_type in HYBRID_TYPES:  # Mamba: no attention heads at all
        found["heads"] = ("num_attention_heads", 1)
        notes.append("no attention heads (a state-space stack): heads = 1 for the theory's (L, d, H)")
    missing = [f"{role} (one of {', '.join(keys)})" for role, keys in roles if found[role] is None]
    if missing:
        raise InputError("config", source, f"missing keys: {', '.join(missing)}; {EXPECTED}")
    depth, width, heads = (_whole(*found[role], source) for role, _ in roles)
    inner = _optional(cfg, ("inner_group_num",), source) if model_type == "albert" else None
    if inner and inner > 1:  # AlbertTransformer.forward runs every inner layer of a group at each of the layers
        depth *= inner
        notes.append(f"ALBERT inner_group_num {inner}: each of the {depth // inner} hidden layers applies {inner} layers, "
                     f"so the depth is {depth} layers applied")
    make_shape(depth, width, heads, f"{depth}x{width}x{heads} (from {source})")  # H < d, depth range
    check_layer_schedule(own, depth, source, found["depth"][0])
    return depth, width, heads


def _attention(cfg: dict, model_type: str | None, width: int, heads: int, source: str,
               notes: list[str]) -> tuple[int, dict, int]:
    """Key/value heads, latent-attention fields (empty when none) and the head size."""
    kv_heads = _kv_heads(cfg, model_type, heads, source, notes)
    if kv_heads > heads or heads % kv_heads:
        raise InputError("config", source, f"{kv_heads} key/value heads (num_key_value_heads) do not divide "
                         f"{heads} attention heads; {EXPECTED}")
    latent = _latent(cfg, source)
    head_dim = _optional(cfg, HEAD_DIM_KEYS, source)
    if head_dim is None:
        floor = model_type in GATED_MODEL_TYPES or model_type in MOE_MODEL_TYPES  # LLaMA-style getattr fallback
        if width % heads and not latent and not floor:
            raise InputError("config", source, f"width {width} is not a multiple of {heads} heads and no head_dim is given; {EXPECTED}")
        head_dim = max(width // heads, 1)
        if width % heads and not latent:  # transformers' own fallback: hidden_size // num_attention_heads
            notes.append(f"no head_dim: width // heads = {head_dim}, as transformers computes it")
    elif head_dim * heads != width:
        notes.append(f"head size {head_dim}: attention spans {heads}·{head_dim} = {heads * head_dim}, not the width {width}")
    return kv_heads, latent, head_dim


def _feed_forward(cfg: dict, model_type: str | None, width: int, source: str, notes: list[str]) -> tuple[int, str | None]:
    """The feed-forward size and what makes it gated (None: plain)."""
    ffn_found = _first(cfg, FFN_KEYS)
    if ffn_found is not None:
        ffn = _whole(*ffn_found, source)
    elif cfg.get("expansion_ratio") is not None:  # MPT
        ratio = cfg["expansion_ratio"]
        if isinstance(ratio, bool) or not isinstance(ratio, (int, float)) or not 0 < ratio * width <= MAX_SIZE or int(ratio * width) != ratio * width:
            raise InputError("config", source, f"expansion_ratio = {str(ratio)[:20]} does not give a whole feed-forward size; {EXPECTED}")
        ffn = int(ratio * width)
    else:
        ffn = 4 * width
        notes.append(f"no feed-forward size given ({', '.join(FFN_KEYS[:3])}... absent or null): 4·width = {ffn} assumed")
    gating = _gating(cfg, model_type, source)
    if gating:
        notes.append(f"gated feed-forward ({gating}): 3·width·ffn parameters per layer")
    return ffn, gating


def _tied(cfg: dict, model_type: str | None, notes: list[str]) -> bool:
    """Whether the output head is the input embedding (transformers' default: tied)."""
    tied = cfg.get("tie_word_embeddings")
    tied = True if tied is None else bool(tied)
    if not tied and (family_defaults(model_type) or {}).get("_tie_forced"):
        tied = True
        notes.append(f"tie_word_embeddings false, but transformers ties the output head of {model_type} always")
    return tied


def _shared_layers(cfg: dict, model_type: str | None, depth: int, width: int, cross_decoder: bool, source: str,
                   fields: dict, notes: list[str]) -> None:
    """Layers applied more than once (ALBERT, HRM), a factorized embedding and cross-attention, into ``fields``."""
    groups = _optional(cfg, ("num_hidden_groups",), source)
    if groups is not None and model_type == "albert" or groups is not None and cfg.get("inner_group_num") is not None:
        distinct = groups * (_optional(cfg, ("inner_group_num",), source) or 1)  # AlbertLayerGroup: inner layers each
        fields["layer_groups"] = min(distinct, depth)
        notes.append(f"shared layers (ALBERT): {fields['layer_groups']} distinct layer(s) applied {depth} times, counted once")
    per_stack = _optional(cfg, ("num_layers_per_stack",), source)
    if model_type == "hrm_text" and per_stack:  # HRM: a high- and a low-level stack, applied in cycles
        fields["layer_groups"] = min(2 * per_stack, depth)
        notes.append(f"shared layers (HRM): {fields['layer_groups']} distinct layers (two stacks of {per_stack}) applied "
                     f"{depth} times, counted once; FLOPs count every application")
    embedding = _first(cfg, ("embedding_size", "word_embed_proj_dim"))  # ALBERT, OPT-350m
    if embedding is not None and embedding[1] != width:
        fields["embedding_width"] = _whole(*embedding, source)
        fields["embedding_projections"] = 2 if embedding[0] == "word_embed_proj_dim" else 1  # OPT: project_in and _out
    if cross_decoder:
        fields["cross_attention_layers"] = depth
    elif model_type in CROSS_ATTENTION_BLOCKS:  # a decoder or DETR stack built alone: cross-attention in its layers
        fields["cross_attention_layers"] = cross_attention_blocks(cfg, model_type, depth, notes)


def _extra_layers(cfg: dict, model_type: str | None, block: tuple[int, ...], vocab: int | None, source: str,
                  fields: dict, notes: list[str], why: str | None) -> str | None:
    """Weights beside attention and feed-forward (codebooks, DSA indexers, Gemma 4's per-layer inputs,
    attention gates, XLNet's position projection), into ``fields``; returns why counts are unavailable."""
    depth, width, heads, kv_heads, head_dim, ffn = block
    codebooks, said = codebook_tables(cfg, model_type, width, vocab, source)
    fields.update(codebooks)
    notes += said
    indexed = _indexed_layers(cfg, depth, source)
    if indexed:
        fields.update(indexed_layers=indexed, index_heads=_whole("index_n_heads", cfg["index_n_heads"], source),
                      index_head_dim=_whole("index_head_dim", cfg["index_head_dim"], source))
        notes.append(f"sparse-attention indexer (DSA) in {indexed} layer(s): {cfg['index_n_heads']} heads of "
                     f"{cfg['index_head_dim']}, counted beside attention")
    if model_type in GEMMA4_TYPES and why is None:
        if cfg.get("enable_moe_block"):
            why = "Gemma 4's mixture-of-experts block (enable_moe_block) is not modelled"
        layout, said = gemma4_layers(cfg, depth, kv_heads, head_dim, ffn, source)
        fields.update(layout)
        notes += said
        per_layer = depth * layout["per_layer_input"]
        fields["other_embedding_params"] = (cfg.get("vocab_size_per_layer_input") or 0) * per_layer + per_layer * width
    if model_type in ATTENTION_GATES and cfg.get("use_attention_gate") is not False:
        fields["attention_gate"] = heads * head_dim if ATTENTION_GATES[model_type] == "elementwise" else heads
        notes.append(f"attention output gate ({ATTENTION_GATES[model_type]}): d x {fields['attention_gate']} per layer")
    if model_type == "xlnet":
        fields["position_projection"] = True
        notes.append("XLNet: the relative-position projection r (d x H·d_head) counted beside q, k, v, o")
    return why


def _decoder(cfg: dict, model_type: str | None, depth: int, source: str, fields: dict, notes: list[str],
             why: str | None) -> tuple[int | None, str | None]:
    """An encoder-decoder's decoder depth (None or 0: none), into ``fields``; and why counts are unavailable."""
    decoder = _optional(cfg, ("num_decoder_layers", "decoder_layers"), source, lowest=0)
    if decoder is None and (model_type in T5_MODEL_TYPES):
        decoder = depth
    if decoder:
        fields["decoder_depth"] = decoder
        fields["encoder_only"] = False
        for enc, dec in (("encoder_ffn_dim", "decoder_ffn_dim"), ("encoder_attention_heads", "decoder_attention_heads")):
            if cfg.get(enc) is not None and cfg.get(dec) is not None and cfg[enc] != cfg[dec]:
                why = why or f"{enc} {cfg[enc]} differs from {dec} {cfg[dec]}: one block size per stack is modelled"
        if fields.get("experts"):
            why = why or "a mixture of experts in an encoder-decoder is not modelled"
        notes.append(f"encoder-decoder: depth is the {depth} encoder layers; params_nonembedding adds {decoder} decoder "
                     "layers (self- and cross-attention); params_12Ld2 is the encoder's only")
    return decoder, why


def _positions(cfg: dict, model_type: str | None, shape: tuple[int, int, int], decoder: int | None, known: bool,
               hybrid: bool, vocab: int | None, fields: dict, notes: list[str]) -> int | None:
    """Parameters of learned position tables (None: unknown, so no params_embedding)."""
    depth, width, heads = shape
    positions = position_embeddings(cfg, model_type, width, heads, depth, decoder or 0, fields.get("embedding_width") or width)
    if positions is None and not known:
        positions = 0  # said in assumptions
    if positions is None and hybrid:
        positions = 0  # state-space layers and rotary attention: no learned position table
    if positions is None and vocab is not None:
        notes.append(f"params_embedding unavailable: the position tables of model_type {model_type!r} are not modelled")
    elif positions:
        notes.append(f"learned position tables: {positions:,} parameters, in params_embedding (not in params_nonembedding)")
    return positions


def _config_model(source: str, model_type: str | None, block: tuple[int, ...], gated: bool, fields: dict,
                  arch: blocks.Architecture | None, notes: list[str], assumptions: list[str]) -> ConfigModel:
    """The record, with the counts ``blocks`` gives for ``arch`` (None without one)."""
    depth, width, heads, kv_heads, head_dim, ffn = block
    return ConfigModel(
        source=source, model_type=model_type, depth=depth, width=width, heads=heads, kv_heads=kv_heads,
        head_dim=head_dim, ffn=ffn, gated=gated,
        experts=fields.get("experts"), top_k=fields.get("top_k"), vocab=fields["vocab"],
        params_nonembedding=None if arch is None else blocks.params_nonembedding(arch),
        params_active=None if arch is None else blocks.params_active(arch),
        params_embedding=None if arch is None else blocks.params_embedding(arch),
        params_convention=params(depth, width), architecture=arch, decoder_depth=fields.get("decoder_depth", 0),
        attention_layers=None if arch is None else blocks.attention_layer_count(arch),
        params_other_mixers=None if arch is None else arch.other_mixer_params,
        notes=tuple(notes), assumptions=tuple(assumptions),
    )
