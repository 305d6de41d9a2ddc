"""Real models against the theory: a catalogue row or a Hugging Face config, as a shape record
plus how the model compares with the plan for its own size."""
from __future__ import annotations

from dataclasses import dataclass

from .planner import empirical_optimum, min_depth
from .theory import Bounds, bounds


@dataclass(frozen=True)
class ModelReport(Bounds):
    """The models record: the shape record of a published architecture plus its catalogue data."""

    name: str
    display_name: str
    family: str
    year: int
    kv_heads: int | None
    ffn: int | None
    vocab: int | None
    published_params: float | None
    aspect_ratio: float
    min_depth: int
    empirical_depth: float
    empirical_width: float
    source: str


@dataclass(frozen=True)
class ConfigReport(Bounds):
    """The inspect record: the shape record of a config.json plus its real structure."""

    source: str
    model_type: str | None
    kv_heads: int
    head_dim: int
    ffn: int
    gated_ffn: bool
    vocab: int | None
    params_real: int
    min_depth: int
    empirical_depth: float
    empirical_width: float
    vocab_bottleneck: bool


def size_notes(depth: int, width: int, size: int, vocab: int | None) -> tuple[tuple[str, ...], int, float, float]:
    """How a model's depth compares with the plan for its size, and the vocabulary note."""
    lowest = min_depth(max(size, 1))
    emp_depth, emp_width = empirical_optimum(size)
    side = "respects" if depth >= lowest else "is below"
    notes = [f"depth {depth} {side} the minimal depth {lowest} for its size (threshold rule, Levine et al. 2020)",
             f"empirical optimum for its size: depth {emp_depth:.1f}, width {emp_width:,.0f}; this model is "
             f"{'deeper' if depth > emp_depth else 'shallower'} by {abs(depth / emp_depth - 1):.0%} (fit, not theory)"]
    if vocab is not None and width > vocab:
        notes.append(f"width {width} exceeds the vocabulary size {vocab}: the embedding rank caps what extra width adds "
                     "(vocabulary bottleneck, Wies et al. 2021)")
    return tuple(notes), lowest, emp_depth, emp_width


def model_report(model) -> ModelReport:
    """A catalogue Model with its regime, bounds and plan comparison (size by 12·L·d²)."""
    record = bounds(model.depth, model.width, model.heads)
    notes, lowest, emp_depth, emp_width = size_notes(model.depth, model.width, record.params, model.vocab)
    return ModelReport(**{**record.__dict__, "notes": record.notes + notes}, name=model.name, display_name=model.display_name,
                       family=model.family, year=model.year, kv_heads=model.kv_heads, ffn=model.ffn, vocab=model.vocab,
                       published_params=model.params, aspect_ratio=model.width / model.depth, min_depth=lowest,
                       empirical_depth=emp_depth, empirical_width=emp_width, source=model.source)


def config_report(config) -> ConfigReport:
    """A hfconfig.ConfigModel with its regime, bounds and plan comparison (size by its real count)."""
    shape = config.shape
    record = bounds(shape.depth, shape.width, shape.heads)
    notes, lowest, emp_depth, emp_width = size_notes(config.depth, config.width, config.params_real, config.vocab)
    return ConfigReport(**{**record.__dict__, "notes": record.notes + config.notes + notes}, source=config.source,
                        model_type=config.model_type, kv_heads=config.kv_heads, head_dim=config.head_dim, ffn=config.ffn,
                        gated_ffn=config.gated_ffn, vocab=config.vocab, params_real=config.params_real, min_depth=lowest,
                        empirical_depth=emp_depth, empirical_width=emp_width,
                        vocab_bottleneck=config.vocab is not None and config.width > config.vocab)
