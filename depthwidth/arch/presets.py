"""Block presets: named families (vanilla, gpt2, llama, ...) whose shape at a width is an
``blocks.Architecture`` (head size, KV grouping, feed-forward size, vocabulary, tied head), with
the published block each size follows (``Preset.sizes``; docs/sweeps.md cites each source).

A preset only builds architectures; ``blocks`` counts them.
"""
from __future__ import annotations

from dataclasses import replace

from ..core.errors import InputError, not_one_of
from .blocks import DEFAULT_CONTEXT, Architecture, params_nonembedding
from ..core.frozen import frozen


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


@frozen
class Size:
    """A preset's fields below a budget of ``below`` parameters (in the budget's own count), from ``source``."""
    below: float
    head_dim: int
    kv_heads: int | None
    ffn_mult: float
    ffn_multiple: int
    tied: bool
    source: str


@frozen
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
