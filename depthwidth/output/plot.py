"""Figures of the depth-width picture (Levine et al. 2020, "Limits to Depth Efficiencies of Self-Attention").

matplotlib is an optional extra (``pip install "depthwidth[plot]"``): it is imported only inside
these functions, and figures are built as ``matplotlib.figure.Figure`` objects without pyplot, so
no display, backend switch or global state is involved. Each function takes data and returns a
Figure; ``save_figure`` writes it. This module draws the phase diagram; ``plot_bounds``, ``plot_fit``
and ``plot_plan`` draw the others with its pieces. Every drawn element carries a stable ``gid`` (see ``GIDS``)
so tests and callers can find it.
"""
from __future__ import annotations

from pathlib import Path

from ..core.errors import InputError
from .plot_labels import place_labels

PLOT_INSTALL_HINT = 'matplotlib is not installed; install it with: pip install "depthwidth[plot]"'
DPI = 150  # PNG resolution
FORMATS = (".png", ".svg")


PHASE_FIGSIZE = (11.0, 7.5)
BOUNDS_FIGSIZE = (10.0, 6.5)

# One colour per meaning, shared by every figure.
EFFICIENT_FILL = "#d9ecd9"  # green: depth-efficient (Theorem 1)
INEFFICIENT_FILL = "#f6e0cf"  # orange: depth-inefficient (Theorem 2)
THRESHOLD_COLOUR = "#222222"
BUDGET_COLOUR = "#4a6fa5"
MIN_DEPTH_COLOUR = "#1b7f3b"
EMPIRICAL_COLOUR = "#c0392b"
BAND_COLOUR = "#f39c12"  # the consensus depth band (evidence.py)
MODEL_COLOUR = "#5b2c83"
SHAPE_COLOUR = "#d35400"
OWN_OPTIMUM_LEGEND = "empirical optimum at the model's own size\n(dotted: same 12·L·d²; \"fit\" in its label)"

GIDS = (  # every gid the figures set, as format strings
    # phase_figure
    "threshold", "region:efficient", "region:inefficient", "budget:{N:g}", "min-depth:{N:g}", "empirical:{N:g}",
    "model:{name}", "model-optimum:{name}", "model-optimum-path:{name}", "shape:{shape}", "label:{text}",
    "rule:{name}",
    # bounds_figure
    "upper:{d}", "lower:{d}", "threshold:{d}",
    # fit_figure (label: a group's label, its size as 1e+08 or its group column value)
    "runs:{label}", "parabola:{label}", "optimum:{label}", "interval:{label}", "optima:levine", "law:levine",
    "optima:power", "law:power",
)


def require_matplotlib():
    """Import and return matplotlib, or raise InputError naming the install command."""
    try:
        import matplotlib
    except ImportError:
        raise InputError("plot dependency", "matplotlib", PLOT_INSTALL_HINT) from None
    return matplotlib


def check_output_path(path, force: bool = False) -> Path:
    """The --out path, checked before anything is drawn: a .png or .svg name in an existing,
    writable directory, not itself a directory or a read-only file, and not an existing file
    unless ``force`` (as export and fit --save)."""
    import os

    target = Path(path)
    if target.suffix.lower() not in FORMATS:
        raise InputError("output file", path, "expected a path ending in .png or .svg")
    folder = target.parent if str(target.parent) else Path(".")
    if target.is_dir():
        raise InputError("output file", path, "is a directory; expected a file name ending in .png or .svg")
    if not folder.is_dir():
        raise InputError("output file", path, f"cannot write it: no directory {str(folder)!r}")
    if os.path.lexists(target) and not force:
        raise InputError("output file", path, "the file exists; pass --force to overwrite it")
    if not os.access(target if target.exists() else folder, os.W_OK):
        raise InputError("output file", path, "cannot write it: permission denied")
    return target


def save_figure(fig, path, force: bool = False) -> Path:
    """Write ``fig`` as PNG (150 dpi) or SVG, chosen by the extension of ``path``; return the path.

    The image is written all or nothing (``output.files.replace_atomically``: a temporary file
    renamed into place, removed if a signal or an error comes first). The same figure gives
    the same bytes: no timestamp or software version in the metadata, and SVG element ids hashed
    with a fixed salt (matplotlib salts them with a random UUID by default)."""
    from matplotlib import rc_context

    target = check_output_path(path, force)
    suffix = target.suffix.lower()
    metadata = {"Date": None} if suffix == ".svg" else {"Software": None}
    from .files import replace_atomically

    def draw(temporary):
        with rc_context({"svg.hashsalt": "depthwidth"}):
            fig.savefig(temporary, format=suffix[1:], dpi=DPI, metadata=metadata)
        check_output_path(path, force)  # a file that appeared while drawing is not overwritten either

    try:
        replace_atomically(target, draw)  # a failure, SIGINT or SIGTERM while drawing leaves no half-written file
    except OSError as err:
        raise InputError("output file", path, f"cannot write it: {err.strerror or err}") from None
    return target


