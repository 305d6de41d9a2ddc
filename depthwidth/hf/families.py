"""What ``hf.config`` knows about transformers' model families: defaults, gating, layouts, positions.

- ``family_defaults``: the generated table ``hf_defaults.json`` (benchmarks/hf_defaults.py reads
  transformers' own config classes): the default of every key ``hf.config`` reads, per model type,
  and the model type of each default sub-config (llava's ``text_config`` is ``llama``); ``outer_tie``:
  whether a multimodal model's head is tied, read as transformers reads it.
- family lists (which feed-forwards are gated, which mixture-of-experts layouts are modelled, which
  models are not one attention + feed-forward stack), each checked against the golden counts that
  benchmarks/oracle_counts.py builds with transformers (tests/test_hf_corpus.py).
- ``position_embeddings``: learned position tables (Kaplan et al. 2020 leave them out of the
  non-embedding count; ``params_embedding`` includes them).
"""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

DEFAULTS_FILE = Path(__file__).with_name("hf_defaults.json")


@lru_cache(maxsize=1)
def _table() -> dict:
    try:
        return json.loads(DEFAULTS_FILE.read_text(encoding="utf-8"))["families"]
    except (OSError, ValueError, KeyError):  # a broken install: every family is then unknown, and said so
        return {}


def family_defaults(model_type: str | None) -> dict | None:
    """transformers' defaults for a model type (None: a type transformers does not define)."""
    return _table().get(model_type) if isinstance(model_type, str) else None


def sub_config_type(model_type: str | None, key: str) -> str | None:
    """The model type of a family's default sub-config ``key`` (llava's text_config -> llama)."""
    defaults = family_defaults(model_type) or {}
    return (defaults.get("_sub") or {}).get(key)


def outer_tie(outer: dict, inner: dict, parent: str | None, inner_type: str | None = None) -> bool | None:
    """Whether a multimodal model ties its head: transformers reads the outer config's
    tie_word_embeddings (given, else the text config's own, else the outer family's default).

    A family of TIE_FROM_TEXT ties when either says so: its config's ``__post_init__`` sets the outer
    value to the text config's when the outer one is false (LlavaConfig, transformers 5.23)."""
    given, said = outer.get("tie_word_embeddings"), inner.get("tie_word_embeddings")
    if parent in TIE_FROM_TEXT:
        own = given if isinstance(given, bool) else (family_defaults(parent) or {}).get("tie_word_embeddings")
        text = said if isinstance(said, bool) else (family_defaults(inner_type) or {}).get("tie_word_embeddings")
        return bool(own) or bool(text)
    for value in (given, said, (family_defaults(parent) or {}).get("tie_word_embeddings")):
        if isinstance(value, bool):
            return value
    return None


# Gated feed-forwards (three matrices): families whose MLP is gate/up/down whatever the activation.
GATED_MODEL_TYPES = frozenset({
    "llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "gemma", "gemma2", "gemma3_text",
    "gemma3", "vaultgemma", "gemma4", "gemma4_text", "gemma4_unified", "gemma4_unified_text", "embedding_gemma2", "embedding_gemma2_text", "t5gemma", "shieldgemma2",
    "phi3", "phimoe", "olmo", "olmo2", "olmo3", "olmoe", "flex_olmo", "cohere", "cohere2", "internlm2", "internlm3",
    "granite", "granitemoe", "granitemoeshared", "deepseek_v2", "deepseek_v3", "glm", "glm4", "glm4_moe", "chatglm",
    "modernbert", "modernbert-decoder", "gpt_oss", "stablelm", "helium", "exaone4", "smollm3", "ministral", "baichuan",
    "bitnet", "gte", "pixtral", "cpmant", "lfm2", "lfm3", "recurrent_gemma",
    # towers whose MLP is gated whatever the activation (transformers 5.23): ClvpGatedLinearUnit
    # (models/clvp/modeling_clvp.py), Kosmos2_5VisionMlp's wi_0/wi_1 (models/kosmos2_5/modeling_kosmos2_5.py),
    # Pix2StructVisionMlp and Pix2StructTextDenseGatedActDense (models/pix2struct/modeling_pix2struct.py)
    "clvp_encoder", "kosmos_2_5_vision_model", "pix2struct_vision_model", "pix2struct_text_model",
})
# Activations that name a gated unit, or that transformers only uses in gated MLPs (SiLU/Swish).
GATED_ACTIVATIONS = frozenset({"silu", "swish", "swiglu", "geglu", "reglu", "gelu_glu", "silu_glu"})
ACTIVATION_KEYS = ("hidden_act", "hidden_activation", "activation_function", "ffn_act", "mlp_activation",
                   "feed_forward_activation", "ff_activation")

