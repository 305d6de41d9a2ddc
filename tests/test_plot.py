"""Figures: files written, sizes, and the artists each figure must contain (found by gid)."""
import math
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("matplotlib")

from depthwidth.core.errors import InputError
from depthwidth.advice.rules.builtin import empirical_optimum
from depthwidth.theory.separation import min_depth_exact, width_for
from depthwidth.advice.phase import DEFAULT_BUDGETS, DEFAULT_MODELS, bounds_data, phase_data
from depthwidth.output.plot import DPI, phase_figure, require_matplotlib, save_figure
from depthwidth.output.plot_bounds import bounds_figure
from depthwidth.theory.shapes import default_heads, parse_shape

ROOT = Path(__file__).resolve().parents[1]


def with_gid(fig, gid):
    """Every artist in the figure carrying this gid."""
    return fig.findobj(lambda artist: artist.get_gid() == gid)


def gids(fig, prefix):
    """The gids in the figure that start with ``prefix``."""
    return sorted({a.get_gid() for a in fig.findobj(lambda a: (a.get_gid() or "").startswith(prefix))})


def one_line(fig, gid):
    (line,) = with_gid(fig, gid)
    return np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float)


def png_size(path):
    """(width, height) in pixels from the IHDR chunk."""
    data = Path(path).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


@pytest.fixture(scope="module")
def default_phase():
    return phase_figure(phase_data())


@pytest.fixture(scope="module")
def bounds_fig():
    return bounds_figure(bounds_data([704, 729, 768, 4096]))


# ---------------------------------------------------------------- files


@pytest.mark.parametrize("make, gid", [(lambda: phase_figure(phase_data()), "threshold"), (lambda: bounds_figure(bounds_data([768, 4096])), "upper:768")],
                         ids=["phase", "bounds"])
def test_png_and_svg_files(make, gid, tmp_path):
    fig = make()
    png = save_figure(fig, tmp_path / "figure.png")
    assert png == tmp_path / "figure.png"
    assert png.read_bytes()[:4] == b"\x89PNG"
    width, height = fig.get_size_inches()
    assert png_size(png) == (round(width * DPI), round(height * DPI))
    svg = save_figure(fig, str(tmp_path / "figure.svg"))
    text = svg.read_text(encoding="utf-8")
    assert "<svg" in text[:2000]
    assert "</svg>" in text
    assert f'id="{gid}"' in text  # gids survive into the SVG as element ids


def test_extension_is_case_insensitive(tmp_path):
    path = save_figure(bounds_figure(bounds_data([768])), tmp_path / "FIGURE.PNG")
    assert path.read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize("name", ["figure.jpg", "figure", "figure.png.txt", "figure.pdf"])
def test_save_figure_rejects_other_extensions(name, tmp_path):
    with pytest.raises(InputError) as err:
        save_figure(bounds_figure(bounds_data([768])), tmp_path / name)
    assert err.value.what == "output file"
    assert "expected a path ending in .png or .svg" in str(err.value)
    assert not (tmp_path / name).exists()


def test_save_figure_unwritable_path_is_input_error(tmp_path):
    with pytest.raises(InputError, match="cannot write"):
        save_figure(bounds_figure(bounds_data([768])), tmp_path / "missing-dir" / "figure.png")


# ---------------------------------------------------------------- the optional dependency


def test_require_matplotlib_names_the_install_command(monkeypatch):
    require_matplotlib()  # installed here: no error
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # makes `import matplotlib` raise ImportError
    with pytest.raises(InputError) as err:
        require_matplotlib()
    assert err.value.what == "plot dependency"
    assert 'pip install "depthwidth[plot]"' in str(err.value)
    with pytest.raises(InputError, match="matplotlib is not installed"):
        phase_figure(phase_data())
    with pytest.raises(InputError, match="matplotlib is not installed"):
        bounds_figure(bounds_data([768]))


