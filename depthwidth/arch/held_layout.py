"""A block with its attention layout held fixed across a sweep (``LayoutSpending``, a ``spending.Spending``): a
fixed number of key/value heads, or a fixed ratio of query heads per key/value head (by default
the preset's own, from its reference models), its exact count as a quadratic in the width, and the
width unit every row's width is a multiple of. `sweep` (loop/sweep.py) holds the layout; this
module only describes it.
"""
from __future__ import annotations

import math
from functools import lru_cache

from ..core.errors import InputError
from .hardware import Constraints
from ..core.frozen import frozen
from .spending import Quadratic, Spending, _through


@frozen
class LayoutSpending(Spending):
    """A Spending whose key/value heads follow a fixed layout: ``kv_fixed`` heads at every width,
    or ``kv_ratio`` query heads per key/value head (kv_heads = heads / kv_ratio). A sweep holds one
    (``loop.sweep``), and a plan with a rule file holds the layout the rule was fitted on."""

    kv_fixed: int | None = None
    kv_ratio: int | None = None

    def architecture(self, depth: int, width: int):
        block = self.block
        overrides = dict(self.overrides)
        if not block.mla and (self.kv_fixed or self.kv_ratio):
            head_dim = overrides.get("head_dim") or block.head_dim
            heads = width // head_dim
            if self.kv_ratio:
                if heads % self.kv_ratio:
                    raise InputError("--kv-ratio", self.kv_ratio, f"{heads} heads are not a multiple of it")
                overrides["kv_heads"] = heads // self.kv_ratio
            else:
                overrides["kv_heads"] = self.kv_fixed
        return block.architecture(depth, width, self.context, **overrides)

    @property
    def heads_unit(self) -> int:
        """Head counts must be multiples of this (the layout's ratio, or the fixed kv heads)."""
        return self.kv_ratio or self.kv_fixed or 1

    @property
    def paper_block(self) -> bool:
        return Spending.paper_block.fget(self) and self.heads_unit == 1


# heads / kv_heads of each preset's reference model (presets.PRESETS sources): Llama 3 8B 32/8 and Llama 2 70B
# 64/8 (meta-llama config.json), Mistral-7B and Mixtral-8x7B 32/8, Qwen2-7B 28/4; GPT-2, Gemma-7B and the
# paper's block are multi-head (1). DeepSeek's latent attention has no key/value heads (None).
PRESET_KV_RATIO = {"vanilla": 1, "gpt2": 1, "gemma": 1, "llama": 4, "mistral": 4, "mixtral": 4, "qwen2": 7, "deepseek": None}


# ... and of the published sizes (presets.Preset.sizes, same sources): Llama 3.2 1B 32/8, 3B 24/8; Qwen2.5-0.5B 14/2, 1.5B 12/2
SIZE_KV_RATIO = {("llama", 0): 4, ("llama", 1): 3, ("qwen2", 0): 7, ("qwen2", 1): 6}


def layout_spending(spending: Spending, kv_heads: int | None = None, kv_ratio: int | None = None) -> LayoutSpending:
    """The sweep's block: ``kv_heads`` fixed, or ``kv_ratio`` fixed, or (neither) a --kv-heads already in
    the overrides, else the preset's ratio (``PRESET_KV_RATIO``)."""
    block = spending.block
    overrides = dict(spending.overrides)
    given = overrides.pop("kv_heads", None)
    if kv_heads is not None and given is not None and kv_heads != given:
        raise InputError("--kv-heads", kv_heads, f"given twice ({given} and {kv_heads})")
    kv_heads = kv_heads if kv_heads is not None else given
    if kv_heads is not None and kv_ratio is not None:
        raise InputError("--kv-ratio", kv_ratio, "give --kv-heads (a fixed count) or --kv-ratio (heads per KV head), not both")
    for name, value in (("--kv-heads", kv_heads), ("--kv-ratio", kv_ratio)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise InputError(name, value, "expected a whole number >= 1")
    if block.mla:
        if kv_heads is not None or kv_ratio is not None:
            raise InputError("--kv-heads" if kv_heads is not None else "--kv-ratio", kv_heads or kv_ratio,
                             f"the {block.name} preset uses latent attention (MLA): there are no key/value heads to set")
        return LayoutSpending(spending.arch, tuple(sorted(overrides.items())), spending.count, spending.context,
                              spending.size)
    if kv_heads is None and kv_ratio is None:
        kv_ratio = SIZE_KV_RATIO.get((block.name, spending.size)) or PRESET_KV_RATIO.get(block.name) or 1
    return LayoutSpending(spending.arch, tuple(sorted(overrides.items())), spending.count, spending.context,
                          spending.size, kv_fixed=kv_heads, kv_ratio=kv_ratio)


def layout_text(spending: LayoutSpending) -> str:
    if spending.kv_fixed:
        return f"{spending.kv_fixed} key/value head{'s' * (spending.kv_fixed != 1)} in every row"
    if spending.kv_ratio and spending.kv_ratio > 1:
        return f"{spending.kv_ratio} query heads per key/value head in every row"
    if spending.kv_ratio == 1:
        return "multi-head attention (kv_heads = heads) in every row"
    return "latent attention in every row"


@lru_cache(maxsize=64)
def layout_quadratic(spending: LayoutSpending) -> Quadratic:
    """The block's count as an exact quadratic in the width (as ``spending.quadratic``), measured at
    widths where every preset's rounding is exact and the layout's head multiple divides the heads."""
    from fractions import Fraction

    from ..arch.spending import quadratic

    if spending.paper_block:
        return quadratic(Spending())
    unit = math.lcm(46080, spending.head_dim * spending.heads_unit)
    widths = (unit, 2 * unit)
    rows = []
    for depth in (64, 128):
        rows.append(_through(widths, [Fraction(spending.params(spending.architecture(depth, w))) for w in widths]))
    slope = tuple((q - p) / 64 for p, q in zip(*rows))
    return Quadratic(slope, tuple(p - 64 * s for p, s in zip(rows[0], slope)))


def width_unit(spending: LayoutSpending, constraints: Constraints) -> int:
    """Widths of a sweep are multiples of this: the width multiple, and head_dim times the head
    multiple the layout and tensor parallelism need."""
    heads_unit = math.lcm(spending.heads_unit, constraints.tp)
    return math.lcm(constraints.multiple or 1, spending.head_dim * heads_unit)
