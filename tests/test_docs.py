"""Issue 32: the README is a first page, the reference is a MkDocs site under docs/, and the CLI
reference there is what `--help` says."""
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _module(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "docs" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_readme_is_a_first_page():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 300
    assert "pip install . && depthwidth plan --params 1e9" in text  # the two fresh-clone commands, as .ci/run runs them
    assert 'pip install --upgrade -e ".[test,plot]" && python -m pytest -n auto' in text
    assert 'pip install --upgrade -e ".[test,plot]" && python -m pytest -n auto' in (ROOT / ".ci" / "run").read_text()


def test_cli_reference_is_what_help_says():
    """docs/cli.md is generated from --help (python docs/gen_cli.py); a changed option must regenerate it."""
    gen = _module("gen_cli")
    committed = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert gen.render() == committed, "docs/cli.md differs from --help: run python docs/gen_cli.py"
    for command in ("plan", "sweep", "compare", "equiv", "bounds", "inspect", "fit", "export", "plot phase"):
        assert f"## `depthwidth {command}`" in committed


def test_every_plan_field_is_documented():
    out = subprocess.run([sys.executable, "-m", "depthwidth", "plan", "--params", "1e9", "--format", "json"],
                         capture_output=True, text=True, cwd=ROOT, timeout=120)
    [record] = json.loads(out.stdout)
    contract = (ROOT / "docs" / "json.md").read_text(encoding="utf-8") + (ROOT / "docs" / "costs.md").read_text(encoding="utf-8")
    def paths(value, prefix=""):  # every field at every level of the nested record (issue 42), lists of records left out
        return {n for k, v in value.items() for n in ({prefix + k} | (paths(v, prefix + k + ".") if isinstance(v, dict) else set()))}

    names = paths({k: v for k, v in record.items() if k != "evidence"}) | paths(record["candidates"][0])
    documented = lambda n: any(f"`{'.'.join(n.split('.')[i:])}`" in contract for i in range(n.count(".") + 1))  # its path, or its tail
    missing = sorted(n for n in names if not documented(n))
    assert not missing, missing


def test_mkdocs_builds_strict(tmp_path):
    pytest.importorskip("mkdocs")
    pytest.importorskip("material")
    out = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(tmp_path / "site")],
                         capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert (tmp_path / "site" / "cli" / "index.html").exists()
