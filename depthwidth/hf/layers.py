"""Layer layouts read from a config: key/value heads, mixtures of experts, latent attention, indexers.

Helpers of ``hf.config.inspect_config``; each returns ``blocks.Architecture`` fields (and, for a
mixture of experts, why it cannot be counted). Sources of each rule: the docstrings, checked against
transformers' own builds (tests/golden/hf_counts.json).
"""
from __future__ import annotations

from ..core.errors import InputError
from ..core.messages import Message
from .families import CROSS_ATTENTION_BLOCKS, MOE_MODEL_TYPES, SHARED_EXPERT_GATE_TYPES, family_defaults
from .read import EXPECTED, EXPERT_HINTS, EXPERTS_KEYS, KV_HEADS_KEYS, NESTED_KEYS, TOP_K_KEYS, _first, _optional, _whole, shown

def _expert_keys(cfg: dict) -> list[str]:
    """Keys that announce a mixture of experts (a truthy value and 'expert' or 'moe' in the name)."""
    found = []
    for key, value in cfg.items():
        if isinstance(value, dict) and key not in NESTED_KEYS:  # e.g. DBRX's ffn_config.moe_num_experts
            found += [f"{key}.{k}" for k in _expert_keys(value)]
        elif isinstance(key, str) and any(h in key.lower() for h in EXPERT_HINTS) and not isinstance(value, (list, dict)) \
                and value not in (None, False, 0, 1, ""):
            found.append(key)
    return found


def _kv_heads(cfg: dict, model_type: str | None, heads: int, source: str, notes: list[str]) -> int:
    """Key/value heads: GQA keys, multi-query flags (Falcon, StarCoder, ChatGLM), MPT's attn_config."""
    if cfg.get("multi_query") is True and not cfg.get("new_decoder_architecture"):
        notes.append("multi_query: one key/value head shared by every query head (MQA)")
        return 1
    if cfg.get("multi_query_attention") is True and cfg.get("multi_query_group_num") is not None:
        groups = _whole("multi_query_group_num", cfg["multi_query_group_num"], source)
        notes.append(f"multi_query_group_num: {groups} key/value heads")
        return groups
    attn = cfg.get("attn_config")
    if isinstance(attn, dict) and attn.get("kv_n_heads") is not None and attn.get("attn_type") in (
            "grouped_query_attention", "multiquery_attention"):
        return 1 if attn["attn_type"] == "multiquery_attention" else _whole("attn_config.kv_n_heads", attn["kv_n_heads"], source)
    found = _first(cfg, KV_HEADS_KEYS)
    if found is None or (found[0] == "num_kv_heads" and model_type == "falcon" and not cfg.get("new_decoder_architecture")
                         and cfg.get("multi_query") is False):
        return heads
    return _whole(*found, source)


