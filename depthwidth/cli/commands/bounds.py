"""`depthwidth bounds`: regime and separation-rank bounds per shape, or over a grid."""
import sys
from typing import Annotated, List, Optional

import typer

from ...core.errors import InputError
from ..inputs import (MAX_GRID_ROWS, MAX_LIST_ROWS, MAX_STDIN_LINES, check_heads, check_list_rows, expand_stdin, first_bad_line,
                      parse_int_list, resolve_shapes, warn_constraints, warn_uneven)
from ..options import LISTED, ListedOptions

VECTOR_ROWS = 64  # `bounds` with this many bare shapes takes the vectorized path (the same bytes)
GRID_CHUNK_ROWS = 1 << 15  # rows a grid chunk holds (1 << 15 spelled 5-10% faster than 1 << 16 here: less memory touched per chunk)


def command(
    shapes: Annotated[Optional[List[str]], typer.Argument(help="Shapes LxD[xH] or model names; '-' reads them from stdin.")] = None,
    heads: Annotated[Optional[int], typer.Option("--heads", help="Heads for every shape (default: width/64, or the H in LxDxH).")] = None,
    depth: Annotated[Optional[str], typer.Option("--depth", help="Grid mode: depths, e.g. 1:48 (start:stop[:step], inclusive).")] = None,
    width: Annotated[Optional[str], typer.Option("--width", help="Grid mode: widths, e.g. 256:8192:256.")] = None,
    listed: ListedOptions = LISTED,
) -> None:
    """Regime and separation-rank bounds (log3) per shape, or over a depth x width grid.

    Example: depthwidth bounds 12x768 24x1024x16 bert-base
    """
    tp, multiple, format, field, c2_reading = listed
    check_heads(heads)
    if depth is not None or width is not None:
        _check_grid(shapes, depth, width, tp, multiple)
        return _grid(depth, width, heads, format.value, field, c2_reading.value)
    if not shapes:
        raise InputError("arguments", "(none)", "expected shapes such as 12x768, '-' for standard input, or --depth and --width for a grid")
    from ...output import emit
    from ...output.tables import bounds_tables
    from ...output.writers import check_table_rows
    from ...advice.reports import block_for
    from ...arch.record import shape_record
    from ...theory.shapes import parse_shape_arrays
    from ...theory.separation import bounds as shape_bounds

    if format.value == "table" and field is None and "-" not in shapes:
        check_table_rows(len(shapes), format.value, field)
    if shapes == ["-"]:  # standard input alone: bare shapes go column-wise without a Python object per line
        from ..inputs import lines_of, read_stdin_text, stdin_shape_arrays

        text = read_stdin_text()
        arrays = stdin_shape_arrays(text, heads) if (format.value != "table" or field is not None) and tp is None \
            and multiple is None else None
        if arrays is not None:
            return _shape_list(*arrays, format.value, field, c2_reading.value)
        texts = lines_of(text)
    else:
        texts = expand_stdin(shapes)
    check_table_rows(len(texts), format.value, field)  # before anything is computed
    if len(texts) > MAX_LIST_ROWS and not (len(texts) >= VECTOR_ROWS and (format.value != "table" or field is not None)
                                          and tp is None and multiple is None and parse_shape_arrays(texts, heads) is not None):
        from ...arch.catalog import resolve_shape

        first_bad_line(texts, lambda text: resolve_shape(text, heads))  # a bad line is named as such
        check_list_rows(len(texts), "standard input" if "-" in shapes else "arguments", f"{len(texts):,} shapes",
                        "shapes when any is a model name or checked with --tp/--multiple (bare shapes LxD[xH]: "
                        f"{MAX_STDIN_LINES:,})")
    many = len(texts) >= VECTOR_ROWS and (format.value != "table" or field is not None) and tp is None and multiple is None
    arrays = parse_shape_arrays(texts, heads) if many else None
    if arrays is not None:  # many valid bare shapes: parsed, computed and spelled column-wise
        return _shape_list(*arrays, format.value, field, c2_reading.value)
    resolved = resolve_shapes(texts, heads)
    blocks = [block_for(t, s) for t, s in zip(texts, resolved)]
    warn_constraints([(t.strip(), arch, s.heads) for t, arch, s in zip(texts, blocks, resolved)], tp, multiple)
    records = [shape_record(shape_bounds(s.depth, s.width, s.heads, c2_reading.value), arch) for s, arch in zip(resolved, blocks)]
    emit(records, format.value, field, bounds_tables)


