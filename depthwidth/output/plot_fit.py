"""`plot fit`: a fitted depth/width rule (``depthwidth fit``) with the runs it was fitted on.
matplotlib is imported inside the function only (the plot extra); every element has a ``gid``.
"""
from __future__ import annotations

from .plot import BUDGET_COLOUR, EMPIRICAL_COLOUR, THRESHOLD_COLOUR, _new_figure, require_matplotlib, short_count


FIT_FIGSIZE = (16.0, 5.5)


def fit_figure(report, runs):
    """Three panels of ``fit.fit_results``: each group's losses against depth with its parabola
    in ln L and its optimum (bar: the bootstrap interval); the optima against the Levine form
    ln d = a + b·L; the optimal depth against size with the power law L = depth_k·N^beta."""
    matplotlib = require_matplotlib()
    import numpy as np

    colours = matplotlib.colormaps["viridis"](np.linspace(0.05, 0.85, max(len(report.groups), 2)))
    fig = _new_figure(FIT_FIGSIZE)
    curves, levine_ax, power_ax = fig.subplots(1, 3)
    _draw_curves(curves, np, report, runs, colours)
    optima = _optima(np, report)
    _draw_levine(levine_ax, np, report, optima)
    _draw_power(power_ax, np, report, optima)
    better = f"; better fit: {report.better_form}" if report.better_form else ""
    fig.suptitle(f"Your own depth/width rule from {report.source.file} ({len(report.groups)} groups{better})", fontsize=12)
    return fig


def _draw_curves(curves, np, report, runs, colours):
    """Each group's losses against depth, its parabola in ln L and its optimum with the interval."""
    from ..loop.fit import group_runs

    for index, (g, members, colour) in enumerate(zip(report.groups, group_runs(runs), colours)):
        depth = np.array([r.depth for r in members])
        loss = np.array([r.loss for r in members])
        curves.plot(depth, loss, linestyle="none", marker="o", markersize=5, color=colour, alpha=0.8, gid=f"runs:{g.label}",
                    label=f"{short_count(g.size)} {report.group_by}" if g.label == f"{g.size:.3g}"
                    else f"{g.label} ({short_count(g.size)} {report.group_by})")
        grid = np.geomspace(g.depths[0], g.depths[-1], 100)
        curves.plot(grid, np.polyval(g.parabola[::-1], np.log(grid)), color=colour, linewidth=1.5, gid=f"parabola:{g.label}",
                    label="_nolegend_")
        curves.plot(list(g.depth_interval), [g.min_loss] * 2, color=colour, linewidth=3, alpha=0.5, solid_capstyle="butt",
                    gid=f"interval:{g.label}", label="_nolegend_")
        curves.plot([g.optimal_depth], [g.min_loss], linestyle="none", marker="D", markersize=8, color=colour,
                    markeredgecolor="black", zorder=5, gid=f"optimum:{g.label}",
                    label="optimum (bar: 95% bootstrap interval)" if index == 0 else "_nolegend_")
    curves.set_xscale("log")
    curves.set_xlabel("depth L (log scale)")
    curves.set_ylabel("loss")
    curves.set_title("Loss against depth per size group:\nparabola in ln L, optimum at its vertex", fontsize=11)
    curves.grid(True, which="both", alpha=0.3)
    curves.legend(fontsize=8, loc="best", framealpha=0.8)


def _optima(np, report):
    """The groups' optimal depths, widths, sizes and depth intervals (low, high), as arrays."""
    low, high = np.array([g.depth_interval for g in report.groups]).T
    return (np.array([g.optimal_depth for g in report.groups]), np.array([g.optimal_width for g in report.groups]),
            np.array([g.size for g in report.groups]), low, high)


def _draw_levine(levine_ax, np, report, optima):
    """The optima's widths against their depths, with the Levine form ln d = a + b·L when fitted."""
    depth, width, _, low, high = optima
    levine_ax.errorbar(depth, width, xerr=[depth - low, high - depth], linestyle="none", marker="D", color=EMPIRICAL_COLOUR,
                       capsize=3, label="group optima").lines[0].set_gid("optima:levine")
    if report.levine is not None:
        span = np.linspace(min(low.min(), depth.min()) * 0.9, max(high.max(), depth.max()) * 1.1, 100)
        lv = report.levine
        levine_ax.plot(span, np.exp(lv.a + lv.b * span), color=THRESHOLD_COLOUR, linewidth=1.5, gid="law:levine",
                       label=f"ln d = {lv.a:.3f} + {lv.b:.4f}·L (rmse {lv.rmse:.3f})")
    levine_ax.set_yscale("log")
    levine_ax.set_xlabel("optimal depth L")
    levine_ax.set_ylabel("optimal width d (log scale)")
    levine_ax.set_title("Levine form ln d_opt = a + b·L", fontsize=11)
    levine_ax.grid(True, which="both", alpha=0.3)
    levine_ax.legend(fontsize=8)


def _draw_power(power_ax, np, report, optima):
    """The optimal depths against size, with the power law L = depth_k·N^beta when fitted."""
    from matplotlib.ticker import FuncFormatter

    depth, _, size, low, high = optima
    power_ax.errorbar(size, depth, yerr=[depth - low, high - depth], linestyle="none", marker="D", color=BUDGET_COLOUR,
                      capsize=3, label="group optima").lines[0].set_gid("optima:power")
    if report.power is not None:
        pw = report.power
        span = np.geomspace(size.min() / 1.5, size.max() * 1.5, 100)
        power_ax.plot(span, pw.depth_k * span**pw.depth_beta, color=THRESHOLD_COLOUR, linewidth=1.5, gid="law:power",
                      label=f"L = {pw.depth_k:.3g}·N^{pw.depth_beta:.3f}; d = {pw.k:.3g}·N^{pw.alpha:.3f} (rmse {pw.rmse:.3f})")
    power_ax.set_xscale("log")
    power_ax.set_yscale("log")
    power_ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:g}"))
    power_ax.yaxis.set_minor_formatter(FuncFormatter(lambda v, _p: f"{v:g}" if f"{v:g}"[0] in "235" else ""))
    power_ax.set_xlabel(f"size N ({report.group_by}, log scale)")
    power_ax.set_ylabel("optimal depth L (log scale)")
    power_ax.set_title("Power law L_opt = depth_k·N^beta", fontsize=11)
    power_ax.grid(True, which="both", alpha=0.3)
    power_ax.legend(fontsize=8)
