"""The Typer app and the one error funnel: every failure becomes one stderr line and an exit
code here, and nowhere else. Exit 2: bad input (InputError, or a usage error such as an unknown
option); exit 1: anything else. No traceback unless DEPTHWIDTH_DEBUG is set.

Every command imports what it needs inside its function, so ``--help`` and ``--version`` load
none of NumPy, SciPy or Pydantic, and scalar commands never load SciPy.
"""
import gc
import os
import sys
from functools import lru_cache
from importlib import import_module

import typer

from .. import __version__
from ..core.errors import EXIT_BAD_INPUT, EXIT_FAILURE, EnvironmentFailure, InputError
from ..core.staging import hold_after_commit
from ..output.guard import OUTPUT_ERRNOS, ClosedStdout, discard_stdout, flush_stdout
from .notices import clear as clear_notices, pending as pending_notices
from .options import grouped
from .tablewidth import with_wide
from ._typer_compat import ClickException, FunnelGroup, NoArgsIsHelpError, UsageError

EXIT_INTERRUPTED = 130  # 128 + SIGINT: Typer's exit code for a KeyboardInterrupt (see cli/__init__.py)

# every command, in the order `depthwidth --help` lists them (each is cli/commands/<name>.py)
COMMANDS = ("plan", "sweep", "cost", "calibrate", "compare", "bounds", "equiv", "models", "inspect", "reproduce", "rules", "fit", "export",
            "certify", "schema", "plot")


def funnel(run, args) -> int:
    """Run the command line (``run()`` parses and calls the command) and turn every failure into
    one stderr line and an exit code: the one error funnel."""
    clear_notices()
    hold_after_commit(True)
    if sys.stdout is None:  # started with file descriptor 1 closed (`>&-`): writing must fail, not vanish
        sys.stdout = ClosedStdout()
    try:
        code = run()
        if code == EXIT_INTERRUPTED:  # Ctrl-C: Typer turned the KeyboardInterrupt into exit 130; say nothing more
            discard_stdout()
        else:
            flush_stdout()  # help and --version text still in the buffer: a full disk shows here
            for message in pending_notices():  # only a run that got this far warns: a failing one prints one line
                typer.echo(f"depthwidth: warning: {message}", err=True)
    except InputError as err:
        code = _fail(str(err), EXIT_BAD_INPUT)
    except EnvironmentFailure as err:
        discard_stdout()
        code = _fail(str(err), EXIT_FAILURE)
    except NoArgsIsHelpError as err:  # `depthwidth plot`: its help, as `depthwidth` alone shows the main help
        typer.echo(err.ctx.get_help())
        code = 0
    except UsageError as err:
        code = _fail(_usage_message(err, sys.argv[1:] if args is None else list(args)), EXIT_BAD_INPUT)
    except typer.Abort:
        code = _fail("aborted", EXIT_FAILURE)
    except ClickException as err:
        code = _fail(" ".join(err.format_message().split()), EXIT_FAILURE)
    except BrokenPipeError:
        discard_stdout()  # what is still buffered goes nowhere, quietly, at exit
        sys.stderr.close()  # the reader went away (e.g. `| head`): not an error worth a message
        code = EXIT_FAILURE
    except OSError as err:  # echo() of help or --version text flushes itself: a full disk
        if err.errno not in OUTPUT_ERRNOS:
            code = _internal(err)
        else:
            discard_stdout()
            code = _fail(f"cannot write output: {err.strerror or err}", EXIT_FAILURE)
    except Exception as err:  # noqa: BLE001 - the contract is one line and exit 1
        code = _internal(err)
    code = code if isinstance(code, int) else 0
    late = hold_after_commit(False)
    if late and code == 0:  # the output was complete when the signal came: it stays, and so does exit 0
        typer.echo(f"depthwidth: warning: {' and '.join(dict.fromkeys(late))} arrived after the output was written; "
                   "it is complete and kept", err=True)
    return code


def _usage_message(err, args: list) -> str:
    """A usage error on one line; a bad option value in the InputError form, naming the value
    (Typer validates typed options with Pydantic, whose error keeps the offending input)."""
    hint = f" (see '{err.ctx.command_path} --help')" if err.ctx is not None else ""
    message = " ".join(err.format_message().split())
    name = getattr(err, "option_name", None) or ""
    if len(name) > 1 and (name[1].isdigit() or name[1] == "."):  # '-1x768' parsed as an option: a negative value
        token = next((a for a in args if isinstance(a, str) and a.startswith(name)), name)
        return str(InputError("value", token, "expected a positive value: shapes, budgets and depths are never negative"))
    param, cause = getattr(err, "param", None), err.__cause__
    errors = cause.errors() if param is not None and callable(getattr(cause, "errors", None)) else None
    if errors and isinstance(errors[0].get("input"), (str, int, float)):
        name = max(param.opts, key=len) if getattr(param, "opts", None) else param.name
        accepted = str(errors[0].get("msg", "")).removeprefix("Value error, ")
        message = str(InputError(name, str(errors[0]["input"]), " ".join(accepted.split())))
    return message + hint


def _internal(err: Exception) -> int:
    if os.environ.get("DEPTHWIDTH_DEBUG"):
        raise err
    return _fail(f"internal error: {type(err).__name__}: {err} (set DEPTHWIDTH_DEBUG=1 for the traceback)", EXIT_FAILURE)


def _fail(message: str, code: int) -> int:
    typer.echo(f"depthwidth: error: {message}", err=True)
    return code


def _version(value: bool) -> None:
    if value:
        typer.echo(f"depthwidth {__version__}")
        raise typer.Exit()


def root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version and exit."),
) -> None:
    """How deep and how wide should a Transformer be?"""


def build(names=COMMANDS) -> typer.Typer:
    """The Typer app with the commands ``names`` (imported here, each from its own module)."""
    app = typer.Typer(
        cls=FunnelGroup.around(funnel),
        name="depthwidth",
        help="How deep and how wide should a Transformer be? Answers from Levine et al. 2020, "
        '"Limits to Depth Efficiencies of Self-Attention": below depth log3(width) depth is '
        "double-exponentially efficient; above it depth and width trade evenly.",
        no_args_is_help=True,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,  # help texts are plain: "LxD[xH]" and "depthwidth[plot]" must not read as markup
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    app.callback()(root)
    for name in names:
        module = import_module(f"{__package__}.commands.{name}")
        if name == "plot":
            app.add_typer(module.plot_app, name="plot")
        else:
            app.command(name)(with_wide(grouped(module.command)))
    return app


@lru_cache(maxsize=None)
def full_app() -> typer.Typer:
    """The app with every command (``depthwidth.cli.app``)."""
    return build()


def app_for(args: list) -> typer.Typer:
    """The app a command line needs: a call naming a command gets that command alone (the other
    twelve are neither imported nor turned into Click commands: ~15 ms of a ~0.2 s call);
    anything else (no arguments, --help, --version, a typo) gets every command."""
    first = args[0] if args else None
    return build((first,)) if first in COMMANDS else full_app()


def main() -> None:
    """Console-script entry point (and ``python -m depthwidth``): the process ends with the command.
    Only the command named on the command line is built (``app_for``).

    A call lives ~0.1 s and leaves no garbage worth collecting, so the collector stays off, and
    at exit everything still alive is frozen out of the interpreter's final collection, which
    would otherwise walk every object Typer and Rich made (~13 ms of a plan's start; docs/speed.md).
    """
    gc.disable()
    try:
        app_for(sys.argv[1:])()
    finally:
        gc.freeze()
        gc.enable()  # for a caller that catches the SystemExit and goes on
