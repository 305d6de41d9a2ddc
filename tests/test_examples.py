"""The examples in examples/ run as shipped and print what they promise."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _env():
    """PATH with this interpreter's scripts first, so the examples find `depthwidth`."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return env


def _run(*cmd):
    return subprocess.run(cmd, capture_output=True, text=True, env=_env(), timeout=300)


needs_depthwidth = pytest.mark.skipif(shutil.which("depthwidth", path=_env()["PATH"]) is None,
                                      reason="the depthwidth script is not installed")


@needs_depthwidth
def test_sweep_example():
    result = _run("bash", str(EXAMPLES / "sweep.sh"))
    assert result.returncode == 0, result.stderr
    assert "budget 1e9 -> minimal shape 8x3200" in result.stdout
    assert result.stdout.splitlines()[0] == "budget.value,threshold.min_depth,threshold.width,threshold.heads,threshold.regime,rule.empirical_depth,rule.empirical_width"


@needs_depthwidth
def test_grid_example():
    result = _run("bash", str(EXAMPLES / "grid.sh"))
    assert result.returncode == 0, result.stderr
    counts = dict(line.split() for line in result.stdout.splitlines())
    assert sum(map(int, counts.values())) == 48 * 32
    assert set(counts) <= {"depth-efficient", "depth-inefficient", "threshold"} and "depth-efficient" in counts


def test_compare_models_example():
    result = _run(sys.executable, str(EXAMPLES / "compare_models.py"))
    assert result.returncode == 0, result.stderr
    assert "GPT-3 175B" in result.stdout and "deeper than the fit's 80 layers" in result.stdout
    assert "3-layer replicate width for BERT-base:" in result.stdout


def _readme():
    import importlib.util

    spec = importlib.util.spec_from_file_location("readme_examples", EXAMPLES.parent / "docs" / "readme_examples.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


README_EXAMPLES = _readme().examples((EXAMPLES.parent / "README.md").read_text(encoding="utf-8"))


@pytest.mark.parametrize("command,printed", README_EXAMPLES, ids=[c.split(" depthwidth ")[-1][:40] for c, _ in README_EXAMPLES])
def test_readme_example_prints_what_the_readme_shows(command, printed):
    """Each worked example of the README, run as written (python docs/readme_examples.py rewrites them)."""
    assert _readme().run(command) == printed
