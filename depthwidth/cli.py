"""The depthwidth command line: parse and validate, call the core, render. No math here.

Every command imports what it needs inside its function, so ``--help`` and ``--version`` load
none of NumPy, SciPy or Pydantic, and scalar commands never load SciPy.
"""
import errno
import gc
import os
import sys
from enum import Enum
from typing import List, Optional

import typer
from typer.core import TyperGroup

from . import __version__
from .errors import EnvironmentFailure, InputError

EXIT_BAD_INPUT = 2
EXIT_FAILURE = 1
MAX_GRID_ROWS = 10**8
MAX_AXIS_VALUES = 10**6  # one --depth/--width list: a Python list of this many ints is ~40 MB
MAX_TABLE_ROWS = 5000  # the same cap as render.MAX_TABLE_ROWS, which emit applies to every table
WARN_EACH = 20  # warnings of one kind printed one by one; the rest are counted in one line
VECTOR_ROWS = 64  # `bounds` with this many bare shapes takes the vectorized path (the same bytes)
MAX_LIST_ROWS = 100_000  # records computed one by one (plan budgets, equiv shapes x depths): ~1 min at most
MAX_STDIN_BYTES = 10_000_000  # standard input, like a config file (hfconfig.MAX_CONFIG_BYTES)


class Format(str, Enum):
    table = "table"
    json = "json"
    jsonl = "jsonl"
    csv = "csv"


class C2Reading(str, Enum):
    """Theorem 2's constant c2 (docs/theory.md, "Reading of c2"); the values are theory.C2_READINGS."""

    consistent = "consistent"
    literal = "literal"


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
        _STDIN_LINES.clear()
        if sys.stdout is None:  # started with file descriptor 1 closed (`>&-`): writing must fail, not vanish
            sys.stdout = _ClosedStdout()
        try:
            code = super().main(args, prog_name or "depthwidth", complete_var, standalone_mode=False, **extra)
            _flush_stdout()  # help and --version text still in the buffer: a full disk shows here
            for message in dict.fromkeys(_WARNINGS):  # only a run that got this far warns: a failing one prints one line
                typer.echo(f"depthwidth: warning: {message}", err=True)
        except InputError as err:
            code = _fail(str(_located(err)), EXIT_BAD_INPUT)
        except EnvironmentFailure as err:
            _discard_stdout()
            code = _fail(str(err), EXIT_FAILURE)
        except _CLICK.NoArgsIsHelpError as err:  # `depthwidth plot`: its help, as `depthwidth` alone shows the main help
            typer.echo(err.ctx.get_help())
            code = 0
        except _CLICK.UsageError as err:
            code = _fail(_usage_message(err, sys.argv[1:] if args is None else list(args)), EXIT_BAD_INPUT)
        except typer.Abort:
            code = _fail("aborted", EXIT_FAILURE)
        except _CLICK.ClickException as err:
            code = _fail(" ".join(err.format_message().split()), EXIT_FAILURE)
        except BrokenPipeError:
            _discard_stdout()  # what is still buffered goes nowhere, quietly, at exit
            sys.stderr.close()  # the reader went away (e.g. `| head`): not an error worth a message
            code = EXIT_FAILURE
        except OSError as err:  # echo() of help or --version text flushes itself: a full disk
            if err.errno not in _OUTPUT_ERRNOS:
                code = _internal(err)
            else:
                _discard_stdout()
                code = _fail(f"cannot write output: {err.strerror or err}", EXIT_FAILURE)
        except Exception as err:  # noqa: BLE001 - the contract is one line and exit 1
            code = _internal(err)
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


class _ClosedStdout:
    """sys.stdout when file descriptor 1 was closed at startup: every write fails clearly."""

    encoding, errors = "utf-8", "strict"

    def write(self, text: str) -> int:
        raise EnvironmentFailure("cannot write output: standard output is closed")

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


def _flush_stdout() -> None:
    """Flush stdout now, so that a write error (a full disk) is reported, not lost at exit."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        raise
    except (OSError, ValueError) as err:
        raise EnvironmentFailure(f"cannot write output: {getattr(err, 'strerror', None) or err}") from None


def _discard_stdout() -> None:
    """Point file descriptor 1 at /dev/null so the interpreter's final flush of what is still
    buffered neither fails nor prints "Exception ignored" after our one error line."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (AttributeError, OSError, ValueError):  # not a real file (tests), or fd 1 is gone anyway
        pass


def _located(err: InputError) -> InputError:
    """A bad value that came from a standard-input line says which line."""
    if err.where is None and isinstance(err.value, str) and err.value.strip() in _STDIN_LINES:
        return err.at(f"standard input line {_STDIN_LINES[err.value.strip()]}")
    return err


_OUTPUT_ERRNOS = {errno.ENOSPC, errno.EBADF, errno.EIO, errno.EDQUOT, errno.EFBIG}  # writing stdout failed


def _internal(err: Exception) -> int:
    if os.environ.get("DEPTHWIDTH_DEBUG"):
        raise err
    return _fail(f"internal error: {type(err).__name__}: {err} (set DEPTHWIDTH_DEBUG=1 for the traceback)", EXIT_FAILURE)


def _fail(message: str, code: int) -> int:
    typer.echo(f"depthwidth: error: {message}", err=True)
    return code


_WARNINGS: list[str] = []
_STDIN_LINES: dict[str, int] = {}  # each input line read from stdin -> its (first) line number, for error messages


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

