"""The depthwidth command line: parse and validate, call the core, render. No math here.

Every command imports what it needs inside its function, so ``--help`` and ``--version`` load
none of NumPy, SciPy or Pydantic, and scalar commands never load SciPy.
"""
import gc
import os
import sys
from enum import Enum
from typing import List, Optional

import typer
from typer.core import TyperGroup

from . import __version__
from .errors import InputError

EXIT_BAD_INPUT = 2
EXIT_FAILURE = 1
MAX_GRID_ROWS = 10**8
MAX_AXIS_VALUES = 10**6  # one --depth/--width list: a Python list of this many ints is ~40 MB
MAX_TABLE_ROWS = 5000


class Format(str, Enum):
    table = "table"
    json = "json"
    jsonl = "jsonl"
    csv = "csv"


def _click_exceptions():
    """The exception module of the Click that Typer runs on: recent Typer vendors Click as
    ``typer._click`` (and raises only its classes); older Typer runs on Click itself."""
    try:
        from typer._click import exceptions
    except ImportError:  # pragma: no cover - older Typer
        from click import exceptions
    return exceptions


_CLICK = _click_exceptions()

try:  # recent Typer coerces every parameter through a Pydantic TypeAdapter unless given a RuntimeParam
    from typer._coercion import RuntimeParam as _RuntimeParam
except ImportError:  # pragma: no cover - older Typer coerces with Click types and never loads Pydantic
    _RuntimeParam = None


class _CoercionError(ValueError):
    """A bad option value, shaped like Pydantic's ValidationError (``errors()``) for ``_usage_message``."""

    def __init__(self, value, message: str):
        super().__init__(message)
        self.value, self.message = value, message

    def errors(self) -> list:
        return [{"input": self.value, "msg": self.message}]


def _whole_number(value, lowest=None, highest=None) -> int:
    """An int option: Pydantic's lax rules and messages ('7', ' 7 ', '1_0', '7.0'), bounds checked."""
    number = value
    if isinstance(value, str):
        text = value.strip()
        whole, dot, fraction = text.partition(".")
        try:
            number = int(whole) if text.isascii() and whole and fraction.strip("0") == "" else None
        except ValueError:
            number = None
    if isinstance(number, bool) or not isinstance(number, int):
        raise _CoercionError(value, "Input should be a valid integer, unable to parse string as an integer")
    if lowest is not None and number < lowest:
        raise _CoercionError(value, f"Input should be greater than or equal to {lowest}")
    if highest is not None and number > highest:
        raise _CoercionError(value, f"Input should be less than or equal to {highest}")
    return number


def _flag(value) -> bool:
    """A bool option given as text (an environment variable): Pydantic's words and message."""
    text = value.strip().lower() if isinstance(value, str) else value
    for truth, words in ((False, ("", "0", "off", "f", "false", "n", "no")), (True, ("1", "on", "t", "true", "y", "yes"))):
        if text in words or (isinstance(text, int) and text == int(truth)):
            return truth
    raise _CoercionError(value, "Input should be a valid boolean, unable to interpret input")


def _choice(kind: type, case_sensitive: bool, value):
    """An Enum option: the member whose value is ``value`` (Typer's message when none is)."""
    if isinstance(value, kind):
        return value
    fold = (lambda text: text) if case_sensitive else str.casefold
    for member in kind:
        if fold(str(member.value)) == fold(str(value)):
            return member
    raise _CoercionError(value, f"{value!r} is not one of {', '.join(repr(fold(str(m.value))) for m in kind)}.")


def _converter(annotation, info):
    """A plain function coercing this parameter kind, or None to leave it to Typer."""
    from functools import partial
    from typing import get_args, get_origin

    if getattr(info, "parser", None) is not None or getattr(info, "click_type", None) is not None:
        return None
    if annotation is str:
        return str
    if annotation is bool:
        return _flag
    if annotation is int and not getattr(info, "clamp", False):
        return partial(_whole_number, lowest=getattr(info, "min", None), highest=getattr(info, "max", None))
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        return partial(_choice, annotation, getattr(info, "case_sensitive", True))
    if get_origin(annotation) is list and len(get_args(annotation)) == 1:
        item = _converter(get_args(annotation)[0], info)
        return None if item is None else (lambda values: [item(v) for v in values])
    return None


