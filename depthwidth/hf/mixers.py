"""Hybrid and recurrent decoders: which layers attend, which layers mix by a state-space scan, and
the weights of those other mixers, read from a config the way transformers 5.23 builds the model.

``hybrid_layout(cfg, model_type, source)`` returns None for a family not modelled here, else a
``Layout``: ``attention_layers`` (layers with a self-attention block), ``ffn_layers`` (layers with a
feed-forward or experts), ``moe_layers`` (of those, the ones with experts) and ``other_params``,
the weight matrices (two or more dimensions: projections and convolution kernels; vectors such as
``A_log``, ``D``, ``dt_bias`` and norms left out, as everywhere in depthwidth) of every layer's
state-space mixer. These become ``blocks.Architecture`` fields; ``params_other_mixers`` reports the
last apart (inspect record).

Mixers (transformers 5.23, ``transformers/models/<family>/modeling_<family>.py``):

- Mamba (``MambaMixer.__init__``; Jamba's ``JambaMambaMixer``, FalconMamba's ``FalconMambaMixer``),
  inner size E, state N, conv kernel K, time-step rank R: ``in_proj`` d x 2E, depthwise ``conv1d``
  E·K, ``x_proj`` E x (R + 2N), ``dt_proj`` R x E, ``A_log`` E x N, ``out_proj`` E x d:
  E·(3d + K + 2R + 3N).
- Mamba-2 (``Mamba2Mixer.__init__``; ``BambaMixer``, ``GraniteMoeHybridMambaLayer``, ``FalconH1Mixer``,
  ``NemotronHMamba2Mixer``), inner size I, n_groups G, state N, heads M, kernel K: ``in_proj``
  d x (2I + 2GN + M), depthwise ``conv1d`` (I + 2GN)·K, ``out_proj`` I x d.

- Gated DeltaNet (``Qwen3NextGatedDeltaNet.__init__``; ``Qwen3_5GatedDeltaNet``, ``Qwen3_5MoeGatedDeltaNet``,
  ``OlmoHybridGatedDeltaNet``), key size K = key heads x key head size, value size V likewise, V_h
  value heads, kernel k: q, k, v, z (gate) d x (2K + 2V), a and b d x 2V_h, depthwise ``conv1d``
  (2K + V)·k, out V x d.

Layer layouts (each family's config class, ``configuration_<family>.py``):

- mamba, falcon_mamba, mamba2: every layer one mixer, no attention, no feed-forward.
- bamba: ``BambaConfig.layers_block_type``: attention in ``attn_layer_indices``, else Mamba-2; a
  gated feed-forward in every layer (``BambaDecoderLayer``).
- granitemoehybrid: ``layer_types`` ("linear_attention" = Mamba-2, else attention); every layer a
  shared gated MLP of ``shared_intermediate_size`` plus ``num_local_experts`` experts
  (``GraniteMoeHybridDecoderLayer``).
- falcon_h1: every layer Mamba-2 and attention side by side, and a gated feed-forward
  (``FalconH1DecoderLayer``); inner size ``mamba_d_ssm`` else ``mamba_expand``·d.
- qwen3_next, qwen3_5_text, qwen3_5_moe_text, olmo_hybrid: ``layer_types`` ("linear_attention" =
  Gated DeltaNet, else attention; default ``full_attention_interval`` 4); a feed-forward or experts
  in every layer, placed as for a plain mixture of experts (``layers._sparse_layers``).
- nemotron_h: ``layers_block_type`` (else the legacy ``hybrid_override_pattern``, M = Mamba-2,
  * = attention, - = MLP, E = experts: ``NemotronHConfig._pattern_to_list``); each layer holds one
  mixer (``NemotronHBlock``, ``MIXER_TYPES``); its MLP and experts are plain (up, down), the shared
  expert of ``moe_shared_expert_intermediate_size``; Mamba-2 inner size heads x ``mamba_head_dim``.
  The depth is the length of that list.
- lfm2: ``layer_types`` ("conv" = a short convolution, ``Lfm2ShortConv``: ``in_proj`` d x 3d,
  depthwise ``conv`` d·``conv_L_cache``, ``out_proj`` d x d), else ``full_attn_idxs``; a gated
  feed-forward in every layer whose size ``Lfm2MLP`` adjusts: int(2f/3), times
  ``block_ffn_dim_multiplier``, rounded up to ``block_multiple_of`` (with ``block_auto_adjust_ff_dim``).
  lfm3 (``Lfm3DecoderLayer``): the same short convolution (kernel ``conv_L_cache``, default 7), its
  feed-forward ``intermediate_size`` as given, a per-head attention gate (``use_attention_gate``).
- minimax: ``layer_types`` (default: odd layers "linear_attention", ``MiniMaxConfig.__post_init__``);
  a lightning-attention layer (``MiniMaxLightningAttention``) holds ``qkv_proj`` d x 3Hh,
  ``output_gate`` d x Hh and ``out_proj`` Hh x d; experts in every layer.
- recurrent_gemma: ``block_types`` repeated over the depth (``layers_block_type``); a recurrent block
  (``RecurrentGemmaRecurrentBlock``) holds ``linear_x``, ``linear_y`` d x w, ``linear_out`` w x d, a
  depthwise ``conv_1d`` w·``conv1d_width`` and the RG-LRU's two block-diagonal gates H x (w/H)²
  (``RecurrentGemmaRglru``), w = ``lru_width``; its gated MLP is ``intermediate_size`` // 2 wide.
- kimi_linear: ``layer_types`` ("linear_attention" = ``KimiLinearDeltaAttention``, else latent
  attention); a delta-attention layer of Q = ``linear_num_heads`` x ``linear_head_dim`` (h) holds
  q, k, v and o (4·d·Q), a depthwise ``conv1d`` 3Q·k, the forget gate and output gate (each d x h
  and h x Q, ``KimiLinearForgetGate``), ``b_proj`` d x H and the forget gate's ``A_log`` (H values
  held as a 4-D tensor). bailing_hybrid (``BailingHybridDeltaAttention``): the same layout, with a
  full-rank forget gate ``f_proj`` and output gate ``g_proj`` (each d x Q) and a 1-D ``A_log``.
- rwkv: every layer a time mix (``RwkvSelfAttention``: key, value, receptance d x A, output A x d,
  and three token-shift mixes of d held as 1 x 1 x d tensors) and a channel mix (``RwkvFeedForward``:
  key d x f and value f x d, the feed-forward; its receptance d x d and two shift mixes of d are
  counted with the other mixers); A = ``attention_hidden_size`` (default d), f 4d by default.
- jamba: ``JambaConfig.layers_block_type``: attention where ``i % attn_layer_period ==
  attn_layer_offset``, else Mamba; experts where ``i % expert_layer_period == expert_layer_offset``
  (``layers_num_experts``); a feed-forward in every layer.
"""
from __future__ import annotations