def test_import_is_free_of_matplotlib_and_figures_avoid_pyplot():
    code = ("import sys, depthwidth.output.plot as p, depthwidth.advice.phase as ph, depthwidth.output.plot_bounds as b; "
            "assert 'matplotlib' not in sys.modules, 'imported at module level'; "
            "b.bounds_figure(ph.bounds_data([768])); p.phase_figure(ph.phase_data(models=(), budgets=(1e9,))); "
            "assert 'matplotlib.pyplot' not in sys.modules, 'pyplot imported'")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr


# ---------------------------------------------------------------- phase_figure


def test_phase_threshold_and_regions(default_phase):
    x, y = one_line(default_phase, "threshold")
    assert np.allclose(y, np.log(x) / np.log(3))
    assert x.min() <= 10**1.5 and x.max() >= 10**5.5
    assert len(with_gid(default_phase, "region:efficient")) == 1
    assert len(with_gid(default_phase, "region:inefficient")) == 1
    texts = [t.get_text() for t in default_phase.findobj(lambda a: hasattr(a, "get_text"))]
    assert any("depth-efficient:" in t and "L < log3 d (Theorem 1)" in t for t in texts)
    assert any("depth-inefficient:" in t and "L > log3 d (Theorem 2)" in t for t in texts)
    ax = default_phase.axes[0]
    assert ax.get_xscale() == "log"
    assert "width d" in ax.get_xlabel() and "depth L" in ax.get_ylabel()
    assert ax.get_ylim()[1] >= 130  # PaLM (118) and MT-NLG (105) fit
    assert ax.get_title()
    assert ax.get_legend() is not None


def test_phase_default_budgets_one_curve_each(default_phase):
    assert gids(default_phase, "budget:") == sorted(f"budget:{N:g}" for N in DEFAULT_BUDGETS)
    for N in DEFAULT_BUDGETS:
        x, y = one_line(default_phase, f"budget:{N:g}")
        assert np.allclose(12 * y * x**2, N)  # the iso-budget curve 12·L·d² = N


@pytest.mark.parametrize("budgets", [(1e9, 5e10), [2e8, 3e11]])
def test_phase_custom_budgets(budgets):
    fig = phase_figure(phase_data(budgets=budgets, models=()))
    assert gids(fig, "budget:") == sorted(f"budget:{N:g}" for N in budgets)
    assert len(gids(fig, "min-depth:")) == len(gids(fig, "empirical:")) == 2
    for N in budgets:
        assert len(with_gid(fig, f"budget:{N:g}")) == 1
        (w,), (L,) = one_line(fig, f"min-depth:{N:g}")
        assert L == pytest.approx(min_depth_exact(N))
        assert w == pytest.approx(width_for(N, min_depth_exact(N)))
        assert L == pytest.approx(math.log(w, 3), rel=1e-9)  # on the threshold curve
        (w,), (L,) = one_line(fig, f"empirical:{N:g}")
        assert (L, w) == pytest.approx(empirical_optimum(N))


def test_phase_duplicate_budgets_draw_one_curve():
    fig = phase_figure(phase_data(budgets=(1e9, 1e9, 1_000_000_000), models=()))
    assert gids(fig, "budget:") == ["budget:1e+09"]


@pytest.mark.parametrize("bad", [0, -5, float("nan"), float("inf"), "lots"])
def test_phase_rejects_bad_budgets(bad):
    with pytest.raises(InputError):
        phase_figure(phase_data(budgets=(bad,), models=()))


def test_phase_default_models_are_in_the_catalogue(default_phase):
    from depthwidth.arch.catalog import lookup

    assert 5 <= len(DEFAULT_MODELS) <= 8
    assert gids(default_phase, "model:") == sorted(f"model:{lookup(n).name}" for n in DEFAULT_MODELS)