def _direct_coercion(command, ctx) -> None:
    """Coerce the simple parameters of ``command`` (text, whole numbers, flags, choices, lists
    of these) without Pydantic: importing it costs ~50 ms, a third of a `plan` call (issue 5).
    Any other kind, and Typer without TypeAdapter coercion, keep Typer's own path."""
    if _RuntimeParam is None or command is None:
        return
    for param in command.get_params(ctx):  # with the --help option, which Typer creates lazily
        descriptor = getattr(param, "type_descriptor", None)
        if getattr(param, "_runtime_param", False) is not None or descriptor is None or descriptor.file_annotation is not None:
            continue
        convert = _converter(descriptor.annotation, descriptor.parameter_info)
        if convert is not None:
            param._runtime_param = _DirectParam(descriptor.parameter_info, descriptor.annotation, convert)


if _RuntimeParam is not None:
    from dataclasses import dataclass as _dataclass

    @_dataclass(frozen=True)
    class _DirectParam(_RuntimeParam):
        """Typer's coercion contract, fulfilled by a plain function (see ``_direct_coercion``)."""

        convert: object

        def _coerce_value(self, value, param, ctx):
            try:
                return self.convert(value)
            except _CoercionError as err:
                raise typer.BadParameter(err.message, ctx=ctx, param=param) from err


class _Group(TyperGroup):
    """Turns every failure into one stderr line and an exit code, in this one place.

    Exit 2: bad input (InputError, or a usage error such as an unknown option); exit 1:
    anything else. No traceback unless DEPTHWIDTH_DEBUG is set.
    """

    def get_command(self, ctx, cmd_name):
        command = super().get_command(ctx, cmd_name)
        _direct_coercion(command, ctx)
        return command

    def parse_args(self, ctx, args):
        """No arguments at all shows the help on stdout and exits 0, the same as --help."""
        _direct_coercion(self, ctx)
        if not args and not ctx.resilient_parsing:
            text = ctx.get_help()  # the Rich formatter prints the help itself and returns ""
            if text:
                typer.echo(text)
            ctx.exit(0)
        return super().parse_args(ctx, args)

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        _WARNINGS.clear()
        try:
            code = super().main(args, prog_name or "depthwidth", complete_var, standalone_mode=False, **extra)
            for message in dict.fromkeys(_WARNINGS):  # only a run that got this far warns: a failing one prints one line
                typer.echo(f"depthwidth: warning: {message}", err=True)
        except InputError as err:
            code = _fail(str(err), EXIT_BAD_INPUT)
        except _CLICK.UsageError as err:
            code = _fail(_usage_message(err, sys.argv[1:] if args is None else list(args)), EXIT_BAD_INPUT)
        except typer.Abort:
            code = _fail("aborted", EXIT_FAILURE)
        except _CLICK.ClickException as err:
            code = _fail(" ".join(err.format_message().split()), EXIT_FAILURE)
        except BrokenPipeError:
            sys.stderr.close()  # the reader went away (e.g. `| head`): not an error worth a message
            code = EXIT_FAILURE
        except Exception as err:  # noqa: BLE001 - the contract is one line and exit 1
            if os.environ.get("DEPTHWIDTH_DEBUG"):
                raise
            code = _fail(f"internal error: {type(err).__name__}: {err} (set DEPTHWIDTH_DEBUG=1 for the traceback)", EXIT_FAILURE)
        code = code if isinstance(code, int) else 0
        if standalone_mode:
            sys.exit(code)
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


def _fail(message: str, code: int) -> int:
    typer.echo(f"depthwidth: error: {message}", err=True)
    return code


_WARNINGS: list[str] = []


def _warn(message: str) -> None:
    """A stderr warning, held back until the command has succeeded (see ``_Group.main``)."""
    _WARNINGS.append(message)


