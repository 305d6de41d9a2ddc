"""Plain-text tables that fit one screen, as `plan`'s first screen lays out its candidates
(``screen.candidate_table``): columns two spaces apart, numbers right-aligned, no box, no Rich.

A table never splits into parts and never cuts a cell: when it is wider than the screen, the
columns the command ranks last give way (``--wide`` keeps them all) and one line says which, so a
reader knows where to find them. A cell that has no value is "-", and the notes say why once.
"""
from __future__ import annotations

import textwrap

from .formats import fmt_count

GAP = "  "


class Column:
    """One column: its header, its cells (text), right-aligned or not, and ``drop``: the order in
    which it gives way when the table is too wide (1 first; 0 never)."""

    __slots__ = ("header", "cells", "right", "drop")

    def __init__(self, header: str, cells: list[str], right: bool = True, drop: int = 0):
        self.header, self.cells, self.right, self.drop = header, cells, right, drop


def _lines(columns: list[Column], show_header: bool) -> list[str]:
    widths = [max([len(c.header) * show_header, *map(len, c.cells)]) for c in columns]
    rows = list(zip(*(c.cells for c in columns)))
    line = lambda cells: GAP.join(cell.rjust(w) if c.right else cell.ljust(w)
                                  for cell, w, c in zip(cells, widths, columns)).rstrip()
    return ([line([c.header for c in columns])] if show_header else []) + [line(r) for r in rows]


def fit(columns: list[Column], width: int, show_header: bool = True) -> tuple[list[str], list[str]]:
    """(the table's lines, the headers of the columns left out to fit ``width``)."""
    from .fitting import WIDE

    shown = list(columns)
    while True:
        lines = _lines(shown, show_header)
        droppable = sorted((c for c in shown if c.drop), key=lambda c: c.drop)
        if WIDE["on"] or not droppable or max(map(len, lines), default=0) <= width:
            return lines, [c.header for c in columns if c not in shown]
        shown.remove(droppable[0])


def table(title: str | None, columns: list[Column], width: int, show_header: bool = True, more: str = "--wide",
          under: list[str] | None = None) -> list[str]:
    """A titled table fitted to ``width``, with one line naming the columns left out and ``more``,
    the option that shows them; ``under``: a second line under each row (indented, folded to fit)."""
    lines, dropped = fit(columns, width, show_header)
    if under is not None:
        head = lines[:1] if show_header else []
        body = lines[1:] if show_header else lines
        lines = head + [line for row, extra in zip(body, under) for line in [row, *(wrapped(extra, width, "    ", "  ") if extra else [])]]
    out = ([title] if title else []) + lines
    if dropped:
        out += wrapped(f"({more}: also {', '.join(dropped)})", width)
    return out


def wrapped(text: str, width: int, indent: str = "", first: str | None = None) -> list[str]:
    """``text`` folded at spaces to ``width`` (never inside a word), continuation lines at ``indent``."""
    return textwrap.wrap(text, width=max(width, 40), initial_indent=indent if first is None else first,
                         subsequent_indent=indent, break_on_hyphens=False, break_long_words=False) or [first or ""]


def labelled(label: str, text: str, width: int, size: int = 8) -> list[str]:
    """A labelled block as `plan` prints its answer: the label, then the text folded beside it."""
    return wrapped(text, width, " " * size, label.ljust(size))


def notes(items, width: int, title: str = "Notes") -> list[str]:
    """Each distinct note once, as a bullet with a hanging indent."""
    distinct = list(dict.fromkeys(items))
    if not distinct:
        return []
    return [title + ":"] + [line for n in distinct for line in wrapped(n, width, "    ", "  - ")]


def text(lines: list[str]) -> str:
    return "\n".join(lines) + "\n"


def count(value) -> str:
    return "-" if value is None else fmt_count(value)


def gb(value) -> str:
    return "-" if value is None else f"{value / 1e9:,.1f}"


def days(value) -> str:
    """Days: 12.3, 0.015 (two significant digits below one day)."""
    return "-" if value is None else f"{value:,.1f}" if value >= 1 else f"{value:.2g}"


def hours(value) -> str:
    return "-" if value is None else f"{value:,.0f}" if value >= 100 else f"{value:.3g}"


def pct_interval(value, low, high) -> str:
    """A loss penalty with its ~95% interval: +1.3% [+0.5%, +2.1%]."""
    if value is None:
        return "-"
    return f"{value:+.1%} [{low:+.1%}, {high:+.1%}]"
