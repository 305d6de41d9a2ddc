"""`plot bounds`: the separation-rank bounds (Levine et al. 2020, Theorems 1-2) against depth for
given widths, beside the phase diagram of ``plot.py``. matplotlib is imported inside the function
only (the plot extra); every element has a ``gid``.
"""
from __future__ import annotations

from .plot import BOUNDS_FIGSIZE, _new_figure, require_matplotlib


def bounds_figure(data):
    """Theorem 1/2 bounds on log3(sep) against depth L = 1..max_depth, one colour per width, with
    the threshold depth log3 d marked (``data``: ``advice.phase.bounds_data``, which checks the input and
    computes the curves). Unavailable or vacuous stretches are gaps, never zeros. The title names
    Theorem 2's c2 reading (theory.C2_READINGS)."""
    matplotlib = require_matplotlib()

    colours = matplotlib.colormaps["tab10"].colors
    fig = _new_figure(BOUNDS_FIGSIZE)
    ax = fig.add_subplot()
    ax.set_yscale("log")
    for index, curve in enumerate(data.curves):
        _draw_width(ax, curve, colours[index % len(colours)])
    _bounds_axes(ax, data.max_depth, data.reading)
    return fig


def _draw_width(ax, curve, colour):
    """One width's upper and lower bounds against depth, and its threshold depth log3 d."""
    d = curve.width
    ax.plot(curve.depths, curve.upper, color=colour, linewidth=1.8, marker="o", markersize=3.5, gid=f"upper:{d}",
            label=f"d = {d:,}, H = {curve.heads}")
    ax.plot(curve.depths, curve.lower, color=colour, linewidth=1.8, linestyle="--", marker="o", markersize=3.5,
            markerfacecolor="white", gid=f"lower:{d}", label="_nolegend_")
    ax.axvline(curve.threshold, color=colour, linewidth=1.1, linestyle=":", gid=f"threshold:{d}",
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