# Mixture-of-experts layouts modelled exactly (gated experts, a d x E router, shared experts).
MOE_MODEL_TYPES = frozenset({
    "mixtral", "phimoe", "olmoe", "flex_olmo", "qwen2_moe", "qwen3_moe", "deepseek_v2", "deepseek_v3", "granitemoe",
    "granitemoeshared", "glm4_moe", "gpt_oss",
    # checked exact against transformers 5.23 (tests/golden/hf_counts.json), shared experts and dense layers included
    "afmoe", "aria_text", "axk1", "beam", "cohere2_moe", "deepseek_v32", "ernie4_5_moe", "exaone_moe", "flint",
    "glm4_moe_lite", "glm_moe_dsa", "granitemoe_swa", "hy_v3", "kolibri1", "laguna", "llama4_text", "mellum",
    "minimax_m2", "minimax_m3_vl_text", "mistral4", "qwen3_vl_moe_text", "solar_open",
    # hybrids whose expert layers hf/mixers.py places
    "jamba", "granitemoehybrid", "kimi_linear", "bailing_hybrid", "minimax", "nemotron_h", "qwen3_next", "qwen3_5_moe_text",
})

# Multimodal configs whose __post_init__ ties the head when the text config ties it, whatever their own
# tie_word_embeddings (False by default): "if not self.tie_word_embeddings and self.text_config.tie_word_embeddings"
# in configuration_llava.py, _llava_onevision, _llava_next_video, _fast_vlm, _minimax_m3_vl, _video_llama_3 and
# _shieldgemma2 (transformers 5.23).
TIE_FROM_TEXT = frozenset({"llava", "llava_onevision", "llava_next_video", "fast_vlm", "minimax_m3_vl", "video_llama_3",
                           "shieldgemma2"})

# Gemma 4 text stacks: per-layer-type attention sizes and per-layer inputs (layers.gemma4_layers).
GEMMA4_TYPES = frozenset({"gemma4", "gemma4_text", "gemma4_unified", "gemma4_unified_text"})
# A sigmoid gate (d x 1) on the shared expert (Qwen-MoE); other families with shared_expert_intermediate_size have none.
SHARED_EXPERT_GATE_TYPES = frozenset({"qwen2_moe", "qwen3_next", "qwen3_5_moe_text"})
# Attention output gates: a d x (H·h) projection gating the attention output elementwise, or d x H per head.
ATTENTION_GATES = {"afmoe": "elementwise", "beam": "elementwise", "laguna": "per head", "doge": "per head",
                   "hrm_text": "elementwise", "qwen3_next": "elementwise", "qwen3_5_text": "elementwise",
                   "qwen3_5_moe_text": "elementwise", "lfm3": "per head",
                   "bailing_hybrid": "per head"}

# Stacks built alone from a sub-config whose every layer also attends to another stream (cross-attention,
# q, k, v, o of the layer's own width): cross-attention blocks per layer, as transformers 5.23 builds them.
CROSS_ATTENTION_BLOCKS = {
    "canary_decoder": 1,  # CanaryDecoderLayer.encoder_attn (models/canary/modeling_canary.py)
    "musicgen_decoder": 1,  # MusicgenDecoderLayer.encoder_attn (models/musicgen/modeling_musicgen.py)
    "pix2struct_text_model": 1,  # Pix2StructTextBlock.encoder_decoder_attention (models/pix2struct/modeling_pix2struct.py)
    "sam3_detr_encoder": 1,  # Sam3DetrEncoderLayer.cross_attn (models/sam3/modeling_sam3.py)
    "sam3_detr_decoder": 2,  # Sam3DetrDecoderLayer.text_cross_attn and .vision_cross_attn
    "sam3_lite_text_detr_encoder": 1,  # the same layers (models/sam3_lite_text/modeling_sam3_lite_text.py)
    "sam3_lite_text_detr_decoder": 2,
    # BltLocalEncoder / BltLocalDecoder (models/blt/modeling_blt.py): cross_attn_layers, one per layer when
    # cross_attn_all_layers, else one (inspect_config reads the flag)
    "blt_local_encoder": 1, "blt_local_decoder": 1,
}
# A decoder stack alone whose config also names the encoder's depth (encoder_layers): decoder_layers is its depth,
# every layer with cross-attention, as TrOCR's (PPFormulaNetTextModel: models/pp_formulanet/modeling_pp_formulanet.py).
DECODER_ONLY_TYPES = frozenset({"pp_formulanet_text"})

