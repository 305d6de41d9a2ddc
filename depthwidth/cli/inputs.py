"""Reading the user's values: standard input, lists and ranges, budgets, shapes, the planner's
options. Every check happens here, before anything is computed, and names the bad value.

A value read from standard input is a ``Given`` (a str that knows its line), so an error about
it says ``(standard input line 4)``, and an argument with the same text is never blamed on a line.
"""
from __future__ import annotations

import sys
from contextlib import contextmanager
from typing import Callable, Optional

from ..core.errors import EnvironmentFailure, InputError, not_one_of
from .notices import WARN_EACH, warn

MAX_GRID_ROWS = 10**8
MAX_AXIS_VALUES = 10**6  # one --depth/--width list: a Python list of this many ints is ~40 MB
MAX_LIST_ROWS = 100_000  # records computed one by one (plan budgets, equiv shapes x depths): ~1 min at most
MAX_STDIN_LINES = 1_000_000  # lines of standard input, blank and comment lines included: every command (and 50 MiB)


class Given(str):
    """A value from standard input: its text, and where it came from (``standard input line 4``,
    spelled only when an error names it: 10^5 budgets read are 10^5 Givens)."""

    line: int | None = None

    @property
    def where(self) -> str | None:
        return None if self.line is None else f"standard input line {self.line}"


def parse_each(values: list[str], parse: Callable) -> list:
    """``parse`` of every value; an InputError about a value from stdin says which line it was."""
    parsed = []
    for value in values:
        try:
            parsed.append(parse(value))
        except InputError as err:
            where = getattr(value, "where", None)
            if where is None or err.where is not None:
                raise
            raise err.at(where) from None
    return parsed


def read_stdin_bytes(what: str = "standard input") -> bytes:
    """All of standard input through the one bounded reader (``userfile``: the same limit and
    message as every file; ``< /dev/zero`` stops there at once); closed or unreadable stdin is an
    EnvironmentFailure (exit 1), not an internal error."""
    import typer

    from ..core.userfile import read_bytes

    try:
        stream = typer.get_binary_stream("stdin")  # RuntimeError when Python started with fd 0 closed
        return read_bytes("-", what, stdin=stream)
    except InputError:  # over the limit (InputError is a ValueError: let it through as it is)
        raise
    except (RuntimeError, OSError, ValueError) as err:
        reason = "it is closed" if sys.stdin is None or isinstance(err, RuntimeError) else getattr(err, "strerror", None) or str(err)
        raise EnvironmentFailure(f"cannot read standard input: {reason} (pipe the inputs in, or give them as arguments)") from None


def read_stdin_text() -> str:
    """Standard input as text: UTF-8 (a leading byte-order mark dropped), at most userfile.MAX_BYTES
    and MAX_STDIN_LINES lines, the same limits for every command (README "Standard input")."""
    data = read_stdin_bytes()
    lines = data.count(b"\n") + (not data.endswith(b"\n")) if data else 0
    if lines > MAX_STDIN_LINES:  # CR-only text is one line to count, and split into many below: counted again there
        raise InputError("standard input", f"{lines:,} lines", f"at most {MAX_STDIN_LINES:,} lines in one call; split the input")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InputError("standard input", data[:20], "expected UTF-8 text, one input per line") from None


def numbered_lines(text: str, segment: int = 1 << 20):
    """(line number, text) of each non-blank, non-comment line (CRLF and CR tolerated), split a
    megabyte at a time (cut after a newline): never a list of every line of a big input."""
    number, pos = 1, 0
    while pos < len(text):
        end = text.find("\n", min(pos + segment, len(text)) - 1)
        end = len(text) if end < 0 else end + 1
        for raw in text[pos:end].splitlines():
            line = raw.split("#", 1)[0].strip()
            if line:
                yield number, line
            number += 1
        pos = end


def lines_of(text: str) -> list[Given]:
    """Non-blank, non-comment lines, each carrying its line number for error messages
    (``bad shape '12x0' (standard input line 4)``)."""
    lines = []
    for number, line in numbered_lines(text):
        given = Given(line)
        given.line = number
        lines.append(given)
    if len(lines) > MAX_STDIN_LINES:
        raise InputError("standard input", f"{len(lines):,} lines", f"at most {MAX_STDIN_LINES:,} lines in one call; split the input")
    if not lines:
        raise InputError("standard input", "", "expected at least one input line (blank lines and # comments are skipped)")
    return lines