FormatOption = typer.Option(Format.table, "--format", "-f", case_sensitive=False, help="table for people; json, jsonl or csv for pipelines.")
FieldOption = typer.Option(None, "--field", help="Print only this field's value(s), one per line (dotted for nested: deep.regime).")
C2ReadingOption = typer.Option(C2Reading.consistent, "--c2-reading", case_sensitive=False,
                               help="Theorem 2's constant c2: consistent (default) or literal (the paper's print read "
                                    "literally; negative and non-monotone just below d = 3^L). See docs/theory.md.")


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

def read_stdin_bytes(what: str = "standard input") -> bytes:
    """All of standard input, at most MAX_STDIN_BYTES (``< /dev/zero`` stops there at once);
    closed or unreadable stdin is an EnvironmentFailure (exit 1), not an internal error."""
    try:
        stream = typer.get_binary_stream("stdin")  # RuntimeError when Python started with fd 0 closed
        data = stream.read(MAX_STDIN_BYTES + 1)
    except (RuntimeError, OSError, ValueError) as err:
        reason = "it is closed" if sys.stdin is None or isinstance(err, RuntimeError) else getattr(err, "strerror", None) or str(err)
        raise EnvironmentFailure(f"cannot read standard input: {reason} (pipe the inputs in, or give them as arguments)") from None
    if len(data) > MAX_STDIN_BYTES:
        raise InputError(what, data[:20], f"at most {MAX_STDIN_BYTES // 1_000_000} MB; split the input into several calls")
    return data


def read_stdin_lines() -> list[str]:
    """Non-blank, non-comment lines of standard input (CRLF tolerated; UTF-8 only, at most 10 MB).
    Each line's number is kept for error messages (``bad shape '12x0' (standard input line 4)``)."""
    data = read_stdin_bytes()
    try:
        text = data.decode("utf-8-sig")  # a leading byte-order mark (Windows editors) is dropped
    except UnicodeDecodeError:
        raise InputError("standard input", data[:20], "expected UTF-8 text, one input per line") from None
    numbered = [(number, line.split("#", 1)[0].strip()) for number, line in enumerate(text.splitlines(), 1)]
    lines = []
    for number, line in numbered:
        if line:
            lines.append(line)
            _STDIN_LINES.setdefault(line, number)
    if not lines:
        raise InputError("standard input", "", "expected at least one input line (blank lines and # comments are skipped)")
    return lines


def check_list_rows(count: int, what: str, value: str, kind: str) -> None:
    """Records computed one by one stop at MAX_LIST_ROWS, before any is computed."""
    if count > MAX_LIST_ROWS:
        raise InputError(what, value, f"at most {MAX_LIST_ROWS:,} {kind} in one call (this is {count:,}); split the input")


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
    warn_uneven(dict.fromkeys((s.width, s.heads) for s in shapes if s.width % s.heads))
    return shapes


def warn_uneven(pairs) -> None:
    """Warn for (width, heads) pairs whose heads do not divide the width: WARN_EACH one by one,
    then one line for the rest (thousands of stdin shapes must not flood stderr)."""
    pairs = list(pairs)
    for width, count in pairs[:WARN_EACH]:
        _warn(f"width {width} is not divisible by {count} heads (head dimension {width / count:.2f})")
    if len(pairs) > WARN_EACH:
        _warn(f"... and {len(pairs) - WARN_EACH:,} more shapes whose width is not divisible by their heads")


def check_heads(heads: Optional[int]) -> None:
    """--heads: at least 1 and below the largest accepted width (the theorems need H < d)."""
    from .shapes import MAX_WIDTH

    if heads is not None and not 1 <= heads < MAX_WIDTH:
        raise InputError("--heads", heads, f"expected a whole number from 1 to {MAX_WIDTH - 1:,} (and below the width)")


# ---- commands ----------------------------------------------------------------------------------

class Count(str, Enum):
    total = "total"
    active = "active"
    with_embeddings = "with-embeddings"


ArchOption = typer.Option("vanilla", "--arch", help="Block preset: vanilla (the paper's 12·L·d²), gpt2, llama, mistral, qwen2, gemma, mixtral, deepseek.")
KvHeadsOption = typer.Option(None, "--kv-heads", help="Key/value heads G (grouped-query attention; 1 = multi-query). Default: the preset's.", min=1, max=1 << 20)
HeadDimOption = typer.Option(None, "--head-dim", help="Head dimension (heads = width / head-dim). Default: the preset's (64 or 128).", min=2, max=1 << 20)
FfnMultOption = typer.Option(None, "--ffn-mult", help="Feed-forward size multiplier over the preset's (e.g. 1.3 as LLaMA-3 70B).")
GatedOption = typer.Option(None, "--gated/--plain", help="Gated (SwiGLU: 3·d·f) or plain (2·d·f) feed-forward. Default: the preset's.")
ExpertsOption = typer.Option(None, "--experts", help="Routed experts E (mixture of experts). Default: the preset's.", min=1, max=1 << 16)
TopKOption = typer.Option(None, "--top-k", help="Experts active per token. Default: the preset's.", min=1, max=1 << 16)
VocabOption = typer.Option(None, "--vocab", help="Vocabulary size (embeddings are reported apart). Default: the preset's.", min=1, max=1 << 30)
TiedOption = typer.Option(None, "--tied/--untied", help="Tie the output head to the input embedding. Default: the preset's.")
CountOption = typer.Option(Count.total, "--count", help="What the budget limits: total (non-embedding, default), active (per token) or with-embeddings.", case_sensitive=False)
MultipleOption = typer.Option(128, "--multiple", "--align", help="Width multiple (tensor-core tiles); widths are also multiples of the head dimension.", min=1, max=1 << 20)
FfnMultipleOption = typer.Option(None, "--ffn-multiple", help="Feed-forward size multiple. Default: the preset's (LLaMA: 256).", min=1, max=1 << 20)
TpOption = typer.Option(1, "--tp", help="Tensor-parallel degree every shape must shard by (t | heads, t | ffn, KV heads compatible).", min=1, max=1 << 12)
RuleOption = typer.Option("levine-fit", "--rule", help="The rule that gives the recommended shape (see `depthwidth rules`).")
RuleFileOption = typer.Option(None, "--rule-file", help="A rule fitted on your own sweep by `depthwidth fit --save` (used instead of --rule).")
ContextOption = typer.Option(2048, "--context", help="Context length T for FLOPs per token (and max_position_embeddings on export).", min=1, max=1 << 30)