app = typer.Typer(
    cls=_Group,
    name="depthwidth",
    help="How deep and how wide should a Transformer be? Answers from Levine et al. 2020, "
    '"Limits to Depth Efficiencies of Self-Attention": below depth log3(width) depth is '
    "double-exponentially efficient; above it depth and width trade evenly.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # help texts are plain: "LxD[xH]" and "depthwidth[plot]" must not read as markup
    context_settings={"help_option_names": ["-h", "--help"]},
)

FormatOption = typer.Option(Format.table, "--format", "-f", help="table for people; json, jsonl or csv for pipelines.")
FieldOption = typer.Option(None, "--field", help="Print only this field's value(s), one per line (dotted for nested: deep.regime).")


def _version(value: bool) -> None:
    if value:
        typer.echo(f"depthwidth {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version and exit."),
) -> None:
    """How deep and how wide should a Transformer be?"""


# ---- input helpers -----------------------------------------------------------------------------

def read_stdin_lines() -> list[str]:
    """Non-blank, non-comment lines of standard input (CRLF tolerated; UTF-8 only)."""
    stream = typer.get_binary_stream("stdin")
    data = stream.read()
    try:
        text = data.decode("utf-8-sig")  # a leading byte-order mark (Windows editors) is dropped
    except UnicodeDecodeError:
        raise InputError("standard input", data[:20], "expected UTF-8 text, one input per line") from None
    lines = [line.split("#", 1)[0].strip() for line in text.splitlines()]
    lines = [line for line in lines if line]
    if not lines:
        raise InputError("standard input", "", "expected at least one input line (blank lines and # comments are skipped)")
    return lines


def expand_stdin(values: list[str]) -> list[str]:
    """Replace a '-' among the values by the lines of standard input."""
    out = []
    for value in values:
        out += read_stdin_lines() if value == "-" else [value]
    return out


def parse_int_list(text: str, what: str, lowest: int, highest: int) -> list[int]:
    """'2,3', '1:48' or '256:8192:256' (start:stop[:step], inclusive), or a mix, comma-separated."""
    from .shapes import whole_number

    accepted = f"expected whole numbers from {lowest:,} to {highest:,} as a list like 2,3 or a range start:stop[:step] like 1:48"
    values: list[int] = []
    for item in text.split(","):
        parts = item.strip().split(":")
        if not 1 <= len(parts) <= 3 or not all(p.isascii() and p.isdigit() for p in parts):
            raise InputError(what, text, accepted)
        numbers = [whole_number(p) for p in parts]
        if not all(lowest <= n <= highest for n in numbers[:2]):  # before a range is expanded
            raise InputError(what, text, accepted)
        if len(numbers) == 1:
            values.append(numbers[0])
            continue
        start, stop, step = numbers[0], numbers[1], numbers[2] if len(numbers) == 3 else 1
        if step < 1 or stop < start:
            raise InputError(what, text, "a range needs start <= stop and a step >= 1; " + accepted)
        if (stop - start) // step + 1 + len(values) > MAX_AXIS_VALUES:
            raise InputError(what, text, f"at most {MAX_AXIS_VALUES:,} values per list (a grid may still have {MAX_GRID_ROWS:,} rows)")
        values += range(start, stop + 1, step)  # inside [lowest, highest]: both ends were checked
    return values


def resolve_shapes(texts: list[str], heads: Optional[int]) -> list:
    """Shapes or catalogue names, all validated before anything is computed; warns on H not dividing d."""
    from .shapes import resolve_shape

    shapes = [resolve_shape(t, heads) for t in texts]
    for shape in shapes:
        if shape.width % shape.heads:
            _warn(f"width {shape.width} is not divisible by {shape.heads} heads (head dimension {shape.width / shape.heads:.2f})")
    return shapes


def check_heads(heads: Optional[int]) -> None:
    """--heads: at least 1 and below the largest accepted width (the theorems need H < d)."""
    from .shapes import MAX_WIDTH

    if heads is not None and not 1 <= heads < MAX_WIDTH:
        raise InputError("--heads", heads, f"expected a whole number from 1 to {MAX_WIDTH - 1:,} (and below the width)")


# ---- commands ----------------------------------------------------------------------------------

