"""What the figures show, computed (and their input checked) here so that ``output.plot`` and
``output.plot_bounds`` only draw it.

For each budget N (the paper's block, 12·L·d² = N): the minimal-depth shape on the threshold
L = log3 d (Levine et al. 2020, Theorems 1-2; ``theory.separation``), the empirical optimum of the
NeurIPS version's fit (``rules.builtin.empirical_optimum``) and the evidence band (``evidence.depth_band``).
For each published model: the empirical optimum at its own size. The plane's extent (every point
inside with a margin), the curves drawn on it (``phase_curves``: the threshold, each budget's iso-budget
curve and band, each model's path to its optimum) and, when asked, each rule's curve on it (``rules.builtin.REGISTRY``: a
recommending rule's optimum across budgets, a guard's maximum depth for each width). For the
bounds figure (``bounds_data``): each width's Theorem 1/2 bounds on log3(sep) against depth
(``theory.separation.bounds_grid``). Bad input raises ``InputError``.
"""
from __future__ import annotations

import math
import numbers

from ..core.errors import InputError
from ..core.frozen import frozen

DEFAULT_BUDGETS = (1e8, 1e9, 1e10, 1e11, 1e12)
# A readable handful of published architectures (catalogue names), spanning 85M to 540B.
DEFAULT_MODELS = ("bert-base", "gpt2-xl", "gpt3-175b", "llama-7b", "llama-65b", "palm-540b")


WIDTH_SPAN, DEPTH_SPAN = (10**1.5, 10**5.5), (1.0, 150.0)  # the plane shown at least, widened to fit every point
PLANE_WIDTHS = 600  # widths the threshold and the guards are evaluated at across the plane
RULE_BUDGETS = (1e4, 1e16, 121)  # a recommending rule's optimum at these budgets (geometric: from, to, count)


@frozen
class RuleCurve:
    """One rule's curve on the plane: ``widths`` and ``depths`` (NumPy arrays); a guard's (``guard``) is
    its maximum depth at each width, a recommending rule's its optimum per budget (12·L·d² block)."""

    name: str
    kind: str
    verified: bool
    guard: bool
    widths: object
    depths: object


@frozen
class Curve:
    """A curve on the plane: ``widths`` and ``depths`` (NumPy arrays of the same length)."""

    widths: object
    depths: object


@frozen
class PhaseCurves:
    """The phase diagram's curves across the plane: the ``threshold`` L = log3 d (Theorems 1-2), and for each
    budget N its iso-budget curve 12·L·d² = N (``budgets``), the stretch of it its evidence band covers
    (``bands``) and where its label sits (``labels``: (width, depth), near the plane's bottom); for each model
    the stretch of its own iso-budget curve from it to the empirical optimum at its size (``model_paths``)."""

    threshold: Curve
    budgets: dict
    bands: dict
    labels: dict
    model_paths: tuple


@frozen
class PhaseData:
    """The phase diagram's points. ``minimal`` and ``empirical`` map a budget to (width, depth),
    ``bands`` to the band's (low, high) depths; ``model_optima`` is (depth, width) per model;
    ``plane`` is (width low, width high, depth low, depth high); ``curves`` the curves drawn on it
    (``PhaseCurves``); ``rules`` the rules' curves (or empty)."""

    budgets: tuple
    models: tuple
    shapes: tuple
    minimal: dict
    empirical: dict
    bands: dict
    model_optima: tuple
    plane: tuple = ()
    curves: PhaseCurves | None = None
    rules: tuple = ()


def phase_data(budgets=DEFAULT_BUDGETS, models=DEFAULT_MODELS, shapes=(), rules: bool = False) -> PhaseData:
    """The points for ``budgets`` (positive, duplicates dropped), catalogue ``models`` (names or
    objects with depth and width) and ``shapes`` (Shapes or text such as "12x768" or a model name);
    with ``rules``, each rule's curve across the plane."""
    from ..theory.separation import min_depth, min_depth_exact, width_for
    from .evidence import depth_band
    from .rules.builtin import empirical_optimum

    budgets = tuple(_check_budgets(budgets))
    models = tuple(_resolve_model(m) for m in models)
    shapes = tuple(_resolve_shape(s) for s in shapes)
    minimal = {N: (width_for(N, min_depth_exact(N)), min_depth_exact(N)) for N in budgets}
    empirical = {N: empirical_optimum(N)[::-1] for N in budgets}
    bands = {N: depth_band(N, min_depth(N)).depth_band for N in budgets}
    points = [*minimal.values(), *empirical.values(), *((math.sqrt(N / (12 * L)), L) for N in budgets for L in bands[N]),
              *((m.width, m.depth) for m in models), *((s.width, s.depth) for s in shapes)]
    plane = plane_of(points)
    model_optima = tuple(empirical_optimum(12 * m.depth * m.width**2) for m in models)
    return PhaseData(budgets=budgets, models=models, shapes=shapes, minimal=minimal, empirical=empirical, bands=bands,
                     model_optima=model_optima, plane=plane, curves=phase_curves(plane, bands, models, model_optima),
                     rules=rule_curves(plane_widths(plane)) if rules else ())


