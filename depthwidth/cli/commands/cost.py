"""`depthwidth cost`: what a shape costs to train and serve on a cluster, in the parallel layout it would run in."""
from typing import Annotated, List, Optional

import typer

from ...arch.blocks import DEFAULT_CONTEXT
from ..options import BLOCK, Arch, Batch, BlockOptions, Context, Field, Fmt, Format, Gpu, KvHeads, MfuOverride, Tokens



def command(
    shapes: Annotated[Optional[List[str]], typer.Argument(help="Shapes LxD[xH] or model names; '-' reads them from stdin, one a line.")] = None,
    config: Annotated[Optional[List[str]], typer.Option("--config", help="A Hugging Face config.json (or model folder) to cost. Repeatable.")] = None,
    arch: Arch = "vanilla",
    kv_heads: KvHeads = None,
    block: BlockOptions = BLOCK,
    gpu: Gpu = "h100",
    gpus: Annotated[Optional[int], typer.Option("--gpus", help="GPUs training together. Default: one node of --gpu.", min=1, max=1 << 24)] = None,
    tp: Annotated[Optional[int], typer.Option("--tp", help="Tensor-parallel degree (default: searched).", min=1, max=1 << 12)] = None,
    pp: Annotated[Optional[int], typer.Option("--pp", help="Pipeline-parallel degree (default: searched); at most the "
                                                 "shape's depth.", min=1, max=1 << 12)] = None,
    cp: Annotated[Optional[int], typer.Option("--cp", help="Context-parallel degree (default: searched from a 32,768 context).", min=1, max=1 << 12)] = None,
    micro_batch: Annotated[Optional[int], typer.Option("--micro-batch", help="Sequences per micro-batch (default: searched).", min=1, max=1 << 16)] = None,
    global_batch: Annotated[Optional[int], typer.Option("--global-batch", help="Sequences per optimizer step. Default: GPT-3's batch for "
                                                        "the size (Brown et al. 2020, Table 2.1).", min=1, max=1 << 30)] = None,
    recompute: Annotated[Optional[str], typer.Option("--recompute", help="none, selective or full (default: searched).")] = None,
    zero: Annotated[Optional[int], typer.Option("--zero", help="ZeRO stage 0-3 (default: searched).", min=0, max=3)] = None,
    attention: Annotated[Optional[str], typer.Option("--attention", help="Attention kernel: flash or unfused. Default: unfused for the "
                                                     "vanilla and gpt2 presets (as Megatron-LM trained them), flash otherwise.")] = None,
    context: Context = DEFAULT_CONTEXT,
    tokens: Tokens = None,
    mfu: MfuOverride = None,
    serve: Annotated[bool, typer.Option("--serve", help="Also predict serving: prefill, decode time per token, tokens/s.")] = False,
    batch: Batch = 1,
    format: Fmt = Format.table,
    field: Field = None,
) -> None:
    """What a shape costs on a cluster: its best parallel layout, step time, tokens/s, MFU, days; serving with --serve.

    Example: depthwidth cost 32x4096 --arch llama --gpu h100 --gpus 64 --tokens 2e11
    """
    from ...cost.predict import Cluster, predict
    from ...errors import InputError
    from ...output import emit
    from ...output.costtable import cost_tables
    from ..inputs import expand_stdin
    from ..training import mfu_rate, one_token_count, pipeline_stages

    if recompute is not None and recompute.strip().lower() not in ("none", "selective", "full"):
        raise InputError("--recompute", recompute, "expected one of none, selective, full")
    if attention is not None and attention.strip().lower() not in ("flash", "unfused"):
        raise InputError("--attention", attention, "expected flash or unfused")
    if not shapes and not config:
        raise InputError("shapes", "(none)", "expected at least one shape such as 32x4096, a model name, '-' or --config FILE")
    from ...arch.hardware import accelerator

    accelerator(gpu)  # a bad --gpu fails before anything is computed
    rate = None if mfu is None else mfu_rate(mfu)
    fixed = tuple((k, v) for k, v in (("tp", tp), ("pp", pp), ("cp", cp), ("micro_batch", micro_batch), ("zero", zero),
                                      ("recompute", recompute and recompute.strip().lower())) if v is not None)
    cluster = Cluster(gpu=gpu.strip().lower(), gpus=gpus, context=context, global_batch=global_batch, tokens=one_token_count(tokens),
                      mfu=rate, fixed=fixed, attention=attention and attention.strip().lower(), serve=serve, batch=batch)
    named = _architectures(expand_stdin(shapes) if shapes else [], config or [], arch, context,
                           dict(kv_heads=kv_heads, **block._asdict()))
    pipeline_stages(pp, named)
    from ..progress import counted

    records = []
    for name, block in counted(named, "cost: shapes"):
        record = {"shape": name, "depth": block.depth, "width": block.width, "heads": block.heads, "arch": block.family}
        record.update(predict(block, cluster))
        records.append(record)
    emit(records, format.value, field, cost_tables)


def _architectures(texts, configs, arch, context, overrides):
    """(name, blocks.Architecture) of every shape text and config file, all checked first."""
    from ...arch.presets import preset
    from ...errors import InputError
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
        out.append((text, block.architecture(shape.depth, shape.width, context, **own)))
    for path in configs:
        from ...hf.config import inspect_config, read_config_file

        found = inspect_config(read_config_file(path), path)
        out.append((path, found.architecture))
    return out