@app.command()
def plan(
    params: Optional[List[str]] = typer.Option(None, "--params", "-p", help="Parameter budget: 1e9, 350M, 1.3B, 1T; '-' reads budgets from stdin. Repeatable."),
    flops: Optional[List[str]] = typer.Option(None, "--flops", help="Compute budget C in FLOPs: N = sqrt(C/120) (C = 6ND, 20 tokens/param)."),
    tokens: Optional[List[str]] = typer.Option(None, "--tokens", help="Training tokens D: N = D/20 (Hoffmann et al. 2022)."),
    align: int = typer.Option(64, "--align", help="Round the width to a multiple of this.", min=1, max=1 << 20),
    head_dim: int = typer.Option(64, "--head-dim", help="Head dimension: heads = width / head-dim.", min=2, max=1 << 20),
    format: Format = FormatOption,
    field: Optional[str] = FieldOption,
) -> None:
    """Minimal and recommended depth and width for a parameter budget.

    Example: depthwidth plan --params 1e9
    """
    from .budgets import parse_flops, parse_params, parse_tokens
    from .planner import plan as make_plan
    from .render import emit, plan_tables

    given = [(name, values, parse) for name, values, parse in
             (("params", params, parse_params), ("flops", flops, parse_flops), ("tokens", tokens, parse_tokens)) if values]
    if len(given) != 1:
        raise InputError("options", " ".join(f"--{name}" for name, _, _ in given) or "(none)",
                         "expected exactly one of --params, --flops or --tokens")
    source, values, parse = given[0]
    budgets = [parse(v) for v in expand_stdin(values)]
    emit([make_plan(b, align, head_dim, source) for b in budgets], format.value, field, plan_tables)


@app.command()
def compare(
    deep: str = typer.Option(..., "--deep", help="The deeper network: LxD[xH] or a model name."),
    shallow: str = typer.Option(..., "--shallow", help="The shallower network: LxD[xH] or a model name."),
    format: Format = FormatOption,
    field: Optional[str] = FieldOption,
) -> None:
    """Which of two shapes is provably more expressive, and the widths that would change it.

    Example: depthwidth compare --deep 12x768 --shallow 6x1086
    """
    from .render import compare_tables, emit
    from .solver import compare_shapes

    deep_shape, shallow_shape = resolve_shapes([deep, shallow], None)
    emit(compare_shapes(deep_shape, shallow_shape), format.value, field, compare_tables)


@app.command()
def bounds(
    shapes: Optional[List[str]] = typer.Argument(None, help="Shapes LxD[xH] or model names; '-' reads them from stdin."),
    heads: Optional[int] = typer.Option(None, "--heads", help="Heads for every shape (default: width/64, or the H in LxDxH)."),
    depth: Optional[str] = typer.Option(None, "--depth", help="Grid mode: depths, e.g. 1:48 (start:stop[:step], inclusive)."),
    width: Optional[str] = typer.Option(None, "--width", help="Grid mode: widths, e.g. 256:8192:256."),
    format: Format = FormatOption,
    field: Optional[str] = FieldOption,
) -> None:
    """Regime and separation-rank bounds (log3) per shape, or over a depth x width grid.

    Example: depthwidth bounds 12x768 24x1024x16 bert-base
    """
    check_heads(heads)
    if depth is not None or width is not None:
        if shapes or depth is None or width is None:
            raise InputError("arguments", " ".join(shapes or []) or "--depth/--width",
                             "grid mode takes --depth and --width together and no shapes")
        return _bounds_grid(depth, width, heads, format.value, field)
    if not shapes:
        raise InputError("arguments", "(none)", "expected shapes such as 12x768, '-' for stdin, or --depth and --width for a grid")
    from .render import bounds_tables, emit
    from .theory import bounds as shape_bounds

    records = [shape_bounds(s.depth, s.width, s.heads) for s in resolve_shapes(expand_stdin(shapes), heads)]
    emit(records, format.value, field, bounds_tables)