def _check_grid(shapes, depth, width, tp, multiple) -> None:
    """Grid mode takes --depth and --width together, no shapes and no shape checks."""
    if shapes or depth is None or width is None:
        raise InputError("arguments", " ".join(shapes or []) or "--depth/--width",
                         "grid mode takes --depth and --width together and no shapes")
    if tp is not None or multiple is not None:
        raise InputError("--tp/--multiple", tp or multiple, "shape checks apply to listed shapes, not to a grid")


def _shape_list(depths, widths, heads, fmt: str, field: Optional[str], reading: str) -> None:
    """Many bare shapes (``bounds -`` from a file): shape records built and spelled column-wise,
    the same bytes (and the same warnings) as the scalar records."""
    import dataclasses

    import numpy as np

    from ...output.stream import stream_grid
    from ...advice.reports import shape_list_chunks
    from ...arch.record import ShapeRecord

    columns = [f.name for f in dataclasses.fields(ShapeRecord)]
    from ...output.records import check_names

    check_names(field, columns)
    uneven = np.flatnonzero(widths % heads)
    warn_uneven(dict.fromkeys(zip(widths[uneven].tolist(), heads[uneven].tolist())))
    # chunks of 2^14 rows: a chunk spelled is ~35 Python strings a row, so 2^16 rows held ~140 MB at once
    stream_grid(shape_list_chunks(depths, widths, heads, reading, 1 << 14), fmt, field, sys.stdout, depths.size, columns)


def _grid(depth: str, width: str, heads: Optional[int], fmt: str, field: Optional[str], reading: str) -> None:
    """A depth x width grid: a table of at most MAX_TABLE_ROWS, or streamed in chunks."""
    from ...output import MAX_TABLE_ROWS
    from ...theory.shapes import MAX_DEPTH, MAX_WIDTH

    depths = parse_int_list(depth, "--depth", 1, MAX_DEPTH)
    widths = parse_int_list(width, "--width", 2, MAX_WIDTH)
    rows = len(depths) * len(widths)
    if rows > MAX_GRID_ROWS:
        raise InputError("grid", f"{depth} x {width}", f"at most {MAX_GRID_ROWS:,} rows (this is {rows:,})")
    if heads is not None and heads >= min(widths):
        raise InputError("--heads", heads, f"expected fewer heads than the smallest width ({min(widths)})")
    if fmt == "table" and field is None:  # at most MAX_TABLE_ROWS: the scalar path is quick enough
        if rows > MAX_TABLE_ROWS:
            raise InputError("--format", fmt, f"a table holds at most {MAX_TABLE_ROWS:,} rows; use --format csv, jsonl or json for this {rows:,}-row grid")
        from ...output import emit
        from ...output.tables import bounds_tables
        from ...theory.shapes import default_heads
        from ...theory.separation import bounds as shape_bounds

        records = [shape_bounds(L, d, default_heads(d) if heads is None else heads, reading) for L in depths for d in widths]
        return emit(records, fmt, None, bounds_tables)
    from ...output.stream import stream_grid
    from ...theory.separation import iter_bounds_grid

    stream_grid(iter_bounds_grid(depths, widths, heads, GRID_CHUNK_ROWS, reading), fmt, field, sys.stdout, rows,
                parts=lambda k, n: iter_bounds_grid(depths, widths, heads, GRID_CHUNK_ROWS, reading, part=(k, n)))
