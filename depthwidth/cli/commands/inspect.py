"""`depthwidth inspect`: read Hugging Face config.json files, with what each model costs to train and serve."""
from typing import Annotated, List

import typer

from ...arch.blocks import DEFAULT_CONTEXT
from ..inputs import read_stdin_bytes, warn_constraints
from ..notices import warn
from ..options import (Batch, C2Reading, CheckMultiple, Context, CostTp, Field, Fmt, Format, Gpu, Gpus, MfuText, Pp, Reading, Recompute,
                       Tokens, Zero)


def command(
    paths: Annotated[List[str], typer.Argument(help="Hugging Face config.json files (or model folders); '-' reads one from stdin.")],
    tp: CostTp = None,
    multiple: CheckMultiple = None,
    tokens: Tokens = None,
    gpu: Gpu = "h100",
    gpus: Gpus = None,
    pp: Pp = 1,
    zero: Zero = 1,
    recompute: Recompute = "selective",
    mfu: MfuText = "0.4",
    context: Context = DEFAULT_CONTEXT,
    batch: Batch = 1,
    format: Fmt = Format.table,
    field: Field = None,
    c2_reading: Reading = C2Reading.consistent,
) -> None:
    """Read Hugging Face config.json files: shape, real parameter count, regime, the plan for its size, and its training and serving costs.

    Example: depthwidth inspect ./llama-7b/config.json --tokens 2e12 --gpus 512 --tp 8
    """
    from ...hf.config import inspect_config, read_config_bytes, read_config_file
    from ...output import emit
    from ...output.tables import inspect_tables
    from ...advice.reports import config_report
    from ..training import costed, one_token_count, run_spec

    spec = run_spec(one_token_count(tokens), gpu, gpus, tp or 1, pp, zero, recompute, mfu, context, batch)
    configs = []
    for path in paths:
        raw = read_config_bytes(read_stdin_bytes("config"), "<stdin>") if path == "-" else read_config_file(path)
        configs.append(inspect_config(raw, "<stdin>" if path == "-" else path))
    warn_constraints([(c.source, c.architecture, c.heads) for c in configs], tp, multiple)
    for c in configs:  # an unknown model_type: what was assumed in its place, on stderr as in the notes
        assumed = [n.removeprefix("assumed: ") for n in c.notes if n.startswith("assumed:")]
        if assumed:
            warn(f"{c.source}: assumed " + "; ".join(assumed))
    emit([costed(config_report(c, c2_reading.value), c.architecture, spec) for c in configs], format.value, field, inspect_tables)
