"""Two networks against each other, from the corollary widths of ``solver``: the widths a shallower
network needs to replicate or surpass a deep one (``equivalence``, the equiv record) and the
provable verdict between two shapes, a lower bound above the other's upper bound (``compare_shapes``,
the compare record). Levine et al. 2020, Theorems 1-2 and Corollaries 1-2.
"""
from __future__ import annotations

import math

from .shapes import Shape, params
from .separation import CONSISTENT, THRESHOLD, Bounds, bounds, check_reading, compare_pow3, regime
from .solver import Width, corollary2_applies, corollary2_beta1, replicate_width, surpass_width
from ..core.frozen import frozen


@frozen
class Equivalence:
    """The equiv record: widths a network of ``shallow_depth`` layers needs against the deep one."""

    deep: str
    shallow_depth: int
    shallow_heads: int
    replicate_width: int | None
    replicate_log10_width: float | None
    replicate_params: int | None
    replicate_log10_params: float | None
    replicate_basis: str | None
    surpass_width: int | None
    surpass_log10_width: float | None
    surpass_params: int | None
    surpass_log10_params: float | None
    surpass_basis: str | None
    beta1: float | None
    c2_reading: str
    notes: tuple[str, ...]
    deep_tp_sizes: tuple[int, ...] | None = None  # the deep network's block, filled by the CLI (hardware.tp_sizes)


def _log10_params(depth: int, width: Width) -> float | None:
    """log10 of 12·L·x² for a solved width x."""
    return None if width.log10_width is None else math.log10(12 * depth) + 2 * width.log10_width


def _exact_params(depth: int, width: Width) -> int | None:
    """12·L·x² when the width is an exact integer."""
    return None if width.width is None else params(depth, width.width)


def _beta1(deep: Shape) -> tuple[float | None, tuple[str, ...]]:
    """beta1 where Corollary 2 applies; None and a note elsewhere (never a beta1 >= 1 as if it applied)."""
    if corollary2_applies(deep.depth, deep.width):
        return corollary2_beta1(deep.depth, deep.width), ()
    value = corollary2_beta1(deep.depth, deep.width)
    relation = "=" if regime(deep.depth, deep.width) == THRESHOLD else ">"
    return None, (f"beta1 = log3({deep.width})/{deep.depth} = {value:.4f} {relation} 1: Corollary 2 needs L > log3 d "
                  "(beta1 < 1), so it does not apply and beta1 is not given",)


def equivalence(deep: Shape, shallow_depth: int, shallow_heads: int | None = None, reading: str = CONSISTENT) -> Equivalence:
    """Corollaries 1 and 2 at one shallow depth, with the parameter counts the widths imply."""
    heads = deep.heads if shallow_heads is None else shallow_heads
    replicate = replicate_width(deep.depth, deep.width, deep.heads, shallow_depth, heads, reading)
    surpass = surpass_width(deep.depth, deep.width, deep.heads, shallow_depth, heads, reading)
    beta1, beta_notes = _beta1(deep)
    notes = tuple(f"replicate: {n}" for n in replicate.notes) + tuple(f"surpass: {n}" for n in surpass.notes) + beta_notes
    if reading != CONSISTENT:
        notes += (f"c2 read the {reading} way (Theorem 2 upper bound): see docs/theory.md, 'Reading of c2'",)
    return Equivalence(
        deep=str(deep), shallow_depth=shallow_depth, shallow_heads=heads,
        replicate_width=replicate.width, replicate_log10_width=replicate.log10_width,
        replicate_params=_exact_params(shallow_depth, replicate), replicate_log10_params=_log10_params(shallow_depth, replicate),
        replicate_basis=replicate.basis,
        surpass_width=surpass.width, surpass_log10_width=surpass.log10_width,
        surpass_params=_exact_params(shallow_depth, surpass), surpass_log10_params=_log10_params(shallow_depth, surpass),
        surpass_basis=surpass.basis, beta1=beta1, c2_reading=check_reading(reading), notes=notes,
    )