def _moe(cfg: dict, model_type: str | None, depth: int, ffn: int, source: str, notes: list[str],
         assumptions: list[str]) -> tuple[dict, str | None]:
    """Architecture fields of a mixture of experts, and why it cannot be counted (None: it can).

    A family outside MOE_MODEL_TYPES is counted with the same layout (gated experts, a d x E router,
    shared experts of the expert size) and each of those guesses is named in ``assumptions``."""
    experts_found = _first(cfg, EXPERTS_KEYS)
    experts = None if experts_found is None else _whole(*experts_found, source, lowest=0)
    if cfg.get("is_moe") is False:  # Doge: expert keys that the dense model ignores
        return {}, None
    if experts == 0 and model_type in MOE_MODEL_TYPES:  # Mixtral with 0 experts was counted as dense
        raise InputError("config", source, f"{experts_found[0]} = 0 in a {model_type} config: its sparse block routes "
                                           f"to at least one expert; {EXPECTED}")
    if not experts or experts == 1:
        hints = _expert_keys(cfg)
        if hints and model_type not in MOE_MODEL_TYPES:
            return {}, f"mixture-of-experts keys ({', '.join(hints[:3])}) of a family whose expert layout is not modelled"
        return {}, None
    top_k = _optional(cfg, TOP_K_KEYS, source)
    if top_k is None:
        return {}, f"{experts} experts but no num_experts_per_tok: the active count needs the top-k"
    if top_k > experts:
        raise InputError("config", source, f"num_experts_per_tok = {top_k} exceeds {experts} experts; {EXPECTED}")
    expert_ffn = _optional(cfg, ("moe_intermediate_size", "expert_intermediate_size", "expert_ffn_hidden_size"), source) or ffn
    shared, shared_ffn, gate = 0, None, False
    shared_found = _first(cfg, ("n_shared_experts", "num_shared_experts", "moe_num_shared_experts"))
    if shared_found is not None and _whole(*shared_found, source, lowest=0):
        shared, shared_ffn = shared_found[1], expert_ffn
    elif _optional(cfg, ("shared_expert_intermediate_size",), source, lowest=0):
        shared, shared_ffn, gate = 1, cfg["shared_expert_intermediate_size"], model_type in SHARED_EXPERT_GATE_TYPES
    elif model_type in ("llama4_text", "llama4"):  # Llama 4: one shared expert of the expert size in every MoE layer
        shared, shared_ffn = 1, expert_ffn
    elif _optional(cfg, ("shared_intermediate_size",), source, lowest=0):
        shared, shared_ffn = 1, cfg["shared_intermediate_size"]
    sparse = _sparse_layers(cfg, depth, source)
    dense_layers = depth - len(sparse)
    notes.append(f"mixture of {experts} experts of size {expert_ffn}, top-{top_k}"
                 + (f", {shared} shared expert(s) of size {shared_ffn}" if shared else "")
                 + (f", {dense_layers} dense layer(s)" if dense_layers else "")
                 + ": params_nonembedding counts every expert, params_active the top-k, shared experts and router")
    if model_type not in MOE_MODEL_TYPES and family_defaults(model_type) is not None:
        # a transformers family whose expert layout is not checked: a guess here was wrong for every such family
        # in the golden table (axk2, hy_v4, muse_spark, ...), so null with the reason, never a silent guess
        return {}, (f"the expert layout of model_type {model_type!r} (shared experts, dense layers, expert sizes) "
                    "is not modelled")
    if model_type not in MOE_MODEL_TYPES:
        assumptions.append(Message("assumed", f"assumed: the expert layout of model_type {model_type!r} is not modelled, so it is counted as "
                           f"{experts} gated experts of size {expert_ffn} (top-{top_k}) with a {experts}-way router per "
                           "layer" + (f" and {shared} shared expert(s) of size {shared_ffn}" if shared else "")
                           + (f", {dense_layers} dense layer(s)" if dense_layers else ", every layer sparse")))
    if cfg.get("num_nextn_predict_layers"):
        notes.append("num_nextn_predict_layers: the multi-token-prediction module of the checkpoint is not counted "
                     "(transformers does not build it)")
    return dict(experts=experts, top_k=top_k, expert_ffn=expert_ffn, shared_experts=shared, shared_expert_ffn=shared_ffn,
                shared_expert_gate=gate, dense_layers=dense_layers), None


def _indexed_layers(cfg: dict, depth: int, source: str) -> int:
    """Layers that carry their own DSA indexer: ``indexer_types`` "full" (others share one), else the
    ``indexed_attention`` entries of ``layer_types``; 0 without ``index_n_heads``."""
    if cfg.get("index_n_heads") is None or cfg.get("index_head_dim") is None:
        return 0
    kinds = cfg.get("indexer_types")
    if isinstance(kinds, list) and len(kinds) == depth:
        return sum(kind == "full" for kind in kinds)
    layer_types = cfg.get("layer_types")
    if isinstance(layer_types, list):
        return sum(kind == "indexed_attention" for kind in layer_types)
    return depth


# Layer-schedule keys (DeepSeek-V3 with first_k_dense_replace 1000 on 61 layers was read as
# all-dense, 35.6B for 669B): where the experts start, their period, the layers they skip and the
# per-layer lists, each with the range a config of ``depth`` layers can mean.
FIRST_LAYER_KEYS = ("first_k_dense_replace", "num_dense_layers", "moe_layer_start_index")  # 0 to depth
LAST_LAYER_KEYS = ("moe_layer_end_index",)  # 0 to depth - 1
PERIOD_KEYS = ("moe_layer_freq", "decoder_sparse_step", "moe_layer_interval", "interleave_moe_layer_step")  # 1 to depth
LAYER_INDEX_KEYS = ("moe_layers", "mlp_only_layers")  # entries 0 to depth - 1
PER_LAYER_KEYS = ("layer_types", "mlp_layer_types", "indexer_types")  # one entry per layer


