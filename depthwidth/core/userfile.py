"""The one way depthwidth reads a file the user names: bounded, regular files only (or ``-``).

Every reader of user files (results and sweep files, trainer states, rule files; configs and
stdin as the other commands move to it) goes through ``read_bytes``:
- ``-`` reads standard input; any other path must be a regular file: a directory, FIFO, device
  or socket gets one clear line at once (``fit /dev/zero`` and ``--rule-file /dev/zero`` fail
  before reading a byte; a FIFO with no writer is never opened, so nothing blocks);
- at most ``MAX_BYTES`` are read, with the same message everywhere (a file that grows while being
  read is cut off at the limit and refused, never read without bound);
- the file is opened with O_NONBLOCK and checked again after opening (fstat), so a path swapped
  for a FIFO between the check and the open cannot block either.
Errors are ``InputError`` (exit 2) naming what was read and the path.
"""
from __future__ import annotations

import hashlib
import os
import stat
import sys

STDIN = "standard input"  # the one spelling of stdin in every message and record ('-' and '<stdin>' before)
MAX_BYTES = 50 * 1024 * 1024  # 50 MiB: far above any results, rule or config file; the same for every reader
LIMIT_TEXT = f"{MAX_BYTES // (1024 * 1024)} MiB (the limit for every file depthwidth reads)"


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def read_bytes(path: str, what: str = "file", accepted: str = "a regular file, or - for standard input",
               limit: int = MAX_BYTES, stdin=None) -> bytes:
    """The bytes of ``path`` (or standard input for ``-``), at most ``limit``; InputError otherwise."""
    from .errors import InputError

    if path == "-":
        from .errors import EnvironmentFailure

        stream = stdin if stdin is not None else getattr(sys.stdin, "buffer", None)  # None: started with fd 0 closed
        try:
            if stream is None:
                raise OSError("it is closed")
            data = stream.read(limit + 1)
        except (OSError, ValueError) as err:
            reason = getattr(err, "strerror", None) or str(err)
            raise EnvironmentFailure(f"cannot read standard input: {reason} (pipe the inputs in, or give them as arguments)") from None
        if len(data) > limit:
            raise InputError(what, STDIN, f"larger than {LIMIT_TEXT}")
        return data
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise InputError(what, path, f"no such file; expected {accepted}") from None
    except OSError as err:
        raise InputError(what, path, f"cannot read it ({err.strerror or err}); expected {accepted}") from None
    if not stat.S_ISREG(mode):
        raise InputError(what, path, f"is {_kind(mode)}; expected {accepted}")
    try:
        handle = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as err:
        raise InputError(what, path, f"cannot read it ({err.strerror or err}); expected {accepted}") from None
    with os.fdopen(handle, "rb") as file:
        mode = os.fstat(file.fileno()).st_mode
        if not stat.S_ISREG(mode):
            raise InputError(what, path, f"is {_kind(mode)}; expected {accepted}")
        try:
            data = file.read(limit + 1)
        except OSError as err:
            raise InputError(what, path, f"cannot read it ({err.strerror or err})") from None
    if len(data) > limit:
        raise InputError(what, path, f"larger than {LIMIT_TEXT}")
    return data


def read_text(path: str, what: str = "file", accepted: str = "a regular file, or - for standard input",
              limit: int = MAX_BYTES, stdin=None) -> tuple[str, str]:
    """(UTF-8 text, sha256 hex of the bytes) of ``path``; a byte-order mark is dropped."""
    from .errors import InputError

    data = read_bytes(path, what, accepted, limit, stdin)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InputError(what, path, f"not UTF-8 text; expected {accepted}") from None
    return text, hashlib.sha256(data).hexdigest()