def stdin_shape_arrays(text: str, heads, chunk: int = 1 << 16):
    """Every line of ``text`` as (depths, widths, heads) int64 arrays when all are bare shapes
    (``shapes.parse_shape_arrays``), parsed a chunk of lines at a time: ~24 bytes a line kept, so
    ``bounds -`` on 10^6 lines stays far under 200 MB; None when any line is something else."""
    from itertools import islice

    import numpy as np

    from ..theory.shapes import parse_shape_arrays

    lines, parts, count = numbered_lines(text), [], 0
    while block := [line for _, line in islice(lines, chunk)]:
        count += len(block)
        arrays = parse_shape_arrays(block, heads) if count <= MAX_STDIN_LINES else None
        if arrays is None:
            return None
        parts.append(arrays)
    return tuple(np.concatenate(column) for column in zip(*parts)) if parts else None


def first_bad_line(lines: list[Given], parse: Callable, chunk: int = 1 << 14) -> None:
    """Raise the error of the first line ``parse`` refuses, a chunk at a time (for inputs too long to
    parse one by one in full)."""
    for start in range(0, len(lines), chunk):
        parse_each(lines[start:start + chunk], parse)


def read_stdin_lines() -> list[Given]:
    """Non-blank, non-comment lines of standard input (``read_stdin_text``, ``lines_of``)."""
    return lines_of(read_stdin_text())


def expand_stdin(values: list[str]) -> list[str]:
    """Replace a '-' among the values by the lines of standard input."""
    out: list[str] = []
    for value in values:
        out += read_stdin_lines() if value == "-" else [value]
    return out


def bounded_number(text: str, option: str, highest: float, accepted: str, lowest: float = 0.0) -> float:
    """A number option read as text (a float option would make Typer load Pydantic): above 0, at
    least ``lowest`` and at most ``highest``, else an InputError naming the option and ``accepted``."""
    try:
        number = float(text) if text.strip().isascii() else None
    except ValueError:
        number = None
    if number is None or not 0 < number <= highest or number < lowest:
        raise InputError(option, text, accepted)
    return number


class Typed(list):
    """Parsed budgets with the texts they were typed as (``texts``, in order)."""

    texts: list = []


def typed(values: list, texts: list) -> Typed:
    out = Typed(values)
    out.texts = list(texts)
    return out


@contextmanager
def as_typed(values, texts=None):
    """An error the core raises about a budget names it as the user typed it, and the line it came
    from (``--params 1K`` was reported as '1000'): the core only sees the number (``InputError.number``),
    so the text (a ``Typed`` text, with its ``where``) whose budget it is is put back here."""
    texts = getattr(values, "texts", None) if texts is None else texts
    try:
        yield
    except InputError as err:
        if err.what != "budget" or err.where is not None or not texts or err.number is None:
            raise
        match = next((t for v, t in zip(values, texts) if v == err.number), None)
        if match is None:
            raise
        raise InputError(err.what, str(match), err.accepted, getattr(match, "where", None)) from None


def distinct(values: list, option: str, what: str) -> list:
    """``values`` without repeats, in order; a one-line warning when some were given twice (a repeated
    budget or depth would repeat rows and ids: ``sweep``, ``equiv`` and ``bounds`` grids all say so)."""
    unique = list(dict.fromkeys(values))
    if isinstance(values, Typed):  # each budget keeps the text it was first typed as
        first = {}
        for value, text in zip(values, values.texts):
            first.setdefault(value, text)
        unique = typed(unique, [first[v] for v in unique])
    if len(unique) < len(values):
        twice = [v for v in unique if values.count(v) > 1] if len(values) <= 10_000 else []
        shown = ", ".join(f"{v:,}" if isinstance(v, int) else str(v) for v in twice[:5]) + (", ..." if len(twice) > 5 else "")
        warn(f"{option} repeats {what} {shown}".rstrip() + f": each is used once ({len(values) - len(unique):,} repeats dropped)")
    return unique


def check_list_rows(count: int, what: str, value: str, kind: str) -> None:
    """Records computed one by one stop at MAX_LIST_ROWS, before any is computed."""
    if count > MAX_LIST_ROWS:
        raise InputError(what, value, f"at most {MAX_LIST_ROWS:,} {kind} in one call (this is {count:,}); split the input")


def parse_int_list(text: str, what: str, lowest: int, highest: int) -> list[int]:
    """'2,3', '1:48' or '256:8192:256' (start:stop[:step], inclusive), or a mix, comma-separated."""
    from ..theory.shapes import whole_number

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
    from ..arch.catalog import resolve_shape

    shapes = parse_each(texts, lambda text: resolve_shape(text, heads))
    warn_uneven(dict.fromkeys((s.width, s.heads) for s in shapes if s.width % s.heads))
    return shapes


