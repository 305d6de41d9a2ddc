"""Progress on stderr for work that takes more than a moment (certify -m 2000 ran 25 s,
fit on 300,000 rows 16 s, with nothing shown): only when stderr is a terminal, only once the work
has run ``DELAY`` seconds, and gone when it ends. stdout never sees it, and off a terminal (a pipe,
a file, a test) nothing is printed at all. Rich is imported only when a bar is drawn."""
from __future__ import annotations

import sys
import threading
import time
from contextlib import contextmanager

DELAY = 2.0  # seconds of work before anything is shown: quick runs print nothing


def _terminal(stream) -> bool:
    return stream is not None and hasattr(stream, "isatty") and stream.isatty()


class LateProgress:
    """A counted bar (``bar(done, total)``): certify's matrix rows, ``cost -``'s shapes, ``plan -``'s
    budgets. ``stream``: where it draws (stderr; a test may hand a stream that says it is a terminal)."""

    def __init__(self, label: str, delay: float = DELAY, stream=None):
        self.label, self.bar, self.task = label, None, None
        self.stream = sys.stderr if stream is None else stream
        self.due = time.perf_counter() + delay

    def __call__(self, done: int, total: int) -> None:
        if self.bar is None:
            if time.perf_counter() < self.due or not _terminal(self.stream):
                return
            from rich.console import Console
            from rich.progress import Progress

            self.bar = Progress(console=Console(file=self.stream), transient=True)
            self.bar.start()
            self.task = self.bar.add_task(self.label, total=total)
        self.bar.update(self.task, completed=done, total=total)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None


def counted(items, label: str, total: int | None = None, stream=None):
    """``items``, one by one, with a LateProgress counting them (closed when the loop ends or fails)."""
    total = len(items) if total is None else total
    bar = LateProgress(label, stream=stream)
    try:
        for done, item in enumerate(items):
            bar(done, total)
            yield item
    finally:
        bar.close()


@contextmanager
def late_status(label: str, delay: float = DELAY, stream=None):
    """A spinner with ``label`` for work that cannot count its steps (``fit`` reading and fitting a
    large file), drawn by a timer thread once the work has run ``delay`` seconds."""
    stream = sys.stderr if stream is None else stream
    if not _terminal(stream):
        yield
        return
    state, lock = {"over": False, "status": None}, threading.Lock()

    def start():
        from rich.console import Console

        with lock:
            if not state["over"]:
                state["status"] = Console(file=stream).status(label)
                state["status"].start()

    timer = threading.Timer(delay, start)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        with lock:  # a timer firing now finds the work over and draws nothing
            state["over"] = True
            if state["status"] is not None:
                state["status"].stop()