import math

from ..core.errors import InputError
from .read import EXPECTED, _whole
from ..core.frozen import frozen

# Defaults of each family's config class (transformers 5.23 configuration_<family>.py): a saved
# config.json leaves out the keys equal to them.
_DEFAULTS = {
    "mamba": dict(state_size=16, conv_kernel=4, expand=2, time_step_rank="auto"),
    "falcon_mamba": dict(state_size=16, conv_kernel=4, expand=2, time_step_rank="auto"),
    "mamba2": dict(state_size=128, conv_kernel=4, expand=2, n_groups=8, num_heads=128),
    "bamba": dict(mamba_d_state=256, mamba_d_conv=4, mamba_expand=2, mamba_n_groups=1, mamba_n_heads=128),
    "granitemoehybrid": dict(mamba_d_state=256, mamba_d_conv=4, mamba_expand=2, mamba_n_groups=1, mamba_n_heads=128),
    "falcon_h1": dict(mamba_d_state=256, mamba_d_conv=4, mamba_expand=2, mamba_n_groups=1, mamba_n_heads=128),
    "jamba": dict(mamba_d_state=16, mamba_d_conv=4, mamba_expand=2, mamba_dt_rank="auto", attn_layer_period=8,
                  attn_layer_offset=4, expert_layer_period=2, expert_layer_offset=1, num_experts=16),
}
_DELTANET = dict(linear_conv_kernel_dim=4, linear_key_head_dim=128, linear_value_head_dim=128, linear_num_key_heads=16,
                 linear_num_value_heads=32, full_attention_interval=4)
