"""Real Transformer blocks as data: the one place that counts parameters, FLOPs and KV cache.

The theorems of Levine et al. 2020 are about (L, d, H); a parameter budget is about the block
people train. An ``Architecture`` describes a stack completely enough to count it exactly:

- attention: H query heads, G key/value heads (MHA G = H, GQA 1 < G < H, MQA G = 1) of size
  ``head_dim``; or latent attention (MLA, DeepSeek-V2/V3) when ``kv_lora_rank`` is set;
- feed-forward of size f, plain (two matrices) or gated (SwiGLU/GeGLU, three matrices);
- mixture of experts: E routed experts of size f_e, top-k per token, S shared experts of size
  f_s, a router, and ``dense_layers`` layers with a dense feed-forward instead;
- ALBERT-style shared layers (``layer_groups`` distinct layers applied ``depth`` times);
- an encoder-decoder's ``decoder_depth`` decoder layers (self- and cross-attention);
- vocabulary, tied or untied output head, a factorized embedding (ALBERT).

Counting convention (reference card, "Beyond 12·L·d²"): every weight matrix inside the layers
(q, k, v, o; feed-forward or experts; routers); no norms, no biases, no position embeddings.
Per layer, with head size h and width d:

- attention   d·H·h (q) + 2·d·G·h (k, v) + H·h·d (o)                         = 4·d² for MHA, H·h = d
              (+ d·H·h + 2·H·h for XLNet's relative-position projection r and segment embeddings;
              + d·g for an attention output gate of size g: H·h elementwise, H per head;
              a cross-attention block, in ``cross_attention_layers``, counts as one more attention;
              a DSA indexer r_q·I·h_I + d·h_I + d·I in each of ``indexed_layers``;
              per-layer-type sizes in ``attention_variants`` / ``ffn_variants``, and 2·d·p per layer
              for Gemma's per-layer inputs of size p)
- latent      q: d·r_q + r_q·H·(n + p) (or d·H·(n + p) without r_q); kv: d·(r_kv + p)
              + r_kv·H·(n + v); o: H·v·d   (n, p, v: qk_nope, qk_rope, v head sizes)
- feed-forward 2·d·f plain, 3·d·f gated;   experts: E·(feed-forward of f_e) + S·(of f_s) + d·E
- active per token: top-k routed experts + the shared ones + the router (dense layers as they are).

Embeddings are reported apart: V·d (V·e + e·d for a factorized embedding of size e), plus V·d for
an untied output head.

FLOPs per training token (PaLM's convention, Chowdhery et al. 2022, Appendix B):
``6·N + 6·L·T·H·(d_qk + d_v)``, with N the non-embedding parameters a token passes through
(active experts; a shared ALBERT layer once per application), L the attention blocks (an
encoder-decoder's decoder layers count twice: self and cross), T the context length, and the full
T x T attention matrix counted (no causal halving). For ordinary attention d_qk = d_v = h, so the
attention term is PaLM's 12·L·H·h·T. The output head's logits (6·V·d) are left out, like the
embeddings (Kaplan et al. 2020 count non-embedding compute the same way).

KV cache per token: K and V of every self-attention layer, 2·L·G·h values (MLA caches the latent
and the rope key, L·(r_kv + p) values), times the bytes of one value. None for an encoder-only
stack, which keeps no cache.
"""
from __future__ import annotations


from ..core.errors import InputError
from ..core.frozen import frozen

DEFAULT_CONTEXT = 2048  # T of flops_per_token: GPT-3's and PaLM's training context


