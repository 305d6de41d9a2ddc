"""Shared test helpers and fixtures: the CLI in-process and as a subprocess, with stdout and
stderr kept apart, and parsers that check machine output never spells a non-finite number.

Tests take the ``run`` / ``run_sub`` fixtures; helpers that are plain functions are imported
from here (``from conftest import parse_json``)."""
from __future__ import annotations

import csv
import io
import json
import math
import os
import pathlib
import subprocess
import sys
from dataclasses import dataclass

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # import depthwidth from this checkout

import pytest  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from depthwidth.cli import app  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
RUNNER = CliRunner()


def _share_bytecode_with_subprocesses() -> None:
    """Where PYTHONDONTWRITEBYTECODE is set, every ``python -m depthwidth`` a test starts compiled
    depthwidth's modules anew (0.1 s of its 0.25 s of CPU): the children write their bytecode to one
    cache outside the checkout (PYTHONPYCACHEPREFIX) instead, which the next child reads. Set in the
    environment before pytest-xdist starts its workers, so that all of them share it."""
    if os.environ.get("PYTHONDONTWRITEBYTECODE") and not os.environ.get("PYTHONPYCACHEPREFIX"):
        import tempfile

        os.environ.pop("PYTHONDONTWRITEBYTECODE")
        os.environ["PYTHONPYCACHEPREFIX"] = os.path.join(tempfile.gettempdir(), f"depthwidth-tests-pycache-{getattr(os, 'getuid', lambda: 0)()}")


_share_bytecode_with_subprocesses()


def _build_each_app_once() -> None:
    """Typer's CliRunner turns the Typer app into Click commands on every ``invoke`` (20-30 ms for
    the thirteen commands' ~300 options, more than most calls take themselves): here each app is
    built once per test process, as ``depthwidth`` builds its app once per process. The Click
    commands keep nothing of a call (each call gets its own Click context)."""
    import typer.testing

    build = getattr(typer.testing, "_get_command", None)
    if build is None:  # another Typer: build on every call, as before
        return
    built: dict[int, tuple] = {}

    def build_once(typer_app):
        if id(typer_app) not in built:  # the app is kept with its command: its id is not reused
            built[id(typer_app)] = (typer_app, build(typer_app))
        return built[id(typer_app)][1]

    typer.testing._get_command = build_once


_build_each_app_once()
FORMATS = ("table", "json", "jsonl", "csv")


@dataclass(frozen=True)
class Outcome:
    code: int
    stdout: str
    stderr: str

    @property
    def error_lines(self) -> list[str]:
        return [line for line in self.stderr.splitlines() if line.strip()]


def run(args: list[str], input: str | bytes | None = None, env: dict | None = None) -> Outcome:
    """The CLI in-process; stdout and stderr kept apart (``env``: variables set for the call)."""
    result = RUNNER.invoke(app, args, input=input, env=env)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"uncaught {result.exception!r} for {args}") from result.exception
    return Outcome(result.exit_code, result.stdout, result.stderr)


def completed(args, input: str | bytes | None = None, columns: int | str | None = None) -> subprocess.CompletedProcess:
    """``run`` as a finished process (returncode, stdout, stderr), for tests written against
    ``subprocess.run``: the command in-process, where a real process would print the same (the
    subprocess tests of test_cli, test_errors and test_startup check that); ``columns``: COLUMNS."""
    out = run([str(arg) for arg in args], input=input, env=None if columns is None else {"COLUMNS": str(columns)})
    return subprocess.CompletedProcess(list(args), out.code, out.stdout, out.stderr)


def run_sub(args: list[str], input: str | bytes | None = None, timeout: float = 120) -> Outcome:
    """The CLI as a real process: ``python -m depthwidth`` from this checkout."""
    env = {k: v for k, v in os.environ.items() if k != "DEPTHWIDTH_DEBUG"}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    data = input.encode() if isinstance(input, str) else input
    proc = subprocess.run([sys.executable, "-m", "depthwidth", *args], input=data, capture_output=True,
                          cwd=ROOT, env=env, timeout=timeout)
    return Outcome(proc.returncode, proc.stdout.decode(), proc.stderr.decode())


def section(text: str, label: str) -> str:
    """The text of a screen's labelled block ("why", "run"...), its wrapped lines joined by spaces."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(label + " "))
    body = [lines[start][8:]]
    for line in lines[start + 1:]:
        if not line.startswith(" " * 8):
            break
        body.append(line.strip())
    return " ".join(body)


def assert_finite_json_text(text: str) -> None:
    """Machine output never spells a non-finite number."""
    assert "NaN" not in text and "Infinity" not in text, text[:500]


def parse_json(out: Outcome):
    assert out.code == 0, out.stderr
    assert_finite_json_text(out.stdout)
    return json.loads(out.stdout)


def parse_jsonl(out: Outcome) -> list:
    assert out.code == 0, out.stderr
    assert_finite_json_text(out.stdout)
    return [json.loads(line) for line in out.stdout.splitlines()]


def parse_csv(out: Outcome) -> list[dict]:
    assert out.code == 0, out.stderr
    return list(csv.DictReader(io.StringIO(out.stdout)))


def all_numbers_finite(value) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(all_numbers_finite(v) for v in value.values())
    if isinstance(value, list):
        return all(all_numbers_finite(v) for v in value)
    return True


def one_error_line(stderr: bytes) -> str:
    """The single ``depthwidth: error:`` line of a subprocess's stderr (no traceback, no internal error)."""
    text = stderr.decode()
    assert "Traceback" not in text and "internal error" not in text, text
    lines = [line for line in text.splitlines() if line.strip()]
    assert len(lines) == 1, text
    assert lines[0].startswith("depthwidth: error: "), lines[0]
    return lines[0]


def assert_bad_input(out: Outcome, needle: str | None) -> str:
    """Exit 2, exactly one non-empty stderr line that names ``needle``, empty stdout, no traceback."""
    assert out.code == 2, (out.code, out.stderr)
    assert out.stdout == "", out.stdout[:300]
    assert "Traceback" not in out.stderr
    lines = out.error_lines
    assert len(lines) == 1, out.stderr
    [line] = lines
    assert line.startswith("depthwidth: error: "), line
    assert len(line) < 2000, len(line)
    if needle is not None:
        assert needle in line, (needle, line)
    return line


@pytest.fixture(autouse=True)
def _no_inherited_terminal_size(monkeypatch):
    """Every test starts without COLUMNS/LINES, as under a plain `pytest` from a pipe: pytest-xdist's
    workers inherit a terminal size the main process does not export, and tables fit to it. A test
    that wants a width sets it itself."""
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.delenv("LINES", raising=False)


@pytest.fixture(name="run")
def run_fixture():
    """The CLI in-process: ``run(args, input=None) -> Outcome``."""
    return run


@pytest.fixture(name="run_sub")
def run_sub_fixture():
    """The CLI as a real process (``python -m depthwidth``): ``run_sub(args, input=None) -> Outcome``."""
    return run_sub
