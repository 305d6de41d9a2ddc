"""`depthwidth equiv`: widths a shallower network needs to replicate or surpass a deep one."""
from typing import Annotated, List, Optional

import typer

from ...core.errors import InputError
from ..inputs import check_heads, check_list_rows, distinct, expand_stdin, parse_int_list, resolve_shapes
from ..options import SHOWN, ShownOptions


def command(
    deep: Annotated[List[str], typer.Option("--deep", help="The deep network: LxD[xH] or a model name; '-' reads shapes from stdin.")],
    depth: Annotated[str, typer.Option("--depth", help="Shallower depths: 2,3 or a range 1:6.")],
    heads: Annotated[Optional[int], typer.Option("--heads", help="Heads of the shallower network (default: the deep network's).")] = None,
    shown: ShownOptions = SHOWN,
) -> None:
    """Widths a shallower network needs to replicate (Corollary 1) or surpass (Corollary 2) a deep one.

    Example: depthwidth equiv --deep 6x1000x16 --depth 2,3
    """
    from dataclasses import replace

    from ...output import emit
    from ...output.tables import equiv_tables
    from ...advice.reports import block_for
    from ...arch.record import block_fields
    from ...theory.shapes import MAX_DEPTH
    from ...theory.comparison import equivalence

    format, field, c2_reading = shown
    check_heads(heads)
    texts = expand_stdin(deep)
    shapes = resolve_shapes(texts, None)
    depths = distinct(parse_int_list(depth, "--depth", 1, MAX_DEPTH), "--depth", "the depths")
    check_list_rows(len(shapes) * len(depths), "--depth", depth, "rows (deep shapes x depths; each is solved on its own)")
    for shape in shapes:
        if max(depths) >= shape.depth:
            raise InputError("--depth", depth, f"expected depths below the deep network's {shape.depth} ({shape})")
    tp = [block_fields(block_for(t, s), s.heads)[0]["tp_sizes"] for t, s in zip(texts, shapes)]
    emit([replace(equivalence(s, d, heads, c2_reading.value), deep_tp_sizes=sizes) for s, sizes in zip(shapes, tp) for d in depths],
         format.value, field, equiv_tables)