@frozen
class Architecture:
    """Everything one needs to count a Transformer stack (see the module docstring).

    ``depth`` counts the (encoder) layers; ``decoder_depth`` an encoder-decoder's decoder layers.
    ``head_dim`` is the width per query head (for latent attention the per-head query/key/value
    sizes are ``qk_nope_head_dim + qk_rope_head_dim`` and ``v_head_dim``). ``ffn`` is the dense
    feed-forward size (the expert size of an all-MoE stack, as Mixtral's config says).
    ``dense_layers`` is how many layers of an MoE stack keep a dense feed-forward, wherever they sit.
    """

    depth: int
    width: int
    heads: int
    kv_heads: int
    head_dim: int
    ffn: int
    gated: bool
    experts: int | None = None
    top_k: int | None = None
    expert_ffn: int | None = None
    shared_experts: int = 0
    shared_expert_ffn: int | None = None
    shared_expert_gate: bool = False  # Qwen-MoE: a d x 1 sigmoid gate on the shared expert
    position_projection: bool = False  # XLNet/Transformer-XL: a d x H·h relative-position projection
    dense_layers: int = 0
    q_lora_rank: int | None = None
    kv_lora_rank: int | None = None
    qk_nope_head_dim: int | None = None
    qk_rope_head_dim: int | None = None
    v_head_dim: int | None = None
    layer_groups: int | None = None
    decoder_depth: int = 0
    encoder_only: bool = False
    vocab: int | None = None
    tied: bool = True
    embedding_width: int | None = None  # ALBERT's factorized embedding size e (None: e = d)
    family: str = "vanilla"
    attention_gate: int = 0  # output size of an attention output gate, a d x g matrix per layer (H·h or H per head)
    cross_attention_layers: int = 0  # decoder-only layers with a cross-attention block as well (TrOCR)
    # per-layer-type attention (Gemma 4's global layers): (layers, kv_heads, head_dim, k/v matrices 0-2) replacing
    # the base attention in that many layers; k/v matrices 0 when a layer reuses another's keys and values
    attention_variants: tuple[tuple[int, int, int, int], ...] = ()
    ffn_variants: tuple[tuple[int, int], ...] = ()  # (layers, feed-forward size) replacing ``ffn`` in that many layers
    per_layer_input: int = 0  # Gemma 3n/4 per-layer inputs of size p: a d x p gate and a p x d projection per layer
    indexed_layers: int = 0  # layers with a sparse-attention indexer (DeepSeek-V3.2 DSA): index_heads of index_head_dim
    index_heads: int = 0
    index_head_dim: int = 0
    position_params: int | None = 0  # learned position tables (None: unknown); rotary, ALiBi: 0
    embedding_projections: int = 1  # e x d projections of a factorized embedding (OPT-350m: in and out, 2)
    other_embedding_params: int = 0  # other tables read by token (Gemma 4's per-layer input table and its projection)
    # hybrid and recurrent stacks (hf/mixers.py): layers with attention, layers with a feed-forward (None: every
    # layer), and the weight matrices of the other mixers (Mamba, Mamba-2 ...), counted in params_nonembedding
    attention_layers: int | None = None
    ffn_layers: int | None = None
    other_mixer_params: int = 0

    @property
    def latent(self) -> bool:
        """Latent attention (MLA): keys and values through a rank-``kv_lora_rank`` latent."""
        return self.kv_lora_rank is not None

    @property
    def moe(self) -> bool:
        """A mixture-of-experts stack."""
        return bool(self.experts)

    @property
    def qk_head_dim(self) -> int:
        """Size of one query/key head (attention FLOPs)."""
        return self.qk_nope_head_dim + self.qk_rope_head_dim if self.latent else self.head_dim

    @property
    def value_head_dim(self) -> int:
        """Size of one value head (attention FLOPs)."""
        return self.v_head_dim if self.latent else self.head_dim


# ---- per-layer counts --------------------------------------------------------------------------

def attention_params(arch: Architecture) -> int:
    """Weights of one self-attention block: q, k, v, o (or latent attention's projections)."""
    d, heads = arch.width, arch.heads
    if arch.latent:
        qk = arch.qk_nope_head_dim + arch.qk_rope_head_dim
        q = d * arch.q_lora_rank + arch.q_lora_rank * heads * qk if arch.q_lora_rank else d * heads * qk
        kv = d * (arch.kv_lora_rank + arch.qk_rope_head_dim) + arch.kv_lora_rank * heads * (arch.qk_nope_head_dim + arch.v_head_dim)
        return q + kv + heads * arch.v_head_dim * d + d * arch.attention_gate
    # XLNet: the relative-position projection r (d x H·h) and the segment embeddings (2 x H·h) of every layer
    position = (d + 2) * heads * arch.head_dim if arch.position_projection else 0
    return 2 * d * heads * arch.head_dim + 2 * d * arch.kv_heads * arch.head_dim + position + d * arch.attention_gate