CheckTpOption = typer.Option(None, "--tp", help="Warn for every shape that cannot shard this many ways (tensor parallelism).", min=1, max=1 << 12)
CheckMultipleOption = typer.Option(None, "--multiple", help="Warn for every shape whose width is not a multiple of this.", min=1, max=1 << 20)


def warn_constraints(named_archs, tp: Optional[int], multiple: Optional[int]) -> None:
    """A stderr warning naming each rule a shape breaks among the ones the user asked for (--tp, --multiple)."""
    if tp is None and multiple is None:
        return
    from .hardware import Constraints, violations

    asked = Constraints(multiple=multiple, tp=tp or 1, composite_heads=False)
    for name, arch, heads in named_archs:
        if arch is None:
            _warn(f"{name}: its layout is not counted, so --tp/--multiple were not checked")
            continue
        broken = violations(arch, asked)
        if arch.heads != heads:  # heads not dividing the width: counted as one d x d head, so say it as it is
            broken = [b for b in broken if "heads" not in b] + ([f"its {heads} heads do not divide the width {arch.width}: "
                                                                  "no tensor-parallel degree above 1"] if (tp or 1) > 1 else [])
        if broken:
            _warn(f"{name} breaks what you asked for: " + "; ".join(broken))


def plan_options(arch, kv_heads, head_dim, ffn_mult, gated, experts, top_k, vocab, tied, count, multiple, ffn_multiple, tp,
                 rule, rule_file, context, reading="consistent"):
    """The planner's options from the command line (the block preset is checked by name here)."""
    from .blocks import PRESETS, preset
    from .hardware import Constraints
    from .planner import PlanOptions, Spending

    name = arch.strip().lower()
    if name not in PRESETS:
        raise InputError("--arch", arch, "expected one of " + ", ".join(PRESETS))
    if ffn_mult is not None:
        text = ffn_mult
        try:
            ffn_mult = float(text) if text.strip().isascii() else None
        except ValueError:
            ffn_mult = None
        if ffn_mult is None or not 0 < ffn_mult <= 64:
            raise InputError("--ffn-mult", text, "expected a positive multiplier up to 64, such as 1.3")
    given = dict(kv_heads=kv_heads, head_dim=head_dim, ffn_mult=ffn_mult, gated=gated, experts=experts, top_k=top_k,
                 vocab=vocab, tied=tied)
    overrides = tuple(sorted((k, v) for k, v in given.items() if v is not None))
    block = preset(name)
    constraints = Constraints(multiple=multiple, head_dim=head_dim or block.head_dim,
                              ffn_multiple=ffn_multiple or block.ffn_multiple, tp=tp)
    return PlanOptions(spending=Spending(name, overrides, count.value), constraints=constraints, rule=rule.strip().lower(),
                       rule_file=rule_file, context=context, reading=reading)


def _budgets(params, flops, tokens) -> tuple[str, list[int]]:
    """Exactly one of --params, --flops, --tokens, parsed (with '-' read from stdin)."""
    from .budgets import parse_flops, parse_params, parse_tokens

    given = [(name, values, parse) for name, values, parse in
             (("params", params, parse_params), ("flops", flops, parse_flops), ("tokens", tokens, parse_tokens)) if values]
    if len(given) != 1:
        raise InputError("options", " ".join(f"--{name}" for name, _, _ in given) or "(none)",
                         "expected exactly one of --params, --flops or --tokens")
    source, values, parse = given[0]
    texts = expand_stdin(values)
    check_list_rows(len(texts), "standard input" if "-" in values else f"--{source}",
                    f"{len(texts)} lines" if "-" in values else f"{len(texts)} budgets", "budgets")
    return source, [parse(v) for v in texts]


