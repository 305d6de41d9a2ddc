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


# ---- every dotted module reference resolves -------------------------------------------------------
# A reference is `depthwidth.x.y` anywhere, or a backticked `x.y` (``x.y`` in docstrings) whose first part
# names a module or package of depthwidth (by its file name: `hardware.node_gpus`, `cost.run.RunSpec`) or a
# module that no longer exists (FORMER: the flat modules before the packages). Backticked paths of JSON
# fields (`run.gpus`, `compare.deep`) and file names (`rules.py`, `config.json`) are not module references.

FORMER = {"costs", "hfconfig", "hffamilies", "hffiles", "hflayers", "hfread", "planfield", "planvec", "recommend", "render",
          "screens", "shape_record", "spell", "tablewidth", "threshold_columns", "trainformats", "profilemodel", "guard", "exact",
          "rule_type", "rule_table", "rulefile", "rulemodels", "rulelaw", "user_rules"}
JSON_PATHS = {"run", "compare", "loss", "serve", "threshold", "budget", "band", "setup", "rule", "loss_model", "recommended",
              "candidates"}  # the roots of the nested records' dotted field paths (docs/json.md), not modules
BACKTICKED = r"`{1,2}((?:depthwidth\.)?[a-z_][a-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+)(?:\(\))?`{1,2}"
ANYWHERE = r"\b(depthwidth(?:\.[A-Za-z_][A-Za-z0-9_]*)+)"
FILE_SUFFIXES = {"py", "json", "md", "toml", "csv", "yaml", "txt", "png", "jsonl"}


def _modules() -> dict[str, list[str]]:
    """Each module's and package's short name -> its dotted names (rules: advice.rules and cli.commands.rules)."""
    found: dict[str, list[str]] = {}
    for path in sorted((ROOT / "depthwidth").rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__main__":
            continue
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found.setdefault(parts[-1], []).append(".".join(parts))
    return found


def _resolves(dotted: str, modules: dict[str, list[str]]) -> bool:
    import importlib
    import types

    first, *rest = dotted.split(".")
    for start in ["depthwidth"] if first == "depthwidth" else modules.get(first, []):
        target = importlib.import_module(start)
        for part in rest:
            if hasattr(target, part):
                target = getattr(target, part)
                continue
            try:
                target = importlib.import_module(f"{target.__name__}.{part}") if isinstance(target, types.ModuleType) else None
            except ImportError:
                target = None
            if target is None:
                break
        else:
            return True
    return False


def _texts():
    """(where, text) of every docstring in depthwidth/ and every page of docs/."""
    import ast

    for path in sorted((ROOT / "depthwidth").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node, clean=False)
                if doc:
                    yield f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', 1)}", doc
    for path in sorted((ROOT / "docs").glob("*.md")):
        yield str(path.relative_to(ROOT)), path.read_text(encoding="utf-8")


def test_every_dotted_module_reference_resolves():
    import re

    modules = _modules()
    broken = []
    for where, text in _texts():
        for dotted in {m.group(1) for m in re.finditer(BACKTICKED, text)} | {m.group(1) for m in re.finditer(ANYWHERE, text)}:
            first, last = dotted.split(".")[0], dotted.rsplit(".", 1)[1]
            if last in FILE_SUFFIXES:
                if last == "py" and dotted[:-3] in FORMER:
                    broken.append((where, dotted))
                continue
            if first in JSON_PATHS or (first != "depthwidth" and first not in modules and first not in FORMER):
                continue
            if not _resolves(dotted, modules):
                broken.append((where, dotted))
    assert not broken, broken


def test_no_issue_numbers_in_the_code():
    """The code says why in its own words; an issue number explains nothing to a reader of the code
    (a reference to another project's issue tracker, `owner/repo issue N`, is a source, and stays)."""
    import re

    found = [f"{path.relative_to(ROOT)}:{n}" for path in sorted((ROOT / "depthwidth").rglob("*.py"))
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             for m in re.finditer(r"(\S*\s)?\bissues? #?\d", line, re.IGNORECASE) if "/" not in (m.group(1) or "")]
    assert not found, found
