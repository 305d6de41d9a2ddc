"""`plot bounds`: the separation-rank bounds (Levine et al. 2020, Theorems 1-2) against depth for
given widths, beside the phase diagram of ``plot.py``. matplotlib is imported inside the function
only (the plot extra); every element has a ``gid``.
"""
from __future__ import annotations

import math
import numbers

from ..core.errors import InputError
from ..theory.shapes import whole
from .plot import BOUNDS_FIGSIZE, _new_figure, require_matplotlib


def _bounds_heads(widths, heads) -> list[int]:
    """One head count per width: shapes.default_heads unless given (one int, or one per width)."""
    from ..theory.shapes import default_heads

    if heads is None:
        return [default_heads(d) for d in widths]
    if isinstance(heads, numbers.Integral):
        return [int(heads)] * len(widths)
    heads = list(heads)
    if len(heads) != len(widths):
        raise InputError("heads", heads, f"expected one head count or one per width ({len(widths)})")
    return [default_heads(d) if h is None else whole(h, "heads") for d, h in zip(widths, heads)]


def bounds_figure(widths, heads=None, max_depth=None, reading="consistent"):
    """Theorem 1/2 bounds on log3(sep) against depth L = 1..max_depth, one colour per width, with
    the threshold depth log3 d marked. Unavailable or vacuous stretches are gaps, never zeros.
    ``reading``: Theorem 2's c2 reading (theory.C2_READINGS), named in the title."""
    matplotlib = require_matplotlib()
    import numpy as np

    widths, head_counts, max_depth = _bounds_input(widths, heads, max_depth)
    colours = matplotlib.colormaps["tab10"].colors
    fig = _new_figure(BOUNDS_FIGSIZE)
    ax = fig.add_subplot()
    ax.set_yscale("log")
    depth = np.arange(1, max_depth + 1)
    for index, (d, h) in enumerate(zip(widths, head_counts)):
        _draw_width(ax, np, depth, d, h, colours[index % len(colours)], reading)
    _bounds_axes(ax, max_depth, reading)
    return fig


def _bounds_input(widths, heads, max_depth) -> tuple[list[int], list[int], int]:
    """Checked widths, one head count per width, and the largest depth (default about 2.5·log3 d + 4)."""
    from ..theory.separation import threshold_depth
    from ..theory.shapes import make_shape

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


def _draw_width(ax, np, depth, d, h, colour, reading):
    """One width's upper and lower bounds against depth, and its threshold depth log3 d."""
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
    ax.plot(x, upper, color=colour, linewidth=1.8, marker="o", markersize=3.5, gid=f"upper:{d}",
            label=f"d = {d:,}, H = {h}")
    ax.plot(x, lower, color=colour, linewidth=1.8, linestyle="--", marker="o", markersize=3.5,
            markerfacecolor="white", gid=f"lower:{d}", label="_nolegend_")
    ax.axvline(threshold_depth(d), color=colour, linewidth=1.1, linestyle=":", gid=f"threshold:{d}",
               label="_nolegend_")


def _bounds_axes(ax, max_depth, reading):
    """Axis labels, title, grid and the two legends (widths; line styles)."""
    from matplotlib.lines import Line2D
    from matplotlib.ticker import MaxNLocator

    ax.set_xlim(0.5, max_depth + 0.5)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("depth L")
    ax.set_ylabel("log3 of separation rank bound")
    ax.set_title("Separation-rank bounds of self-attention (Levine et al. 2020, Theorems 1 and 2)\n"
                 f"{reading} reading of c2; gaps: bound vacuous or unavailable, or d = 3^L (neither theorem applies)",
                 fontsize=11)
    ax.grid(True, which="major", alpha=0.3)
    width_legend = ax.legend(loc="upper left", fontsize=9, title="width", title_fontsize=9)
    ax.add_artist(width_legend)
    ax.legend(handles=[
        Line2D([], [], color="#444444", linewidth=1.8, label="upper bound"),
        Line2D([], [], color="#444444", linewidth=1.8, linestyle="--", label="lower bound"),
        Line2D([], [], color="#444444", linewidth=1.1, linestyle=":", label="threshold depth log3 d"),
    ], loc="lower right", fontsize=9)