@app.command()
def plan(
    params: Optional[List[str]] = typer.Option(None, "--params", "-p", help="Parameter budget: 1e9, 350M, 1.3B, 1T; '-' reads budgets from stdin. Repeatable."),
    flops: Optional[List[str]] = typer.Option(None, "--flops", help="Compute budget C in FLOPs: N = sqrt(C/120) (C = 6ND, 20 tokens/param)."),
    tokens: Optional[List[str]] = typer.Option(None, "--tokens", help="Training tokens D: N = D/20 (Hoffmann et al. 2022)."),
    arch: str = ArchOption,
    kv_heads: Optional[int] = KvHeadsOption,
    head_dim: Optional[int] = HeadDimOption,
    ffn_mult: Optional[str] = FfnMultOption,
    gated: Optional[bool] = GatedOption,
    experts: Optional[int] = ExpertsOption,
    top_k: Optional[int] = TopKOption,
    vocab: Optional[int] = VocabOption,
    tied: Optional[bool] = TiedOption,
    count: Count = CountOption,
    multiple: int = MultipleOption,
    ffn_multiple: Optional[int] = FfnMultipleOption,
    tp: int = TpOption,
    rule: str = RuleOption,
    rules: bool = typer.Option(False, "--rules", help="Show every rule's shape for the budget side by side (one record per rule)."),
    rule_file: Optional[str] = RuleFileOption,
    context: int = ContextOption,
    c2_reading: C2Reading = C2ReadingOption,
    format: Format = FormatOption,
    field: Optional[str] = FieldOption,
) -> None:
    """Minimal and recommended depth and width for a parameter budget, as shapes you can shard.

    Example: depthwidth plan --params 7e9 --arch llama --tp 8
    """
    from .planner import plan as make_plan
    from .planner import rule_shapes
    from .render import emit, plan_rules_tables, plan_tables

    source, budgets = _budgets(params, flops, tokens)
    options = plan_options(arch, kv_heads, head_dim, ffn_mult, gated, experts, top_k, vocab, tied, count, multiple,
                           ffn_multiple, tp, rule, rule_file, context, c2_reading.value)
    if rules:
        return emit([row for b in budgets for row in rule_shapes(b, options)], format.value, field, plan_rules_tables)
    plans = [make_plan(b, options, source) for b in budgets]
    for p in plans:  # a multiple above the ideal width is not ignored: the width jumps to it, far off budget
        if multiple > p.width_exact:
            _warn(f"--multiple {multiple:,} is larger than the ideal width {p.width_exact:,.0f} for {p.params:.3g} parameters: "
                  f"the width is rounded up to {p.width:,}, {p.params_deviation + 1:.3g}x the budget")
    emit(plans, format.value, field, plan_tables)


@app.command()
def sweep(
    params: Optional[List[str]] = typer.Option(None, "--params", "-p", help="Parameter budget: 1e9, 350M, 1.3B, 1T. Repeatable."),
    flops: Optional[List[str]] = typer.Option(None, "--flops", help="Compute budget C in FLOPs: N = sqrt(C/120)."),
    tokens: Optional[List[str]] = typer.Option(None, "--tokens", help="Training tokens D: N = D/20."),
    depths: Optional[str] = typer.Option(None, "--depths", help="Depths to sweep: 8:48:4 or 8,12,16 (default: --count depths from the minimal depth)."),
    count_rows: int = typer.Option(8, "--count", "-n", help="How many shapes, from the minimal depth to 10% past the deepest rule's recommendation.", min=1, max=1000),
    arch: Optional[str] = typer.Option(None, "--arch", help="Block preset (as for plan). Default: vanilla, or the --export format's family."),
    kv_heads: Optional[int] = KvHeadsOption,
    head_dim: Optional[int] = HeadDimOption,
    ffn_mult: Optional[str] = FfnMultOption,
    gated: Optional[bool] = GatedOption,
    experts: Optional[int] = ExpertsOption,
    top_k: Optional[int] = TopKOption,
    vocab: Optional[int] = VocabOption,
    tied: Optional[bool] = TiedOption,
    budget_count: Count = typer.Option(Count.total, "--budget-count", help="What the budget limits: total (non-embedding), active or with-embeddings.", case_sensitive=False),
    multiple: int = MultipleOption,
    ffn_multiple: Optional[int] = FfnMultipleOption,
    tp: int = TpOption,
    rule_file: Optional[str] = RuleFileOption,
    context: int = ContextOption,
    export: Optional[str] = typer.Option(None, "--export", help="Also write one config per row: hf-llama, hf-mistral, hf-qwen2, hf-gpt2, hf-mixtral or nanogpt."),
    out: Optional[str] = typer.Option(None, "--out", "-o", help="With --export: the directory to create (one folder per row plus manifest.json)."),
    force: bool = typer.Option(False, "--force", help="With --export: replace an existing non-empty --out directory."),
    c2_reading: C2Reading = C2ReadingOption,
    format: Format = FormatOption,
    field: Optional[str] = FieldOption,
) -> None:
    """Iso-budget shapes to train side by side, with an empty loss column for `depthwidth fit`.

    Example: depthwidth sweep --params 1e9 --arch llama --count 6 --format csv > sweep.csv
    """
    from .render import emit, sweep_tables
    from .shapes import MAX_DEPTH
    from .sweep import sweep as make_sweep

    source, budgets = _budgets(params, flops, tokens)
    if arch is None:
        arch = "vanilla"
        if export is not None:
            from .export import target

            arch = target(export).preset
    options = plan_options(arch, kv_heads, head_dim, ffn_mult, gated, experts, top_k, vocab, tied, budget_count, multiple,
                           ffn_multiple, tp, "levine-fit", rule_file, context, c2_reading.value)
    chosen = parse_int_list(depths, "--depths", 1, MAX_DEPTH) if depths is not None else None
    if (export is None) != (out is None):
        raise InputError("--export/--out", export or out, "give --export FORMAT and --out DIR together")
    rows = [row for b in budgets for row in make_sweep(b, options, chosen, count_rows)]
    if export is not None:
        from .export import write_configs

        archs = [(r.id if len(budgets) == 1 else f"{r.params_budget:.0e}-{r.id}",
                  options.spending.architecture(r.depth, r.width)) for r in rows]
        from .render import plain

        write_configs(archs, export, out, force, [plain(r) for r in rows], context=context)
    emit(rows, format.value, field, sweep_tables)


