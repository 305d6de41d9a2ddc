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

from dataclasses import dataclass, replace

from ..errors import InputError, not_one_of

DEFAULT_CONTEXT = 2048  # T of flops_per_token: GPT-3's and PaLM's training context


@dataclass(frozen=True)
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


# ---- presets -----------------------------------------------------------------------------------

def round_up(value: int, multiple: int) -> int:
    """The smallest multiple of ``multiple`` that is >= value."""
    return -(-value // multiple) * multiple


def ffn_size(width: int, gated: bool, ffn_mult: float = 1.0, multiple: int = 1) -> int:
    """LLaMA's feed-forward rule (meta-llama/llama3, llama/model.py, FeedForward):
    int(2·(4d)/3) for a gated block (the plain 4d at equal parameters), or 4d plain; times
    ``ffn_mult`` (LLaMA's ffn_dim_multiplier), truncated, then rounded up to ``multiple``
    (LLaMA's multiple_of)."""
    base = 2 * (4 * width) // 3 if gated else 4 * width
    scaled = base if ffn_mult == 1 else int(ffn_mult * base)
    return round_up(max(scaled, 1), multiple)


@dataclass(frozen=True)
class Size:
    """A preset's fields below a budget of ``below`` parameters (in the budget's own count), from ``source``."""
    below: float
    head_dim: int
    kv_heads: int | None
    ffn_mult: float
    ffn_multiple: int
    tied: bool
    source: str


@dataclass(frozen=True)
class Preset:
    """A block family with sourced defaults; ``architecture(depth, width)`` builds one shape of it.

    ``head_dim`` is the width per query head (heads = width // head_dim); ``ffn_mult`` and
    ``ffn_multiple`` feed ``ffn_size``; ``kv_heads`` None means MHA; ``expert_ratio`` (a, b) sets
    the expert size a·d/b rounded up to ``ffn_multiple`` (None: the dense size)."""

    name: str
    head_dim: int
    gated: bool
    ffn_mult: float
    ffn_multiple: int
    kv_heads: int | None
    vocab: int | None
    tied: bool
    source: str
    experts: int | None = None
    top_k: int | None = None
    expert_ratio: tuple[int, int] | None = None
    shared_experts: int = 0
    dense_layers: int = 0
    mla: tuple[tuple[str, int], ...] = ()  # latent attention: (q_lora_rank, ...), (kv_lora_rank, ...), head sizes
    learned_positions: bool = False  # a learned position table of context x width rows (GPT-2's wpe); else rotary/none
    sizes: tuple[Size, ...] = ()  # smaller published members of the family, smallest first (``at_size``)

    def size_index(self, budget: float | None) -> int | None:
        """Which of ``sizes`` a budget falls in (None: the preset's own fields)."""
        return None if budget is None else next((i for i, s in enumerate(self.sizes) if budget < s.below), None)

    def for_shape(self, depth: int, width: int) -> "Preset":
        """The size of a shape: the first of ``sizes`` whose block there counts under its bound (else itself)."""
        for i, size in enumerate(self.sizes):
            try:
                if params_nonembedding((sized := self.at_size(i)).architecture(depth, width)) < size.below:
                    return sized
            except InputError:
                continue
        return self

    def at_size(self, index: int | None) -> "Preset":
        """This preset with the fields of ``sizes[index]`` (None: itself): the block a family publishes at that size."""
        if index is None or not self.sizes:
            return self
        s = self.sizes[index]
        return replace(self, head_dim=s.head_dim, kv_heads=s.kv_heads, ffn_mult=s.ffn_mult, ffn_multiple=s.ffn_multiple,
                       tied=s.tied, source=s.source, sizes=())

    def architecture(self, depth: int, width: int, context: int | None = None, **overrides) -> Architecture:
        """This block at ``depth`` x ``width``; overrides: kv_heads, head_dim, ffn_mult, gated,
        experts (0 = dense), top_k, vocab, tied. Raises InputError for impossible combinations.

        ``context``: the training context, the rows of a learned position table (``position_params``
        = context·width, counted in params_embedding); None: DEFAULT_CONTEXT (``position_rows``
        tells the rows). Ignored by presets without a learned table."""
        unknown = set(overrides) - OVERRIDES
        if unknown:
            raise InputError("override", ", ".join(sorted(unknown)), "expected one of " + ", ".join(sorted(OVERRIDES)))
        get = lambda key, default: default if overrides.get(key) is None else overrides[key]
        head_dim = _whole("--head-dim", get("head_dim", self.head_dim))
        depth, width = _whole("depth", depth), _whole("width", width)
        if width % head_dim or width == head_dim:
            raise InputError("width", width, f"heads = width / head_dim must be a whole number >= 2 with head_dim {head_dim}; "
                             f"choose a width that is a multiple of {head_dim} (such as {round_up(width + 1, head_dim)}) or change --head-dim")
        heads = width // head_dim
        if self.mla:
            kv_heads = heads  # latent attention: every head reads the shared latent
            if overrides.get("kv_heads") is not None:
                raise InputError("--kv-heads", overrides["kv_heads"], f"the {self.name} preset uses latent attention (MLA): "
                                 "keys and values come from one latent per token, there are no key/value heads to set")
        else:
            # the preset's KV heads, or the largest divisor of the head count below it: groups must divide H
            default_kv = max(g for g in range(1, min(self.kv_heads, heads) + 1) if heads % g == 0) if self.kv_heads else heads
            kv_heads = _whole("--kv-heads", get("kv_heads", default_kv))
            if kv_heads > heads or heads % kv_heads:
                divisors = [g for g in range(1, heads + 1) if heads % g == 0]
                raise InputError("--kv-heads", kv_heads, f"key/value heads must divide the {heads} query heads "
                                 f"(width {width} / head_dim {head_dim}); choose one of {_listing(divisors)}")
        ffn_mult = get("ffn_mult", self.ffn_mult)
        if isinstance(ffn_mult, bool) or not isinstance(ffn_mult, (int, float)) or not 0 < ffn_mult <= 1000:
            raise InputError("--ffn-mult", ffn_mult, "expected a number above 0 (1.3 is LLaMA-3's ffn_dim_multiplier)")
        gated = bool(get("gated", self.gated))
        ffn = ffn_size(width, gated, ffn_mult, self.ffn_multiple)
        experts = get("experts", self.experts)
        experts = None if experts in (0, None) else _whole("--experts", experts)
        top_k = overrides.get("top_k")
        if experts is None:
            if top_k is not None:
                raise InputError("--top-k", top_k, f"the {self.name} block has no experts; add --experts E (E >= 2) to route tokens")
            moe = {}
        else:
            if experts < 2:
                raise InputError("--experts", experts, "a mixture needs at least 2 experts (0 means a dense feed-forward)")
            top_k = _whole("--top-k", top_k if top_k is not None else min(self.top_k or 2, experts))
            if top_k > experts:
                raise InputError("--top-k", top_k, f"a token cannot use more than the {experts} experts; choose 1 to {experts}")
            expert_ffn = round_up(self.expert_ratio[0] * width // self.expert_ratio[1], self.ffn_multiple) if self.expert_ratio else ffn
            moe = dict(experts=experts, top_k=top_k, expert_ffn=expert_ffn, shared_experts=self.shared_experts,
                       shared_expert_ffn=expert_ffn if self.shared_experts else None,
                       dense_layers=min(self.dense_layers, depth - 1))
        vocab = get("vocab", self.vocab)
        vocab = None if vocab is None else _whole("--vocab", vocab)
        positions = self.position_rows(context) * width if self.learned_positions else 0
        return Architecture(depth, width, heads, kv_heads, head_dim, ffn, gated, vocab=vocab,
                            tied=bool(get("tied", self.tied)), family=self.name, position_params=positions,
                            **moe, **dict(self.mla))

    def position_rows(self, context: int | None = None) -> int:
        """Rows of this block's learned position table at ``context`` (None: DEFAULT_CONTEXT); 0 without one."""
        if not self.learned_positions:
            return 0
        return DEFAULT_CONTEXT if context is None else _whole("--context", context)


OVERRIDES = frozenset({"kv_heads", "head_dim", "ffn_mult", "gated", "experts", "top_k", "vocab", "tied"})


def _whole(what: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InputError(what, value, "expected a whole number >= 1")
    return value


def _listing(values: list[int], limit: int = 12) -> str:
    shown = ", ".join(map(str, values[:limit]))
    return shown + (", ..." if len(values) > limit else "")


PRESETS: dict[str, Preset] = {p.name: p for p in (
    Preset("vanilla", head_dim=64, gated=False, ffn_mult=1.0, ffn_multiple=1, kv_heads=None, vocab=None, tied=True,
           source="Levine et al. 2020 / Vaswani et al. 2017: MHA, head size 64, plain feed-forward 4d; 12·d² per layer"),
    # learned_positions: transformers' GPT2Model builds wpe = nn.Embedding(max_position_embeddings, embed_dim)
    # (models/gpt2/modeling_gpt2.py), a table of n_positions x n_embd; export writes n_positions = the context
    Preset("gpt2", head_dim=64, gated=False, ffn_mult=1.0, ffn_multiple=1, kv_heads=None, vocab=50257, tied=True,
           learned_positions=True,
           source="GPT-2 (Radford et al. 2019); transformers GPT2Config defaults: n_inner None = 4·n_embd, "
                  "vocab_size 50257, tie_word_embeddings true, 12 heads of 64 at n_embd 768; a learned position "
                  "table (wpe) of n_positions = the context x n_embd, in params_embedding"),
    # Llama by size: below 2e9 parameters Llama 3.2 1B's block, below 5e9 Llama 3.2 3B's, above Llama 3 8B/70B's
    Preset("llama", head_dim=128, gated=True, ffn_mult=1.3, ffn_multiple=1024, kv_heads=8, vocab=128256, tied=False,
           source="Llama 3 8B params.json (as copied in meta-llama/llama-models sku_list.py): dim 4096, 32 heads of 128, "
                  "n_kv_heads 8, ffn_dim_multiplier 1.3, multiple_of 1024 -> ffn 14336 (3.5·d; 70B: 28672), vocab 128256, untied",
           sizes=(Size(2e9, head_dim=64, kv_heads=8, ffn_mult=1.5, ffn_multiple=256, tied=True,
                       source="Llama 3.2 1B config.json (as copied in kevinstephano/thunder_model_blocks hf_llama/llama_config.py; "
                              "params.json ffn_dim_multiplier 1.5, multiple_of 256): width 2048, 32 heads of 64, 8 KV heads, "
                              "ffn 8192 (4·d), vocab 128256, tie_word_embeddings true"),
                  Size(5e9, head_dim=128, kv_heads=8, ffn_mult=1.0, ffn_multiple=256, tied=True,
                       source="Llama 3.2 3B (as copied in silvaxxx1/MyLLM_101 models/LLAMA/Llama3.2/Llama_configs.py): width "
                              "3072, 24 heads of 128, 8 KV heads, ffn 8192 (8/3·d), vocab 128256; tied: second-hand"))),
    Preset("mistral", head_dim=128, gated=True, ffn_mult=1.3125, ffn_multiple=256, kv_heads=8, vocab=32000, tied=False,
           source="Mistral-7B (transformers MistralConfig defaults): hidden 4096, intermediate 14336 (3.5·d), "
                  "32 heads of 128, 8 KV heads, vocab 32000, tie_word_embeddings false"),
    Preset("qwen2", head_dim=128, gated=True, ffn_mult=1.982, ffn_multiple=256, kv_heads=4, vocab=152064, tied=False,
           source="Qwen2-7B config.json: hidden 3584, intermediate 18944, 28 heads of 128, 4 KV heads, "
                  "vocab 152064, tie_word_embeddings false (ffn_mult fitted so width 3584 gives 18944)",
           sizes=(Size(1e9, head_dim=64, kv_heads=2, ffn_mult=2.036, ffn_multiple=256, tied=True,
                       source="Qwen2.5-0.5B config.json (as copied in rwth-i6/i6_experiments .../qwen2/qwen2_configs.py): "
                              "hidden 896, 14 heads of 64, 2 KV heads, intermediate 4864 (ffn_mult fitted), tied"),
                  Size(2e9, head_dim=128, kv_heads=2, ffn_mult=2.1875, ffn_multiple=256, tied=True,
                       source="Qwen2.5-1.5B model card (as copied in ZHUI/paddlenlp_model_readme Qwen/Qwen2.5-Coder-1.5B): "
                              "12 heads, 2 KV heads, tied; hidden 1536, intermediate 8960 second-hand (ffn_mult fitted)"))),
    Preset("gemma", head_dim=256, gated=True, ffn_mult=3.0, ffn_multiple=256, kv_heads=None, vocab=256000, tied=True,
           source="Gemma-7B (transformers GemmaConfig defaults): hidden 3072, intermediate 24576 (8·d, GeGLU), "
                  "16 heads of 256, MHA, vocab 256000, tie_word_embeddings true"),
    Preset("mixtral", head_dim=128, gated=True, ffn_mult=1.3125, ffn_multiple=256, kv_heads=8, vocab=32000, tied=False,
           experts=8, top_k=2,
           source="Mixtral-8x7B (transformers MixtralConfig defaults): Mistral-7B's block with num_local_experts 8, "
                  "num_experts_per_tok 2, experts of 14336, 8 KV heads, vocab 32000, untied"),
    Preset("deepseek", head_dim=56, gated=True, ffn_mult=0.9643, ffn_multiple=256, kv_heads=None, vocab=129280, tied=False,
           experts=256, top_k=8, expert_ratio=(2, 7), shared_experts=1, dense_layers=3,
           mla=(("q_lora_rank", 1536), ("kv_lora_rank", 512), ("qk_nope_head_dim", 128), ("qk_rope_head_dim", 64), ("v_head_dim", 128)),
           source="DeepSeek-V3 (transformers DeepseekV3Config defaults): hidden 7168 with 128 heads (56 per head), "
                  "q_lora_rank 1536, kv_lora_rank 512, qk_nope 128, qk_rope 64, v 128, intermediate 18432, "
                  "256 routed experts of 2048 (2/7·d), 1 shared, top-8, first_k_dense_replace 3, vocab 129280, untied"),
)}


def preset(name: str) -> Preset:
    """The preset called ``name`` (case-insensitive)."""
    found = PRESETS.get(name.strip().lower()) if isinstance(name, str) else None
    if found is None:
        raise not_one_of("--arch", name, PRESETS)
    return found


def logits_flops_per_token(arch: Architecture) -> int | None:
    """Training FLOPs of the output head's logits per token: 6·V·d (forward 2·V·d, backward twice
    that; Megatron-LM's num_floating_point_operations counts the same "Logit" term). Left out of
    ``flops_per_token`` like the embeddings; None when the vocabulary is unknown."""
    return None if arch.vocab is None else 6 * arch.vocab * arch.width
