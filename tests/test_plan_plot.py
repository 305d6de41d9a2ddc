"""Issue 32: `plan --plot` and `sweep --plot` draw the candidates (the plot extra)."""

import pytest

from conftest import completed

pytest.importorskip("matplotlib")


def run(*args):
    return completed(args, columns=80)  # in-process (conftest.completed)


def test_plan_plot_writes_a_picture_read_back(tmp_path):
    from matplotlib.image import imread

    path = tmp_path / "out.png"
    out = run("plan", "--params", "1e9", "--plot", str(path))
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("Plan for 1B parameters")  # the screen is printed as well
    image = imread(path)
    height, width = image.shape[:2]
    assert (width, height) == (9 * 150, round(5.5 * 150))  # FIGSIZE inches at 150 dpi
    gray = image[..., :3].mean(axis=2)
    assert (gray < 0.9).mean() > 0.02 and gray.std() > 0.05  # not blank: lines, points and text drawn


def test_plan_plot_svg_marks_band_pick_and_published_models(tmp_path):
    path = tmp_path / "out.svg"
    assert run("plan", "--params", "1e9", "--plot", str(path)).returncode == 0
    svg = path.read_text()
    for gid in ('id="band', 'id="pick', 'id="min-depth', 'id="candidates', 'id="published:gpt3-xl'):
        assert gid in svg, gid


def test_sweep_plot_and_refusals(tmp_path):
    path = tmp_path / "sweep.png"
    out = run("sweep", "--params", "1e9", "--arch", "llama", "--count", "4", "--tokens", "2e10", "--plot", str(path))
    assert out.returncode == 0 and path.stat().st_size > 10_000
    bad = run("plan", "--params", "1e9", "--plot", str(tmp_path / "out.txt"))
    assert bad.returncode == 2 and bad.stdout == "" and "png or .svg" in bad.stderr
    two = run("plan", "--params", "1e9", "--params", "1e10", "--plot", str(tmp_path / "two.png"))
    assert two.returncode == 2 and two.stdout == "" and not (tmp_path / "two.png").exists()


def test_published_models_beyond_the_candidates_widen_the_axis(tmp_path):
    """A 1e8 mixtral plan's band holds one candidate while its published models sit at other depths:
    the x axis is widened to them, so every marker lands inside the figure (before, smollm2-135m was
    drawn at x = 2668 of a 648 pt wide SVG and matplotlib warned that its layout collapsed)."""
    import re

    path = tmp_path / "out.svg"
    out = run("plan", "--params", "1e8", "--arch", "mixtral", "--tokens", "2e12", "--gpu", "mi300x", "--tp", "4",
              "--gpus", "256", "--plot", str(path))
    assert out.returncode == 0, out.stderr
    assert "Warning" not in out.stderr and "constrained_layout" not in out.stderr
    svg = path.read_text()
    width = float(re.search(r'<svg [^>]*width="([\d.]+)pt"', svg).group(1))
    markers = re.findall(r'<g id="published:([^"]+)">.*?<use [^>]*x="([\d.-]+)"', svg, flags=re.S)
    assert len(markers) >= 2
    for model, x in markers:
        assert 0 < float(x) < width, (model, x)