def check_layer_schedule(given: dict, depth: int, source: str, depth_key: str = "num_hidden_layers") -> None:
    """Every layer-schedule key the file gives (``given``: its own keys, before family defaults), checked
    against its ``depth`` layers: an input error naming the key and the accepted range. transformers
    reads these without a check (DeepseekV3DecoderLayer: ``layer_idx >= config.first_k_dense_replace``,
    so 1000 builds no expert layer) except ``layer_types``, whose length configuration_utils'
    ``layer_type_validation`` requires to be ``num_hidden_layers`` (so the per-layer lists are checked
    when that key gives the depth: pp_doclayout's ``layer_types`` name backbone blocks, not layers); a
    schedule past the last layer leaves a declared mixture of experts without experts, a mistake
    rather than a model."""
    def refuse(key, value, accepted):
        raise InputError("config", source, f"{key} = {shown(value)} does not fit the {depth:,} layers: expected {accepted}; {EXPECTED}")

    for keys, low, high in ((FIRST_LAYER_KEYS, 0, depth), (LAST_LAYER_KEYS, 0, depth - 1), (PERIOD_KEYS, 1, depth)):
        for key in keys:
            value = given.get(key)
            if isinstance(value, int) and not isinstance(value, bool) and not low <= value <= high:
                refuse(key, value, f"a whole number from {low} to {high:,}")
    for key in LAYER_INDEX_KEYS:
        value = given.get(key)
        if isinstance(value, list) and any(isinstance(i, int) and not 0 <= i < depth for i in value):
            refuse(key, next(i for i in value if isinstance(i, int) and not 0 <= i < depth), f"layer numbers from 0 to {depth - 1:,}")
    for key in PER_LAYER_KEYS if depth_key == "num_hidden_layers" else ():
        value = given.get(key)
        if isinstance(value, list) and len(value) != depth:
            refuse(key, f"{len(value)} entries", f"one entry per layer ({depth:,})")


def _layer_list(cfg: dict, key: str, source: str) -> list[int] | None:
    """A list of layer numbers (mlp_only_layers, moe_layers), or None when the key is absent."""
    value = cfg.get(key)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in value):
        raise InputError("config", source, f"{key} = {str(value)[:30]} is not a list of layer numbers; {EXPECTED}")
    return value


def _sparse_layers(cfg: dict, depth: int, source: str) -> list[int]:
    """The layers with experts. Per-layer lists first (``mlp_layer_types`` dense/sparse, Llama 4's
    ``moe_layers``); else the first dense layers (``first_k_dense_replace``, ``num_dense_layers``,
    ``moe_layer_start_index``), a last sparse one (``moe_layer_end_index``), a period
    (DeepSeek's ``moe_layer_freq``; ``decoder_sparse_step``, ``moe_layer_interval``, ``interleave_moe_layer_step``)
    and Qwen's ``mlp_only_layers``."""
    kinds = cfg.get("mlp_layer_types")
    if isinstance(kinds, list) and len(kinds) == depth and all(isinstance(k, str) for k in kinds):
        return [i for i, kind in enumerate(kinds) if kind != "dense"]
    listed = _layer_list(cfg, "moe_layers", source)
    if listed is not None:
        return sorted({i for i in listed if 0 <= i < depth})
    first = _first(cfg, ("first_k_dense_replace", "num_dense_layers", "moe_layer_start_index"))
    first_dense = 0 if first is None else _whole(*first, source, lowest=0)
    last = _optional(cfg, ("moe_layer_end_index",), source, lowest=0)
    freq = _optional(cfg, ("moe_layer_freq",), source) or 1  # DeepSeek: layer % freq == 0
    step = _optional(cfg, ("decoder_sparse_step", "moe_layer_interval", "interleave_moe_layer_step"), source) or 1
    # Qwen, ERNIE, Llama 4: (layer + 1) % step == 0
    only_mlp = _layer_list(cfg, "mlp_only_layers", source) or []  # in range: check_layer_schedule (99 and -1)
    return [i for i in range(depth) if i >= first_dense and (last is None or i <= last) and i % freq == 0
            and (i + 1) % step == 0 and i not in only_mlp]


def _latent(cfg: dict, source: str) -> dict:
    """Latent-attention (MLA) fields, or {} for ordinary attention."""
    if cfg.get("kv_lora_rank") is None:
        return {}
    keys = ("kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim")
    missing = [k for k in keys if cfg.get(k) is None]
    if missing:
        raise InputError("config", source, f"kv_lora_rank (latent attention) without {', '.join(missing)}; {EXPECTED}")
    fields = {k: _whole(k, cfg[k], source) for k in keys}
    fields["q_lora_rank"] = _optional(cfg, ("q_lora_rank",), source)
    return fields


