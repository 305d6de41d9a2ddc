"""The one "cannot write output" guard: every write to stdout goes through here, so a closed,
full or non-UTF-8 stdout gives one clear EnvironmentFailure, and a reader that went away
(BrokenPipeError) goes up as is for the CLI to end quietly."""
from __future__ import annotations

import errno
import os
import sys
from contextlib import contextmanager

from ..core.errors import EnvironmentFailure

OUTPUT_ERRNOS = {errno.ENOSPC, errno.EBADF, errno.EIO, errno.EDQUOT, errno.EFBIG}  # writing stdout failed


def cannot_write(err: BaseException) -> EnvironmentFailure:
    """The one wording of a failed write."""
    return EnvironmentFailure(f"cannot write output: {getattr(err, 'strerror', None) or err}")


@contextmanager
def _writing():
    """A failing write (an OSError or a closed stream's ValueError) raised as EnvironmentFailure; a broken
    pipe as itself (the CLI ends quietly on it)."""
    try:
        yield
    except BrokenPipeError:
        raise
    except (OSError, ValueError) as err:
        raise cannot_write(err) from None


def closed() -> EnvironmentFailure:
    return EnvironmentFailure("cannot write output: standard output is closed")


def encoding_of(out) -> str | None:
    """The normalized codec name of a text stream, or None (a StringIO takes any text)."""
    name = getattr(out, "encoding", None)
    if not isinstance(name, str):
        return None
    import codecs

    try:
        return codecs.lookup(name).name
    except LookupError:
        return None


def output_text(text: str, out) -> str:
    """``text`` as ``out`` can take it: unchanged for UTF-8 (and StringIO); for another encoding
    (PYTHONIOENCODING=ascii, a latin-1 terminal) every character it cannot spell becomes a
    backslash escape (``±`` -> ``\\xb1``), so nothing fails after part of the output is out.
    JSON needs none of this: it is ASCII always."""
    encoding = encoding_of(out)
    if encoding is None or encoding in ("utf-8", "utf-8-sig") or text.isascii():
        return text
    return text.encode(encoding, "backslashreplace").decode(encoding)


def write_output(text: str, out) -> None:
    """Write and flush ``text`` to ``out``; a closed or full stdout becomes EnvironmentFailure
    ("cannot write output: ..."); a reader that went away (BrokenPipeError) goes up as is."""
    if out is None:  # Python sets sys.stdout to None when it starts with file descriptor 1 closed
        raise closed()
    with _writing():  # ValueError: "I/O operation on closed file"
        out.write(output_text(text, out))
        out.flush()


def stream_writer(out):
    """A write function for streamed output: each piece made safe for the stream's encoding
    (``output_text``), a failing write raised as EnvironmentFailure."""
    if out is None:
        raise closed()

    def write(text: str) -> None:
        with _writing():
            out.write(output_text(text, out))

    return write


def stream_bytes_writer(out):
    """A write function for ASCII or UTF-8 bytes straight to ``out``'s binary buffer (a big grid's
    chunks, spelled as bytes by worker processes, skip a decode and an encode), or None when ``out``
    has no such buffer. Bytes that are not ASCII go through ``out`` as text when its encoding is not
    UTF-8 (``output_text``'s escapes). Errors as ``stream_writer``'s."""
    buffer = getattr(out, "buffer", None)
    if buffer is None or not hasattr(buffer, "write"):
        return None
    utf8 = encoding_of(out) in (None, "utf-8", "utf-8-sig")

    def write(data: bytes) -> None:
        with _writing():
            if utf8 or data.isascii():
                out.flush()  # what was written as text goes first
                buffer.write(data)
            else:
                out.write(output_text(data.decode("utf-8", "surrogatepass"), out))

    return write


class ClosedStdout:
    """sys.stdout when file descriptor 1 was closed at startup: every write fails clearly."""

    encoding, errors = "utf-8", "strict"

    def write(self, text: str) -> int:
        raise closed()

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


def flush_stdout() -> None:
    """Flush stdout now, so that a write error (a full disk) is reported, not lost at exit."""
    with _writing():
        sys.stdout.flush()


def discard_stdout() -> None:
    """Point file descriptor 1 at /dev/null so the interpreter's final flush of what is still
    buffered neither fails nor prints "Exception ignored" after our one error line."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (AttributeError, OSError, ValueError):  # not a real file (tests), or fd 1 is gone anyway
        pass