def _new_figure(figsize):
    """A Figure on its own Agg canvas: no pyplot, no global figure registry, no display."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


# ---------------------------------------------------------------- phase diagram


def short_count(value: float) -> str:
    """A parameter count the way papers write it: 100M, 1.3B, 175B, 1T (1e+15 and up: plain 3 digits)."""
    if value >= 1e15:
        return f"{value:.3g}"
    for scale, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K")):
        if value >= scale:
            return f"{value / scale:.3g}{suffix}"
    return f"{value:.3g}"


def _count_formatter(value, _position=None):
    """Axis tick text for widths: 100, 1K, 10K, 100K."""
    if value >= 1000:
        return f"{value / 1000:g}K"
    return f"{value:g}"


def phase_figure(data):
    """The depth-width plane of ``data`` (``advice.phase.phase_data``, which computes every point,
    the plane's extent, the threshold and iso-budget curves and the rules' curves; drawn here as given):
    the regimes either side of L = log3 d, iso-budget
    curves 12·L·d² = N with their minimal-depth and empirical-optimum points and evidence bands,
    published models, and given shapes; each rule's curve in ``data.rules`` (gid ``rule:NAME``)."""
    require_matplotlib()

    x_low, x_high, y_low, y_high = data.plane

    fig = _new_figure(PHASE_FIGSIZE)
    ax = fig.add_subplot()
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(x_low, x_high)
    ax.set_ylim(y_low, y_high)
    _draw_regions(ax, data.curves.threshold, y_low, y_high)
    _draw_budgets(ax, data)
    _draw_rules(ax, data.rules)
    labels = _draw_models(ax, data) + _draw_shapes(ax, data)
    _phase_axes(ax, y_low, y_high)
    place_labels(fig, ax, labels)
    return fig


def _draw_regions(ax, threshold, y_low, y_high):
    """The two regimes either side of the ``threshold`` curve (Theorems 1 and 2), filled up to the plane's edges."""
    x = threshold.widths
    edge = threshold.depths.clip(y_low, y_high)
    ax.fill_between(x, y_low, edge, color=EFFICIENT_FILL, linewidth=0, zorder=0, gid="region:efficient")
    ax.fill_between(x, edge, y_high, color=INEFFICIENT_FILL, linewidth=0, zorder=0, gid="region:inefficient")
    ax.plot(x, threshold.depths, color=THRESHOLD_COLOUR, linewidth=2.2, zorder=3, gid="threshold",
            label="threshold L = log3 d")
    region_text = dict(fontsize=11, fontweight="bold", zorder=4, transform=ax.transAxes)
    ax.text(0.015, 0.025, "depth-efficient:\nL < log3 d (Theorem 1)", ha="left", va="bottom", color="#3d7a3d",
            bbox=dict(boxstyle="round,pad=0.3", facecolor=EFFICIENT_FILL, edgecolor="none", alpha=0.9), **region_text)
    ax.text(0.015, 0.975, "depth-inefficient:\nL > log3 d (Theorem 2)", ha="left", va="top", color="#a35a2a",
            bbox=dict(boxstyle="round,pad=0.3", facecolor=INEFFICIENT_FILL, edgecolor="none", alpha=0.9), **region_text)


def _draw_budgets(ax, data):
    """Iso-budget curves N = 12·L·d², with the minimal depth (on the threshold), the evidence band
    and the empirical optimum."""
    curves = data.curves
    for index, N in enumerate(data.budgets):
        curve = curves.budgets[N]
        ax.plot(curve.widths, curve.depths, color=BUDGET_COLOUR, linewidth=1.1, alpha=0.8, zorder=2,
                gid=f"budget:{N:g}", label="iso-budget 12·L·d² = N" if index == 0 else "_nolegend_")
        ax.annotate(f"N = {short_count(N)}", curves.labels[N], xytext=(-4, 0),
                    textcoords="offset points", fontsize=8.5, color=BUDGET_COLOUR, ha="right", va="center",
                    annotation_clip=True, zorder=4)
        w, L = data.minimal[N]
        ax.plot([w], [L], linestyle="none", marker="o", markersize=7, color=MIN_DEPTH_COLOUR,
                markeredgecolor="white", zorder=6, gid=f"min-depth:{N:g}",
                label="minimal depth L* (threshold rule)" if index == 0 else "_nolegend_")
        band = curves.bands[N]  # the consensus band (evidence.py): a thick stretch of the iso-budget curve
        ax.plot(band.widths, band.depths, color=BAND_COLOUR, linewidth=6, alpha=0.45, solid_capstyle="butt",
                zorder=4, gid=f"band:{N:g}", label="evidence band [lo, hi] (consensus)" if index == 0 else "_nolegend_")
        w, L = data.empirical[N]
        ax.plot([w], [L], linestyle="none", marker="D", markersize=7, color=EMPIRICAL_COLOUR,
                markeredgecolor="white", zorder=6, gid=f"empirical:{N:g}",
                label="empirical optimum (fit, not theory)" if index == 0 else "_nolegend_")


