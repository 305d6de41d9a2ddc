"""What each command path imports (issue 5): nothing here is timed, only ``sys.modules`` checked.

Each case runs in a fresh interpreter, which runs the CLI in-process (``app(argv,
standalone_mode=False)``, output discarded) and then reports ``sorted(sys.modules)``.
Scalar answers use ``math``: no NumPy, never SciPy; tables, CSV, JSON, JSONL and --field need
no Pydantic (JSON is json.dumps of plain records); --help and --version load none of the three.
`plan` times every candidate by the performance model's layout search, in plain Python on its
default path too: it loads none of NumPy, SciPy or Pydantic (``test_performance_model_loads_...``).
"""
from __future__ import annotations

import importlib.util
import json
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
HEAVY = {"numpy", "scipy", "pydantic"}

RUN_CLI = """
import contextlib, io, json, sys
sys.path.insert(0, {root!r})
from depthwidth.cli import app
with contextlib.redirect_stdout(io.StringIO()) as out, contextlib.redirect_stderr(io.StringIO()) as err:
    code = app({argv!r}, standalone_mode=False)
print(json.dumps({{"code": code, "stdout": out.getvalue(), "stderr": err.getvalue(), "modules": sorted(sys.modules)}}))
"""


def loaded(code: str) -> dict:
    """Run ``code`` in a fresh interpreter; its last stdout line is a JSON report."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    report["packages"] = {name.partition(".")[0] for name in report["modules"]}
    return report


def cli_modules(argv: list[str]) -> set[str]:
    report = loaded(RUN_CLI.format(root=str(ROOT), argv=argv))
    assert report["code"] in (0, None), (argv, report["stderr"])
    assert report["stdout"], argv  # the command really ran and wrote its answer
    return report["packages"]


def test_import_depthwidth_alone_loads_nothing_heavy():
    report = loaded(f"import json, sys; sys.path.insert(0, {str(ROOT)!r}); import depthwidth\n"
                    "print(json.dumps({'modules': sorted(sys.modules)}))")
    assert not report["packages"] & (HEAVY | {"typer", "rich"})


def test_scalar_python_api_needs_no_numpy():
    report = loaded(f"import json, sys; sys.path.insert(0, {str(ROOT)!r}); import depthwidth\n"
                    "depthwidth.bounds(12, 768, 12); depthwidth.plan(10**9, depthwidth.PlanOptions(perf=False))\n"
                    "print(json.dumps({'modules': sorted(sys.modules)}))")
    assert not report["packages"] & HEAVY


@pytest.mark.parametrize("argv", [["--help"], ["--version"], ["plan", "--help"], ["bounds", "--help"]])
def test_help_and_version_load_no_numpy_scipy_or_pydantic(argv):
    assert not cli_modules(argv) & HEAVY


SCALAR = {
    "plan": ["plan", "--params", "1e9", "--mfu", "0.4"],
    "plan, two budgets": ["plan", "--params", "350M", "--params", "1.3B", "--mfu", "0.4"],
    "bounds": ["bounds", "12x768", "24x1024x16"],
    "compare": ["compare", "--deep", "12x768", "--shallow", "6x1086"],
    "equiv": ["equiv", "--deep", "6x1000x16", "--depth", "2,3"],
}


@pytest.mark.parametrize("argv", SCALAR.values(), ids=SCALAR.keys())
@pytest.mark.parametrize("fmt", ["table", "csv"])
def test_scalar_table_and_csv_load_no_numpy_scipy_or_pydantic(argv, fmt):
    assert not cli_modules(argv + ["--format", fmt]) & HEAVY


@pytest.mark.parametrize("argv", SCALAR.values(), ids=SCALAR.keys())
@pytest.mark.parametrize("fmt", ["json", "jsonl"])
def test_scalar_json_loads_no_numpy_scipy_or_pydantic(argv, fmt):
    """JSON is json.dumps of the plain records (issue 16): Pydantic's ~115 ms stay out of the dump path."""
    assert not cli_modules(argv + ["--format", fmt]) & HEAVY


def test_scalar_field_loads_no_numpy_scipy_or_pydantic():
    assert not cli_modules(["plan", "--params", "1e9", "--mfu", "0.4", "--field", "width"]) & HEAVY