def gemma4_layers(cfg: dict, depth: int, kv_heads: int, head_dim: int, ffn: int, source: str) -> tuple[dict, list[str]]:
    """Gemma 4's per-layer structure (transformers' Gemma4TextConfig / Gemma4TextAttention, 5.23):
    full-attention layers take ``per_layer_config`` overrides, else head_dim ``global_head_dim`` (512)
    and, with ``attention_k_eq_v``, ``num_global_key_value_heads`` and no v projection; the last
    ``num_kv_shared_layers`` reuse earlier keys and values (no k, v) and, with ``use_double_wide_mlp``,
    have a feed-forward twice as wide; every layer has a per-layer input of ``hidden_size_per_layer_input``."""
    types = cfg.get("layer_types")
    if not isinstance(types, list) or len(types) != depth:
        types = ["sliding_attention"] * depth
    overrides = cfg.get("per_layer_config")
    k_eq_v = bool(cfg.get("attention_k_eq_v"))
    shared = _whole("num_kv_shared_layers", cfg.get("num_kv_shared_layers") or 0, source, lowest=0)
    layers = {}
    for i, kind in enumerate(types):
        full = kind == "full_attention"
        if isinstance(overrides, dict):
            o = overrides.get(f"{i:02d}") or overrides.get(str(i)) or {}
        else:
            o = {"head_dim": cfg.get("global_head_dim") or 512, "num_key_value_heads": cfg.get("num_global_key_value_heads")
                 if k_eq_v else None} if full else {}
        g = o.get("num_key_value_heads") or kv_heads
        h = o.get("head_dim") or head_dim
        matrices = 0 if i >= depth - shared else (1 if k_eq_v and full else 2)
        if (g, h, matrices) != (kv_heads, head_dim, 2):
            layers[(g, h, matrices)] = layers.get((g, h, matrices), 0) + 1
    fields = {"attention_variants": tuple((n, g, h, m) for (g, h, m), n in sorted(layers.items())),
              "per_layer_input": _optional(cfg, ("hidden_size_per_layer_input",), source, lowest=0) or 0}
    if shared and cfg.get("use_double_wide_mlp"):
        fields["ffn_variants"] = ((shared, 2 * ffn),)
    notes = [f"Gemma 4 layers: {sum(n for n, *_ in fields['attention_variants'])} with other attention sizes "
             f"{[v[1:] for v in fields['attention_variants']]} (kv heads, head_dim, k/v matrices), per-layer inputs of "
             f"{fields['per_layer_input']}" + (f", {shared} layers reusing keys and values" if shared else "")]
    return fields, notes


def codebook_tables(cfg: dict, model_type: str | None, width: int, vocab: int | None, source: str) -> tuple[dict, list[str]]:
    """Embedding fields of an audio depth decoder that reads and predicts several codebooks (transformers 5.23).

    - CSM's depth decoder (models/csm/modeling_csm.py, CsmDepthDecoderModel / CsmCodebooksHead): one table of
      ``num_codebooks``·V rows x ``backbone_hidden_size`` B, projected to the width by ``inputs_embeds_projector``
      (B x d), and one head of (num_codebooks - 1) x d x V: V·B + B·d + (C - 1)·V·B + (C - 1)·d·V.
    - Qwen3-Omni's talker code predictor (models/qwen3_omni_moe/modeling_qwen3_omni_moe.py,
      Qwen3OmniMoeTalkerCodePredictorModel): ``num_code_groups`` - 1 tables V x d (``codec_embedding``) and as
      many heads d x V (``lm_head``), none shared: 2·(G - 1)·V·d.
    Each is counted with ``tied`` True and the tables and heads past the first table in ``other_embedding_params``.
    {} for any other model type or when the vocabulary is unknown."""
    if vocab is None:
        return {}, []
    if model_type == "csm_depth_decoder_model":
        codebooks = _whole("num_codebooks", cfg.get("num_codebooks") or 32, source)
        backbone = _whole("backbone_hidden_size", cfg.get("backbone_hidden_size") or 2048, source)
        fields = dict(tied=True, embedding_width=backbone, embedding_projections=1,
                      other_embedding_params=(codebooks - 1) * vocab * backbone + (codebooks - 1) * width * vocab)
        return fields, [f"CSM depth decoder: an input table of {codebooks}·{vocab} rows x {backbone} projected to {width}, "
                        f"and {codebooks - 1} codebook heads of {width} x {vocab}, in params_embedding"]
    if model_type == "qwen3_omni_moe_talker_code_predictor":
        groups = _whole("num_code_groups", cfg.get("num_code_groups") or 32, source)
        fields = dict(tied=True, other_embedding_params=(2 * (groups - 1) - 1) * vocab * width)
        return fields, [f"Qwen3-Omni code predictor: {groups - 1} input tables and {groups - 1} untied heads of "
                        f"{vocab} x {width}, in params_embedding"]
    return {}, []


def cross_attention_blocks(cfg: dict, model_type: str, depth: int, notes: list[str]) -> int:
    """Cross-attention blocks (q, k, v, o of the layer's width) of a stack built alone (CROSS_ATTENTION_BLOCKS):
    blocks per layer x layers; BLT's local stacks have one per layer with ``cross_attn_all_layers``, else one
    (BltLocalEncoder / BltLocalDecoder: ``layers_to_add``, models/blt/modeling_blt.py)."""
    crossed = depth if not model_type.startswith("blt_") or cfg.get("cross_attn_all_layers") else 1
    blocks = CROSS_ATTENTION_BLOCKS[model_type] * crossed
    notes.append(f"{blocks} cross-attention block(s) (q, k, v, o) in {crossed} layer(s), counted as attention")
    return blocks
