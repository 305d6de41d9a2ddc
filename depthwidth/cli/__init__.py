"""The depthwidth command line: parse and validate (inputs), call the core, render (output).

    app.py            the Typer app, the one error funnel, building only the command run
    commands/         one module per command
    options.py        shared options as Annotated aliases
    inputs.py         standard input, lists, budgets, shapes, the planner's options
    notices.py        warnings held until a command succeeds
    tablewidth.py     --wide on every table command
    _typer_compat.py  every use of Typer internals

This module stays tiny: ``main`` (the console script ``depthwidth.cli:main`` and ``python -m
depthwidth``) installs the signal handling before anything heavy is imported, so Ctrl-C during
``import typer`` exits 130 without a traceback like Ctrl-C at any later point; SIGTERM exits 143.
The first signal wins: the second one (a user pressing Ctrl-C again) is ignored while the first
unwinds, so the clean-up of a half-written export (``staging``) and the exit are never cut short.
"""
import gc
import os
import signal
import sys

__all__ = ["app", "main"]

EXIT_INTERRUPTED = 128 + signal.SIGINT  # 130
EXIT_TERMINATED = 128 + signal.SIGTERM  # 143
_received: list[int] = []  # the signal that ended the run, if one did


def _stop(signum, frame):
    """SIGINT -> KeyboardInterrupt, SIGTERM -> SystemExit(143): finally blocks and ``staging``
    remove what was half written on the way out. Later signals are ignored meanwhile."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    _received.append(signum)
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise SystemExit(128 + signum)


def _unraisable(hook):
    """A signal landing in code whose exceptions Python cannot raise (a weakref callback of the
    import system, a __del__) is not reported as "Exception ignored": it is remembered instead,
    so the run still ends with the signal's exit code (130, 143) once its work is done. This
    covers the handlers of others too (``staging``'s SIGTERM handler raises SystemExit(143))."""
    def quiet(report):
        if issubclass(report.exc_type, KeyboardInterrupt):
            _received.append(signal.SIGINT)
        elif issubclass(report.exc_type, SystemExit) and getattr(report.exc_value, "code", None) == EXIT_TERMINATED:
            _received.append(signal.SIGTERM)
        else:
            hook(report)
    return quiet


def main() -> None:
    """Console-script entry point: signals first, then the app (cli/app.py). A run a signal
    ended exits 128 + its number (130, 143) through ``os._exit``, after the clean-up: Python's
    own exit would turn a KeyboardInterrupt once raised inside eval() into a death by SIGINT."""
    signal.signal(signal.SIGINT, _stop)
    signal.signal(signal.SIGTERM, _stop)
    sys.unraisablehook = _unraisable(sys.unraisablehook)
    gc.disable()  # from the first import on (typer's too): app.main's reasons, ~2 ms of a plan's start
    try:
        from .app import main as run

        globals().pop("app", None)  # the submodule's name, bound by that import: ``app`` means the Typer app
        run()
    except KeyboardInterrupt:  # before or after the app's own funnel (which turns it into exit 130 too)
        pass
    finally:  # the work is done (or given up): a signal now changes nothing, so it is ignored
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        if _received:
            try:
                sys.stderr.flush()
            finally:
                os._exit(128 + _received[0])  # stdout's buffer is dropped: nothing partial


def __getattr__(name: str):
    """``depthwidth.cli.app``: the Typer app with every command, built on first use (main()
    builds only the command it runs); the module cli/app.py stays reachable as
    ``sys.modules["depthwidth.cli.app"]`` and by ``from depthwidth.cli.app import ...``."""
    if name == "app":
        from .app import full_app

        globals().pop("app", None)  # importing the submodule bound its name here: keep this hook in charge
        return full_app()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