@app.command()
def compare(
    deep: str = typer.Option(..., "--deep", help="The deeper network: LxD[xH] or a model name."),
    shallow: str = typer.Option(..., "--shallow", help="The shallower network: LxD[xH] or a model name."),
    tp: Optional[int] = CheckTpOption,
    multiple: Optional[int] = CheckMultipleOption,
    format: Format = FormatOption,
    field: Optional[str] = FieldOption,
    c2_reading: C2Reading = C2ReadingOption,
) -> None:
    """Which of two shapes is provably more expressive, and the widths that would change it.

    Example: depthwidth compare --deep 12x768 --shallow 6x1086
    """
    from .render import compare_tables, emit
    from .reports import block_for, compare_with_blocks
    from .solver import compare_shapes

    deep_shape, shallow_shape = resolve_shapes([deep, shallow], None)
    result = compare_shapes(deep_shape, shallow_shape, c2_reading.value)
    deep_arch, shallow_arch = block_for(deep, deep_shape), block_for(shallow, shallow_shape)
    warn_constraints([(deep, deep_arch, deep_shape.heads), (shallow, shallow_arch, shallow_shape.heads)], tp, multiple)
    emit(compare_with_blocks(result, deep_arch, shallow_arch), format.value, field, compare_tables)


@app.command()
def bounds(
    shapes: Optional[List[str]] = typer.Argument(None, help="Shapes LxD[xH] or model names; '-' reads them from stdin."),
    heads: Optional[int] = typer.Option(None, "--heads", help="Heads for every shape (default: width/64, or the H in LxDxH)."),
    depth: Optional[str] = typer.Option(None, "--depth", help="Grid mode: depths, e.g. 1:48 (start:stop[:step], inclusive)."),
    width: Optional[str] = typer.Option(None, "--width", help="Grid mode: widths, e.g. 256:8192:256."),
    tp: Optional[int] = CheckTpOption,
    multiple: Optional[int] = CheckMultipleOption,
    format: Format = FormatOption,
    field: Optional[str] = FieldOption,
    c2_reading: C2Reading = C2ReadingOption,
) -> None:
    """Regime and separation-rank bounds (log3) per shape, or over a depth x width grid.

    Example: depthwidth bounds 12x768 24x1024x16 bert-base
    """
    check_heads(heads)
    if depth is not None or width is not None:
        if shapes or depth is None or width is None:
            raise InputError("arguments", " ".join(shapes or []) or "--depth/--width",
                             "grid mode takes --depth and --width together and no shapes")
        if tp is not None or multiple is not None:
            raise InputError("--tp/--multiple", tp or multiple, "shape checks apply to listed shapes, not to a grid")
        return _bounds_grid(depth, width, heads, format.value, field, c2_reading.value)
    if not shapes:
        raise InputError("arguments", "(none)", "expected shapes such as 12x768, '-' for stdin, or --depth and --width for a grid")
    from .render import bounds_tables, emit
    from .reports import block_for, shape_record
    from .shapes import parse_shape_arrays
    from .theory import bounds as shape_bounds

    texts = expand_stdin(shapes)
    many = len(texts) >= VECTOR_ROWS and (format.value != "table" or field is not None) and tp is None and multiple is None
    arrays = parse_shape_arrays(texts, heads) if many else None
    if arrays is not None:  # many valid bare shapes: parsed, computed and spelled column-wise
        return _bounds_list(*arrays, format.value, field, c2_reading.value)
    resolved = resolve_shapes(texts, heads)
    blocks = [block_for(t, s) for t, s in zip(texts, resolved)]
    warn_constraints([(t.strip(), arch, s.heads) for t, arch, s in zip(texts, blocks, resolved)], tp, multiple)
    records = [shape_record(shape_bounds(s.depth, s.width, s.heads, c2_reading.value), arch) for s, arch in zip(resolved, blocks)]
    emit(records, format.value, field, bounds_tables)


def _bounds_list(depths, widths, heads, fmt: str, field: Optional[str], reading: str) -> None:
    """Many bare shapes (``bounds -`` from a file): shape records built and spelled column-wise,
    the same bytes (and the same warnings) as the scalar records."""
    import dataclasses

    import numpy as np

    from .render import stream_grid
    from .reports import ShapeRecord, shape_list_chunks

    columns = [f.name for f in dataclasses.fields(ShapeRecord)]
    if field is not None and field not in columns:
        raise InputError("--field", field, "expected one of " + ", ".join(columns))
    uneven = np.flatnonzero(widths % heads)
    warn_uneven(dict.fromkeys(zip(widths[uneven].tolist(), heads[uneven].tolist())))
    stream_grid(shape_list_chunks(depths, widths, heads, reading), fmt, field, sys.stdout, depths.size, columns)


def _bounds_grid(depth: str, width: str, heads: Optional[int], fmt: str, field: Optional[str], reading: str = "consistent") -> None:
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

        records = [shape_bounds(L, d, default_heads(d) if heads is None else heads, reading) for L in depths for d in widths]
        return emit(records, fmt, None, bounds_tables)
    from .render import stream_grid
    from .theory import iter_bounds_grid

    stream_grid(iter_bounds_grid(depths, widths, heads, reading=reading), fmt, field, sys.stdout, rows)


