"""The blocks an export writes (``export.py``): a shape in a format's preset with the user's block
options, a catalogue model's own block, or the plan's recommended shape with all of the plan's
options, each checked against the format (tensor-parallel degree, learned position tables,
vocabulary).
"""
from __future__ import annotations

from dataclasses import replace

from ..arch.blocks import DEFAULT_CONTEXT, Architecture
from ..arch.presets import PRESETS, preset
from ..core.errors import InputError
from .export_formats import BLOCK_OPTIONS, target


def export_architecture(fmt: str, depth: int, width: int, heads: int | None = None, *, arch: str | None = None,
                        tp: int = 1, context: int = DEFAULT_CONTEXT, **options) -> Architecture:
    """The block a format exports at this depth and width: the format's preset (or ``arch``),
    ``heads`` (head_dim = width / heads) when given, then the block options ``plan`` takes
    (``BLOCK_OPTIONS``: kv_heads, head_dim, ffn_mult, gated, experts, top_k, vocab, tied; None =
    the preset's); ``tp``: refused unless the shape shards that many ways. A vocabulary the preset
    leaves open becomes the format's default. ``context``: the rows of a preset's learned position
    table (GPT-2), the context the config is written with."""
    spec = target(fmt)
    family = preset(arch or spec.preset).for_shape(depth, width)  # the family's block at this shape's size
    unknown = set(options) - set(BLOCK_OPTIONS)
    if unknown:
        raise InputError("option", ", ".join(sorted(unknown)), "expected one of " + ", ".join(BLOCK_OPTIONS))
    overrides = {k: v for k, v in options.items() if v is not None}
    shown = f"{depth}x{width}" + ("" if heads is None else f"x{heads}")
    head_dim = overrides.get("head_dim") or family.head_dim
    if heads is not None:
        if not 2 <= heads < width or width % heads:
            raise InputError("shape", shown, f"{heads} heads do not divide the width {width}: head_dim = width / heads "
                                             "must be a whole number (and heads at least 2)")
        if overrides.get("head_dim") not in (None, width // heads):
            raise InputError("--head-dim", overrides["head_dim"], f"the shape {shown} already says {width // heads}")
        overrides["head_dim"] = width // heads
    elif width % head_dim or width == head_dim:
        raise InputError("shape", shown, f"the {family.name} preset's heads have {head_dim} dimensions, which "
                                         f"do not split the width {width} into 2 or more heads; give the heads "
                                         f"(LxDxH with H dividing the width) or a width that is a multiple of {head_dim}")
    block = with_vocab(family.architecture(depth, width, context, **overrides), fmt)
    check_tp(block, tp)
    return block


def check_tp(block: Architecture, tp: int) -> None:
    """Refuse a block that tensor parallelism of degree ``tp`` cannot split (hardware.tp_conflicts)."""
    from ..arch.hardware import tp_conflicts

    if isinstance(tp, bool) or not isinstance(tp, int) or tp < 1:
        raise InputError("--tp", tp, "expected a whole number >= 1")
    problems = tp_conflicts(block, tp) if tp > 1 else []
    if problems:
        raise InputError("--tp", tp, "; ".join(problems))


def model_architecture(name: str, fmt: str, **options) -> Architecture:
    """A catalogue model's own block (``catalog.json``: its KV heads, ffn, vocabulary, tying), with
    ``vocab``/``tied`` overrides; InputError for a name the catalogue does not know."""
    from ..arch.catalog import find

    model = find(name)
    if model is None:
        raise InputError("model", name, "not in the catalogue; see `depthwidth models` for the list, or give LxDxH")
    block = model.architecture
    unknown = {k for k, v in options.items() if v is not None} - {"vocab", "tied"}
    if unknown:
        raise InputError("option", ", ".join(sorted(unknown)), f"{model.name} exports its own block; only --vocab and "
                                                              "--tied apply (give LxDxH --arch ... to change the block)")
    if options.get("vocab") is not None:
        block = replace(block, vocab=options["vocab"])
    if options.get("tied") is not None:
        block = replace(block, tied=bool(options["tied"]))
    return with_vocab(replace(block, family=model.name), fmt)


def plan_architecture(budget: int, fmt: str, options) -> Architecture:
    """The recommended shape of ``plan(budget, options)`` built with the plan's own block options
    (``planner.PlanOptions``), so the exported counts equal the plan's."""
    from ..advice.planner import plan

    result = plan(budget, options)
    block = options.at_budget(budget).spending.architecture(result.recommended.depth, result.recommended.width)
    return with_vocab(block, fmt)


def learned_positions(block: Architecture, context: int) -> int:
    """Rows of the learned position table a GPT-2 config gets: a catalogue model's own (GPT-2's
    1024), else the context the file is written with: a plain block's (nanoGPT, Megatron-LM) and
    the gpt2 preset's, whose table is context rows by definition (``presets.Preset.position_rows``;
    plan, sweep and export build it at the same --context, so this is the block's own table)."""
    family = PRESETS.get(block.family)
    if not block.position_params or (family is not None and family.learned_positions):
        return context
    return block.position_params // block.width


def learns_positions(block: Architecture, fmt: str) -> bool:
    """Whether the written model has a learned position table (wpe): GPT-2 and nanoGPT always,
    Megatron-LM for a plain block (learned_absolute; gated blocks get rope); LitGPT and the
    LLaMA-style families use rotary positions."""
    return fmt in ("hf-gpt2", "nanogpt") or (fmt == "megatron" and not block.gated)


def with_vocab(block: Architecture, fmt: str) -> Architecture:
    """The block with the format's default vocabulary when it has none (a config needs one)."""
    return block if block.vocab is not None else replace(block, vocab=target(fmt).default_vocab)