def warn_uneven(pairs) -> None:
    """Warn for (width, heads) pairs whose heads do not divide the width: WARN_EACH one by one,
    then one line for the rest (thousands of stdin shapes must not flood stderr)."""
    pairs = list(pairs)
    for width, count in pairs[:WARN_EACH]:
        warn(f"width {width} is not divisible by {count} heads (head dimension {width / count:.2f})")
    if len(pairs) > WARN_EACH:
        warn(f"... and {len(pairs) - WARN_EACH:,} more shapes whose width is not divisible by their heads")


def check_heads(heads: Optional[int]) -> None:
    """--heads: at least 1 and below the largest accepted width (the theorems need H < d)."""
    from ..theory.shapes import MAX_WIDTH

    if heads is not None and not 1 <= heads < MAX_WIDTH:
        raise InputError("--heads", heads, f"expected a whole number from 1 to {MAX_WIDTH - 1:,} (and below the width)")


def budgets(params, flops, tokens) -> tuple[str, list[int]]:
    """Exactly one of --params, --flops, --tokens, parsed (with '-' read from stdin)."""
    from ..core.budgets import parse_flops, parse_params, parse_tokens

    given = [(name, values, parse) for name, values, parse in
             (("params", params, parse_params), ("flops", flops, parse_flops), ("tokens", tokens, parse_tokens)) if values]
    if len(given) != 1:
        raise InputError("options", " ".join(f"--{name}" for name, _, _ in given) or "(none)",
                         "expected exactly one of --params, --flops or --tokens")
    source, values, parse = given[0]
    texts = expand_stdin(values)
    check_list_rows(len(texts), "standard input" if "-" in values else f"--{source}",
                    f"{len(texts)} lines" if "-" in values else f"{len(texts)} budgets", "budgets")
    parsed = parse_each(texts, parse)
    return source, typed(parsed, texts) if source == "params" else parsed  # a token or FLOP text is not the budget's


def plan_options(arch, kv_heads, block, count, multiple, ffn_multiple, tp, rule, rule_file, context, reading="consistent"):
    """The planner's options from the command line: ``block`` holds the block options beyond the
    heads (options.BLOCK); the block preset is checked by name here."""
    from ..arch.presets import PRESETS
    from ..arch.hardware import Constraints
    from ..advice.planner import PlanOptions
    from ..arch.spending import Spending

    name = arch.strip().lower()
    if name not in PRESETS:
        raise not_one_of("--arch", arch, PRESETS)
    given = dict(kv_heads=kv_heads, **block._asdict())
    if given["ffn_mult"] is not None:
        given["ffn_mult"] = bounded_number(given["ffn_mult"], "--ffn-mult", 64, "expected a multiplier from 1/64 to 64, such as 1.3",
                                           lowest=1 / 64)
    overrides = tuple(sorted((k, v) for k, v in given.items() if v is not None))
    # the preset's head size and feed-forward rounding follow the size of each budget (presets.Preset.sizes):
    # only the user's own values are constraints
    constraints = Constraints(multiple=multiple, head_dim=block.head_dim, ffn_multiple=ffn_multiple, tp=tp)
    return PlanOptions(spending=Spending(name, overrides, getattr(count, "value", count)), constraints=constraints,
                       rule=rule.strip().lower(), rule_file=rule_file, context=context, reading=reading)


def warn_constraints(named_archs, tp: Optional[int], multiple: Optional[int]) -> None:
    """A stderr warning naming each rule a shape breaks among the ones the user asked for (--tp, --multiple)."""
    if tp is None and multiple is None:
        return
    from ..arch.hardware import Constraints, violations

    asked = Constraints(multiple=multiple, tp=tp or 1, composite_heads=False, shard_from=None)
    for name, arch, heads in named_archs:
        if arch is None:
            warn(f"{name}: its layout is not counted, so --tp/--multiple were not checked")
            continue
        broken = violations(arch, asked)
        if arch.heads != heads:  # heads not dividing the width: counted as one d x d head, so say it as it is
            broken = [b for b in broken if "heads" not in b] + ([f"its {heads} heads do not divide the width {arch.width}: "
                                                                  "no tensor-parallel degree above 1"] if (tp or 1) > 1 else [])
        if broken:
            warn(f"{name} breaks what you asked for: " + "; ".join(broken))
