"""Writing files all or nothing: a staging copy beside the target, renamed into place.

Used by ``export`` (one config, or a sweep's directory of configs). Guarantees:
- nothing is overwritten without ``force``; nothing above the target is created;
- a failure or a signal leaves nothing behind: the staging copy is removed on the way out. SIGTERM
  is turned into an exit with status 143 (128 + 15) after the clean-up, SIGINT into the usual
  KeyboardInterrupt (exit 130 in the CLI); the final renames run with both signals blocked, so
  the target is either the old one or the complete new one;
- staging names fit the file system's 255-byte limit whatever the target's name (a target name
  of 241-255 bytes gets a shortened staging name), and an unwritable place (``/proc/x.json``) is
  one line, ``cannot write ...`` (exit 1), not an internal error.
"""
from __future__ import annotations

import os
import signal
import threading
from contextlib import contextmanager

from .errors import EnvironmentFailure, InputError

NAME_MAX = 255  # bytes in one file name (Linux, macOS)
SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Terminated(SystemExit):
    """SIGTERM during a write: exits 128 + 15 once the staging copy is gone."""


def _parent(path: str) -> str:
    return os.path.dirname(os.path.abspath(path))


def staging_name(path: str, suffix: str) -> str:
    """A fresh hidden name beside ``path``: .NAME.<8 hex>.tmp, NAME shortened so the whole name
    stays within NAME_MAX bytes (UTF-8)."""
    base = os.path.basename(os.path.abspath(path))
    import secrets  # here, not at the top: the CLI imports this module for every command (hold_after_commit)

    tail = f".{secrets.token_hex(4)}{suffix}"
    room = NAME_MAX - 1 - len(tail.encode())
    short = base.encode()[:room].decode("utf-8", "ignore")
    return os.path.join(_parent(path), f".{short}{tail}")


def cannot_write(path: str, err: OSError) -> EnvironmentFailure:
    return EnvironmentFailure(f"cannot write {path!r}: {err.strerror or err}")


def staging_dir(path: str, suffix: str = ".tmp") -> str:
    """Create a new empty directory beside ``path``."""
    while True:
        name = staging_name(path, suffix)
        try:
            os.mkdir(name)
            return name
        except FileExistsError:  # pragma: no cover - 32 random bits
            continue
        except OSError as err:
            raise cannot_write(path, err) from None


def staging_file(path: str) -> tuple[int, str]:
    """Create and open a new file beside ``path`` (mode 0666 less the umask)."""
    while True:
        name = staging_name(path, ".tmp")
        try:
            return os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), name
        except FileExistsError:  # pragma: no cover - 32 random bits
            continue
        except OSError as err:
            raise cannot_write(path, err) from None


def _on_term(signum, frame):
    raise Terminated(128 + signum)


@contextmanager
def cleaned_up(cleanup, path: str):
    """Run ``cleanup`` (remove the staging copy) if the block fails or a signal arrives; an
    OSError becomes ``cannot write PATH: reason`` (exit 1). SIGTERM is caught for the duration
    (main thread only) and ends the process with 143 after the clean-up."""
    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _on_term) if main else None
    try:
        yield
    except OSError as err:
        _quietly(cleanup)
        raise cannot_write(path, err) from None
    except BaseException:
        _quietly(cleanup)
        raise
    finally:
        if main:
            signal.signal(signal.SIGTERM, previous)


def _quietly(cleanup) -> None:
    """Run the clean-up with the two signals blocked, so a second Ctrl-C cannot cut it short."""
    old = signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS)
    try:
        cleanup()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


@contextmanager
def signals_blocked():
    """SIGINT and SIGTERM wait (pending) until the block is done: for the final renames.

    Once the block has committed (no exception) and the CLI has asked for it (``hold_after_commit``),
    a signal that arrived meanwhile is taken and noted instead of delivered, and SIGINT is noted, not
    raised, until the command ends: the output is complete, so the command finishes and exits 0
    (a late Ctrl-C exited 130 with the export already in place)."""
    old = signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS)
    try:
        yield
        if _HOLD["on"] and threading.current_thread() is threading.main_thread():
            if _HOLD["previous"] is None:
                _HOLD["previous"] = signal.signal(signal.SIGINT, _note)
            for sig in sorted(signal.sigpending() & set(SIGNALS)):
                signal.sigtimedwait([sig], 0)
                _HOLD["late"].append(signal.Signals(sig).name)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


_HOLD = {"on": False, "previous": None, "late": []}


def _note(signum, frame) -> None:
    _HOLD["late"].append(signal.Signals(signum).name)


def hold_after_commit(on: bool) -> list[str]:
    """The CLI's switch around one command: ``True`` at its start; ``False`` at its end restores
    SIGINT's handler and returns the signals that arrived after the output was committed."""
    late = list(_HOLD["late"])
    if not on and _HOLD["previous"] is not None:
        signal.signal(signal.SIGINT, _HOLD["previous"])
    _HOLD.update(on=on, previous=None, late=[])
    return late


def remove(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def need_parent(out: str, path: str, option: str = "--out") -> None:
    """Refuse when the directory ``path`` goes in does not exist (nothing is created above it)."""
    if not os.path.isdir(_parent(path)):
        raise InputError(option, out, f"its directory {_parent(path)!r} does not exist; create it first")


def replace_file(data: bytes, path: str) -> None:
    """Write ``data`` to a staging file beside ``path``, then rename it over ``path``."""
    handle, staging = staging_file(path)
    with cleaned_up(lambda: remove(staging), path):
        with os.fdopen(handle, "wb") as file:
            file.write(data)
        with signals_blocked():
            os.replace(staging, path)


def write_new_dir(files: dict[str, bytes], directory: str) -> None:
    """Create ``directory`` holding ``files`` (relative path -> bytes; one level of folders),
    built under a staging name and renamed into place (or over an empty directory)."""
    staging = staging_dir(directory)
    with cleaned_up(lambda: _rmtree(staging, ignore_errors=True), directory):
        _fill(staging, files)
        with signals_blocked():
            os.replace(staging, directory)


def swap_dir(files: dict[str, bytes], directory: str) -> None:
    """Replace the existing ``directory`` by a new one holding ``files``: the old one is moved
    aside, the new one put in place, then the old one deleted; on failure the old one goes back."""
    staging = staging_dir(directory)
    name = os.path.basename(os.path.abspath(directory))
    with cleaned_up(lambda: _rmtree(staging, ignore_errors=True), directory):
        _fill(staging, files)
        with signals_blocked():
            old = staging_dir(directory, ".old")
            try:
                os.rename(directory, os.path.join(old, name))
            except BaseException:
                os.rmdir(old)
                raise
            try:
                os.rename(staging, directory)
            except BaseException:
                os.rename(os.path.join(old, name), directory)  # the earlier export goes back
                os.rmdir(old)
                raise
        _rmtree(old, ignore_errors=True)


def _rmtree(path: str, ignore_errors: bool = False) -> None:
    import shutil

    shutil.rmtree(path, ignore_errors=ignore_errors)


def _fill(root: str, files: dict[str, bytes]) -> None:
    for relative, data in files.items():
        folder = os.path.dirname(relative)
        if folder and not os.path.isdir(os.path.join(root, folder)):
            os.mkdir(os.path.join(root, folder))
        with open(os.path.join(root, relative), "wb") as file:
            file.write(data)