def test_phase_custom_models_one_marker_each():
    from depthwidth.arch.catalog import lookup

    fig = phase_figure(phase_data(budgets=(1e9,), models=["bert-base", "MT-NLG-530B", "palm-540b"]))  # names via catalog.lookup
    assert gids(fig, "model:") == ["model:bert-base", "model:mt-nlg-530b", "model:palm-540b"]
    for name in ("bert-base", "mt-nlg-530b", "palm-540b"):
        model = lookup(name)
        (w,), (L,) = one_line(fig, f"model:{name}")
        assert (w, L) == (model.width, model.depth)
        labels = [t.get_text() for t in fig.findobj(lambda a: (a.get_gid() or "").startswith("label:"))]
        assert any(t.startswith(model.display_name) for t in labels)
    top = fig.axes[0].get_ylim()[1]
    assert top > 118


def test_phase_unknown_model_is_input_error():
    with pytest.raises(InputError):
        phase_figure(phase_data(models=["no-such-model-xyz"]))


def test_phase_gpt3_is_deeper_than_its_empirical_optimum():
    fig = phase_figure(phase_data(models=["gpt3-175b"]))
    (w,), (L,) = one_line(fig, "model:gpt3-175b")
    (ow,), (oL,) = one_line(fig, "model-optimum:gpt3-175b")
    assert (w, L) == (12288, 96)
    assert 75 < oL < 85 and oL < L  # the fit's optimum for 12·96·12288² ≈ 1.74e11 is ~80 layers
    assert 12 * oL * ow**2 == pytest.approx(12 * L * w**2)  # same budget
    labels = [t.get_text() for t in with_gid(fig, "label:GPT-3 175B: L=96, fit 80")]
    assert labels == ["GPT-3 175B: L=96, fit 80"]


def test_phase_shape_marker():
    shape = parse_shape("12x768")
    fig = phase_figure(phase_data(budgets=(1e9,), models=(), shapes=[shape, "6x1000x16"]))
    assert gids(fig, "shape:") == ["shape:12x768x12", "shape:6x1000x16"]
    (w,), (L,) = one_line(fig, "shape:12x768x12")
    assert (w, L) == (768, 12)
    (marker,) = with_gid(fig, "shape:12x768x12")
    assert marker.get_marker() not in {"s", "o", "D"}  # distinct from models, min-depth and empirical
    assert [t.get_text() for t in with_gid(fig, "label:12x768")] == ["12x768"]


def test_phase_widens_to_fit_the_data():
    fig = phase_figure(phase_data(budgets=(1e15,), models=(), shapes=[parse_shape("400x50")]))
    (x_low, x_high), (_, y_high) = fig.axes[0].get_xlim(), fig.axes[0].get_ylim()
    (w,), (L,) = one_line(fig, "empirical:1e+15")
    assert x_low <= 50 and x_high > w and y_high > max(400, L)


# ---------------------------------------------------------------- bounds_figure


def test_bounds_artists(bounds_fig):
    for d in (704, 729, 768, 4096):
        assert len(with_gid(bounds_fig, f"upper:{d}")) == 1
        assert len(with_gid(bounds_fig, f"lower:{d}")) == 1
        x, _ = one_line(bounds_fig, f"threshold:{d}")
        assert np.allclose(x, math.log(d, 3))
    ax = bounds_fig.axes[0]
    assert ax.get_yscale() == "log"
    assert ax.get_xlabel() == "depth L" and ax.get_ylabel() == "log3 of separation rank bound"
    assert ax.get_title()
    legend_texts = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend_texts == ["upper bound", "lower bound", "threshold depth log3 d"]
    assert f"d = 768, H = {default_heads(768)}" in [t.get_text() for t in bounds_fig.findobj(
        lambda a: hasattr(a, "get_text"))]