def indexer_params(arch: Architecture) -> int:
    """Weights of one sparse-attention indexer (DeepSeek-V3.2): queries from the query latent (or the
    width), r_q·I·h_I; one key head, d·h_I; per-head weights, d·I."""
    source = arch.q_lora_rank or arch.width
    return source * arch.index_heads * arch.index_head_dim + arch.width * (arch.index_head_dim + arch.index_heads)


def ffn_params(width: int, ffn: int, gated: bool) -> int:
    """Weights of one feed-forward of size ``ffn``: 2·d·f plain, 3·d·f gated."""
    return (3 if gated else 2) * width * ffn


def moe_params(arch: Architecture, active: bool = False) -> int:
    """Weights of one mixture-of-experts feed-forward: experts + shared experts + router.

    ``active``: only the top-k routed experts a token uses (shared experts and router stay)."""
    d = arch.width
    routed = (arch.top_k if active else arch.experts) * ffn_params(d, arch.expert_ffn, arch.gated)
    shared = arch.shared_experts * ffn_params(d, arch.shared_expert_ffn or 0, arch.gated)
    return routed + shared + d * arch.experts + (d if arch.shared_experts and arch.shared_expert_gate else 0)


def _stack(arch: Architecture, active: bool, applied: bool) -> int:
    """Non-embedding weights: distinct ones, or (``applied``) as many as a token passes through."""
    attention = attention_params(arch)
    dense = attention + ffn_params(arch.width, arch.ffn, arch.gated)
    if arch.attention_layers is not None or arch.ffn_layers is not None:  # hybrid: layers differ in what they hold
        ffn_layers = arch.depth if arch.ffn_layers is None else arch.ffn_layers
        moe_layers = ffn_layers - arch.dense_layers if arch.moe else 0
        encoder = (attention_layer_count(arch) * attention + (ffn_layers - moe_layers) * ffn_params(arch.width, arch.ffn, arch.gated)
                   + (moe_layers * moe_params(arch, active) if moe_layers else 0) + arch.other_mixer_params)
    elif arch.layer_groups and not applied:
        encoder = arch.layer_groups * dense  # ALBERT: a shared group counts once
    elif arch.moe:
        moe_layers = arch.depth - arch.dense_layers
        encoder = arch.dense_layers * dense + moe_layers * (attention + moe_params(arch, active))
    else:
        encoder = arch.depth * dense
    encoder += _variants(arch, attention)
    cross = arch.cross_attention_layers * attention  # decoder-only stacks with cross-attention (TrOCR)
    cross += arch.indexed_layers * indexer_params(arch) if arch.indexed_layers else 0
    return encoder + cross + arch.decoder_depth * (attention + dense)  # decoder: self + cross attention


def _variants(arch: Architecture, attention: int) -> int:
    """What per-layer-type sizes and per-layer inputs change from ``depth`` identical layers."""
    d, heads, change = arch.width, arch.heads, 0
    for layers, kv_heads, head_dim, kv_matrices in arch.attention_variants:
        change += layers * (2 * d * heads * head_dim + kv_matrices * d * kv_heads * head_dim - attention)
    for layers, ffn in arch.ffn_variants:
        change += layers * (ffn_params(d, ffn, arch.gated) - ffn_params(d, arch.ffn, arch.gated))
    return change + arch.depth * 2 * d * arch.per_layer_input


def params_nonembedding(arch: Architecture) -> int:
    """Every weight matrix inside the layers (all experts; shared layers once); no norms, biases."""
    return _stack(arch, active=False, applied=False)


def params_active(arch: Architecture) -> int:
    """Non-embedding weights one token uses: top-k + shared experts + router; a dense stack as is."""
    return _stack(arch, active=True, applied=False)


def params_embedding(arch: Architecture) -> int | None:
    """V·d (V·e + e·d when factorized), + V·d for an untied output head, + the learned position
    tables (Kaplan et al. 2020 leave them out of the non-embedding count); None if V or the
    position tables are unknown."""
    if arch.vocab is None or arch.position_params is None:
        return None
    e = arch.embedding_width or arch.width
    embedding = arch.vocab * e + (arch.embedding_projections * e * arch.width if e != arch.width else 0)
    return embedding + (0 if arch.tied else arch.vocab * arch.width) + arch.position_params + arch.other_embedding_params