# Layers that are not the attention + feed-forward block (state-space, recurrent, linear or hybrid).
NOT_ATTENTION_TYPES = frozenset({
    "mamba", "mamba2", "falcon_mamba", "rwkv", "xlstm", "recurrent_gemma", "jamba", "zamba", "zamba2", "bamba",
    "falcon_h1", "nemotron_h", "nemotron_h_omni", "granitemoehybrid", "lfm2", "lfm2_moe", "lfm2_vl", "qwen3_next",
    "kimi_linear", "olmo_hybrid", "minimax", "bailing_hybrid", "qwen3_5", "qwen3_5_text", "qwen3_5_moe",
    "qwen3_5_moe_text", "fnet", "reformer", "longformer", "led", "funnel", "mobilebert", "squeezebert", "convbert",
    "canine", "perceiver", "deberta", "gemma3n", "gemma3n_text", "jetmoe", "switch_transformers", "nllb-moe",
    "xlm-prophetnet", "prophetnet", "transfo-xl", "mega", "nystromformer", "yoso", "mra",
})
NOT_ATTENTION_KEYS = ("layers_block_type", "hybrid_override_pattern", "attn_layer_period", "mamba_d_state",
                      "ssm_state_size", "mamba_n_heads", "linear_num_key_heads", "state_size", "time_step_rank")
ATTENTION_LAYER_TYPES = frozenset({"full_attention", "sliding_attention", "attention", "global", "local",
                                   "chunked_attention", "global_attention", "local_attention"})