BUDGET_POINTS, BAND_POINTS, MODEL_PATH_POINTS = 200, 24, 20  # points along an iso-budget curve, a band's stretch, a model's path
LABEL_HEIGHT = 0.13  # a budget's label sits this far up the plane's depth span (log scale): near the bottom, where it is emptiest


def iso_budget(budget: float, depths) -> Curve:
    """The paper's iso-budget curve 12·L·d² = N at ``depths``: d = sqrt(N/(12·L)) (Levine et al. 2020, §2)."""
    import numpy as np

    depths = np.asarray(depths, dtype=float)
    return Curve(np.sqrt(budget / (12 * depths)), depths)


def phase_curves(plane, bands: dict, models, model_optima) -> PhaseCurves:
    """The curves of the phase diagram on ``plane``: the threshold at ``plane_widths``, each budget's iso-budget
    curve across the plane's depths and its band's stretch (``bands``: budget -> (low, high) depths), each budget's
    label point, and each model's path along its own iso-budget curve to its optimum (``model_optima``: (depth, width))."""
    import numpy as np

    from ..theory.separation import threshold_depth

    widths = plane_widths(plane)
    y_low, y_high = plane[2], plane[3]
    depths = np.geomspace(y_low, y_high, BUDGET_POINTS)
    label_depth = y_low * (y_high / y_low) ** LABEL_HEIGHT
    return PhaseCurves(
        threshold=Curve(widths, threshold_depth(widths, xp=np)),
        budgets={N: iso_budget(N, depths) for N in bands},
        bands={N: iso_budget(N, np.linspace(lo, hi, BAND_POINTS)) for N, (lo, hi) in bands.items()},
        labels={N: (math.sqrt(N / (12 * label_depth)), label_depth) for N in bands},
        model_paths=tuple(iso_budget(12 * m.depth * m.width**2, np.geomspace(m.depth, own_depth, MODEL_PATH_POINTS))
                          for m, (own_depth, _) in zip(models, model_optima)))


def plane_of(points) -> tuple:
    """(width low, width high, depth low, depth high): the least plane, widened so every (width, depth)
    point fits with a margin (x1.6 in width, x1.3 in depth), never below depth 0.5."""
    x_low, x_high = _log_span([w for w, _ in points], *WIDTH_SPAN, margin=1.6)
    y_low, y_high = _log_span([L for _, L in points], *DEPTH_SPAN, margin=1.3)
    return x_low, x_high, max(y_low, 0.5), y_high


def plane_widths(plane):
    """The widths across the plane (geometric) that its curves are evaluated at."""
    import numpy as np

    return np.geomspace(plane[0], plane[1], PLANE_WIDTHS)


def rule_curves(widths) -> tuple:
    """Each rule of ``rules.builtin.REGISTRY`` but the theory (the threshold curve): a guard's maximum
    depth at each of ``widths``, a recommending rule's optimum across ``RULE_BUDGETS`` (12·L·d² block)."""
    import numpy as np

    from .rules.builtin import REGISTRY
    from .rules.record import GUARD, THEORY

    curves = []
    for rule in (r for r in REGISTRY.values() if r.kind != THEORY):
        if rule.kind == GUARD:
            x, y = widths, np.array([rule.max_depth(w) for w in widths])
        else:
            points = [rule.recommend(N, lambda L, N=N: math.sqrt(N / (12 * L))) for N in np.geomspace(*RULE_BUDGETS)]
            y, x = np.array([p for p in points if p[0] > 1]).T  # depth 1 is where the solver clamps
        curves.append(RuleCurve(rule.name, rule.kind, rule.verified, rule.kind == GUARD, x, y))
    return tuple(curves)