MODELED = {
    "plan": ["plan", "--params", "1e9"],
    "plan on a cluster": ["plan", "--params", "7e9", "--arch", "llama", "--tokens", "2e12", "--gpus", "512"],
    "cost": ["cost", "32x4096", "--arch", "llama", "--gpu", "h100", "--gpus", "64", "--tokens", "2e11"],
}


@pytest.mark.parametrize("argv", MODELED.values(), ids=MODELED.keys())
@pytest.mark.parametrize("fmt", ["table", "json", "csv"])
def test_performance_model_loads_no_numpy_scipy_or_pydantic(argv, fmt):
    """The performance model times one shape's layouts on plain numbers (cost/perf/layout.py ``search``,
    core/num.py): the default plan and `cost` load no NumPy (cold start, issues 30 and 32)."""
    assert not cli_modules(argv + ["--format", fmt]) & HEAVY


@pytest.mark.skipif(importlib.util.find_spec("typer._click") is None, reason="this Typer runs on the click package")
def test_plan_table_loads_no_second_click():
    """Recent Typer vendors Click as typer._click; loading the separate click package too costs ~15 ms."""
    assert not cli_modules(["plan", "--params", "1e9", "--mfu", "0.4"]) & (HEAVY | {"click"})


def test_grid_uses_numpy_but_not_scipy_or_pydantic():
    packages = cli_modules(["bounds", "--depth", "1:4", "--width", "256:1024:256", "--format", "json"])
    assert "numpy" in packages
    assert not packages & {"scipy", "pydantic"}


MAIN = """
import contextlib, io, json, sys
sys.path.insert(0, {root!r})
sys.argv = ["depthwidth", *{argv!r}]
from depthwidth.cli import main
with contextlib.redirect_stdout(io.StringIO()) as out:
    try:
        main()
    except SystemExit as done:
        code = done.code
print(json.dumps({{"code": code, "stdout": out.getvalue(), "modules": sorted(sys.modules)}}))
"""


def main_modules(argv: list[str]) -> set[str]:
    """What the console script's main() loads for one command line (it builds that command only)."""
    report = loaded(MAIN.format(root=str(ROOT), argv=argv))
    assert report["code"] in (0, None) and report["stdout"], argv
    return set(report["modules"])


@pytest.mark.parametrize("argv", [["plan", "--params", "1e9", "--mfu", "0.4"], ["plan", "--params", "1e9", "--mfu", "0.4", "--format", "json"],
                                  ["bounds", "12x768", "--format", "json"]])
def test_main_builds_only_the_command_it_runs_and_never_loads_pydantic(argv):
    modules = main_modules(argv)
    assert f"depthwidth.cli.commands.{argv[0]}" in modules
    commands = {m for m in modules if m.startswith("depthwidth.cli.commands.")}
    assert commands == {f"depthwidth.cli.commands.{argv[0]}"}
    assert not {m.partition(".")[0] for m in modules} & HEAVY


def test_schema_is_where_pydantic_is_loaded():
    """The check above can fail: the schema command does load Pydantic."""
    assert "pydantic" in {m.partition(".")[0] for m in main_modules(["schema", "plan"])}


@pytest.mark.parametrize("argv", [["compare", "--deep", "12x768", "--shallow", "6x1086", "--format", "json"],
                                  ["bounds", "12x768", "--format", "json"], ["equiv", "--deep", "6x1000x16", "--depth", "2,3"]])
def test_commands_without_a_budget_never_load_the_planner(argv):
    """The plan record's classes cost ~5 ms to define; a comparison needs only the Levine fit's
    depth (``rules.empirical_optimum``) and the minimal depth (``theory.min_depth``)."""
    assert "depthwidth.advice.planner" not in main_modules(argv)


def test_plan_loads_the_planner():
    """The check above can fail."""
    assert "depthwidth.advice.planner" in main_modules(["plan", "--params", "1e9", "--format", "json"])


def test_plan_screen_needs_no_rich():
    """Issue 32: the default plan screen is plain text; Rich loads only for --explain's tables."""
    assert "rich" not in cli_modules(["plan", "--params", "1e9"])
    assert "rich" in cli_modules(["plan", "--params", "1e9", "--explain"])
