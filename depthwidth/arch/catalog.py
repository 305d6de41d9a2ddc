"""Published Transformer architectures; the data lives in catalog.json beside this module.

Each row cites its paper or model card in ``source``. Depth, width and heads follow the
reference card's list exactly (GPT-3 13B keeps the width 5140 printed in GPT-3 Table 2.1).
Each row also describes its block (key/value heads, head size, feed-forward, gating, decoder
layers, tied embeddings), so ``Model.architecture`` counts it with ``blocks``.
"""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from ..core.errors import InputError
from ..theory.shapes import Shape, make_shape, parse_shape, shape_like
from ..core.frozen import frozen

CATALOG_PATH = Path(__file__).with_name("catalog.json")
SORT_KEYS = ("name", "params", "depth", "width", "year", "aspect")
LIST_HINT = "see `depthwidth models` for the list"


@frozen
class Model:
    """One published architecture, as its authors describe it.

    ``depth`` counts the layers of the (encoder) stack; ``kv_heads`` is None unless keys and
    values have fewer heads (grouped or multi-query attention); ``head_dim`` is None when it
    equals width / heads; ``params`` is the published total, embeddings included.
    ``positions``/``token_types``/``relative_buckets`` give the position tables, from each family's
    released config (GPT-2 ``n_positions``, BERT ``max_position_embeddings`` and ``type_vocab_size``,
    T5 ``relative_attention_num_buckets``); they count in ``params_embedding``, as transformers builds them.
    ``decoder_depth`` counts an encoder-decoder's decoder layers (T5); ``encoder_only`` marks a
    bidirectional encoder (no KV cache); ``tied`` is None where the papers do not say whether the
    output head shares the embedding (then no embedding count is given).
    """

    name: str
    display_name: str
    family: str
    year: int
    depth: int
    width: int
    heads: int
    kv_heads: int | None
    head_dim: int | None
    ffn: int | None
    gated_ffn: bool
    decoder_depth: int
    encoder_only: bool
    vocab: int | None
    tied: bool | None
    params: float | None
    source: str
    aliases: tuple[str, ...] = ()
    positions: int = 0  # rows of a learned position table (GPT-2 1024, OPT 2048 + its offset 2); rotary: 0
    token_types: int = 0  # rows of BERT-style token-type embeddings
    relative_buckets: int = 0  # T5: relative-position bias buckets, one table of buckets x heads per stack

    @property
    def shape(self) -> Shape:
        """The (depth, width, heads) the theory works with."""
        return make_shape(self.depth, self.width, self.heads, self.name)

    @property
    def architecture(self):
        """The row's block as a ``blocks.Architecture`` (feed-forward 4·width when not given).

        When the heads do not divide the width and no head size is given (GPT-3 XL: 2048 / 24) the
        attention spans the width, counted as one head of size d (the same q, k, v, o of d x d)."""
        from .blocks import Architecture

        heads, kv_heads = self.heads, self.kv_heads or self.heads
        if self.head_dim is None and self.width % self.heads:
            heads = kv_heads = 1
        return Architecture(
            self.depth, self.width, heads, kv_heads, self.head_dim or self.width // heads,
            self.ffn or 4 * self.width, self.gated_ffn, decoder_depth=self.decoder_depth, encoder_only=self.encoder_only,
            vocab=self.vocab if self.tied is not None else None, tied=bool(self.tied), family=self.family,
            position_params=self.positions * self.width + (2 if self.decoder_depth else 1) * self.relative_buckets * self.heads,
            other_embedding_params=self.token_types * self.width,
        )

    @property
    def aspect(self) -> float:
        """Aspect ratio width / depth (Kaplan et al. 2020 call it d_model / n_layer)."""
        return self.width / self.depth


def _model(row: dict) -> Model:
    """One catalog.json row -> Model (lists become tuples, params a float)."""
    fields = dict(row)
    fields["aliases"] = tuple(fields.get("aliases") or ())
    if fields.get("params") is not None:
        fields["params"] = float(fields["params"])
    return Model(**fields)


@lru_cache(maxsize=None)
def load_models() -> tuple[Model, ...]:
    """Every catalogue row, in file order (read once per process)."""
    with open(CATALOG_PATH, encoding="utf-8") as file:
        return tuple(_model(row) for row in json.load(file))


