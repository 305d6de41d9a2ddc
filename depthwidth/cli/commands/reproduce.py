"""`depthwidth reproduce`: the seed paper's quantitative claims, recomputed."""
from typing import Annotated

import typer

from .._typer_compat import ClickException
from ..options import Field, Fmt, Format


def command(
    strict: Annotated[bool, typer.Option("--strict", help="Exit 1 when any claim differs beyond its tolerance (the whole "
                                                          "report still goes to stdout; one error line names the claims).")] = False,
    format: Fmt = Format.table,
    field: Field = None,
) -> None:
    """The seed paper's quantitative claims, each recomputed, with a status.

    Example: depthwidth reproduce --strict
    """
    from ...advice.claims import DIFFERS, claims
    from ...output import emit
    from ...output.tables import claims_tables

    results = claims()
    emit(results, format.value, field, claims_tables)  # whole, then the verdict: stdout is never partial
    differing = [c for c in results if c.status == DIFFERS]
    if strict and differing:  # one stderr line, exit 1 (the error funnel, cli/app.py)
        raise ClickException(f"--strict: {len(differing)} claim(s) differ beyond their tolerance: "
                             + "; ".join(f"claim {c.claim} differs (quoted {c.quoted}, computed {c.computed})" for c in differing))