def _bounds_grid(depth: str, width: str, heads: Optional[int], fmt: str, field: Optional[str]) -> None:
    from .shapes import MAX_DEPTH, MAX_WIDTH

    depths = parse_int_list(depth, "--depth", 1, MAX_DEPTH)
    widths = parse_int_list(width, "--width", 2, MAX_WIDTH)
    rows = len(depths) * len(widths)
    if rows > MAX_GRID_ROWS:
        raise InputError("grid", f"{depth} x {width}", f"at most {MAX_GRID_ROWS:,} rows (this is {rows:,})")
    if heads is not None and heads >= min(widths):
        raise InputError("--heads", heads, f"expected fewer heads than the smallest width ({min(widths)})")
    if fmt == "table" and field is None:  # at most MAX_TABLE_ROWS: the scalar path is quick enough
        if rows > MAX_TABLE_ROWS:
            raise InputError("--format", fmt, f"a table holds at most {MAX_TABLE_ROWS:,} rows; use --format csv, jsonl or json for this {rows:,}-row grid")
        from .render import bounds_tables, emit
        from .shapes import default_heads
        from .theory import bounds as shape_bounds

        records = [shape_bounds(L, d, default_heads(d) if heads is None else heads) for L in depths for d in widths]
        return emit(records, fmt, None, bounds_tables)
    from .render import stream_grid
    from .theory import iter_bounds_grid

    stream_grid(iter_bounds_grid(depths, widths, heads), fmt, field, sys.stdout)


@app.command()
def equiv(
    deep: List[str] = typer.Option(..., "--deep", help="The deep network: LxD[xH] or a model name; '-' reads shapes from stdin."),
    depth: str = typer.Option(..., "--depth", help="Shallower depths: 2,3 or a range 1:6."),
    heads: Optional[int] = typer.Option(None, "--heads", help="Heads of the shallower network (default: the deep network's)."),
    format: Format = FormatOption,
    field: Optional[str] = FieldOption,
) -> None:
    """Widths a shallower network needs to replicate (Corollary 1) or surpass (Corollary 2) a deep one.

    Example: depthwidth equiv --deep 6x1000x16 --depth 2,3
    """
    from .render import emit, equiv_tables
    from .shapes import MAX_DEPTH
    from .solver import equivalence

    check_heads(heads)
    shapes = resolve_shapes(expand_stdin(deep), None)
    depths = parse_int_list(depth, "--depth", 1, MAX_DEPTH)
    for shape in shapes:
        if max(depths) >= shape.depth:
            raise InputError("--depth", depth, f"expected depths below the deep network's {shape.depth} ({shape})")
    emit([equivalence(s, d, heads) for s in shapes for d in depths], format.value, field, equiv_tables)


@app.command()
def models(
    sort: str = typer.Option("params", "--sort", help="Sort by name, params, depth, width, year or aspect."),
    filter: Optional[str] = typer.Option(None, "--filter", help="Name or family substring, or a glob like 'llama*'."),
    min_params: Optional[str] = typer.Option(None, "--min-params", help="Only models with at least this many (published) parameters, e.g. 1B."),
    max_params: Optional[str] = typer.Option(None, "--max-params", help="Only models with at most this many parameters, e.g. 100B."),
    format: Format = FormatOption,
    field: Optional[str] = FieldOption,
) -> None:
    """Published architectures with their regime, threshold depth and bounds.

    Example: depthwidth models --filter gpt3 --sort depth
    """
    from .budgets import parse_quantity
    from .catalog import filter_models, load_models, sort_models
    from .render import emit, models_tables
    from .reports import model_report

    low = float(parse_quantity(min_params, "--min-params")) if min_params is not None else None
    high = float(parse_quantity(max_params, "--max-params")) if max_params is not None else None
    chosen = sort_models(filter_models(load_models(), filter, low, high), sort)
    if not chosen:
        raise InputError("--filter", filter, "no catalogue model matches; see `depthwidth models` for the list")
    emit([model_report(m) for m in chosen], format.value, field, models_tables)


