"""`depthwidth schema RECORD`: the JSON Schema of an output record, for pipelines."""
import sys
from typing import Annotated

import typer


def command(
    record: Annotated[str, typer.Argument(help="plan, candidate, plan-rules, shape, bounds, grid, compare, equiv, models, "
                                               "inspect, cost, sweep, export, fit, rules, reproduce or certify.")],
) -> None:
    """The JSON Schema (draft 2020-12) of what a command prints with --format json, built from its records.

    Example: depthwidth schema plan > plan.schema.json
    """
    import json

    from ...output.guard import write_output
    from ...output.schema import schema

    write_output(json.dumps(schema(record), indent=2, ensure_ascii=True) + "\n", sys.stdout)
