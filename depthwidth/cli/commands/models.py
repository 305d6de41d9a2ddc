"""`depthwidth models`: published architectures with their regime and bounds."""
from typing import Annotated, Optional

import typer

from ...core.errors import InputError
from ..inputs import warn_constraints
from ..options import LISTED, ListedOptions


def command(
    sort: Annotated[str, typer.Option("--sort", help="Sort by name, params, depth, width, year or aspect.")] = "params",
    filter: Annotated[Optional[str], typer.Option("--filter", help="Name or family substring, or a glob like 'llama*'.")] = None,
    min_params: Annotated[Optional[str], typer.Option("--min-params", help="Only models with at least this many (published) parameters, e.g. 1B.")] = None,
    max_params: Annotated[Optional[str], typer.Option("--max-params", help="Only models with at most this many parameters, e.g. 100B.")] = None,
    listed: ListedOptions = LISTED,
    all_: Annotated[bool, typer.Option("--all", help="Every model with every column (the default view: one line per "
                                       "model, at most 55 of them).")] = False,
) -> None:
    """Published architectures with their regime, threshold depth and bounds.

    Example: depthwidth models --filter gpt3 --sort depth
    """
    from ...core.budgets import parse_quantity
    from ...arch.catalog import filter_models, load_models, sort_models
    from ...output import emit
    from ...output.screen_tables import models_tables
    from ...advice.reports import model_report

    tp, multiple, format, field, c2_reading = listed
    low = float(parse_quantity(min_params, "--min-params")) if min_params is not None else None
    high = float(parse_quantity(max_params, "--max-params")) if max_params is not None else None
    chosen = sort_models(filter_models(load_models(), filter, low, high), sort)
    if not chosen:
        given = " ".join(f"{option} {value}" for option, value in (("--filter", filter), ("--min-params", min_params),
                                                                    ("--max-params", max_params)) if value is not None)
        raise InputError("filters", given, "no catalogue model matches them; see `depthwidth models` for the list")
    warn_constraints([(m.name, m.architecture, m.heads) for m in chosen], tp, multiple)
    emit([model_report(m, c2_reading.value) for m in chosen], format.value, field, lambda records: models_tables(records, all_),
         command="models")