def _log_span(values, low, high, margin=1.25):
    """(low, high) widened so every positive value fits with a multiplicative margin."""
    values = [v for v in values if v > 0 and math.isfinite(v)]
    if values:
        low, high = min(low, min(values) / margin), max(high, max(values) * margin)
    return low, high


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


# ---- the bounds figure: the separation-rank bounds against depth for given widths --------------------
@frozen
class BoundsCurve:
    """One width's bounds against depth: ``depths`` (floats; the threshold depth inserted, with a gap,
    where the governing theorem changes), ``upper`` and ``lower`` log3(sep) (NaN: a gap, where a
    bound is unavailable or vacuous), and its threshold depth log3 d."""

    width: int
    heads: int
    depths: object
    upper: object
    lower: object
    threshold: float


@frozen
class BoundsData:
    """The bounds figure's curves, one per width, for depths 1..``max_depth`` at c2 ``reading``."""

    curves: tuple
    max_depth: int
    reading: str


def bounds_data(widths, heads=None, max_depth=None, reading="consistent") -> BoundsData:
    """Checked ``widths`` (whole, at least one), ``heads`` (one count, one per width, or None: the
    default), ``max_depth`` (1..10000; default about 2.5·log3 d + 4) and each width's bounds."""
    import numpy as np

    widths, head_counts, max_depth = _bounds_input(widths, heads, max_depth)
    depth = np.arange(1, max_depth + 1)
    return BoundsData(tuple(_bounds_curve(np, depth, d, h, reading) for d, h in zip(widths, head_counts)),
                      max_depth, reading)


def _bounds_curve(np, depth, d, h, reading) -> BoundsCurve:
    """One width's upper and lower bounds against depth (Theorems 1-2), gaps where a bound is missing."""
    from ..theory.separation import bounds_grid, threshold_depth

    grid = bounds_grid(depth, d, h, reading)
    upper = grid["log3_sep_upper"].copy()  # already NaN where unavailable or at the threshold
    lower = grid["log3_sep_lower"].copy()
    lower[grid["lower_vacuous"]] = np.nan  # vacuous: a gap, not a zero on a log axis
    x = depth.astype(float)
    # Break both lines where the governing theorem changes between two integer depths.
    change = np.flatnonzero((grid["regime_code"][:-1] == 0) & (grid["regime_code"][1:] == 2))
    if change.size:
        x = np.insert(x, change + 1, threshold_depth(d))
        upper = np.insert(upper, change + 1, np.nan)
        lower = np.insert(lower, change + 1, np.nan)
    return BoundsCurve(d, h, x, upper, lower, threshold_depth(d))


def _bounds_heads(widths, heads) -> list[int]:
    """One head count per width: shapes.default_heads unless given (one int, or one per width)."""
    from ..theory.shapes import default_heads, whole

    if heads is None:
        return [default_heads(d) for d in widths]
    if isinstance(heads, numbers.Integral):
        return [int(heads)] * len(widths)
    heads = list(heads)
    if len(heads) != len(widths):
        raise InputError("heads", heads, f"expected one head count or one per width ({len(widths)})")
    return [default_heads(d) if h is None else whole(h, "heads") for d, h in zip(widths, heads)]


def _bounds_input(widths, heads, max_depth) -> tuple[list[int], list[int], int]:
    """Checked widths, one head count per width, and the largest depth (default about 2.5·log3 d + 4)."""
    from ..theory.separation import threshold_depth
    from ..theory.shapes import make_shape, whole

    widths = [whole(d, "width") for d in widths]
    if not widths:
        raise InputError("widths", widths, "expected at least one width")
    head_counts = _bounds_heads(widths, heads)
    for d, h in zip(widths, head_counts):
        make_shape(1, d, h)  # validates 2 <= d and 1 <= H < d, with the usual message
    if max_depth is None:
        max_depth = max(12, *(math.ceil(2.5 * threshold_depth(d) + 4) for d in widths))
    if isinstance(max_depth, bool) or not isinstance(max_depth, numbers.Integral) or not 1 <= max_depth <= 10_000:
        raise InputError("max depth", max_depth, "expected a whole number of layers from 1 to 10000")
    return widths, head_counts, int(max_depth)