@app.command()
def equiv(
    deep: List[str] = typer.Option(..., "--deep", help="The deep network: LxD[xH] or a model name; '-' reads shapes from stdin."),
    depth: str = typer.Option(..., "--depth", help="Shallower depths: 2,3 or a range 1:6."),
    heads: Optional[int] = typer.Option(None, "--heads", help="Heads of the shallower network (default: the deep network's)."),
    format: Format = FormatOption,
    field: Optional[str] = FieldOption,
    c2_reading: C2Reading = C2ReadingOption,
) -> None:
    """Widths a shallower network needs to replicate (Corollary 1) or surpass (Corollary 2) a deep one.

    Example: depthwidth equiv --deep 6x1000x16 --depth 2,3
    """
    from .render import emit, equiv_tables
    from .shapes import MAX_DEPTH
    from .solver import equivalence

    check_heads(heads)
    texts = expand_stdin(deep)
    shapes = resolve_shapes(texts, None)
    depths = parse_int_list(depth, "--depth", 1, MAX_DEPTH)
    check_list_rows(len(shapes) * len(depths), "--depth", depth, "rows (deep shapes x depths; each is solved on its own)")
    for shape in shapes:
        if max(depths) >= shape.depth:
            raise InputError("--depth", depth, f"expected depths below the deep network's {shape.depth} ({shape})")
    from dataclasses import replace

    from .reports import block_for, block_fields

    tp = [block_fields(block_for(t, s), s.heads)[0]["tp_sizes"] for t, s in zip(texts, shapes)]
    emit([replace(equivalence(s, d, heads, c2_reading.value), deep_tp_sizes=sizes) for s, sizes in zip(shapes, tp) for d in depths],
         format.value, field, equiv_tables)