_DEFAULTS["nemotron_h"] = dict(ssm_state_size=128, mamba_num_heads=128, mamba_head_dim=64, n_groups=8, conv_kernel=4)
NEMOTRON_H_PATTERN = {"M": "linear_attention", "E": "moe", "*": "full_attention", "-": "mlp"}
_DEFAULTS["rwkv"] = {}
_DEFAULTS["lfm2"] = dict(conv_L_cache=3, block_multiple_of=256)
_DEFAULTS["lfm3"] = dict(conv_L_cache=7)
_DEFAULTS["minimax"] = {}
_DEFAULTS["recurrent_gemma"] = dict(conv1d_width=4)
_DEFAULTS["kimi_linear"] = dict(linear_conv_kernel_dim=4, linear_head_dim=128, linear_num_heads=32)
_DEFAULTS["bailing_hybrid"] = _DEFAULTS["kimi_linear"]
DELTANET_TYPES = ("qwen3_next", "qwen3_5_text", "qwen3_5_moe_text", "olmo_hybrid")
_DEFAULTS.update({t: _DELTANET for t in DELTANET_TYPES})
HYBRID_TYPES = frozenset(_DEFAULTS)


@frozen
class Layout:
    """What a hybrid or recurrent stack holds besides attention + feed-forward (module docstring)."""

    attention_layers: int
    ffn_layers: int
    moe_layers: int | None  # None: the experts sit where a plain mixture of experts puts them
    other_params: int
    note: str
    fields: tuple[tuple[str, int], ...] = ()  # other Architecture fields the family fixes (a shared expert's size)

    def apply(self, fields: dict, ffn: int, cfg: dict, notes: list[str]) -> tuple[int, str | None]:
        """Put this layout into ``fields`` (blocks.Architecture keywords); (the feed-forward size, why
        the counts are unavailable or None)."""
        fields.update(attention_layers=self.attention_layers, ffn_layers=self.ffn_layers, other_mixer_params=self.other_params)
        if fields.get("experts") and self.moe_layers is not None:
            fields["dense_layers"] = self.ffn_layers - self.moe_layers
        fixed = dict(self.fields)
        ffn = fixed.pop("ffn", ffn)  # LFM2 and recurrent Gemma size their feed-forward otherwise
        fields.update(fixed)
        notes.append(f"hybrid or recurrent stack: {self.note}; the other mixers' {self.other_params:,} weights are "
                     "in params_nonembedding and reported apart (params_other_mixers)")
        if not self.ffn_layers:
            notes.append("no feed-forward layers: ffn and gated repeat the config's intermediate_size and activation, "
                         "which the mixers use (no feed-forward weights are counted)")
        if not self.attention_layers:
            notes.append("no attention layers: no KV cache grows with the context (a fixed recurrent state instead)")
        if cfg.get("moe_latent_size"):
            return ffn, "experts on a latent of moe_latent_size (Nemotron-H's latent MoE) are not modelled"
        return ffn, None


def nemotron_h_types(cfg: dict) -> list[str] | None:
    """Nemotron-H's layer types: ``layers_block_type`` else the legacy ``hybrid_override_pattern``."""
    kinds = cfg.get("layers_block_type") or cfg.get("layer_types")
    pattern = cfg.get("hybrid_override_pattern")
    if not isinstance(kinds, list) and isinstance(pattern, str) and set(pattern) <= set(NEMOTRON_H_PATTERN):
        kinds = [NEMOTRON_H_PATTERN[c] for c in pattern]
    return kinds if isinstance(kinds, list) and all(isinstance(k, str) for k in kinds) else None


def mamba_params(width: int, inner: int, state: int, kernel: int, rank: int) -> int:
    """One Mamba mixer's weight matrices: E·(3d + K + 2R + 3N) (module docstring)."""
    return inner * (3 * width + kernel + 2 * rank + 3 * state)


def mamba2_params(width: int, inner: int, groups: int, state: int, heads: int, kernel: int) -> int:
    """One Mamba-2 mixer's weight matrices: d·(2I + 2GN + M) + (I + 2GN)·K + I·d (module docstring)."""
    conv = inner + 2 * groups * state
    return width * (inner + conv + heads) + conv * kernel + inner * width


def deltanet_params(width: int, keys: int, values: int, value_heads: int, kernel: int) -> int:
    """One Gated DeltaNet's weight matrices: d·(2K + 2V + 2V_h) + (2K + V)·k + V·d (module docstring)."""
    return width * (2 * keys + 2 * values + 2 * value_heads) + (2 * keys + values) * kernel + values * width


def _get(cfg: dict, model_type: str, key: str, source: str, lowest: int = 1) -> int:
    value = cfg.get(key)
    return _whole(key, _DEFAULTS[model_type][key] if value is None else value, source, lowest)


def _rank(cfg: dict, model_type: str, key: str, width: int, source: str) -> int:
    """A time-step rank: "auto" is ceil(d / 16) (MambaConfig.__post_init__)."""
    value = cfg.get(key, _DEFAULTS[model_type][key])
    return math.ceil(width / 16) if value in ("auto", None) else _whole(key, value, source)