def _draw_models(ax, data):
    """Published models, each joined along its iso-budget curve to the empirical optimum at its own
    size 12·L·d² (above it the model is deeper than the fit suggests, GPT-3 175B; below, shallower);
    returns their labels as (text, width, depth, colour)."""
    labels = []
    for index, (model, (own_depth, own_width), path) in enumerate(zip(data.models, data.model_optima,
                                                                      data.curves.model_paths)):
        name = getattr(model, "name", f"{model.depth}x{model.width}")
        ax.plot(path.widths, path.depths, color=EMPIRICAL_COLOUR, linewidth=1.3, linestyle=":",
                zorder=5, gid=f"model-optimum-path:{name}")
        ax.plot([own_width], [own_depth], linestyle="none", marker="D", markersize=5.5, markerfacecolor="white",
                markeredgecolor=EMPIRICAL_COLOUR, markeredgewidth=1.2, zorder=6, gid=f"model-optimum:{name}",
                label=OWN_OPTIMUM_LEGEND if index == 0 else "_nolegend_")
        ax.plot([model.width], [model.depth], linestyle="none", marker="s", markersize=7, color=MODEL_COLOUR,
                markeredgecolor="white", zorder=7, gid=f"model:{name}",
                label="published model" if index == 0 else "_nolegend_")
        labels.append((f"{getattr(model, 'display_name', name)}: L={model.depth}, fit {own_depth:.0f}",
                       model.width, model.depth, MODEL_COLOUR))
    return labels


def _draw_shapes(ax, data):
    """The given shapes as stars; returns their labels as (text, width, depth, colour)."""
    labels = []
    for index, shape in enumerate(data.shapes):
        ax.plot([shape.width], [shape.depth], linestyle="none", marker="*", markersize=13, color=SHAPE_COLOUR,
                markeredgecolor="white", zorder=8, gid=f"shape:{shape}",
                label="given shape" if index == 0 else "_nolegend_")
        labels.append((f"{shape.depth}x{shape.width}", shape.width, shape.depth, SHAPE_COLOUR))
    return labels


def _phase_axes(ax, y_low, y_high):
    """Axis labels, title, ticks, grid and the legend of the phase diagram."""
    from matplotlib.patches import Patch
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

    from ..advice.rules.builtin import get_rule

    ax.set_xlabel("width d (representation dimension)")
    ax.set_ylabel("depth L (layers)")
    ax.set_title("Depth vs width of self-attention networks (Levine et al. 2020)\n"
                 "threshold L = log3 d; empirical optimum: the NeurIPS version's fit on depths "
                 "{:g}-{:g}".format(*get_rule("levine-fit").depth_range), fontsize=11)
    ax.xaxis.set_major_formatter(FuncFormatter(_count_formatter))
    ax.yaxis.set_major_locator(FixedLocator([t for t in (1, 2, 3, 5, 10, 20, 30, 50, 100, 200, 500, 1000)
                                             if y_low <= t <= y_high]))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:g}"))
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.grid(True, which="major", color="white", linewidth=0.8, alpha=0.9, zorder=1)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=9, frameon=False,
              handles=[
                  Patch(facecolor=EFFICIENT_FILL, label="depth-efficient: L < log3 d (Theorem 1)"),
                  Patch(facecolor=INEFFICIENT_FILL, label="depth-inefficient: L > log3 d (Theorem 2)"),
                  *ax.get_legend_handles_labels()[0],
              ])


RULE_COLOURS = ("#8e44ad", "#16a085", "#b9770e", "#2e86c1", "#7f8c8d", "#cb4335", "#1e8449")


def _draw_rules(ax, curves):
    """Each rule's curve (``advice.phase.rule_curves``): a recommending rule's optimum across budgets,
    a guard's maximum depth for each width. The theory row is the threshold curve, drawn already."""
    for index, curve in enumerate(curves):
        colour = RULE_COLOURS[index % len(RULE_COLOURS)]
        label, style = ((f"{curve.name} (guard): maximum depth", "--") if curve.guard
                        else (f"{curve.name} ({curve.kind}): optimum per budget", "-"))
        if not curve.verified:
            label += " [unverified]"
        ax.plot(curve.widths, curve.depths, color=colour, linewidth=1.4, linestyle=style, alpha=0.9, zorder=4,
                gid=f"rule:{curve.name}", label=label)