@app.command()
def inspect(
    paths: List[str] = typer.Argument(..., help="Hugging Face config.json files (or model folders); '-' reads one from stdin."),
    format: Format = FormatOption,
    field: Optional[str] = FieldOption,
) -> None:
    """Read Hugging Face config.json files: shape, real parameter count, regime, and the plan for its size.

    Example: depthwidth inspect ./llama-7b/config.json
    """
    from .hfconfig import inspect_config, read_config_bytes, read_config_file
    from .render import emit, inspect_tables
    from .reports import config_report

    configs = []
    for path in paths:
        raw = read_config_bytes(typer.get_binary_stream("stdin").read(), "<stdin>") if path == "-" else read_config_file(path)
        configs.append(inspect_config(raw, "<stdin>" if path == "-" else path))
    emit([config_report(c) for c in configs], format.value, field, inspect_tables)


@app.command()
def reproduce(
    strict: bool = typer.Option(False, "--strict", help="Exit 1 when any claim differs beyond its tolerance."),
    format: Format = FormatOption,
    field: Optional[str] = FieldOption,
) -> None:
    """The seed paper's quantitative claims, each recomputed, with a status.

    Example: depthwidth reproduce --strict
    """
    from .claims import DIFFERS, claims
    from .render import claims_tables, emit

    results = claims()
    emit(results, format.value, field, claims_tables)
    if strict and any(c.status == DIFFERS for c in results):
        raise typer.Exit(EXIT_FAILURE)


plot_app = typer.Typer(help="Pictures: the phase diagram and bounds against depth.\n\n"
                            "Needs the plot extra: pip install \"depthwidth[plot]\".", no_args_is_help=True,
                       rich_markup_mode=None)
app.add_typer(plot_app, name="plot")


@plot_app.command("phase")
def plot_phase(
    out: str = typer.Option(..., "--out", "-o", help="Output file: .png (150 dpi) or .svg."),
    params: Optional[List[str]] = typer.Option(None, "--params", "-p", help="Iso-budget curves (default 1e8 1e9 1e10 1e11 1e12). Repeatable."),
    models: Optional[str] = typer.Option(None, "--models", help="Catalogue models to mark, comma-separated (default: a readable handful)."),
    shape: Optional[List[str]] = typer.Option(None, "--shape", help="Extra shapes LxD[xH] to mark. Repeatable."),
) -> None:
    """The depth-width phase diagram: regimes, threshold curve, iso-budget curves, models.

    Example: depthwidth plot phase --out phase.png --shape 12x768
    """
    from .budgets import parse_params
    from .plot import DEFAULT_BUDGETS, DEFAULT_MODELS, phase_figure, require_matplotlib, save_figure

    require_matplotlib()
    budgets = [parse_params(p) for p in params] if params else DEFAULT_BUDGETS
    names = [m.strip() for m in models.split(",") if m.strip()] if models is not None else DEFAULT_MODELS
    shapes = resolve_shapes(shape or [], None)
    save_figure(phase_figure(budgets, names, shapes), out)


@plot_app.command("bounds")
def plot_bounds(
    width: List[int] = typer.Option(..., "--width", "-w", min=2, max=10**15, help="Width d (repeatable: one curve pair per width)."),
    out: str = typer.Option(..., "--out", "-o", help="Output file: .png (150 dpi) or .svg."),
    heads: Optional[int] = typer.Option(None, "--heads", help="Heads for every width (default width/64)."),
    max_depth: Optional[int] = typer.Option(None, "--max-depth", help="Largest depth on the x axis (default about 2.5·log3 d + 4)."),
) -> None:
    """log3-sep lower and upper bounds against depth, threshold marked, gaps where a bound is missing.

    Example: depthwidth plot bounds --width 768 --width 4096 --out bounds.svg
    """
    from .plot import bounds_figure, require_matplotlib, save_figure

    require_matplotlib()
    save_figure(bounds_figure(width, heads, max_depth), out)


def main() -> None:
    """Console-script entry point (and ``python -m depthwidth``): the process ends with the command.

    A call lives ~0.1 s and leaves no garbage worth collecting, so the collector stays off, and
    at exit everything still alive is frozen out of the interpreter's final collection, which
    would otherwise walk every object Typer and Rich made (~13 ms of issue 5's startup budget).
    """
    gc.disable()
    try:
        app()
    finally:
        gc.freeze()
        gc.enable()  # for a caller that catches the SystemExit and goes on