# Models whose parts are not one attention + feed-forward stack: counted as one they would be wrong.
NOT_ONE_STACK = {
    "a convolutional feature encoder (conv_dim) before the attention stack": (
        "wav2vec2", "hubert", "wavlm", "unispeech", "unispeech-sat", "sew", "sew-d", "data2vec-audio",
        "wav2vec2-conformer", "wav2vec2-bert"),
    "Conformer layers (a convolution module and two half feed-forwards per layer)": (
        "parakeet_encoder", "parakeet_ctc", "lasr_encoder", "lasr_ctc", "granite_speech_encoder", "granite_speech5_encoder",
        "nemotron_asr_streaming_encoder", "cohere_asr", "gemma4_audio", "gemma3n_audio", "fastspeech2_conformer",
        "phi4_multimodal", "speech_to_text", "moonshine_streaming"),
    "an audio codec (convolutional encoder/decoder and quantizers)": (
        "mimi", "mimi_encoder", "mimi_decoder", "xcodec", "xcodec2", "neucodec", "dac", "encodec", "vits",
        "pocket_tts_audio_tokenizer", "pocket_tts_audio_tokenizer_encoder", "pocket_tts_audio_tokenizer_decoder",
        "higgs_audio_v2", "clvp", "univnet", "speecht5", "bark"),
    "a convolutional or other backbone beside the Transformer (detection, segmentation)": (
        "d_fine", "deimv2", "rt_detr", "rt_detr_v2", "grounding-dino", "mm-grounding-dino", "pp_doclayout_v3",
        "pp_doclayout_v4", "lightglue", "pp_formulanet", "donut-swin", "nougat", "sam3_lite_text", "lw_detr", "rf_detr", "detr",
        "conditional_detr", "deformable_detr", "dab-detr", "table-transformer", "omdet-turbo",
        "eomt", "eomt_dinov3", "videomt"),  # EoMT's convolutional upscale_block (models/eomt/modeling_eomt.py)
    "several stacks of different sizes (vision or speech encoders, Q-Formers, depth decoders, cross-attention)": (
        "blip", "blip_2_qformer", "bridgetower", "git", "idefics", "pix2struct", "tvp", "vit_mae", "csm", "moshi",
        "kyutai_speech_to_text", "evolla", "neomme", "seamless_m4t", "seamless_m4t_v2", "granite_docling_vision",
        "pe_audio_encoder", "sapiens2", "vjepa2", "muse_glimmer", "muse_glimmer_text", "instructblip_qformer",
        "instructblipvideo_qformer", "sam3_lite_text_text_model", "timesformer", "videomae"),
    "a vision tower with gated feed-forwards and 2-D positions (Gemma 4 vision)": ("gemma4_vision",),
    "layers with extra matrices beside attention and feed-forward (adapters, entity or layout streams)": (
        "xmod", "luke", "lilt"),
    "two attention blocks and two feed-forwards per layer, with zero-computation experts (LongCat-Flash)": (
        "longcat_flash",),
    # read by their ``depth`` key; these differ from transformers' build by 8-156% (DeepStack mergers
    # numbered like layers, fused qkv with another MLP width) or transformers builds none to check them against
    "a vision tower whose blocks (DeepStack mergers, MLP widths) are not modelled or not checked against transformers": (
        "qwen3_vl_vision", "qwen3_vl_moe_vision", "qwen3_omni_moe_vision_encoder", "cohere_compass_vision",
        "exaone4_5_vision", "qwen2_5_vl_vision", "qwen2_5_omni_vision_encoder", "qwen2_vl_vision", "glm4v_vision",
        "glm4v_moe_vision", "ernie4_5_vl_moe_vision", "idefics_vision"),
    # towers built alone from their sub-config (transformers 5.23), 17-100% off as one stack
    "cross-attention to an encoder of another width (cross_hidden_size) in every layer (DiaDecoderLayer)": (
        "dia_decoder",),
    "grouping blocks (group tokens, assignment attention, group projectors) between its stages (GroupViT)": (
        "groupvit_vision_model",),
    "cross-frame message attention (message_fc, message_attn) in every layer (XCLIPEncoderLayer)": (
        "xclip_vision_model",),
    "one weight per codebook in every linear layer (MoshiFlexibleLinear)": ("moshi_depth",),
    "a diffusion transformer with adaptive norms, time and speaker encoders (Qwen2.5-Omni's token2wav DiT)": (
        "qwen2_5_omni_dit",),
    "a vision tower whose layers are not attention + feed-forward blocks (InklingVisionModel)": ("inkling_vision",),
    "an encoder and a decoder (or several stacks) in separate sub-configs; depth and width are the first stack's": (
        "blt", "dia", "canary", "encoder-decoder", "vision-encoder-decoder", "speech-encoder-decoder", "t5gemma",
        "t5gemma2", "deepseek_ocr2_vision", "unlimited_ocr_vision"),
}
NOT_ONE_STACK_TYPES = {t: why for why, types in NOT_ONE_STACK.items() for t in types}
NOT_ONE_STACK_KEYS = {  # a key with a true value means the same for a type not listed above
    "conv_dim": "a convolutional feature encoder (conv_dim) before the attention stack",
    "conv_depthwise_kernel_size": "Conformer layers (a convolution module per layer)",
    "conformer_conv_dropout": "Conformer layers (a convolution module per layer)",
    "backbone_config": "a separate backbone model (backbone_config) beside the Transformer",
    "use_timm_backbone": "a timm backbone beside the Transformer",
    "decoder_hidden_size": "a decoder stack of another size (decoder_hidden_size)",
    "cross_attention_frequency": "cross-attention layers every few layers (a Q-Former)",
    "hidden_size_per_layer_input": "per-layer input embeddings and projections in every layer (Gemma 3n style)",
}

# Learned absolute position tables: model type -> (key of the table length, offset added to it).
LEARNED_POSITIONS = {
    "gpt2": ("n_positions", 0), "gpt_bigcode": ("n_positions", 0), "openai-gpt": ("n_positions", 0),
    "imagegpt": ("n_positions", 0), "gpt-sw3": ("n_positions", 0), "ctrl": (None, 0), "gpt_neo": ("max_position_embeddings", 0),
    "opt": ("max_position_embeddings", 2), "biogpt": ("max_position_embeddings", 2), "xlm": ("max_position_embeddings", 0),
    "bart": ("max_position_embeddings", 2), "mbart": ("max_position_embeddings", 2), "mvp": ("max_position_embeddings", 2),
    "plbart": ("max_position_embeddings", 2), "florence2": ("max_position_embeddings", 2), "fsmt": ("max_position_embeddings", 2),
    "trocr": ("max_position_embeddings", 2), "pp_formulanet_text": ("max_position_embeddings", 2), "blenderbot": ("max_position_embeddings", 0),
    "blenderbot-small": ("max_position_embeddings", 0), "marian": ("max_position_embeddings", 0),
    "pegasus": ("max_position_embeddings", 0), "bigbird_pegasus": ("max_position_embeddings", 0),
    "distilbert": ("max_position_embeddings", 0),
}
ROPE_KEYS = ("rope_theta", "rope_parameters", "rope_scaling", "rotary_dim", "rotary_pct", "rotary_emb_base",
             "partial_rotary_factor", "rope_ratio", "rotary_emb_fraction", "alibi", "use_alibi")
