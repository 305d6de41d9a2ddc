"""`plan --plot` and `sweep --plot`: the candidates a plan weighs, as one picture.

x is the depth (log scale), y the loss penalty against the best shape of the size
(``loss_vs_best``) when the records carry it, else the training days (``train_days``; GPU-hours
or FLOPs per token when those are all there is). The evidence band is shaded, the minimal depth
drawn as a line, the pick marked with a star, and the published models of the budget's size (the
plan's evidence of kind "published": their depth at this budget) drawn as points on the x axis.
matplotlib is imported inside the functions only (the plot extra); every element has a ``gid``.
"""
from __future__ import annotations

from .formats import assumed_gpus_text
from .plot import BAND_COLOUR, MIN_DEPTH_COLOUR, MODEL_COLOUR, SHAPE_COLOUR, _new_figure, short_count

FIGSIZE = (9.0, 5.5)
# (field, axis label): the first one the rows carry a value for is the y axis
Y_FIELDS = (("loss.vs_best", "loss vs the best shape of this size"), ("run.time_to_target_days", "days to the target loss"),
            ("run.train_days", "training days"), ("run.train_gpu_hours", "GPU-hours"), ("flops_per_token", "training FLOPs per token"))


def _value(record, path: str):
    """A (dotted) field of a plan candidate or a sweep row (whose ``loss`` is the measured loss to fill in:
    its predicted penalty is ``predicted_loss``)."""
    from .screen import get

    if path.startswith("loss.") and hasattr(record, "predicted_loss"):
        path = "predicted_loss." + path.removeprefix("loss.")
    return get(record, path)


def y_field(rows) -> tuple[str, str]:
    """(field, label) of the y axis: the first of Y_FIELDS every row carries."""
    for name, label in Y_FIELDS:
        if rows and all(_value(r, name) is not None for r in rows):
            return name, label
    raise ValueError("no field to plot: the rows carry none of " + ", ".join(n for n, _ in Y_FIELDS))


def candidates_figure(rows, title: str, band=None, min_depth=None, pick=None, published=(), assumption: str = ""):
    """The figure: ``rows`` (records with depth, width and the y field), ``band`` (lo, hi) shaded,
    ``min_depth`` as a line, ``pick`` (depth, width) starred, ``published`` [(name, depth)] on the axis."""
    name, label = y_field(rows)
    fig = _new_figure(FIGSIZE)
    ax = fig.add_subplot()
    ax.set_xscale("log")
    if band is not None:
        ax.axvspan(band[0], band[1], color=BAND_COLOUR, alpha=0.18, lw=0, label=f"evidence band [{band[0]}, {band[1]}]", gid="band")
    if min_depth is not None:
        ax.axvline(min_depth, color=MIN_DEPTH_COLOUR, ls="--", lw=1.2, label=f"minimal depth {min_depth} (threshold)", gid="min-depth")
    xs, ys = [r.depth for r in rows], [_value(r, name) for r in rows]
    ax.plot(xs, ys, color=SHAPE_COLOUR, lw=1, alpha=0.5, zorder=2)
    ax.scatter(xs, ys, s=36, color=SHAPE_COLOUR, zorder=3, label="candidates", gid="candidates")
    for r, y in zip(rows, ys):
        ax.annotate(f"{r.depth}x{r.width}", (r.depth, y), textcoords="offset points", xytext=(4, 5), fontsize=8)
    chosen = [(r.depth, _value(r, name)) for r in rows if pick is not None and (r.depth, r.width) == tuple(pick)]
    if chosen:
        ax.scatter(*zip(*chosen), s=260, marker="*", color="#c0392b", edgecolor="black", zorder=4, label="pick", gid="pick")
    if published:
        transform = ax.get_xaxis_transform()  # x in data, y in axes fractions: the points sit on the x axis
        for model, depth in published:
            ax.scatter([depth], [0.03], transform=transform, marker="D", s=30, color=MODEL_COLOUR, zorder=5, clip_on=False,
                       gid=f"published:{model}")
            ax.annotate(model, (depth, 0.06), xycoords=transform, rotation=60, fontsize=7, color=MODEL_COLOUR)
        ax.scatter([], [], marker="D", color=MODEL_COLOUR, label="published models of this size (their depth here)")
        depths = [depth for _, depth in published]  # drawn in axes fractions, they do not widen the x axis themselves:
        low, high = ax.get_xlim()  # a depth beyond the candidates would land outside the figure
        if min(depths) < low or max(depths) > high:
            ax.set_xlim(min(low, min(depths) / 1.1), max(high, max(depths) * 1.1))
    from matplotlib.ticker import NullFormatter, ScalarFormatter

    ax.xaxis.set_major_formatter(ScalarFormatter())
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("depth (layers)")
    ax.set_ylabel(label + (f"\n{assumption}" if assumption else ""))
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.25)
    ax.legend(fontsize=8, loc="best")
    return fig


def plan_figure(plan):
    """The plan's candidates (``plan_record.Plan``): band, floor, pick and published models."""
    run = plan.setup
    assumption = (f"{short_count(run.tokens)} tokens" + (" (20/param)" if run.tokens_assumed else "")
                  + f", {run.gpus} x {run.gpu}" + assumed_gpus_text(run, short=True))
    published = [(e["name"].removeprefix("model:"), e["depth"]) for e in plan.evidence if e["kind"] == "published"]
    return candidates_figure(list(plan.candidates), f"Plan for {short_count(plan.budget.value)} parameters ({plan.budget.arch} block)",
                             (plan.band.low, plan.band.high), plan.threshold.min_depth, (plan.recommended.depth, plan.recommended.width), published,
                             assumption)


def sweep_figure(rows, plan=None):
    """A sweep's rows; with ``plan`` (the plan of the same budget) its band, floor and published models."""
    budget = rows[0].budget if rows else 0
    extra = {} if plan is None else dict(band=(plan.band.low, plan.band.high), min_depth=plan.threshold.min_depth,
                                         published=[(e["name"].removeprefix("model:"), e["depth"]) for e in plan.evidence
                                                    if e["kind"] == "published"])
    return candidates_figure(list(rows), f"Iso-budget sweep at {short_count(budget)} parameters", **extra)