def position_table_note(rows: int, width: int | None = None, length: str = "the context, --context") -> str:
    """The note of a record whose params_embedding holds a learned position table of ``rows`` x ``width``
    (None: each shape's width; ``length``: the setting that gives the rows)."""
    across = "the width of each shape" if width is None else f"{width:,}"
    return (f"learned position table of {rows:,} rows ({length}) x {across} counted in params_embedding "
            "(not in params_nonembedding)")


def attention_layer_count(arch: Architecture) -> int:
    """Layers with a self-attention block: every layer, or a hybrid stack's ``attention_layers``."""
    return arch.depth if arch.attention_layers is None else arch.attention_layers


def attention_blocks(arch: Architecture) -> int:
    """Attention blocks a token passes through: encoder layers with attention + 2 per decoder layer
    (self, cross) + the cross-attention blocks of a decoder-only stack."""
    return attention_layer_count(arch) + 2 * arch.decoder_depth + arch.cross_attention_layers


def flops_per_token(arch: Architecture, context: int = DEFAULT_CONTEXT) -> int:
    """Training FLOPs per token: 6·N_applied + 6·L_attn·T·H·(d_qk + d_v) (PaLM; full T x T)."""
    if isinstance(context, bool) or not isinstance(context, int) or context < 1:
        raise InputError("context", context, "expected a whole number of tokens >= 1, such as 2048")
    dense = 6 * _stack(arch, active=True, applied=True)
    return dense + 6 * attention_blocks(arch) * context * arch.heads * (arch.qk_head_dim + arch.value_head_dim)


def kv_cache_note(arch: Architecture) -> str | None:
    """Why a stack has no KV cache per token (None: it has one)."""
    if arch.encoder_only:
        return "encoder-only: no key/value cache (nothing is generated token by token)"
    return None


def kv_bytes_per_token(arch: Architecture, bytes_per_value: int = 2) -> int | None:
    """Bytes of K and V cached per token: 2·L·G·h·bytes (MLA: L·(r_kv + p)·bytes); None encoder-only.

    An encoder-decoder caches its decoder's self-attention here; the cross-attention keys and values
    are per source token."""
    if isinstance(bytes_per_value, bool) or not isinstance(bytes_per_value, int) or bytes_per_value < 1:
        raise InputError("bytes per value", bytes_per_value, "expected a whole number >= 1 (2 for bf16/fp16)")
    if arch.encoder_only:
        return None
    layers = arch.decoder_depth or attention_layer_count(arch)  # a state-space layer keeps a fixed state, no per-token cache
    per_layer = arch.kv_lora_rank + arch.qk_rope_head_dim if arch.latent else 2 * arch.kv_heads * arch.head_dim
    return layers * per_layer * bytes_per_value


def vanilla(depth: int, width: int, heads: int, vocab: int | None = None, tied: bool = True) -> Architecture:
    """The paper's block at (L, d, H): MHA with H·h = d, plain feed-forward 4d: exactly 12·d² per layer.

    When H does not divide d the attention still spans the width (q, k, v, o are d x d, as the
    paper counts); the counts then use one head of size d, which gives the same numbers."""
    if width % heads:
        heads, head_dim = 1, width
    else:
        head_dim = width // heads
    return Architecture(depth, width, heads, heads, head_dim, 4 * width, False, vocab=vocab, tied=tied)


def vanilla_counts(depth, width, context: int = DEFAULT_CONTEXT) -> dict:
    """``vanilla``'s counts over NumPy arrays (object arrays of Python ints: no overflow): the same
    convention as the scalar functions, written out for the paper's block, where H·h = d always.

    params 12·L·d² (active the same), FLOPs 6·12·L·d² + 6·L·T·(2d), KV bytes 2·L·d·2 (bf16)."""
    params = 12 * depth * width * width
    return {"params_nonembedding": params, "params_active": params, "flops_per_token": 6 * params + 12 * depth * context * width,
            "kv_bytes_per_token": 4 * depth * width, "ffn": 4 * width}


def logits_flops_per_token(arch: Architecture) -> int | None:
    """Training FLOPs of the output head's logits per token: 6·V·d (forward 2·V·d, backward twice
    that; Megatron-LM's num_floating_point_operations counts the same "Logit" term). Left out of
    ``flops_per_token`` like the embeddings; None when the vocabulary is unknown."""
    return None if arch.vocab is None else 6 * arch.vocab * arch.width