@app.command()
def models(
    sort: str = typer.Option("params", "--sort", help="Sort by name, params, depth, width, year or aspect."),
    filter: Optional[str] = typer.Option(None, "--filter", help="Name or family substring, or a glob like 'llama*'."),
    min_params: Optional[str] = typer.Option(None, "--min-params", help="Only models with at least this many (published) parameters, e.g. 1B."),
    max_params: Optional[str] = typer.Option(None, "--max-params", help="Only models with at most this many parameters, e.g. 100B."),
    tp: Optional[int] = CheckTpOption,
    multiple: Optional[int] = CheckMultipleOption,
    format: Format = FormatOption,
    field: Optional[str] = FieldOption,
    c2_reading: C2Reading = C2ReadingOption,
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
        given = " ".join(f"{option} {value}" for option, value in (("--filter", filter), ("--min-params", min_params),
                                                                    ("--max-params", max_params)) if value is not None)
        raise InputError("filters", given, "no catalogue model matches them; see `depthwidth models` for the list")
    warn_constraints([(m.name, m.architecture, m.heads) for m in chosen], tp, multiple)
    emit([model_report(m, c2_reading.value) for m in chosen], format.value, field, models_tables)


@app.command()
def inspect(
    paths: List[str] = typer.Argument(..., help="Hugging Face config.json files (or model folders); '-' reads one from stdin."),
    tp: Optional[int] = CheckTpOption,
    multiple: Optional[int] = CheckMultipleOption,
    format: Format = FormatOption,
    field: Optional[str] = FieldOption,
    c2_reading: C2Reading = C2ReadingOption,
) -> None:
    """Read Hugging Face config.json files: shape, real parameter count, regime, and the plan for its size.

    Example: depthwidth inspect ./llama-7b/config.json
    """
    from .hfconfig import inspect_config, read_config_bytes, read_config_file
    from .render import emit, inspect_tables
    from .reports import config_report

    configs = []
    for path in paths:
        raw = read_config_bytes(read_stdin_bytes("config"), "<stdin>") if path == "-" else read_config_file(path)
        configs.append(inspect_config(raw, "<stdin>" if path == "-" else path))
    warn_constraints([(c.source, c.architecture, c.heads) for c in configs], tp, multiple)
    emit([config_report(c, c2_reading.value) for c in configs], format.value, field, inspect_tables)


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
    differing = [c for c in results if c.status == DIFFERS]
    if strict and differing:
        for c in differing:
            _warn(f"claim {c.claim} differs: quoted {c.quoted}, computed {c.computed} ({c.source})")
        raise typer.Exit(EXIT_FAILURE)


@app.command()
def rules(
    format: Format = FormatOption,
    field: Optional[str] = FieldOption,
) -> None:
    """The empirical depth/width rules side by side: kind, formula, source, range, and whether verified.

    Example: depthwidth rules --format json
    """
    from .render import emit, rules_tables
    from .rules import REGISTRY

    emit(list(REGISTRY.values()), format.value, field, rules_tables)


class GroupBy(str, Enum):
    params = "params"
    flops = "flops"


class FitForm(str, Enum):
    levine = "levine"
    power = "power"
    both = "both"


GroupByOption = typer.Option(GroupBy.params, "--group-by", help="Group runs by parameter count (the params column) or by "
                             "training FLOPs (a flops column, or flops_per_token x tokens).")
BootstrapOption = typer.Option(1000, "--bootstrap", min=20, max=100_000, help="Bootstrap resamples per group for the intervals.")
SeedOption = typer.Option(0, "--seed", min=0, max=2**63 - 1, help="Seed of the bootstrap (same seed, same output).")


def _fit_report(results: str, group_by: GroupBy, form: str, bootstrap: int, seed: int, name: str):
    """Read and fit a results CSV (shared by `fit` and `plot fit`): (report, runs)."""
    from .fit import fit_results, parse_results, read_results_file
    from .rulefile import Source

    text, digest = read_results_file(results)
    runs = parse_results(text, results, group_by.value)
    source = Source(os.path.basename(results), digest)
    return fit_results(runs, source, group_by.value, form, bootstrap, seed, name), runs


@app.command()
def fit(
    results: str = typer.Argument(..., help="The sweep's CSV with its loss column filled in (columns depth, width, loss, params)."),
    group_by: GroupBy = GroupByOption,
    form: FitForm = typer.Option(FitForm.both, "--form", help="The law to fit across sizes: levine (ln d = a + b·L), "
                                 "power (d = k·N^alpha), or both (the better one goes in a saved rule)."),
    save: Optional[str] = typer.Option(None, "--save", help="Write the fitted rule to this JSON file (for plan --rule-file)."),
    name: Optional[str] = typer.Option(None, "--name", help="The rule's name (default: the --save file's stem)."),
    force: bool = typer.Option(False, "--force", help="Let --save replace an existing file."),
    bootstrap: int = BootstrapOption,
    seed: int = SeedOption,
    format: Format = FormatOption,
    field: Optional[str] = FieldOption,
) -> None:
    """Fit your own depth/width rule from a sweep's results: optimal depth per size, then the law.

    Example: depthwidth fit results.csv --save my-rule.json
    """
    from datetime import date

    from .render import check_field, emit, fit_tables
    from .rulefile import rule_name, write_rule_file

    report, _ = _fit_report(results, group_by, form.value, bootstrap, seed, rule_name(name, save))
    check_field(report, field)  # a bad --field fails before the rule file is written
    if save is not None:
        write_rule_file(report.rule(date.today().isoformat(), f"depthwidth {__version__}"), save, force)
    emit(report, format.value, field, fit_tables)


@app.command()
def export(
    shape: Optional[str] = typer.Argument(None, help="LxD[xH] or a model name; H sets the heads (head_dim = D / H), else the preset's head size does."),
    to: str = typer.Option(..., "--to", help="hf-llama, hf-mistral, hf-qwen2, hf-gpt2, hf-mixtral (Hugging Face config.json) or nanogpt (GPTConfig fields)."),
    out: str = typer.Option(..., "--out", "-o", help="A directory (DIR/config.json is written) or a file path ending in .json."),
    plan_budget: Optional[str] = typer.Option(None, "--plan", help="Instead of SHAPE: export the recommended shape of `plan --params BUDGET --arch ...`."),
    arch: Optional[str] = typer.Option(None, "--arch", help="Block preset (default: the format's: hf-llama -> llama, hf-gpt2 and nanogpt -> gpt2, ...)."),
    context: int = typer.Option(2048, "--context", help="Context length: max_position_embeddings (n_positions, block_size).", min=1, max=1 << 30),
    vocab: Optional[int] = VocabOption,
    tied: Optional[bool] = TiedOption,
    kv_heads: Optional[int] = KvHeadsOption,
    force: bool = typer.Option(False, "--force", help="Overwrite an existing file."),
    format: Format = FormatOption,
    field: Optional[str] = FieldOption,
) -> None:
    """Write a config file to train a shape with: Hugging Face config.json or nanoGPT's GPTConfig.

    Example: depthwidth export 24x2048x16 --to hf-llama --out ./my-model
    """
    from .export import config_for, export_architecture, export_record, target, with_vocab, write_config
    from .render import emit, export_tables

    spec = target(to.strip().lower())
    name = (arch or spec.preset).strip().lower()
    if (shape is None) == (plan_budget is None):
        raise InputError("arguments", shape or "(none)", "expected a SHAPE (LxD[xH] or a model name) or --plan BUDGET, not both")
    if plan_budget is not None:
        from .budgets import parse_params
        from .planner import plan_architecture

        options = plan_options(name, kv_heads, None, None, None, None, None, vocab, tied, Count.total, 128, None, 1,
                               "levine-fit", None, context)
        block = with_vocab(plan_architecture(parse_params(plan_budget), name, overrides=dict(options.spending.overrides),
                                             constraints=options.constraints, context=context), spec.name)
    else:
        from .shapes import resolve_shape

        parsed = resolve_shape(shape)
        text = shape.strip()
        explicit = not text[:1].isdigit() or text.lower().count("x") == 2  # a model name, or LxDxH
        block = export_architecture(spec.name, parsed.depth, parsed.width, parsed.heads if explicit else None, arch=name,
                                    kv_heads=kv_heads, vocab=vocab, tied=tied)
    path = write_config(config_for(block, spec.name, context), out, force)
    emit([export_record(block, spec.name, path, context)], format.value, field, export_tables)


@app.command()
def certify(
    shapes: List[str] = typer.Argument(..., help="Small networks LxD[xH], e.g. 2x8x1 (H defaults to width/64, at least 1)."),
    positions: Optional[int] = typer.Option(None, "--positions", help="Input positions N, even (default 2): A = the first N/2, B = the rest."),
    templates: Optional[int] = typer.Option(None, "--templates", "-m", help="Templates per position M (default 700, at most 2000): the matrix is M x M."),
    seed: int = typer.Option(0, "--seed", help="Seed of the random integer weights and templates (NumPy default_rng)."),
    prime: Optional[int] = typer.Option(None, "--prime", help="Compute modulo this prime below 2^31 (default 2^31 - 1)."),
    output_coord: int = typer.Option(0, "--output-coord", help="Output coordinate p of y_p, at position 0 (default 0)."),
    reading: C2Reading = typer.Option(C2Reading.consistent, "--reading", "--c2-reading", case_sensitive=False,
                                      help="Theorem 2's c2 to hold the rank against: consistent (default) or literal."),
    trials: int = typer.Option(1, "--trials", help="Repeat with seeds S..S+K-1 and report the smallest and largest rank."),
    format: Format = FormatOption,
    field: Optional[str] = FieldOption,
) -> None:
    """Certified separation rank of a small eq.-(3) network, exact mod p, against the bounds.

    Example: depthwidth certify 2x8x1 --reading literal
    """
    from .certify import check_request, certify as certify_shape
    from .render import certify_tables, emit
    from .shapes import parse_shape

    given = {k: v for k, v in (("positions", positions), ("templates", templates), ("prime", prime)) if v is not None}
    parsed = [parse_shape(text) for text in shapes]
    for s in parsed:  # every request within the caps before anything is computed
        check_request(s.depth, s.width, s.heads, seed=seed, output_coord=output_coord, reading=reading.value, trials=trials, **given)
    records = []
    for s in parsed:
        bar = _LateProgress(f"certify {s}")
        try:
            records.append(certify_shape(s.depth, s.width, s.heads, seed=seed, output_coord=output_coord,
                                         reading=reading.value, trials=trials, progress=bar, **given))
        finally:
            bar.close()
    emit(records, format.value, field, certify_tables)


class _LateProgress:
    """A Rich progress bar on stderr (when it is a terminal) that appears once a run has taken a
    second: quick runs print nothing, and stdout stays clean either way."""

    def __init__(self, label: str, delay: float = 1.0):
        import time

        self.clock, self.label, self.bar, self.task = time.perf_counter, label, None, None
        self.due = self.clock() + delay

    def __call__(self, done: int, total: int) -> None:
        if self.bar is None:
            if self.clock() < self.due or not sys.stderr.isatty():
                return
            from rich.console import Console
            from rich.progress import Progress

            self.bar = Progress(console=Console(stderr=True), transient=True)
            self.bar.start()
            self.task = self.bar.add_task(self.label, total=total)
        self.bar.update(self.task, completed=done, total=total)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


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
    rules: bool = typer.Option(False, "--rules", help="Draw each rule's curve (see `depthwidth rules`) and the guards' maximum depths."),
    c2_reading: C2Reading = typer.Option(C2Reading.consistent, "--c2-reading", case_sensitive=False,
                                         help="Accepted as on the other commands; the phase diagram shows regimes and "
                                              "curves that do not involve c2, so it is the same either way."),
) -> None:
    """The depth-width phase diagram: regimes, threshold curve, iso-budget curves, models.

    Example: depthwidth plot phase --out phase.png --shape 12x768
    """
    from .budgets import parse_params
    from .plot import DEFAULT_BUDGETS, DEFAULT_MODELS, check_output_path, phase_figure, require_matplotlib, save_figure

    require_matplotlib()
    check_output_path(out)  # before drawing: a bad --out fails at once
    budgets = [parse_params(p) for p in params] if params else DEFAULT_BUDGETS
    names = [m.strip() for m in models.split(",") if m.strip()] if models is not None else DEFAULT_MODELS
    shapes = resolve_shapes(shape or [], None)
    save_figure(phase_figure(budgets, names, shapes, rules=rules), out)


