"""`depthwidth inspect`: read Hugging Face config.json files, with what each model costs to train and serve."""
from typing import Annotated, List

import typer

from ..inputs import read_stdin_bytes, warn_constraints
from ..notices import warn
from ..options import RUN, SHOWN, RunOptions, ShownOptions


def command(
    paths: Annotated[List[str], typer.Argument(help="Hugging Face config.json files (or model folders); '-' reads one from stdin.")],
    run: RunOptions = RUN,
    shown: ShownOptions = SHOWN,
    explain: Annotated[bool, typer.Option("--explain", help="Every note in the table (by default those that fit one "
                                                            "screen, and how many more there are); JSON always has all.")] = False,
) -> None:
    """Read Hugging Face config.json files: shape, real parameter count, regime, the plan for its size, and its training and serving costs.

    Example: depthwidth inspect ./llama-7b/config.json --tokens 2e12 --gpus 512 --tp 8
    """
    from ...hf.config import inspect_config
    from ...hf.read import read_config_bytes, read_config_file
    from ...core.userfile import STDIN
    from ...output import emit
    from ...output.screen_tables import inspect_tables
    from ...advice.reports import config_report
    from ..training import costed, given_run, pipeline_stages

    format, field, c2_reading = shown
    spec, fixed, rate = given_run(run)
    configs = []
    for path in paths:
        raw = read_config_bytes(read_stdin_bytes("config"), STDIN) if path == "-" else read_config_file(path)
        configs.append(inspect_config(raw, STDIN if path == "-" else path))
    pipeline_stages(spec.pp, [(c.source, c.architecture) for c in configs])
    warn_constraints([(c.source, c.architecture, c.heads) for c in configs], run.tp, run.multiple)
    for c in configs:  # an unknown model_type: what was assumed in its place, on stderr as in the notes
        assumed = [n.removeprefix("assumed: ") for n in c.notes if getattr(n, "kind", None) == "assumed"]
        if assumed:
            warn(f"{c.source}: assumed " + "; ".join(assumed))
    emit([costed(config_report(c, c2_reading.value), c.architecture, spec, fixed, rate) for c in configs], format.value, field,
         lambda records: inspect_tables(records, explain), command="inspect")
