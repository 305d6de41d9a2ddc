"""`depthwidth cost`: what a shape costs to train and serve on a cluster, in the parallel layout it would run in."""
from typing import Annotated, List, Optional

import typer

from ..options import BLOCK, TRAIN, Arch, Batch, BlockOptions, Field, Fmt, Format, KvHeads, TrainOptions


def command(
    shapes: Annotated[Optional[List[str]], typer.Argument(help="Shapes LxD[xH] or model names; '-' reads them from stdin, one a line.")] = None,
    config: Annotated[Optional[List[str]], typer.Option("--config", help="A Hugging Face config.json (or model folder) to cost. Repeatable.")] = None,
    arch: Arch = "vanilla",
    kv_heads: KvHeads = None,
    block: BlockOptions = BLOCK,
    train: TrainOptions = TRAIN,
    serve: Annotated[bool, typer.Option("--serve", help="Also predict serving: prefill, decode time per token, tokens/s.")] = False,
    batch: Batch = 1,
    format: Fmt = Format.table,
    field: Field = None,
) -> None:
    """What a shape costs on a cluster: its best parallel layout, step time, tokens/s, MFU, days; serving with --serve.

    Example: depthwidth cost 32x4096 --arch llama --gpu h100 --gpus 64 --tokens 2e11
    """
    from ...core.errors import InputError
    from ...output import emit
    from ...output.costtable import cost_tables
    from ..inputs import expand_stdin
    from ..training import pipeline_stages, train_run

    spec, fixed, rate = train_run(train, batch)  # every option checked before anything is computed
    if not shapes and not config:
        raise InputError("shapes", "(none)", "expected at least one shape such as 32x4096, a model name, '-' or --config FILE")
    named = architectures(expand_stdin(shapes) if shapes else [], config or [], arch, train.context,
                          dict(kv_heads=kv_heads, **block._asdict()))
    pipeline_stages(train.pp, named)
    emit(rows(named, spec, fixed, rate, serve, batch), format.value, field, cost_tables, command="cost")


def rows(named, spec, fixed, rate, serve: bool, batch: int) -> list:
    """The `cost` row (``cost.row.CostRow``) of every (name, blocks.Architecture) on the cluster."""
    from ...arch.hardware import accelerator
    from ...cost.row import cost_row
    from ...cost.perf.modeled import cluster
    from ...cost.perf.predict import predict
    from ..progress import counted

    run = cluster(spec, fixed, mfu=rate, serve=serve, batch=batch)
    hbm = accelerator(spec.gpu).hbm_bytes
    return [cost_row(name, block, predict(block, run), hbm, batch if serve else None, spec.attention)
            for name, block in counted(named, "cost: shapes")]


def architectures(texts, configs, arch, context, overrides):
    """(name, blocks.Architecture) of every shape text and config file, all checked first."""
    from ...arch.presets import preset
    from ...core.errors import InputError
    from ..inputs import bounded_number, resolve_shapes

    block = preset(arch)
    given = {k: v for k, v in overrides.items() if v is not None}
    if "ffn_mult" in given:
        given["ffn_mult"] = bounded_number(given["ffn_mult"], "--ffn-mult", 64, "expected a multiplier from 1/64 to 64, such as 1.3",
                                           lowest=1 / 64)  # plan's range (docs/errors.md, "One option, one range")
    out = []
    for text, shape in zip(texts, resolve_shapes(texts, None)):
        own = dict(given)
        if text.strip()[:1].isdigit() and text.lower().count("x") >= 2 and "head_dim" not in own:
            if shape.width % shape.heads:
                raise InputError("shape", text, f"heads must divide the width ({shape.width} / {shape.heads} is not whole)")
            own["head_dim"] = shape.width // shape.heads
        elif not text.strip()[:1].isdigit():
            from ...arch.catalog import find

            model = find(text)
            if model is not None and not given and arch == "vanilla":
                out.append((text, model.architecture))
                continue
        family = block.for_shape(shape.depth, shape.width)  # the family's block at this shape's size, as plan and export take it
        out.append((text, family.architecture(shape.depth, shape.width, context, **own)))
    for path in configs:
        from ...hf.config import inspect_config
        from ...hf.read import read_config_file

        found = inspect_config(read_config_file(path), path)
        out.append((path, found.architecture))
    return out
