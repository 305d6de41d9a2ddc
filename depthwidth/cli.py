"""The depthwidth command line: parse and validate, call the core, render. No math here.

Every command imports what it needs inside its function, so ``--help`` and ``--version`` load
none of NumPy, SciPy or Pydantic, and scalar commands never load SciPy.
"""
from __future__ import annotations

import os
import sys
from enum import Enum
from typing import List, Optional

import click
import typer
from typer.core import TyperGroup

from . import __version__
from .errors import InputError

EXIT_BAD_INPUT = 2
EXIT_FAILURE = 1
MAX_GRID_ROWS = 10**8
MAX_TABLE_ROWS = 5000


class Format(str, Enum):
    table = "table"
    json = "json"
    jsonl = "jsonl"
    csv = "csv"


class _Group(TyperGroup):
    """Turns every failure into one stderr line and an exit code, in this one place.

    Exit 2: bad input (InputError, or a usage error such as an unknown option); exit 1:
    anything else. No traceback unless DEPTHWIDTH_DEBUG is set.
    """

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        try:
            code = super().main(args, prog_name or "depthwidth", complete_var, standalone_mode=False, **extra)
        except InputError as err:
            code = _fail(str(err), EXIT_BAD_INPUT)
        except click.UsageError as err:
            hint = f" (see '{err.ctx.command_path} --help')" if err.ctx is not None else ""
            code = _fail(err.format_message().replace("\n", " ") + hint, EXIT_BAD_INPUT)
        except click.Abort:
            code = _fail("aborted", EXIT_FAILURE)
        except click.ClickException as err:
            code = _fail(err.format_message(), EXIT_FAILURE)
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


def _fail(message: str, code: int) -> int:
    click.echo(f"depthwidth: error: {message}", err=True)
    return code


def _warn(message: str) -> None:
    click.echo(f"depthwidth: warning: {message}", err=True)


app = typer.Typer(
    cls=_Group,
    name="depthwidth",
    help="How deep and how wide should a Transformer be? Answers from Levine et al. 2020, "
    '"Limits to Depth Efficiencies of Self-Attention": below depth log3(width) depth is '
    "double-exponentially efficient; above it depth and width trade evenly.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

FormatOption = typer.Option(Format.table, "--format", "-f", help="table for people; json, jsonl or csv for pipelines.")
FieldOption = typer.Option(None, "--field", help="Print only this field's value(s), one per line (dotted for nested: deep.regime).")


def _version(value: bool) -> None:
    if value:
        click.echo(f"depthwidth {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version and exit."),
) -> None:
    """How deep and how wide should a Transformer be?"""


# ---- input helpers -----------------------------------------------------------------------------

def read_stdin_lines() -> list[str]:
    """Non-blank, non-comment lines of standard input (CRLF tolerated; UTF-8 only)."""
    stream = click.get_binary_stream("stdin")
    data = stream.read()
    try:
        text = data.decode("utf-8")
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
    accepted = f"expected whole numbers from {lowest:,} to {highest:,} as a list like 2,3 or a range start:stop[:step] like 1:48"
    values: list[int] = []
    for item in text.split(","):
        parts = item.strip().split(":")
        if not 1 <= len(parts) <= 3 or not all(p.isascii() and p.isdigit() for p in parts):
            raise InputError(what, text, accepted)
        numbers = [int(p) for p in parts]
        if len(numbers) == 1:
            values.append(numbers[0])
            continue
        start, stop, step = numbers[0], numbers[1], numbers[2] if len(numbers) == 3 else 1
        if step < 1 or stop < start:
            raise InputError(what, text, "a range needs start <= stop and a step >= 1; " + accepted)
        if (stop - start) // step + 1 + len(values) > MAX_GRID_ROWS:
            raise InputError(what, text, f"at most {MAX_GRID_ROWS:,} values")
        values += range(start, stop + 1, step)
    if not values or not all(lowest <= v <= highest for v in values):
        raise InputError(what, text, accepted)
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
    if heads is not None and heads < 1:
        raise InputError("--heads", heads, "expected a whole number >= 1 (and below the width)")


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
    if fmt == "table" and field is None and rows > MAX_TABLE_ROWS:
        raise InputError("--format", fmt, f"a table holds at most {MAX_TABLE_ROWS:,} rows; use --format csv, jsonl or json for this {rows:,}-row grid")
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


def main() -> None:
    """Console-script entry point."""
    app()