@plot_app.command("bounds")
def plot_bounds(
    width: List[int] = typer.Option(..., "--width", "-w", min=2, max=10**15, help="Width d (repeatable: one curve pair per width)."),
    out: str = typer.Option(..., "--out", "-o", help="Output file: .png (150 dpi) or .svg."),
    heads: Optional[int] = typer.Option(None, "--heads", help="Heads for every width (default width/64)."),
    max_depth: Optional[int] = typer.Option(None, "--max-depth", help="Largest depth on the x axis (default about 2.5·log3 d + 4)."),
    c2_reading: C2Reading = C2ReadingOption,
) -> None:
    """log3-sep lower and upper bounds against depth, threshold marked, gaps where a bound is missing.

    Example: depthwidth plot bounds --width 768 --width 4096 --out bounds.svg
    """
    from .plot import bounds_figure, check_output_path, require_matplotlib, save_figure

    require_matplotlib()
    check_output_path(out)  # before drawing: a bad --out fails at once
    save_figure(bounds_figure(width, heads, max_depth, reading=c2_reading.value), out)


@plot_app.command("fit")
def plot_fit(
    results: str = typer.Argument(..., help="The sweep's CSV with its loss column filled in."),
    out: str = typer.Option(..., "--out", "-o", help="Output file: .png (150 dpi) or .svg."),
    group_by: GroupBy = GroupByOption,
    bootstrap: int = BootstrapOption,
    seed: int = SeedOption,
) -> None:
    """Per-group loss curves against depth, the optima with their intervals, and the fitted laws.

    Example: depthwidth plot fit results.csv --out fit.png
    """
    from .plot import check_output_path, fit_figure, require_matplotlib, save_figure

    require_matplotlib()
    check_output_path(out)  # before drawing: a bad --out fails at once
    report, runs = _fit_report(results, group_by, "both", bootstrap, seed, "fit")
    save_figure(fit_figure(report, runs), out)


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