def test_bounds_default_max_depth(bounds_fig):
    x, _ = one_line(bounds_fig, "upper:4096")
    assert x.min() == 1
    assert x.max() == math.ceil(2.5 * math.log(4096, 3) + 4)
    x, _ = one_line(bounds_figure(bounds_data([8])), "upper:8")
    assert x.max() == 12  # at least 12


def test_bounds_gap_at_threshold_depth(bounds_fig):
    x, y = one_line(bounds_fig, "upper:729")  # 6x729 sits on the threshold: no theorem applies
    assert np.isnan(y[x == 6]).all() and (x == 6).any()
    x, y = one_line(bounds_fig, "lower:729")
    assert np.isnan(y[x == 6]).all()


def test_bounds_gap_where_vacuous_or_unavailable(bounds_fig):
    x, lower = one_line(bounds_fig, "lower:704")  # 6x704: Theorem 2 lower bound vacuous
    assert np.isnan(lower[x == 6]).all() and (x == 6).any()
    x, upper = one_line(bounds_fig, "upper:704")  # consistent reading: a real upper bound there
    K = math.sqrt(2 * math.sqrt(2 * math.e))
    assert upper[x == 6][0] == pytest.approx(2 * 704 * 6 + 6 - 2 * 704 * math.log(704 / (2 * K), 3) + math.log(704, 3))
    literal = bounds_figure(bounds_data([704], reading="literal"))  # the literal reading's formula goes negative: a gap
    x, upper = one_line(literal, "upper:704")
    assert np.isnan(upper[x == 6]).all()
    for d in (704, 729, 768, 4096):
        for kind in ("lower", "upper"):
            _, y = one_line(bounds_fig, f"{kind}:{d}")
            finite = y[np.isfinite(y)]
            assert (finite > 0).all()  # gaps, never zeros, on the log axis


def test_bounds_values_match_the_reference_card():
    fig = bounds_figure(bounds_data([768, 1024], heads=[12, 16], max_depth=24))
    x, y = one_line(fig, "upper:768")
    assert y[x == 12][0] == pytest.approx(11206.654, abs=1e-3)
    literal = bounds_figure(bounds_data([768], heads=[12], max_depth=24, reading="literal"))
    x, y = one_line(literal, "upper:768")
    assert y[x == 12][0] == pytest.approx(9053.928, abs=1e-3)
    x, y = one_line(fig, "lower:768")
    assert y[x == 12][0] == pytest.approx(1681.565, abs=1e-3)
    x, y = one_line(fig, "lower:1024")
    assert y[x == 24][0] == pytest.approx(8148.015, abs=1e-3)


def test_bounds_line_breaks_where_the_theorem_changes():
    x, y = one_line(bounds_figure(bounds_data([768], max_depth=12)), "upper:768")  # 3^6 = 729 < 768 < 2187 = 3^7
    between = (x > 6) & (x < 7)
    assert between.sum() == 1 and np.isnan(y[between]).all()


def test_bounds_heads_argument():
    fig = bounds_figure(bounds_data([768, 4096], heads=8, max_depth=10))
    labels = [t.get_text() for t in fig.findobj(lambda a: hasattr(a, "get_text"))]
    assert "d = 768, H = 8" in labels and "d = 4,096, H = 8" in labels


@pytest.mark.parametrize("kwargs", [
    dict(widths=[]), dict(widths=[1]), dict(widths=[768], heads=768), dict(widths=[768.5]),
    dict(widths=[768, 1024], heads=[12]), dict(widths=[768], max_depth=0), dict(widths=[768], max_depth=2.5),
])
def test_bounds_rejects_bad_input(kwargs):
    with pytest.raises(InputError):
        bounds_data(**kwargs)  # checked where the data is prepared, before any drawing


