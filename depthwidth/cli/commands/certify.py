"""`depthwidth certify`: certified separation rank of a small eq.-(3) network."""
from typing import Annotated, List, Optional

import typer

from ..options import C2Reading, Field, Fmt, Format


def command(
    shapes: Annotated[List[str], typer.Argument(help="Small networks LxD[xH], e.g. 2x8x1 (H defaults to width/64, at least 1).")],
    positions: Annotated[Optional[int], typer.Option("--positions", help="Input positions N, even (default 2): A = the first N/2, B = the rest.")] = None,
    templates: Annotated[Optional[int], typer.Option("--templates", "-m", help="Templates per position M (default 700, at most 2000): the matrix is M x M.")] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the random integer weights and templates (NumPy default_rng).")] = 0,
    prime: Annotated[Optional[int], typer.Option("--prime", help="Compute modulo this prime below 2^31 (default 2^31 - 1).")] = None,
    output_coord: Annotated[int, typer.Option("--output-coord", help="Output coordinate p of y_p, at position 0 (default 0).")] = 0,
    reading: Annotated[C2Reading, typer.Option("--reading", "--c2-reading", case_sensitive=False,
                                               help="Theorem 2's c2 to hold the rank against: consistent (default) or literal.")] = C2Reading.consistent,
    trials: Annotated[int, typer.Option("--trials", help="Repeat with seeds S..S+K-1 and report the smallest and largest rank.")] = 1,
    format: Fmt = Format.table,
    field: Field = None,
) -> None:
    """Certified separation rank of a small eq.-(3) network, exact mod p, against the bounds.

    Example: depthwidth certify 2x8x1 --reading literal
    """
    from ...theory.certify import certify as certify_shape
    from ...theory.certify import check_request
    from ...output import emit
    from ...output.tables import certify_tables
    from ...theory.shapes import parse_shape

    given = {k: v for k, v in (("positions", positions), ("templates", templates), ("prime", prime)) if v is not None}
    parsed = [parse_shape(text) for text in shapes]
    for s in parsed:  # every request within the caps before anything is computed
        check_request(s.depth, s.width, s.heads, seed=seed, output_coord=output_coord, reading=reading.value, trials=trials, **given)
    from ..progress import LateProgress

    records = []
    for s in parsed:
        bar = LateProgress(f"certify {s}")
        try:
            records.append(certify_shape(s.depth, s.width, s.heads, seed=seed, output_coord=output_coord,
                                         reading=reading.value, trials=trials, progress=bar, **given))
        finally:
            bar.close()
    emit(records, format.value, field, certify_tables)