NO_POSITION_TYPES = frozenset({"bloom", "mpt", "falcon", "xglm", "m2m_100", "xlnet", "t5gemma"})
T5_MODEL_TYPES = frozenset({"t5", "mt5", "umt5", "longt5"})


def _bert_style(cfg: dict, model_type: str | None) -> bool:
    """BERT-style learned positions and token types: the family has type_vocab_size and no rotary keys.

    A rotary family whose config class has no ``position_embedding_type`` ignores the key: ModernBERT's
    published configs say "absolute" (transformers' convert_modernbert script copies it), yet
    ModernBertEmbeddings holds the token table only (models/modernbert/modeling_modernbert.py)."""
    defaults = family_defaults(model_type) or {}
    if defaults.get("_rope") and "position_embedding_type" not in defaults:
        return False
    if cfg.get("position_embedding_type") not in (None, "absolute"):
        return False
    return cfg.get("position_embedding_type") == "absolute" or (
        isinstance(cfg.get("type_vocab_size"), int) and not _rotary(cfg, model_type))


def _rotary(cfg: dict, model_type: str | None) -> bool:
    """Rotary (or ALiBi) positions: no learned table."""
    return bool(model_type in NO_POSITION_TYPES or (family_defaults(model_type) or {}).get("_rope")
                or any(cfg.get(k) not in (None, False) for k in ROPE_KEYS)
                or cfg.get("position_embedding_type") in ("rotary", "alibi"))


# Embedding layouts not modelled (2-D layout positions, extra tables, separate input/output sizes): null.
EMBEDDING_NOT_MODELLED = frozenset({
    "layoutlm", "layoutlmv2", "layoutlmv3", "visual_bert", "roc_bert", "rembert", "roformer", "molmo2", "gte", "nomic_bert",
    "jina_embeddings_v3", "lilt", "markuplm", "tapas", "bros", "canine", "cpmant", "mllama", "mllama_text_model",
    "molmo2_text",
})


def position_embeddings(cfg: dict, model_type: str | None, width: int, heads: int, depth: int,
                        decoder: int, embedding: int) -> int | None:
    """Parameters of the learned position tables (and token types), 0 for rotary/ALiBi, None unknown.

    BERT-style (``type_vocab_size``, no rotary keys): (max_position_embeddings + type_vocab_size) x e;
    GPT-2 ``n_positions`` x d; BART/OPT tables carry 2 extra rows; an encoder-decoder has one table
    per stack (Whisper: max_source_positions + max_target_positions); T5 relative biases: buckets x
    heads per stack (UMT5: per layer)."""
    if model_type in EMBEDDING_NOT_MODELLED:
        return None
    if model_type in T5_MODEL_TYPES:
        buckets = cfg.get("relative_attention_num_buckets") or 32
        return buckets * heads * ((depth + decoder) if model_type == "umt5" else (2 if decoder else 1))
    if model_type == "whisper":
        source, target = cfg.get("max_source_positions"), cfg.get("max_target_positions")
        return (source + target) * width if isinstance(source, int) and isinstance(target, int) else None
    if model_type in LEARNED_POSITIONS:
        key, offset = LEARNED_POSITIONS[model_type]
        if key is None:  # CTRL: sinusoidal, no parameters
            return 0
        length = cfg.get(key)
        stacks = 2 if decoder else 1
        e = embedding if model_type == "distilbert" else width
        return (length + offset) * e * stacks if isinstance(length, int) else None
    if _bert_style(cfg, model_type):
        length, types = cfg.get("max_position_embeddings"), cfg.get("type_vocab_size") or 0
        return (length + types) * embedding if isinstance(length, int) else None
    return 0 if _rotary(cfg, model_type) else None
