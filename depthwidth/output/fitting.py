"""Tables that fit the terminal: every table (``tables._table``) is a ``FittedTable``, laid out
for the console's width when it is printed. Text folds at spaces, columns stack into parts, and a
number is never cut (0.2.0 printed ``1,455…`` in an 80-column terminal); ``--wide`` (``WIDE``)
keeps every table at its natural width."""
from __future__ import annotations

import re

WIDE = {"on": False}  # --wide: every table at its natural width (set by the CLI for one command)
OFF_TERMINAL_WIDTH = 160  # output to a file or pipe without COLUMNS: wide enough for most tables unfolded
NUMBER = r"\d"  # a word holding a digit is never folded (compiled on first use, by re's cache)
COMFORT_WIDTH = 20  # a text column narrower than this is split into parts before it is squeezed
FOLD_WORDS_OVER = 24  # a text column folds only words longer than this (paths, URLs), never a word with a digit


def given_width() -> int | None:
    """The width the user set: unbounded with --wide, else COLUMNS when it is a positive whole number; None
    when neither is set (the terminal's width, or a default off a terminal, is the caller's)."""
    import os

    if WIDE["on"]:
        return 1_000_000
    columns = os.environ.get("COLUMNS", "").strip()
    return int(columns) if columns.isdigit() and int(columns) > 0 else None


def console_width(terminal: bool) -> int | None:
    """The width tables are laid out for: the terminal's (Rich reads it, COLUMNS first), COLUMNS
    off a terminal (else OFF_TERMINAL_WIDTH), or unbounded with --wide."""
    width = given_width()
    if width is not None:
        return width
    return None if terminal else OFF_TERMINAL_WIDTH


def _lines(text) -> list[str]:
    return text.plain.split("\n")


def _longest(words) -> int:
    from rich.cells import cell_len

    return max((cell_len(w) for w in words), default=0)


class FittedTable:
    """A table laid out for the width it is given, never cutting a number:

    1. it fits: the table as it is;
    2. else fold: text columns wrap at spaces (a word without a digit may be folded), numeric
       columns keep their cells on one line (their headers may wrap), every word holding a digit
       stays whole; the widest columns give up width first;
    3. else stack: the columns split into parts, one table each, the first (naming) column
       repeated in every part;
    4. else (a terminal too narrow even for that): one "header: value" line per cell.
    With ``--wide`` (``WIDE``) the table keeps its natural width whatever the terminal."""

    def __init__(self, title, columns, rows, right, show_header=True):
        from rich.text import Text

        def literal(value):
            return Text(value) if isinstance(value, str) else value

        self.title = literal(title)
        self.headers = [literal(name) for name in columns]
        self.names = list(columns)
        self.rows = [[literal(cell) for cell in row] for row in rows]
        self.right = right
        self.show_header = show_header
        self._measured: dict = {}  # (measure, column) -> width: the layout asks for each many times

    def _measure(self, kind: str, i: int, compute) -> int:
        key = (kind, i)
        if key not in self._measured:
            self._measured[key] = compute(i)
        return self._measured[key]

    # the widths of one column: natural (one line per cell) and the least that cuts no number
    def _natural(self, i: int) -> int:
        return self._measure("natural", i, self._natural_width)

    def _least(self, i: int) -> int:
        return self._measure("least", i, self._least_width)

    def _natural_width(self, i: int) -> int:
        cells = [self.headers[i]] * self.show_header + [row[i] for row in self.rows]
        return _longest(line for cell in cells for line in _lines(cell))

    def _least_width(self, i: int) -> int:
        header = _longest(self.headers[i].plain.split()) if self.show_header else 0
        if self.names[i] in self.right:
            return max(header, _longest(line for row in self.rows for line in _lines(row[i])))
        words = [w for row in self.rows for line in _lines(row[i]) for w in line.split()]
        number = re.compile(NUMBER).search
        return max(_longest(w for w in words if number(w)), min(_longest(words), FOLD_WORDS_OVER), min(header, 12))

    @staticmethod
    def _overhead(count: int) -> int:
        return 3 * count + 1  # edges, separators and one space of padding on each side of a cell

    def _rich_table(self, indices, widths=None, title=None):
        from rich.table import Table

        table = Table(title=self.title if title is None else title, title_justify="left", header_style="bold",
                      show_header=self.show_header)
        for i in indices:
            numeric = self.names[i] in self.right
            table.add_column(self.headers[i], justify="right" if numeric else "left", overflow="fold",
                             no_wrap=numeric and widths is None, width=None if widths is None else widths[i])
        for row in self.rows:
            table.add_row(*(row[i] for i in indices))
        return table

    def _comfortable(self, i: int) -> int:
        """The least width at which a text column still reads well (COMFORT_WIDTH)."""
        return self._measure("comfortable", i, lambda i: max(self._least(i), min(self._natural(i), COMFORT_WIDTH)))

    def _fold(self, indices, width: int, floor):
        """Widths for these columns within ``width`` (widest columns shrink first, none below
        ``floor``), or None when they cannot fit."""
        least = {i: floor(i) for i in indices}
        widths = {i: max(self._natural(i), least[i]) for i in indices}
        excess = sum(widths.values()) + self._overhead(len(indices)) - width
        if excess <= 0:
            return widths
        if sum(least.values()) + self._overhead(len(indices)) > width:
            return None
        while excess > 0:
            i = max((i for i in indices if widths[i] > least[i]), key=lambda i: widths[i])
            widths[i] -= 1
            excess -= 1
        return widths

    def _parts(self, width: int, floor) -> list[list[int]] | None:
        """Columns in parts that each fit with the first column repeated, or None."""
        parts, current = [], [0]
        for i in range(1, len(self.headers)):
            if self._fold(current + [i], width, floor) is not None:
                current.append(i)
            elif len(current) > 1 and self._fold([0, i], width, floor) is not None:
                parts.append(current)
                current = [0, i]
            else:
                return None
        return parts + [current]

    def __rich_console__(self, console, options):
        from rich.text import Text

        width = options.max_width
        everything = list(range(len(self.headers)))
        if WIDE["on"] or sum(map(self._natural, everything)) + self._overhead(len(everything)) <= width:
            yield self._rich_table(everything)
            return
        for floor in (self._comfortable, self._least):  # readable first; then as tight as whole numbers allow
            widths = self._fold(everything, width, floor)
            if widths is not None:
                yield self._rich_table(everything, widths)
                return
            parts = self._parts(width, floor) if self.show_header and len(everything) > 2 else None
            if parts is not None:
                for number, indices in enumerate(parts, 1):
                    title = self.title.copy()
                    title.append(f" (part {number} of {len(parts)}: {', '.join(self.names[i] for i in indices[1:])})")
                    yield self._rich_table(indices, self._fold(indices, width, floor), title)
                return
        lines = [self.title.copy()]  # too narrow for any table: one line per cell
        for row in self.rows:
            lines.append(Text(""))
            for header, cell in zip(self.headers, row):
                lines.append(Text.assemble((header.plain + ": " if header.plain else "", "bold"), cell))
        yield Text("\n").join(lines)

    def __rich_measure__(self, console, options):
        from rich.measure import Measurement

        return Measurement.get(console, options, self._rich_table(list(range(len(self.headers)))))