def _normalize(name: str) -> str:
    """Lower case, with runs of spaces and underscores read as one hyphen: 'GPT3 175B' -> 'gpt3-175b'."""
    return "-".join(name.lower().replace("_", " ").split())


@lru_cache(maxsize=None)
def _index() -> dict[str, Model]:
    """Names and aliases (normalized) -> Model."""
    return {_normalize(key): model for model in load_models() for key in (model.name, *model.aliases)}


def find(name: str) -> Model | None:
    """The catalogue model called ``name`` (or an alias, case-insensitive), or None: no error."""
    return _index().get(_normalize(name)) if isinstance(name, str) else None


def _suggestions(key: str, limit: int = 3) -> list[str]:
    """Model names close to ``key`` (difflib), then names it is a prefix of; at most ``limit``."""
    import difflib  # only a miss pays for it

    index = _index()
    close = [index[match].name for match in difflib.get_close_matches(key, index, n=limit, cutoff=0.6)]
    prefixed = [model.name for model in load_models() if key and model.name.startswith(key)]
    return list(dict.fromkeys(close + prefixed))[:limit]


MAX_NAME_CHARS = 200  # far above every name and alias: a longer word is no model, and gets no suggestions


def lookup(name: str) -> Model:
    """The catalogue model called ``name`` or one of its aliases (case-insensitive).

    A word longer than ``MAX_NAME_CHARS`` is refused at once: "did you mean" (difflib) over a
    30 MB line would cost gigabytes."""
    if isinstance(name, str) and len(name) > MAX_NAME_CHARS:
        raise InputError("model name", name, f"not a shape or a known model; {LIST_HINT}")
    key = _normalize(name) if isinstance(name, str) else ""
    model = _index().get(key)
    if model is not None:
        return model
    names = _suggestions(key)
    if not names:
        raise InputError("model name", name, f"not a shape or a known model; {LIST_HINT}")
    quoted = [f"'{n}'" for n in names]
    choices = quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]
    raise InputError("model name", name, f"not a shape or a known model; did you mean {choices}? (see `depthwidth models`)")


def _matches(model: Model, pattern: str) -> bool:
    """Case-insensitive glob (if ``pattern`` has * ? or [) or substring, on name or family."""
    pattern = pattern.lower()
    haystacks = (model.name, model.family.lower())
    if any(char in pattern for char in "*?["):
        from fnmatch import fnmatchcase

        return any(fnmatchcase(text, pattern) for text in haystacks)
    return any(pattern in text for text in haystacks)


def filter_models(
    models: tuple[Model, ...] | list[Model],
    pattern: str | None = None,
    min_params: float | None = None,
    max_params: float | None = None,
) -> tuple[Model, ...]:
    """Models whose name or family matches ``pattern`` and whose params lie in [min, max].

    A bound excludes models with unknown params; None means no constraint.
    """
    if min_params is not None and max_params is not None and min_params > max_params:
        raise InputError("parameter range", f"{min_params:g}..{max_params:g}", "the minimum must not exceed the maximum")

    def within(params: float | None) -> bool:
        if min_params is None and max_params is None:
            return True
        return params is not None and (min_params is None or params >= min_params) and (max_params is None or params <= max_params)

    return tuple(m for m in models if (pattern is None or _matches(m, pattern)) and within(m.params))


def sort_models(models: tuple[Model, ...] | list[Model], key: str, descending: bool = False) -> tuple[Model, ...]:
    """Models ordered by ``key`` (one of SORT_KEYS; ties by name); unknown values go last."""
    field = key.strip().lower() if isinstance(key, str) else key
    if field not in SORT_KEYS:
        raise InputError("sort key", key, "expected one of " + ", ".join(SORT_KEYS))
    by_name = sorted(models, key=lambda m: m.name)
    known = [m for m in by_name if getattr(m, field) is not None]
    unknown = [m for m in by_name if getattr(m, field) is None]
    return tuple(sorted(known, key=lambda m: getattr(m, field), reverse=descending)) + tuple(unknown)


def resolve_shape(text: str, heads: int | None = None) -> Shape:
    """A shape string, or else the name of a catalogue model (case-insensitive). Here, not in
    shapes.py, so that shapes never imports the catalogue."""
    stripped = text.strip() if isinstance(text, str) else ""
    if stripped and not shape_like(stripped):
        model = lookup(stripped)
        return make_shape(model.depth, model.width, heads if heads is not None else model.heads, text)
    return parse_shape(text, heads)