DEEP_WINS = "deep-more-expressive"


SHALLOW_WINS = "shallow-more-expressive"


NO_SEPARATION = "no-provable-separation"


@frozen
class Comparison:
    """The compare object: both shape records, the provable verdict, and the equivalence widths
    (the theory only: ``reports.compare_with_blocks`` adds the empirical context)."""

    deep: Bounds
    shallow: Bounds
    params_ratio: float
    verdict: str
    log3_gap: float | None
    replicate_width: int | None
    replicate_log10_width: float | None
    replicate_basis: str | None
    surpass_width: int | None
    surpass_log10_width: float | None
    surpass_basis: str | None
    deep_respects_threshold: bool
    shallow_respects_threshold: bool
    c2_reading: str
    notes: tuple[str, ...]


def _margin(lower: float | None, upper: float | None) -> float | None:
    """How far one network's lower bound clears the other's upper bound (None when either is missing)."""
    return None if lower is None or upper is None else lower - upper


def compare_shapes(deep: Shape, shallow: Shape, reading: str = CONSISTENT) -> Comparison:
    """Provable separation between two shapes: a lower bound above the other's upper bound.

    ``log3_gap`` is that margin for the verdict given; with no provable separation it is the
    closer (largest, negative) of the two margins, i.e. how far the bounds are from proving one.
    """
    deep_bounds = bounds(deep.depth, deep.width, deep.heads, reading)
    shallow_bounds = bounds(shallow.depth, shallow.width, shallow.heads, reading)
    deep_margin = _margin(deep_bounds.log3_sep_lower, shallow_bounds.log3_sep_upper)
    shallow_margin = _margin(shallow_bounds.log3_sep_lower, deep_bounds.log3_sep_upper)
    if deep_margin is not None and deep_margin > 0:
        verdict, gap = DEEP_WINS, deep_margin
    elif shallow_margin is not None and shallow_margin > 0:
        verdict, gap = SHALLOW_WINS, shallow_margin
    else:
        known = [m for m in (deep_margin, shallow_margin) if m is not None]
        verdict, gap = NO_SEPARATION, max(known) if known else None
    replicate = replicate_width(deep.depth, deep.width, deep.heads, shallow.depth, shallow.heads, reading)
    surpass = surpass_width(deep.depth, deep.width, deep.heads, shallow.depth, shallow.heads, reading)
    notes = []
    if shallow.depth >= deep.depth:
        notes.append("the 'shallow' shape is not shallower than the 'deep' one: the widths below answer the same question at its depth")
    for name, record in (("deep", deep_bounds), ("shallow", shallow_bounds)):
        side = "respects" if compare_pow3(record.depth, record.width) >= 0 else "sits below"
        notes.append(f"{name} {record.depth}x{record.width}: depth {record.depth} {side} the threshold log3({record.width}) = {record.threshold_depth:.3f}")
    notes += [f"replicate: {n}" for n in replicate.notes] + [f"surpass: {n}" for n in surpass.notes]
    if reading != CONSISTENT:
        notes.append(f"c2 read the {reading} way (Theorem 2 upper bound): see docs/theory.md, 'Reading of c2'")
    return Comparison(
        deep=deep_bounds, shallow=shallow_bounds, params_ratio=deep_bounds.params_12Ld2 / shallow_bounds.params_12Ld2,
        verdict=verdict, log3_gap=gap,
        replicate_width=replicate.width, replicate_log10_width=replicate.log10_width, replicate_basis=replicate.basis,
        surpass_width=surpass.width, surpass_log10_width=surpass.log10_width, surpass_basis=surpass.basis,
        deep_respects_threshold=compare_pow3(deep.depth, deep.width) >= 0,
        shallow_respects_threshold=compare_pow3(shallow.depth, shallow.width) >= 0,
        c2_reading=check_reading(reading), notes=tuple(notes),
    )
