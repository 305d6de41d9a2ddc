"""What the phase diagram shows, computed here so that ``output.plot`` only draws it.

For each budget N (the paper's block, 12·L·d² = N): the minimal-depth shape on the threshold
L = log3 d (Levine et al. 2020, Theorems 1-2; ``theory.separation``), the empirical optimum of the
NeurIPS version's fit (``rules.builtin.empirical_optimum``) and the evidence band (``evidence.depth_band``).
For each published model: the empirical optimum at its own size. Bad input raises ``InputError``.
"""
from __future__ import annotations

import math

from ..core.errors import InputError
from ..core.frozen import frozen

DEFAULT_BUDGETS = (1e8, 1e9, 1e10, 1e11, 1e12)
# A readable handful of published architectures (catalogue names), spanning 85M to 540B.
DEFAULT_MODELS = ("bert-base", "gpt2-xl", "gpt3-175b", "llama-7b", "llama-65b", "palm-540b")


@frozen
class PhaseData:
    """The phase diagram's points. ``minimal`` and ``empirical`` map a budget to (width, depth),
    ``bands`` to the band's (low, high) depths; ``model_optima`` is (depth, width) per model."""

    budgets: tuple
    models: tuple
    shapes: tuple
    minimal: dict
    empirical: dict
    bands: dict
    model_optima: tuple


def phase_data(budgets=DEFAULT_BUDGETS, models=DEFAULT_MODELS, shapes=()) -> PhaseData:
    """The points for ``budgets`` (positive, duplicates dropped), catalogue ``models`` (names or
    objects with depth and width) and ``shapes`` (Shapes or text such as "12x768" or a model name)."""
    from ..theory.separation import min_depth, min_depth_exact, width_for
    from .evidence import depth_band
    from .rules.builtin import empirical_optimum

    budgets = tuple(_check_budgets(budgets))
    models = tuple(_resolve_model(m) for m in models)
    shapes = tuple(_resolve_shape(s) for s in shapes)
    return PhaseData(
        budgets=budgets, models=models, shapes=shapes,
        minimal={N: (width_for(N, min_depth_exact(N)), min_depth_exact(N)) for N in budgets},
        empirical={N: empirical_optimum(N)[::-1] for N in budgets},
        bands={N: depth_band(N, min_depth(N)).depth_band for N in budgets},
        model_optima=tuple(empirical_optimum(12 * m.depth * m.width**2) for m in models),
    )


def _resolve_model(model):
    """A catalogue name goes through catalog.lookup; an object with depth and width is used as is."""
    if isinstance(model, str):
        from ..arch.catalog import lookup  # only figures that show models pay for the catalogue

        return lookup(model)
    if not all(hasattr(model, attr) for attr in ("depth", "width")):
        raise InputError("model", model, "expected a catalogue model name such as gpt3-175b")
    return model


def _resolve_shape(shape):
    """A Shape, or text resolved by catalog.resolve_shape ("12x768", "12x768x12", or a model name)."""
    from ..arch.catalog import resolve_shape
    from ..theory.shapes import Shape

    return shape if isinstance(shape, Shape) else resolve_shape(shape)


def _check_budgets(budgets) -> list[float]:
    """Positive finite budgets, duplicates dropped, in the order given."""
    checked: list[float] = []
    for budget in budgets:
        try:
            value = float(budget)
        except (TypeError, ValueError):
            value = math.nan
        if not (math.isfinite(value) and value >= 100):
            raise InputError("budget", budget, "expected a finite parameter count of at least 100")
        if value not in checked:
            checked.append(value)
    return checked
