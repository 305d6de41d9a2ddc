"""The one shape record: a shape's bounds (theory.Bounds) plus its block, counted by blocks.py.

Every command that prints a shape (bounds, compare, models, inspect, plan's candidates) prints
these fields with these names; README, "Output fields", documents each once:

- ``params_12Ld2``: the paper's count 12·L·d² (in theory.Bounds);
- ``params_nonembedding``: the block's weight matrices outside the embeddings (every expert);
- ``params_active``: what one token uses (top-k of the experts);
- ``params_embedding``: V·d, plus V·d for an untied output head and any learned position table
  (null without a vocabulary);
- ``params_with_embeddings``: params_nonembedding + params_embedding (null when the latter is).
"""
from __future__ import annotations


from .blocks import DEFAULT_CONTEXT
from .hardware import tp_sizes
from ..theory.separation import Bounds
from ..core.frozen import frozen

# the parameter counts of a counted block (the embeddings unknown without a vocabulary), as records show them
COUNT_TYPES = {"params_nonembedding": "int", "params_active": "int", "params_embedding": "int | None",
               "params_with_embeddings": "int | None"}
COUNT_FIELDS = tuple(COUNT_TYPES)
# a block's attention and feed-forward layout (blocks.Architecture's fields, in its order)
LAYOUT_FIELDS = ("heads", "kv_heads", "head_dim", "ffn", "gated", "experts", "top_k")
BLOCK_FIELDS = ("kv_heads", "head_dim", "ffn", "gated", "experts", "top_k", *COUNT_FIELDS, "flops_per_token",
                "kv_bytes_per_token", "tp_sizes")


def repeats(source, names, after: str | None, **renamed):
    """A record class's decorator, under its ``@dataclass``: the fields ``names`` of ``source`` (a
    dataclass, or a dict of name -> type), with its types and no defaults, inserted in the given order
    after the field ``after`` (None: before the record's own fields); ``renamed`` maps a field to its
    name in this record. A run of fields that several records show is so spelled once, in its source
    (JSON field order unchanged)."""
    types = source if isinstance(source, dict) else source.__annotations__

    def insert(cls):
        fields = list(cls.__dict__.get("__annotations__", {}).items())
        at = 0 if after is None else [name for name, _ in fields].index(after) + 1
        fields[at:at] = [(renamed.get(name, name), types[name]) for name in names]
        cls.__annotations__ = dict(fields)
        return cls

    return insert


# Bounds' fields first, repeated rather than inherited: for a subclass of a frozen record ``dataclasses``
# compiles a __setattr__ and a __delattr__ at every start (the docstring is the JSON Schema's description)
@frozen
@repeats(Bounds, tuple(Bounds.__annotations__), after=None)
class ShapeRecord:
    """The shape record plus its block (None where meaningless or unknown): ``flops_per_token`` is
    training FLOPs at the context T (2048 unless the command takes --context); ``kv_bytes_per_token``
    the K and V cache in 16-bit values; ``tp_sizes`` the valid tensor-parallel degrees (hardware.tp_sizes)."""

    kv_heads: int | None
    head_dim: int | None
    ffn: int | None
    gated: bool | None
    experts: int | None
    top_k: int | None
    params_nonembedding: int | None
    params_active: int | None
    params_embedding: int | None
    params_with_embeddings: int | None
    flops_per_token: int | None
    kv_bytes_per_token: int | None
    tp_sizes: tuple[int, ...] | None


def counts(arch) -> dict:
    """The four parameter counts of an architecture, by blocks.py."""
    from . import blocks

    nonembedding, embedding = blocks.params_nonembedding(arch), blocks.params_embedding(arch)
    return dict(params_nonembedding=nonembedding, params_active=blocks.params_active(arch), params_embedding=embedding,
                params_with_embeddings=None if embedding is None else nonembedding + embedding)


def block_fields(arch, heads: int | None = None, context: int = DEFAULT_CONTEXT, **known) -> tuple[dict, tuple[str, ...]]:
    """The ShapeRecord block fields of ``arch`` (a blocks.Architecture, or None: not countable), and notes.

    ``heads``: the shape's own head count when it differs from the block's (heads not dividing
    the width: the attention is counted as d x d, and no head size or tensor-parallel degree is
    given). ``known`` gives what is known without counts (a config whose layout is not countable)."""
    from . import blocks

    if arch is None:
        return {name: known.get(name) for name in BLOCK_FIELDS}, ()
    heads = arch.heads if heads is None else heads
    notes = []
    whole_heads = arch.heads == heads
    if not whole_heads:
        notes.append(fractional_heads_note(arch.width, heads))
    kv_note = blocks.kv_cache_note(arch)
    if kv_note:
        notes.append(f"kv_bytes_per_token is null: {kv_note}")
    fields = dict(
        kv_heads=arch.kv_heads if whole_heads else heads, head_dim=arch.head_dim if whole_heads else None,
        ffn=arch.ffn, gated=arch.gated, experts=arch.experts, top_k=arch.top_k, **counts(arch),
        flops_per_token=blocks.flops_per_token(arch, context), kv_bytes_per_token=blocks.kv_bytes_per_token(arch),
        tp_sizes=tuple(tp_sizes(arch)) if whole_heads else None,
    )
    fields.update({k: v for k, v in known.items() if v is not None and fields.get(k) is None})
    return fields, tuple(notes)


def fractional_heads_note(width: int, heads: int) -> str:
    """The note of a shape whose heads do not divide its width."""
    return (f"width {width} is not a multiple of {heads} heads: the head size is not whole; "
            "attention counted as the paper does (q, k, v, o of d x d), no tensor-parallel degrees")


def shape_record(record: Bounds, arch=None, context: int = DEFAULT_CONTEXT) -> ShapeRecord:
    """A theory.Bounds with the block of ``arch`` (default: the paper's vanilla block at its H)."""
    from .blocks import vanilla

    arch = vanilla(record.depth, record.width, record.heads) if arch is None else arch
    fields, notes = block_fields(arch, record.heads, context)
    return ShapeRecord(**{**record.__dict__, "notes": record.notes + notes}, **fields)