def _inner(cfg: dict, model_type: str, width: int, key: str, source: str) -> int:
    """The mixer's inner size: int(expand · d), as the mixers compute it."""
    expand = cfg.get(key, _DEFAULTS[model_type][key])
    if isinstance(expand, bool) or not isinstance(expand, (int, float)) or not 0 < expand * width <= 10**15:
        raise InputError("config", source, f"{key} = {str(expand)[:20]} is not a positive expansion factor; {EXPECTED}")
    return int(expand * width)


def _mamba2(cfg: dict, model_type: str, width: int, inner: int, source: str, prefix: str = "mamba_") -> int:
    keys = ("n_groups", "d_state", "n_heads", "d_conv") if prefix else ("n_groups", "state_size", "num_heads", "conv_kernel")
    groups, state, heads, kernel = (_get(cfg, model_type, prefix + k, source) for k in keys)
    return mamba2_params(width, inner, groups, state, heads, kernel)


def hybrid_layout(cfg: dict, model_type: str | None, depth: int, width: int, source: str,
                  attention_width: int = 0) -> Layout | None:
    """The Layout of a hybrid or recurrent family (module docstring); None for any other family."""
    if model_type not in HYBRID_TYPES:
        return None
    family = next((layout for types, layout in _FAMILIES if model_type in types), _mamba2_hybrid)
    return family(cfg, model_type, depth, width, source, attention_width)


def _mamba(cfg: dict, model_type: str, depth: int, width: int, source: str, attention_width: int) -> Layout:
    """Mamba and FalconMamba: every layer one Mamba mixer."""
    inner = cfg.get("intermediate_size") or _inner(cfg, model_type, width, "expand", source)
    one = mamba_params(width, _whole("intermediate_size", inner, source), _get(cfg, model_type, "state_size", source),
                       _get(cfg, model_type, "conv_kernel", source), _rank(cfg, model_type, "time_step_rank", width, source))
    return Layout(0, 0, 0, depth * one, f"{depth} Mamba layers (no attention, no feed-forward)")


def _rwkv(cfg: dict, model_type: str, depth: int, width: int, source: str, attention_width: int) -> Layout:
    """RWKV: a time mix and a channel mix per layer."""
    inner = _whole("attention_hidden_size", cfg.get("attention_hidden_size") or width, source)
    one = 4 * width * inner + 3 * width + width * width + 2 * width
    return Layout(0, depth, 0, depth * one, f"{depth} RWKV layers: a time mix (counted with the other mixers) and a "
                  "channel mix (its key and value as the feed-forward, its receptance with the other mixers)")


def _mamba2_stack(cfg: dict, model_type: str, depth: int, width: int, source: str, attention_width: int) -> Layout:
    """Mamba-2: every layer one Mamba-2 mixer."""
    one = _mamba2(cfg, model_type, width, _inner(cfg, model_type, width, "expand", source), source, prefix="")
    return Layout(0, 0, 0, depth * one, f"{depth} Mamba-2 layers (no attention, no feed-forward)")


def _deltanet(cfg: dict, model_type: str, depth: int, width: int, source: str, attention_width: int) -> Layout:
    """Qwen3-Next and its kin: Gated DeltaNet layers, full attention every ``full_attention_interval``."""
    kinds = cfg.get("layer_types")
    if not isinstance(kinds, list) or len(kinds) != depth:
        interval = _get(cfg, model_type, "full_attention_interval", source)
        kinds = ["linear_attention" if (i + 1) % interval else "full_attention" for i in range(depth)]
    get = lambda key: _get(cfg, model_type, key, source)
    one = deltanet_params(width, get("linear_num_key_heads") * get("linear_key_head_dim"),
                          get("linear_num_value_heads") * get("linear_value_head_dim"), get("linear_num_value_heads"),
                          get("linear_conv_kernel_dim"))
    linear = sum(kind == "linear_attention" for kind in kinds)
    return Layout(depth - linear, depth, None, linear * one,
                  f"{depth - linear} attention and {linear} Gated DeltaNet layers")


