"""`depthwidth plot phase|bounds|fit`: pictures (the plot extra, matplotlib)."""
from typing import Annotated, List, Optional

import typer

from ..inputs import resolve_shapes
from ..options import Bootstrap, C2Reading, GroupBy, GroupByOf, Out, Reading, Seed
from .fit import fit_report

Force = Annotated[bool, typer.Option("--force", help="Let --out replace an existing file (as export --force, fit --force).")]

plot_app = typer.Typer(help="Pictures: the phase diagram and bounds against depth.\n\n"
                            "Needs the plot extra: pip install \"depthwidth[plot]\".", no_args_is_help=True,
                       rich_markup_mode=None)


@plot_app.command("phase")
def phase(
    out: Out,
    params: Annotated[Optional[List[str]], typer.Option("--params", "-p", help="Iso-budget curves (default 1e8 1e9 1e10 1e11 1e12). Repeatable.")] = None,
    models: Annotated[Optional[str], typer.Option("--models", help="Catalogue models to mark, comma-separated (default: a readable handful).")] = None,
    shape: Annotated[Optional[List[str]], typer.Option("--shape", help="Extra shapes LxD[xH] to mark. Repeatable.")] = None,
    rules: Annotated[bool, typer.Option("--rules", help="Draw each rule's curve (see `depthwidth rules`) and the guards' maximum depths.")] = False,
    c2_reading: Annotated[C2Reading, typer.Option("--c2-reading", case_sensitive=False,
                                                  help="Accepted as on the other commands; the phase diagram shows regimes and "
                                                       "curves that do not involve c2, so it is the same either way.")] = C2Reading.consistent,
    force: Force = False,
) -> None:
    """The depth-width phase diagram: regimes, threshold curve, iso-budget curves, models.

    Example: depthwidth plot phase --out phase.png --shape 12x768
    """
    from ...advice.phase import DEFAULT_BUDGETS, DEFAULT_MODELS, phase_data
    from ...core.budgets import parse_params
    from ...output.plot import check_output_path, phase_figure, require_matplotlib, save_figure

    require_matplotlib()
    check_output_path(out, force)  # before drawing: a bad --out fails at once
    budgets = [parse_params(p) for p in params] if params else DEFAULT_BUDGETS
    names = [m.strip() for m in models.split(",") if m.strip()] if models is not None else DEFAULT_MODELS
    shapes = resolve_shapes(shape or [], None)
    save_figure(phase_figure(phase_data(budgets, names, shapes, rules=rules)), out, force)


@plot_app.command("bounds")
def bounds(
    width: Annotated[List[int], typer.Option("--width", "-w", min=2, max=10**15, help="Width d (repeatable: one curve pair per width).")],
    out: Out,
    heads: Annotated[Optional[int], typer.Option("--heads", help="Heads for every width (default width/64).")] = None,
    max_depth: Annotated[Optional[int], typer.Option("--max-depth", help="Largest depth on the x axis (default about 2.5·log3 d + 4).")] = None,
    c2_reading: Reading = C2Reading.consistent,
    force: Force = False,
) -> None:
    """log3-sep lower and upper bounds against depth, threshold marked, gaps where a bound is missing.

    Example: depthwidth plot bounds --width 768 --width 4096 --out bounds.svg
    """
    from ...advice.phase import bounds_data
    from ...output.plot import check_output_path, require_matplotlib, save_figure
    from ...output.plot_bounds import bounds_figure

    require_matplotlib()
    check_output_path(out, force)  # before drawing: a bad --out fails at once
    save_figure(bounds_figure(bounds_data(width, heads, max_depth, reading=c2_reading.value)), out, force)


@plot_app.command("fit")
def fit(
    results: Annotated[str, typer.Argument(help="The sweep's CSV with its loss column filled in.")],
    out: Out,
    group_by: GroupByOf = GroupBy.params,
    bootstrap: Bootstrap = 1000,
    seed: Seed = 0,
    force: Force = False,
) -> None:
    """Per-group loss curves against depth, the optima with their intervals, and the fitted laws.

    Example: depthwidth plot fit results.csv --out fit.png
    """
    from ...output.plot import check_output_path, require_matplotlib, save_figure
    from ...output.plot_fit import fit_figure

    require_matplotlib()
    check_output_path(out, force)  # before drawing: a bad --out fails at once
    report, runs = fit_report(results, group_by, "both", bootstrap, seed, "fit")
    save_figure(fit_figure(report, runs), out, force)