def test_a_failed_write_leaves_no_file_behind(tmp_path):
    """output.files.replace_atomically: what fails while writing never leaves half a file."""
    from depthwidth.output.files import replace_atomically

    target = tmp_path / "figure.png"
    target.write_bytes(b"the earlier figure")

    def failing(temporary):
        temporary.write_bytes(b"half a fig")
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError):
        replace_atomically(target, failing)
    assert target.read_bytes() == b"the earlier figure" and [p.name for p in tmp_path.iterdir()] == ["figure.png"]
    replace_atomically(target, lambda temporary: temporary.write_bytes(b"new"))
    assert target.read_bytes() == b"new" and [p.name for p in tmp_path.iterdir()] == ["figure.png"]


def test_phase_data_holds_the_plane_and_the_rules_curves():
    """advice.phase prepares what the figure draws: the plane holds every point (the budgets' minimal
    and empirical shapes, the models) and, asked for, each rule's curve; the depth-delusion guard is
    2.43·ln W across the plane's widths (its formula, rules.builtin)."""
    from depthwidth.advice.phase import plane_widths

    data = phase_data(budgets=(1e9, 1e11), models=("gpt2-xl",))
    assert data.rules == ()
    x_low, x_high, y_low, y_high = data.plane
    for w, L in [*data.minimal.values(), *data.empirical.values(), (data.models[0].width, data.models[0].depth)]:
        assert x_low < w < x_high and y_low < L < y_high
    curves = {c.name: c for c in phase_data(budgets=(1e9,), models=(), rules=True).rules}
    guard = curves["depth-delusion"]
    assert guard.guard and np.allclose(guard.depths, 2.43 * np.log(guard.widths))
    assert np.allclose(guard.widths, np.geomspace(*phase_data(budgets=(1e9,), models=()).plane[:2], len(guard.widths)))
    assert len(plane_widths(data.plane)) == len(guard.widths)


def test_phase_figure_draws_the_curves_advice_prepared():
    """output.plot only draws: every curve of the figure (the threshold, each budget's iso-budget curve and band,
    each model's path to its optimum) is advice.phase's data, array for array, and the budget labels sit where
    it says. The data itself holds the paper's formulas: L = log3 d on the threshold, 12·L·d² = N on a budget's
    curve and band (the band spanning its depths), 12·L·d² of the model on its path (from the model to its optimum)."""
    data = phase_data(budgets=(1e9, 1e11), models=("gpt2-xl", "gpt3-175b"), shapes=("12x768",))
    fig = phase_figure(data)
    curves = data.curves
    drawn = [("threshold", curves.threshold)]
    drawn += [(f"budget:{N:g}", curves.budgets[N]) for N in data.budgets]
    drawn += [(f"band:{N:g}", curves.bands[N]) for N in data.budgets]
    drawn += [(f"model-optimum-path:{m.name}", path) for m, path in zip(data.models, curves.model_paths)]
    for gid, curve in drawn:
        x, y = one_line(fig, gid)
        assert np.array_equal(x, curve.widths) and np.array_equal(y, curve.depths), gid
    labels = {t.get_text(): t.xy for t in fig.axes[0].texts if t.get_text().startswith("N = ")}
    assert labels == {"N = 1B": curves.labels[1e9], "N = 100B": curves.labels[1e11]}

    assert np.allclose(curves.threshold.depths, np.log(curves.threshold.widths) / np.log(3))
    for N in data.budgets:
        for curve in (curves.budgets[N], curves.bands[N]):
            assert np.allclose(12 * curve.depths * curve.widths**2, N, rtol=1e-12)
        assert (curves.bands[N].depths[0], curves.bands[N].depths[-1]) == data.bands[N]
        w, L = curves.labels[N]
        assert 12 * L * w**2 == pytest.approx(N) and data.plane[2] < L < data.plane[3]
    for model, (own_depth, _), path in zip(data.models, data.model_optima, curves.model_paths):
        assert np.allclose(12 * path.depths * path.widths**2, 12 * model.depth * model.width**2, rtol=1e-12)
        assert path.depths[0] == pytest.approx(model.depth) and path.depths[-1] == pytest.approx(own_depth)
