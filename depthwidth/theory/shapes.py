"""Transformer shapes: depth x width x heads, their parsing and parameter counting."""
from __future__ import annotations

import numbers
import re
from functools import lru_cache

from ..core.errors import InputError
from ..core.frozen import frozen

MAX_DEPTH = 10**6
MAX_WIDTH = 10**15  # every accepted width is exact as a float (< 2**53)
HEAD_DIM = 64  # the 64-dimensional head convention behind the default head count

SHAPE_SYNTAX = "expected DEPTHxWIDTH[xHEADS] with whole numbers, such as 12x768 or 12x768x12"


@lru_cache(maxsize=None)
def _shape_pattern() -> re.Pattern:
    """``LxD[xH]``, compiled on first use (most commands never parse a shape)."""
    return re.compile(r"([0-9]+)[xX]([0-9]+)(?:[xX]([0-9]+))?", re.ASCII)


def shape_like(text: str) -> bool:
    """Whether ``text`` is an attempt at a shape, not a name (any script's digits: '１２x768')."""
    return re.match(r"[-+.\d]|[xX]\d", text) is not None


@frozen
class Shape:
    """A stack of ``depth`` self-attention layers of width d_x = ``width`` with ``heads`` heads."""

    depth: int
    width: int
    heads: int

    def __str__(self) -> str:
        return f"{self.depth}x{self.width}x{self.heads}"


def default_heads(width, head_dim: int = HEAD_DIM, xp=None):
    """width / head_dim rounded to the nearest integer, at least 1 and below the width.

    With ``xp=numpy``, element-wise over an integer array of widths."""
    if xp is None:
        return max(1, min(width - 1, int(width / head_dim + 0.5)))
    return xp.clip(xp.floor(width / head_dim + 0.5).astype(width.dtype), 1, width - 1)


def params(depth, width):
    """Non-embedding parameters 12·L·d² (4d² attention + 8d² feed-forward; Kaplan et al. 2020)."""
    return 12 * depth * width * width


def whole(value, what: str, lowest: int | None = None, highest: int | None = None) -> int:
    """The one whole-number check for values handed in from Python (figures, plans): an int, or a
    float with no fraction (768.0), within [lowest, highest]; never a bool, never truncated
    (768.5 is refused). Text from the command line goes through ``whole_number`` and Typer's
    option coercion (cli/_typer_compat.py) instead."""
    integral = isinstance(value, numbers.Integral) or (isinstance(value, float) and value.is_integer())
    if isinstance(value, bool) or not integral:
        raise InputError(what, value, "expected a whole number")
    number = int(value)
    if (lowest is not None and number < lowest) or (highest is not None and number > highest):
        span = f"from {lowest:,}" if lowest is not None else ""
        span += (" " if span else "") + (f"to {highest:,}" if highest is not None else "and up")
        raise InputError(what, value, f"expected a whole number {span}")
    return number


def whole_number(digits: str) -> int:
    """int() of a string of ASCII digits, any length: past 30 significant digits (beyond every
    accepted range) it returns 10**30 instead of tripping Python's 4300-digit conversion limit."""
    significant = digits.lstrip("0") or "0"
    return int(significant) if len(significant) <= 30 else 10**30


def make_shape(depth: int, width: int, heads: int | None = None, text: object = None) -> Shape:
    """Validate integers into a Shape; ``text`` is what the user wrote, for the error message."""
    shown = text if text is not None else f"{depth}x{width}" + ("" if heads is None else f"x{heads}")
    if not 1 <= depth <= MAX_DEPTH:
        raise InputError("shape", shown, f"depth must be a whole number from 1 to {MAX_DEPTH:,}; {SHAPE_SYNTAX}")
    if not 2 <= width <= MAX_WIDTH:
        raise InputError("shape", shown, f"width must be a whole number from 2 to 10^15; {SHAPE_SYNTAX}")
    if heads is None:
        heads = default_heads(width)
    if not 1 <= heads < width:
        raise InputError("shape", shown, f"heads must be a whole number from 1 to width-1 = {width - 1} (the theorems need H < d)")
    return Shape(depth, width, heads)


def parse_shape(text: str, heads: int | None = None) -> Shape:
    """Parse ``LxD`` or ``LxDxH`` (ASCII digits only); ``heads`` overrides a missing or given H."""
    match = _shape_pattern().fullmatch(text.strip()) if isinstance(text, str) else None
    if match is None:
        raise InputError("shape", text, SHAPE_SYNTAX)
    depth, width = whole_number(match[1]), whole_number(match[2])
    given = whole_number(match[3]) if match[3] is not None else None
    return make_shape(depth, width, heads if heads is not None else given, text)


def parse_shape_arrays(texts: list[str], heads: int | None = None):
    """Many ``LxD[xH]`` texts at once, as int64 arrays (depths, widths, heads), or None when any
    text is not a valid bare shape (the caller then parses one by one for the exact error)."""
    import numpy as np

    fullmatch = _shape_pattern().fullmatch
    matches = [fullmatch(t.strip()) if isinstance(t, str) else None for t in texts]
    if not all(matches) or any(len(m[1]) > 15 or len(m[2]) > 16 or (m[3] and len(m[3]) > 16) for m in matches):
        return None
    depth = np.array([int(m[1]) for m in matches], dtype=np.int64)
    width = np.array([int(m[2]) for m in matches], dtype=np.int64)
    if heads is not None:
        head = np.full(width.shape, heads, dtype=np.int64)
    else:
        given = np.array([int(m[3]) if m[3] else 0 for m in matches], dtype=np.int64)
        head = np.where(given > 0, given, default_heads(width, xp=np))
    if ((depth < 1) | (depth > MAX_DEPTH) | (width < 2) | (width > MAX_WIDTH) | (head < 1) | (head >= width)).any():
        return None
    return depth, width, head
