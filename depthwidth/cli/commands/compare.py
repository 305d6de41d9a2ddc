"""`depthwidth compare`: which of two shapes is provably more expressive, and what each costs to train."""
from typing import Annotated

import typer

from ..inputs import resolve_shapes, warn_constraints
from ..options import RUN, SHOWN, RunOptions, ShownOptions


def command(
    deep: Annotated[str, typer.Option("--deep", help="The deeper network: LxD[xH] or a model name.")],
    shallow: Annotated[str, typer.Option("--shallow", help="The shallower network: LxD[xH] or a model name.")],
    run: RunOptions = RUN,
    shown: ShownOptions = SHOWN,
    explain: Annotated[bool, typer.Option("--explain", help="After the answer: the bounds, the replicate and surpass widths "
                                          "and every rule's note.")] = False,
) -> None:
    """Which of two shapes is provably more expressive, the widths that would change it, and what each costs to train and serve.

    Example: depthwidth compare --deep 12x768 --shallow 6x1086 --tokens 2e10
    """
    from dataclasses import replace

    from ...output import emit
    from ...advice.reports import block_for, compare_with_blocks
    from ...advice.which import compare_setup, loss_fields, which as pick_one
    from ...theory.comparison import compare_shapes
    from ..training import costed, given_run, pipeline_stages

    format, field, c2_reading = shown
    spec, fixed, rate = given_run(run)
    deep_shape, shallow_shape = resolve_shapes([deep, shallow], None)
    if deep_shape.depth < shallow_shape.depth:  # said, not passed silently
        from ..notices import warn

        warn(f"--deep {deep.strip()} (depth {deep_shape.depth}) is shallower than --shallow {shallow.strip()} (depth "
             f"{shallow_shape.depth}): compared as given, so every 'deep' field describes {deep.strip()}; swap them to compare "
             "the deeper one as --deep")
    result = compare_shapes(deep_shape, shallow_shape, c2_reading.value)
    deep_arch, shallow_arch = block_for(deep, deep_shape), block_for(shallow, shallow_shape)
    pipeline_stages(spec.pp, [(f"--deep {deep.strip()}", deep_arch), (f"--shallow {shallow.strip()}", shallow_arch)])
    warn_constraints([(deep, deep_arch, deep_shape.heads), (shallow, shallow_arch, shallow_shape.heads)], run.tp, run.multiple)
    # the screen's pick by the plan's loss and performance models: the layout fields given are fixed, the rest
    # searched; a flat --mfu (rate) times both runs at it. The JSON costs both on the run the screen shows.
    which = pick_one([("deep", deep, deep_arch), ("shallow", shallow, shallow_arch)], spec, fixed, rate is None)
    shown, loss = replace(spec, gpus=which.gpus, tokens=which.tokens), loss_fields(which)
    report = compare_with_blocks(result, deep_arch, shallow_arch)
    report = replace(report, deep=costed(report.deep, deep_arch, shown, fixed, rate, loss["deep"]),
                     shallow=costed(report.shallow, shallow_arch, shown, fixed, rate, loss["shallow"]),
                     setup=compare_setup(which))
    tables = None
    if format.value == "table" and field is None:
        from ...output.compare_screen import compare_tables

        tables = lambda record: compare_tables(record, which, explain)
    emit(report, format.value, field, tables, command="compare")