def _minimax(cfg: dict, model_type: str, depth: int, width: int, source: str, attention_width: int) -> Layout:
    """MiniMax: lightning (linear) attention layers between softmax-attention ones."""
    kinds = cfg.get("layer_types")
    if not isinstance(kinds, list) or len(kinds) != depth:
        kinds = ["full_attention" if (i + 1) % 2 else "linear_attention" for i in range(depth)]
    linear = sum(kind == "linear_attention" for kind in kinds)
    return Layout(depth - linear, depth, None, linear * 5 * width * attention_width,
                  f"{depth - linear} softmax-attention and {linear} lightning-attention layers")


def _recurrent_gemma(cfg: dict, model_type: str, depth: int, width: int, source: str, attention_width: int) -> Layout:
    """RecurrentGemma: RG-LRU recurrent blocks in a repeating pattern with attention."""
    pattern = cfg.get("block_types") or ["recurrent", "recurrent", "attention"]
    kinds = (list(pattern) * depth)[:depth]
    recurrent = sum(kind == "recurrent" for kind in kinds)
    heads = _whole("num_attention_heads", cfg.get("num_attention_heads"), source)
    lru = _whole("lru_width", cfg.get("lru_width") or width, source)
    one = 3 * width * lru + lru * _get(cfg, model_type, "conv1d_width", source) + 2 * heads * (lru // heads) ** 2
    ffn = _whole("intermediate_size", cfg.get("intermediate_size"), source) // 2
    return Layout(depth - recurrent, depth, 0, recurrent * one,
                  f"{depth - recurrent} attention and {recurrent} recurrent (RG-LRU) layers", (("ffn", ffn),))


def _delta_attention(cfg: dict, model_type: str, depth: int, width: int, source: str, attention_width: int) -> Layout:
    """Kimi Linear and Bailing hybrid: delta-attention layers beside latent attention."""
    kinds = cfg.get("layer_types")
    if not isinstance(kinds, list) or len(kinds) != depth:
        raise InputError("config", source, f"kimi_linear needs layer_types listing its {depth} layers; {EXPECTED}")
    linear = sum(kind == "linear_attention" for kind in kinds)
    heads, head = _get(cfg, model_type, "linear_num_heads", source), _get(cfg, model_type, "linear_head_dim", source)
    q = heads * head
    gates = 2 * (width * head + head * q) + heads if model_type == "kimi_linear" else 2 * width * q
    one = 4 * width * q + 3 * q * _get(cfg, model_type, "linear_conv_kernel_dim", source) + gates + width * heads
    return Layout(depth - linear, depth, None, linear * one,
                  f"{depth - linear} latent-attention and {linear} delta-attention layers")


def _lfm(cfg: dict, model_type: str, depth: int, width: int, source: str, attention_width: int) -> Layout:
    """LFM2/LFM3: short-convolution layers beside attention."""
    kinds = cfg.get("layer_types")
    if not isinstance(kinds, list) or len(kinds) != depth:
        full = cfg.get("full_attn_idxs")
        full = list(range(depth)) if full is None else full
        kinds = ["full_attention" if i in full else "conv" for i in range(depth)]
        if model_type == "lfm3":  # Lfm3Config.__post_init__: attention at i % 4 == 2 and (sliding) i % 4 == 0, i > 0
            kinds = ["attention" if i % 4 == 2 or (i % 4 == 0 and i > 0) else "conv" for i in range(depth)]
    convs = sum(kind == "conv" for kind in kinds)
    one = 4 * width * width + width * _get(cfg, model_type, "conv_L_cache", source)
    ffn = _whole("intermediate_size", cfg.get("intermediate_size") or cfg.get("block_ff_dim"), source)
    if model_type == "lfm2" and cfg.get("block_auto_adjust_ff_dim", True):
        ffn = int(2 * ffn / 3)
        multiplier, multiple = cfg.get("block_ffn_dim_multiplier", 1.0), _get(cfg, model_type, "block_multiple_of", source)
        if multiplier is not None:
            ffn = multiple * -(-int(multiplier * ffn) // multiple)
    return Layout(depth - convs, depth, 0, convs * one, f"{depth - convs} attention and {convs} short-convolution layers",
                  (("ffn", ffn),))


def _nemotron_h(cfg: dict, model_type: str, depth: int, width: int, source: str, attention_width: int) -> Layout:
    """Nemotron-H: one mixer per layer, attention, Mamba-2, MLP or experts."""
    kinds = nemotron_h_types(cfg) or []
    if len(kinds) != depth or set(kinds) - set(NEMOTRON_H_PATTERN.values()):
        raise InputError("config", source, f"layers_block_type does not list {depth} layers of linear_attention, "
                         f"full_attention, mlp or moe; {EXPECTED}")
    get = lambda key: _get(cfg, model_type, key, source)
    heads = get("mamba_num_heads")
    one = mamba2_params(width, heads * get("mamba_head_dim"), get("n_groups"), get("ssm_state_size"), heads,
                        get("conv_kernel"))
    n = {kind: kinds.count(kind) for kind in NEMOTRON_H_PATTERN.values()}
    shared = cfg.get("moe_shared_expert_intermediate_size")
    return Layout(n["full_attention"], n["mlp"] + n["moe"], n["moe"], n["linear_attention"] * one,
                  f"{n['full_attention']} attention, {n['linear_attention']} Mamba-2, {n['mlp']} MLP and {n['moe']} "
                  "expert layers, one mixer each", (("shared_expert_ffn", shared),) if isinstance(shared, int) else ())


def _jamba(cfg: dict, model_type: str, depth: int, width: int, source: str, attention_width: int) -> Layout:
    """Jamba: attention every ``attn_layer_period`` layers, else Mamba; experts every ``expert_layer_period``."""
    period, offset = _get(cfg, model_type, "attn_layer_period", source), _get(cfg, model_type, "attn_layer_offset", source, 0)
    e_period = _get(cfg, model_type, "expert_layer_period", source)
    e_offset = _get(cfg, model_type, "expert_layer_offset", source, 0)
    attention = sum(i % period == offset for i in range(depth))
    experts = _get(cfg, model_type, "num_experts", source)
    moe = sum(i % e_period == e_offset for i in range(depth)) if experts > 1 else 0
    one = mamba_params(width, _inner(cfg, model_type, width, "mamba_expand", source),
                       _get(cfg, model_type, "mamba_d_state", source), _get(cfg, model_type, "mamba_d_conv", source),
                       _rank(cfg, model_type, "mamba_dt_rank", width, source))
    return Layout(attention, depth, moe, (depth - attention) * one,
                  f"{attention} attention and {depth - attention} Mamba layers, {moe} with experts")


def _falcon_h1(cfg: dict, model_type: str, depth: int, width: int, source: str, attention_width: int) -> Layout:
    """Falcon-H1: attention and a Mamba-2 mixer side by side in every layer."""
    inner = cfg.get("mamba_d_ssm") or _inner(cfg, model_type, width, "mamba_expand", source)
    one = _mamba2(cfg, model_type, width, _whole("mamba_d_ssm", inner, source), source)
    return Layout(depth, depth, 0, depth * one, f"{depth} layers of attention and Mamba-2 side by side")


def _mamba2_hybrid(cfg: dict, model_type: str, depth: int, width: int, source: str, attention_width: int) -> Layout:
    """Bamba (attention in ``attn_layer_indices``) and GraniteMoeHybrid (``layer_types``): Mamba-2 elsewhere."""
    inner = _inner(cfg, model_type, width, "mamba_expand", source)
    one = _mamba2(cfg, model_type, width, inner, source)
    if model_type == "bamba":
        indices = cfg.get("attn_layer_indices") or []
        attention = sum(i in indices for i in range(depth))
        return Layout(attention, depth, 0, (depth - attention) * one,
                      f"{attention} attention and {depth - attention} Mamba-2 layers")
    kinds = cfg.get("layer_types") or cfg.get("layers_block_type") or ["linear_attention"] * depth
    if not isinstance(kinds, list) or len(kinds) != depth:
        raise InputError("config", source, f"layer_types lists {len(kinds) if isinstance(kinds, list) else 'no'} layers, "
                         f"not the {depth} of num_hidden_layers; {EXPECTED}")
    mixers = sum(kind in ("mamba", "linear_attention") for kind in kinds)
    experts = cfg.get("num_local_experts") or 0
    return Layout(depth - mixers, depth, depth if experts else 0, mixers * one,
                  f"{depth - mixers} attention and {mixers} Mamba-2 layers")


# which families each layout function reads, in the order they are tried (the last one: bamba, granitemoehybrid)
_FAMILIES = (
    (("mamba", "falcon_mamba"), _mamba),
    (("rwkv",), _rwkv),
    (("mamba2",), _mamba2_stack),
    (DELTANET_TYPES, _deltanet),
    (("minimax",), _minimax),
    (("recurrent_gemma",), _recurrent_gemma),
    (("kimi_linear", "bailing_hybrid"), _delta_attention),
    (("lfm2", "lfm3"), _lfm),
    (("nemotron_h",), _nemotron_h),
    (("jamba",), _jamba),
    (("falcon_h1",), _falcon_h1),
)
