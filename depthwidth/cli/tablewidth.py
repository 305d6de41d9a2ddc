"""``--wide`` on every command that prints tables, added at registration (cli/app.py) so no
command module repeats it: tables otherwise fit the terminal (``output.fitting.FittedTable``)."""
import functools
import inspect
from typing import Annotated

import typer

Wide = Annotated[bool, typer.Option("--wide", help="Tables at their full width, never folded or split to fit the terminal.")]


def with_wide(command):
    """``command`` with a ``--wide`` flag when it has a --format (every table-printing command)."""
    signature = inspect.signature(command, eval_str=True)
    if "format" not in signature.parameters:
        return command

    @functools.wraps(command)
    def wrapper(*args, wide: bool = False, **kwargs):
        if not wide:  # tables fit the terminal by default: nothing to switch (and a JSON run never loads the fitting)
            return command(*args, **kwargs)
        from ..output.fitting import WIDE

        WIDE["on"] = wide
        try:
            return command(*args, **kwargs)
        finally:
            WIDE["on"] = False

    extra = inspect.Parameter("wide", inspect.Parameter.KEYWORD_ONLY, default=False, annotation=Wide)
    wrapper.__signature__ = signature.replace(parameters=[*signature.parameters.values(), extra])
    wrapper.__annotations__ = {**getattr(command, "__annotations__", {}), "wide": Wide}
    return wrapper
