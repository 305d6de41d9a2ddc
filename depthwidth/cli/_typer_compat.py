"""Every use of Typer's private internals, in this one module (tested by tests/test_typer_compat.py).

Typer 0.29 (the range pinned in pyproject.toml) vendors Click as ``typer._click`` and raises only
its exception classes, and coerces every parameter through a Pydantic TypeAdapter unless the
parameter carries a ``RuntimeParam`` (``typer._coercion``). Importing Pydantic costs ~50 ms, a
third of a `plan` call, so simple parameters (text, whole numbers, flags, choices, lists of
these) get a RuntimeParam that coerces with a plain function instead, with Pydantic's wording.
"""
from __future__ import annotations

import sys
from enum import Enum
from functools import partial
from typing import get_args, get_origin

import typer
from typer.core import TyperGroup
from typer._click import exceptions as click_exceptions  # the Click classes this Typer raises
from typer._coercion import RuntimeParam
from ..core.frozen import frozen

UsageError = click_exceptions.UsageError
ClickException = click_exceptions.ClickException
NoArgsIsHelpError = click_exceptions.NoArgsIsHelpError


class CoercionError(ValueError):
    """A bad option value, shaped like Pydantic's ValidationError (``errors()``), so that the
    error funnel (cli/app.py) names the value the same way whichever path coerced it."""

    def __init__(self, value, message: str):
        super().__init__(message)
        self.value, self.message = value, message

    def errors(self) -> list:
        return [{"input": self.value, "msg": self.message}]


def whole_number(value, lowest=None, highest=None) -> int:
    """An int option: Pydantic's lax rules and messages ('7', ' 7 ', '1_0', '7.0'), bounds checked."""
    number = value
    if isinstance(value, str):
        text = value.strip()
        whole, _, fraction = text.partition(".")
        try:
            number = int(whole) if text.isascii() and whole and fraction.strip("0") == "" else None
        except ValueError:
            number = None
    if isinstance(number, bool) or not isinstance(number, int):
        raise CoercionError(value, "Input should be a valid integer, unable to parse string as an integer")
    if lowest is not None and number < lowest:
        raise CoercionError(value, f"Input should be greater than or equal to {lowest}")
    if highest is not None and number > highest:
        raise CoercionError(value, f"Input should be less than or equal to {highest}")
    return number


def flag(value) -> bool:
    """A bool option given as text (an environment variable): Pydantic's words and message."""
    text = value.strip().lower() if isinstance(value, str) else value
    for truth, words in ((False, ("", "0", "off", "f", "false", "n", "no")), (True, ("1", "on", "t", "true", "y", "yes"))):
        if text in words or (isinstance(text, int) and text == int(truth)):
            return truth
    raise CoercionError(value, "Input should be a valid boolean, unable to interpret input")


def choice(kind: type, case_sensitive: bool, value):
    """An Enum option: the member whose value is ``value`` (Typer's message when none is)."""
    if isinstance(value, kind):
        return value
    fold = (lambda text: text) if case_sensitive else str.casefold
    for member in kind:
        if fold(str(member.value)) == fold(str(value)):
            return member
    raise CoercionError(value, f"{value!r} is not one of {', '.join(repr(fold(str(m.value))) for m in kind)}.")


def converter(annotation, info):
    """A plain function coercing this parameter kind, or None to leave it to Typer."""
    if getattr(info, "parser", None) is not None or getattr(info, "click_type", None) is not None:
        return None
    if annotation is str:
        return str
    if annotation is bool:
        return flag
    if annotation is int and not getattr(info, "clamp", False):
        return partial(whole_number, lowest=getattr(info, "min", None), highest=getattr(info, "max", None))
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        return partial(choice, annotation, getattr(info, "case_sensitive", True))
    if get_origin(annotation) is list and len(get_args(annotation)) == 1:
        item = converter(get_args(annotation)[0], info)
        return None if item is None else (lambda values: [item(v) for v in values])
    return None


@frozen
class DirectParam(RuntimeParam):
    """Typer's coercion contract, fulfilled by a plain function (see ``direct_coercion``)."""

    convert: object

    def _coerce_value(self, value, param, ctx):
        try:
            return self.convert(value)
        except CoercionError as err:
            raise typer.BadParameter(err.message, ctx=ctx, param=param) from err


def direct_coercion(command, ctx) -> None:
    """Coerce the simple parameters of ``command`` without Pydantic; any other kind keeps
    Typer's own path."""
    if command is None:
        return
    for param in command.get_params(ctx):  # with the --help option, which Typer creates lazily
        descriptor = getattr(param, "type_descriptor", None)
        if getattr(param, "_runtime_param", False) is not None or descriptor is None or descriptor.file_annotation is not None:
            continue
        convert = converter(descriptor.annotation, descriptor.parameter_info)
        if convert is not None:
            param._runtime_param = DirectParam(descriptor.parameter_info, descriptor.annotation, convert)


class FunnelGroup(TyperGroup):
    """The root command group, the only subclass of Click's machinery: coerces simple options
    without Pydantic (``direct_coercion``), shows the help for no arguments, and hands the whole
    run to a funnel (cli/app.py's ``funnel``) that turns every failure into an exit code."""

    funnel = None  # callable(run, args) -> exit code; set by ``around``

    @classmethod
    def around(cls, funnel) -> type:
        """This group class with ``funnel`` wrapped around every run."""
        return type(cls.__name__, (cls,), {"funnel": staticmethod(funnel)})

    def get_command(self, ctx, cmd_name):
        command = super().get_command(ctx, cmd_name)
        direct_coercion(command, ctx)
        return command

    def parse_args(self, ctx, args):
        """No arguments at all shows the help on stdout and exits 0, the same as --help."""
        direct_coercion(self, ctx)
        if not args and not ctx.resilient_parsing:
            text = ctx.get_help()  # the Rich formatter prints the help itself and returns ""
            if text:
                typer.echo(text)
            ctx.exit(0)
        return super().parse_args(ctx, args)

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        run = lambda: super(FunnelGroup, self).main(args, prog_name or "depthwidth", complete_var,  # noqa: E731
                                                    standalone_mode=False, **extra)
        code = self.funnel(run, args)
        if standalone_mode:
            sys.exit(code)
        return code
