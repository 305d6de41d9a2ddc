"""`depthwidth fit` (issue 15): sweeps generated from known laws are recovered within the reported
intervals; rule files round-trip; every bad input is one line and exit 2.

Truths are computed here independently of depthwidth: the Levine-form optimum at size N solves
a + b·L = ln sqrt(N/(12·L)) (scipy's brentq on the test's own equation), and each group's loss is
a parabola in ln L whose vertex is that optimum, plus Gaussian noise.
"""
import json
import math
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import brentq
from typer.testing import CliRunner

from depthwidth.cli import app
from depthwidth.core.errors import InputError
from depthwidth.loop.fit import Run, fit_results
from depthwidth.loop.group_fit import fit_group
from depthwidth.loop.results import records_of, to_runs


def parse_results(text, source="results.csv", group_by="params"):
    """Runs from the text of a results file, as ``results.load_runs`` reads one."""
    return to_runs(records_of(text, source), source, group_by, "loss")
from depthwidth.advice.rules.file import Source, parse_rule, read_rule_file

ROOT = Path(__file__).resolve().parents[1]
SWEEP_HEADER = ("id,depth,width,heads,kv_heads,head_dim,ffn,gated,params,params_active,params_deviation,regime,"
                "log3_sep_lower,log3_sep_upper,tp_sizes,flops_per_token,kv_bytes_per_token,loss")
SIZES = (1e7, 1e8, 1e9, 1e10)
CURVATURE = 0.08  # loss rises by 0.08 per (ln L - ln L_opt)²
NOISE = 0.004


def levine_optimum(a: float, b: float, size: float) -> float:
    """L where the law ln d = a + b·L meets the iso-size curve d = sqrt(N/(12·L))."""
    return brentq(lambda L: a + b * L - 0.5 * math.log(size / (12 * L)), 1e-6, 1e6, xtol=1e-12)


def sweep_rows(optimum, rng, sizes=SIZES, spread=1.1, count=7, noise=NOISE):
    """Rows of a sweep-shaped CSV: per size, integer depths around optimum(size) on N = 12·L·d²."""
    rows = []
    for size in sizes:
        best = optimum(size)
        depths = sorted({max(1, round(best * math.exp(t))) for t in np.linspace(-spread, spread, count)})
        for depth in depths:
            width = math.sqrt(size / (12 * depth))
            params = 12 * depth * width * width
            loss = 2.0 + 0.1 * math.log(1e10 / size) + CURVATURE * math.log(depth / best) ** 2 + rng.normal(0, noise)
            heads = max(1, round(width / 64))
            rows.append([f"r{len(rows) + 1}", depth, f"{width:.6f}", heads, heads, 64, round(4 * width), "false", f"{params:.1f}",
                         f"{params:.1f}", "0.0", "depth-inefficient", "1.5", "", "1;2;4;8", f"{6 * params:.1f}", 4 * depth, f"{loss:.6f}"])
    return rows


def csv_text(rows, header=SWEEP_HEADER) -> str:
    return header + "\n" + "".join(",".join(str(c) for c in row) + "\n" for row in rows)


def fit_text(text, group_by="params", **options):
    return fit_results(parse_results(text, "sweep.csv", group_by), Source("sweep.csv", "0" * 64), group_by, **options)


def run_cli(*args):
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


# ---- recovering known laws -------------------------------------------------------------------------

@pytest.mark.parametrize("a, b, seed", [(5.039, 0.0555, 1), (4.5, 0.08, 2), (5.5, 0.03, 3), (4.8, 0.045, 4)])
def test_levine_constants_recovered_within_their_intervals(a, b, seed):
    rng = np.random.default_rng(seed)
    report = fit_text(csv_text(sweep_rows(lambda N: levine_optimum(a, b, N), rng)), bootstrap=400, seed=seed)
    law = report.levine
    assert law.a_interval[0] <= a <= law.a_interval[1]
    assert law.b_interval[0] <= b <= law.b_interval[1]
    assert abs(law.a - a) < 0.2 and abs(law.b - b) < 0.01  # and the intervals are not vacuous
    assert law.a_interval[1] - law.a_interval[0] < 0.6
    assert report.better_form == "levine" == report.form  # the data follow the Levine form, not a power law
    for group, size in zip(report.groups, SIZES):
        assert group.size == pytest.approx(size, rel=1e-9)
        assert group.optimal_width == pytest.approx(math.sqrt(size / (12 * group.optimal_depth)), rel=1e-6)


@pytest.mark.parametrize("k, alpha, seed", [(0.363, 0.4, 5), (1.2, 0.35, 6)])
def test_power_law_recovered_and_preferred(k, alpha, seed):
    """d_opt = k·N^alpha on N = 12·L·d² puts the optimum at L = N^(1 - 2·alpha) / (12·k²)."""
    rng = np.random.default_rng(seed)
    report = fit_text(csv_text(sweep_rows(lambda N: N ** (1 - 2 * alpha) / (12 * k * k), rng)), bootstrap=400, seed=seed)
    power = report.power
    assert power.alpha_interval[0] <= alpha <= power.alpha_interval[1]
    assert power.k_interval[0] <= k <= power.k_interval[1]
    beta = 1 - 2 * alpha
    assert power.beta_interval[0] <= beta <= power.beta_interval[1]
    assert report.better_form == "power"
    assert power.rmse < report.levine.rmse


def test_bootstrap_interval_covers_the_true_optimal_depth():
    """95% intervals: at least 90% of 150 seeded single-group trials cover the true optimum."""
    hits = 0
    trials = 150
    for trial in range(trials):
        rng = np.random.default_rng(10_000 + trial)
        size = 10 ** rng.uniform(7, 10)
        best = levine_optimum(5.039, 0.0555, size)
        depths = sorted({max(1, round(best * math.exp(t))) for t in np.linspace(-1.1, 1.1, 7)})
        runs = [Run(i + 1, L, math.sqrt(size / (12 * L)), size, 2 + CURVATURE * math.log(L / best) ** 2 + rng.normal(0, 0.01))
                for i, L in enumerate(depths)]
        group, _ = fit_group(runs, "g", 200, rng)
        hits += group.depth_interval[0] <= best <= group.depth_interval[1]
        assert group.depth_interval[0] <= group.optimal_depth <= group.depth_interval[1]
    assert hits >= 0.9 * trials, hits


# size: the vertex of loss = 3 + 0.1·(ln L - ln L_opt)², on the exact Levine law ln d = 5 + 0.05·L
NOISE_FREE = {size: levine_optimum(5.0, 0.05, size) for size in (1e8, 1e9, 1e10)}


def noise_free_rows(size_columns=lambda size: [size]):
    rows = []
    for size, best in NOISE_FREE.items():
        for depth in (0.4 * best, 0.6 * best, best, 1.6 * best, 2.5 * best):
            rows.append([f"{depth:.12g}", math.sqrt(size / (12 * depth)), *size_columns(size), 3 + 0.1 * math.log(depth / best) ** 2])
    return rows


def test_noise_free_parabola_vertex_is_exact():
    report = fit_text(csv_text(noise_free_rows(), "depth,width,params,loss"), bootstrap=50)
    for group, (size, best) in zip(report.groups, NOISE_FREE.items()):
        assert group.optimal_depth == pytest.approx(best, rel=1e-9)
        assert group.depth_interval == pytest.approx((best, best), rel=1e-6)
        assert group.min_loss == pytest.approx(3, abs=1e-9)
        assert group.optimal_width == pytest.approx(math.sqrt(size / (12 * best)), rel=1e-9)
    # the optima lie exactly on ln d = 5 + 0.05·L: the fitted law is that law, and predicts held-out sizes exactly
    assert report.levine.a == pytest.approx(5.0, rel=1e-6) and report.levine.b == pytest.approx(0.05, rel=1e-6)
    assert report.levine.heldout_rmse == pytest.approx(0, abs=1e-6)


# ---- files as the sweep command writes them --------------------------------------------------------

def test_sweep_shaped_csv_fits_without_editing(tmp_path):
    path = tmp_path / "results.csv"
    path.write_text(csv_text(sweep_rows(lambda N: levine_optimum(5.039, 0.0555, N), np.random.default_rng(7))))
    code, out, err = run_cli("fit", str(path), "--format", "json", "--bootstrap", "200")
    assert code == 0, err
    records = json.loads(out)  # one record per size
    assert [g["runs"] for g in records] == [7] * 4
    report = records[0]
    assert report["source"]["file"] == "results.csv"
    import hashlib

    assert report["source"]["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert "NaN" not in out and "Infinity" not in out


def test_a_real_sweep_with_losses_filled_in_fits(tmp_path):
    """`depthwidth sweep --format csv` at three budgets, a loss column filled in, fitted as is."""
    lines, optimum = [], {}
    for budget in ("1e8", "1e9", "1e10"):
        code, out, err = run_cli("sweep", "--params", budget, "--count", "7", "--format", "csv")
        if code != 0 and "No such command" in err:
            pytest.skip("the sweep command is not in this tree")
        assert code == 0, err
        rows = out.strip().splitlines()
        lines = lines or [rows[0]]
        lines += rows[1:]
    import csv

    records = list(csv.DictReader(lines))
    assert all(r["loss"] == "" for r in records)
    by_budget = {}
    for r in records:
        by_budget.setdefault(round(math.log10(float(r["budget"]))), []).append(int(r["depth"]))
    for key, depths in by_budget.items():  # the truth: the geometric middle of each budget's depths
        optimum[key] = math.sqrt(min(depths) * max(depths))
    rng = np.random.default_rng(8)
    for r in records:
        best = optimum[round(math.log10(float(r["budget"])))]
        r["loss"] = f"{2 + CURVATURE * math.log(int(r['depth']) / best) ** 2 + rng.normal(0, 0.002):.6f}"
    path = tmp_path / "swept.csv"
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(records[0]))
        writer.writeheader()
        writer.writerows(records)
    code, out, err = run_cli("fit", str(path), "--format", "json", "--bootstrap", "300")
    assert code == 0, err
    groups = json.loads(out)
    assert len(groups) == 3
    for group in groups:
        truth = optimum[round(math.log10(group["budget"]))]
        assert group["optimal_depth"] == pytest.approx(truth, rel=0.15)


def test_group_by_flops_from_flops_per_token_and_tokens(tmp_path):
    text = csv_text(noise_free_rows(lambda size: [6 * size, 20 * size]), "depth,width,flops_per_token,tokens,loss")
    report = fit_results(parse_results(text, "f.csv", "flops"), Source("f.csv", "0" * 64), "flops", bootstrap=50)
    assert [g.size for g in report.groups] == pytest.approx([120 * 1e8**2, 120 * 1e9**2, 120 * 1e10**2])
    with pytest.raises(InputError, match="missing columns: params"):
        parse_results(text, "f.csv", "params")


def test_explicit_group_column_wins_over_sizes():
    """Runs labelled by a group column are grouped by label even when their sizes differ a lot."""
    rows = []
    for label, (size, best) in zip(("small", "medium", "large"), NOISE_FREE.items()):
        for depth, scale in zip((0.4 * best, 0.6 * best, best, 1.6 * best, 2.5 * best), (1.0, 1.5, 0.7, 1.3, 0.9)):
            rows.append([label, depth, math.sqrt(size / (12 * depth)), size * scale, 3 + 0.1 * math.log(depth / best) ** 2])
    report = fit_text(csv_text(rows, "group,depth,width,params,loss"), bootstrap=50)
    assert [g.label for g in report.groups] == ["small", "medium", "large"]
    assert [g.runs for g in report.groups] == [5, 5, 5]


# ---- rule files --------------------------------------------------------------------------------

def test_rule_file_round_trip(tmp_path):
    results = tmp_path / "results.csv"
    results.write_text(csv_text(sweep_rows(lambda N: levine_optimum(5.0, 0.06, N), np.random.default_rng(9))))
    rule_path = tmp_path / "My Rule.json"
    code, out, err = run_cli("fit", str(results), "--save", str(rule_path), "--format", "json", "--bootstrap", "200")
    assert code == 0, err
    records = json.loads(out)
    printed = records[0]  # the law is in every size's record
    rule = read_rule_file(rule_path)
    assert rule.name == "my-rule" and rule.format == "depthwidth-rule/2" and rule.group_by == "params"
    assert rule.form == printed["form"] == "levine"
    assert (rule.levine.a, rule.levine.b) == (printed["levine"]["a"], printed["levine"]["b"])
    assert list(rule.levine.a_interval) == printed["levine"]["a_interval"]
    assert (rule.power.k, rule.power.alpha, rule.power.depth_beta) == (printed["power"]["k"], printed["power"]["alpha"],
                                                                      printed["power"]["depth_beta"])
    assert rule.width_at_depth(40) == pytest.approx(math.exp(printed["levine"]["a"] + 40 * printed["levine"]["b"]), rel=1e-12)
    assert rule.width_for_size(3e9) == pytest.approx(printed["power"]["k"] * 3e9 ** printed["power"]["alpha"], rel=1e-12)
    assert rule.fit_range.size == pytest.approx(tuple(printed["fit_range"]["size"]))
    assert rule.fit_range.depth == (min(int(r.split(",")[1]) for r in results.read_text().splitlines()[1:]),
                                    max(int(r.split(",")[1]) for r in results.read_text().splitlines()[1:]))
    assert [g.optimal_depth for g in rule.groups] == [g["optimal_depth"] for g in records]
    raw = json.loads(rule_path.read_text())
    import hashlib

    assert raw["source"] == {"file": "results.csv", "sha256": hashlib.sha256(results.read_bytes()).hexdigest()}
    assert raw["tool"].startswith("depthwidth ") and len(raw["created"]) == 10
    # what it was fitted on: every group's size, every run's depth and width, the runs, the file's hash
    lines = results.read_text().splitlines()[1:]
    assert raw["fitted_on"]["runs"] == len(lines) == 28
    assert sorted(raw["fitted_on"]["depths"]) == sorted(float(r.split(",")[1]) for r in lines)
    assert raw["fitted_on"]["sizes"] == [g["size"] for g in raw["groups"]] and len(raw["groups"]) == len(records)
    assert raw["fitted_on"]["sources"] == [raw["source"]]
    assert set(tmp_path.iterdir()) == {results, rule_path}

    before = rule_path.read_bytes()
    code, out, err = run_cli("fit", str(results), "--save", str(rule_path), "--bootstrap", "200", "--seed", "5")
    assert (code, out) == (2, "") and "--force" in err and len(err.strip().splitlines()) == 1
    assert rule_path.read_bytes() == before
    code, out, err = run_cli("fit", str(results), "--save", str(rule_path), "--bootstrap", "200", "--seed", "5", "--force",
                             "--form", "power", "--name", "mine")
    assert code == 0, err
    rule = read_rule_file(rule_path)
    assert (rule.name, rule.form, rule.levine) == ("mine", "power", None)
    assert rule.width_at_depth(10) is None
    assert set(tmp_path.iterdir()) == {results, rule_path}  # no temporary file left behind


def _valid_rule() -> dict:
    law = {"a": 5.0, "b": 0.05, "a_interval": [4.9, 5.1], "b_interval": [0.04, 0.06], "r2": 0.99, "rmse": 0.01}
    return {"format": "depthwidth-rule/1", "name": "x", "form": "levine", "levine": law, "power": None, "group_by": "params",
            "fit_range": {"size": [1e7, 1e10], "depth": [4, 170], "width": [160, 6000]},
            "groups": [{"size": 1e8, "optimal_depth": 24.0, "depth_interval": [22.0, 26.0], "runs": 7}],
            "source": {"file": "r.csv", "sha256": "a" * 64}, "created": "2026-11-22", "tool": "depthwidth 0.2.0"}


@pytest.mark.parametrize("mutate, message", [
    (lambda r: r.update(format="depthwidth-rule/9"), "format"),
    (lambda r: r["levine"].pop("b"), "levine.b: Field required"),
    (lambda r: r["levine"].update(a="5"), "levine.a: Input should be a valid number"),
    (lambda r: r["levine"].update(a=100.0), "implausible law"),  # issue 25: a = 100 gave width 3e43
    (lambda r: r.update(extra_key=1), "extra_key"),
    (lambda r: r.update(form="power"), "its constants"),
    (lambda r: r["fit_range"].update(size=[1e10, 1e7]), "low <= high"),
    (lambda r: r.update(name="Bad Name"), "name"),
])
def test_rule_file_validation(mutate, message):
    rule = _valid_rule()
    assert parse_rule(json.dumps(rule)).width_at_depth(10) == pytest.approx(math.exp(5.5))
    mutate(rule)
    with pytest.raises(InputError, match=message) as err:
        parse_rule(json.dumps(rule), "r.json")
    assert "\n" not in str(err.value)


def test_rule_file_rejects_nan_bad_json_and_missing_file(tmp_path):
    with pytest.raises(InputError, match="NaN is not allowed"):
        parse_rule(json.dumps(_valid_rule()).replace("5.0", "NaN", 1))
    with pytest.raises(InputError, match="not valid JSON"):
        parse_rule("{")
    with pytest.raises(InputError, match="no such file"):
        read_rule_file(tmp_path / "missing.json")


def test_rulefile_imports_neither_numpy_nor_scipy():
    code = (f"import sys; sys.path.insert(0, {str(ROOT)!r}); import depthwidth.advice.rules.file; "
            "print(sorted({m.partition('.')[0] for m in sys.modules} & {'numpy', 'scipy'}))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


# ---- bad input: one line, exit 2, nothing on stdout ------------------------------------------------

def _group_rows(size, depths, losses, label=None):
    rows = []
    for depth, loss in zip(depths, losses):
        rows.append(([label] if label else []) + [depth, math.sqrt(size / (12 * depth)), size, "" if loss is None else loss])
    return rows


def _parabola(base, best, depths):
    """Losses base + 0.1·(ln L - ln best)², with a small alternating jitter (runs are never exact)."""
    return tuple(round(base + 0.1 * math.log(L / best) ** 2 + 0.002 * (-1) ** i, 6) for i, L in enumerate(depths))


GOOD = _group_rows(1e9, (6, 10, 17, 30, 50), _parabola(3.0, 17, (6, 10, 17, 30, 50)))
OTHER = _group_rows(1e8, (3, 5, 8, 13, 21), _parabola(3.4, 8, (3, 5, 8, 13, 21)))
THIRD = _group_rows(1e10, (15, 25, 40, 65, 100), _parabola(2.7, 40, (15, 25, 40, 65, 100)))
HEADER = "depth,width,params,loss"

BAD_INPUTS = {
    "missing columns": ("depth,width,heads\n12,768,12\n", ["missing columns: loss, params or params_nonembedding or budget"]),
    "non-numeric cell": (HEADER + "\n12,768,abc,3.0\n", ["'abc'", "run 1", "column 'params'"]),
    "NaN loss": (csv_text(GOOD + OTHER[:1] + [[8, 1000, 1e8, "nan"]] + OTHER[2:], HEADER), ["run 7", "finite"]),
    "empty loss": (csv_text(GOOD + _group_rows(1e8, (4, 8), (3.5, None)) + OTHER[2:], HEADER), ["run 7", "has no loss"]),
    "whole loss column empty": (csv_text(_group_rows(1e9, (6, 10, 17), (None,) * 3), HEADER), ["every loss is empty"]),
    "sizes between groups": (csv_text(GOOD[:-1] + _group_rows(1.2e9, (50,), (3.25,))
                                      + _group_rows(1.3e9, (6, 10, 17, 30, 50), (3.2, 3.1, 3.0, 3.1, 3.2)), HEADER),
                             ["too close to tell apart", "add a 'group' column"]),
    "header only": (HEADER + "\n", ["no runs"]),
    "empty file": ("", ["empty"]),
}


# issue 33: runs that support no law still get each size's optimum, and the reason no law was fitted (exit 0)
NO_LAW = {
    "fewer than 3 depths": (csv_text(GOOD + THIRD + _group_rows(1e8, (4, 8, 8, 4), (3.5, 3.4, 3.41, 3.52)), HEADER),
                            ["2 distinct depths (4, 8)", "at least 3", "measured best depth 8"]),
    "fewer than 3 groups": (csv_text(GOOD + OTHER, HEADER), ["2 size groups", "at least 3"]),
    "optimum at the edge": (csv_text(GOOD + THIRD + _group_rows(1e8, (4, 8, 12, 20), (3.4, 3.45, 3.5, 3.6)), HEADER),
                            ["the optimum is not bracketed", "1e+08", "depth 4, the shallowest of depths 4, 8, 12, 20", "measured best depth 4"]),
    "optimum at the deep edge": (csv_text(GOOD + THIRD + _group_rows(1e8, (4, 8, 12, 20), (3.6, 3.5, 3.45, 3.4)), HEADER),
                                 ["the optimum is not bracketed", "deepest", "add deeper runs"]),
    "parabola opening downwards": (csv_text(GOOD + THIRD + _group_rows(1e8, (2, 4, 8, 16, 32), (1.0, 2.0, 0.5, 2.0, 1.0)),
                                            HEADER), ["opens downwards", "1e+08"]),
    "only three runs": (csv_text(GOOD + THIRD + _group_rows(1e8, (4, 8, 16), (3.5, 3.4, 3.5)), HEADER), ["has 3 runs", "add a run"]),
    "optimum does not move": (csv_text(GOOD + _group_rows(1e8, (6, 10, 17, 30, 50), (3.4, 3.3, 3.2, 3.3, 3.45))
                                       + _group_rows(1e10, (6, 10, 17, 30, 50), (3.0, 2.9, 2.8, 2.9, 3.05)), HEADER),
                              ["do not move with size beyond their 95% intervals"]),
}


@pytest.mark.parametrize("text, pieces", NO_LAW.values(), ids=NO_LAW.keys())
def test_no_law_is_an_answer_with_the_reason(text, pieces, tmp_path):
    path = tmp_path / "results.csv"
    path.write_text(text)
    code, out, err = run_cli("fit", str(path), "--bootstrap", "50", "--format", "json")
    assert code == 0, err
    records = json.loads(out)
    assert records and all(r["form"] == "none" and r["law_note"] and r["levine"] is None for r in records)
    said = " ".join(records[0]["notes"])
    for piece in pieces:
        assert piece in said
    code, out, err = run_cli("fit", str(path), "--bootstrap", "50")
    assert code == 0 and "no law across sizes" in out
    code, out, err = run_cli("fit", str(path), "--bootstrap", "50", "--save", str(tmp_path / "r.json"))
    assert (code, out) == (2, "") and "no rule to save" in err and not (tmp_path / "r.json").exists()


@pytest.mark.parametrize("text, pieces", BAD_INPUTS.values(), ids=BAD_INPUTS.keys())
def test_bad_results_files(text, pieces, tmp_path):
    path = tmp_path / "results.csv"
    path.write_text(text)
    code, out, err = run_cli("fit", str(path), "--bootstrap", "50")
    assert (code, out) == (2, ""), err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("depthwidth: error: bad "), err
    for piece in pieces:
        assert piece in lines[0]


def test_good_input_of_the_bad_input_cases_fits(tmp_path):
    """The control: GOOD, OTHER and THIRD together are a valid three-size sweep."""
    path = tmp_path / "results.csv"
    path.write_text(csv_text(GOOD + OTHER + THIRD, HEADER))
    code, out, err = run_cli("fit", str(path), "--bootstrap", "50", "--field", "form")
    assert code == 0 and len(set(out.split())) == 1 and out.split()[0] in ("levine", "power"), err  # one line per size


@pytest.mark.parametrize("args, piece", [
    (["fit", "missing.csv"], "no such file"),
    (["fit", "{good}", "--name", "Bad_Name"], "bad --name 'Bad_Name'"),
    (["fit", "{good}", "--field", "nope"], "bad --field 'nope'"),
    (["fit", "{good}", "--group-by", "tokens"], "--group-by"),
    (["fit", "{good}", "--group-by", "flops"], "missing columns: flops or flops_per_token and tokens"),
    (["fit", "{binary}"], "not UTF-8"),
])
def test_bad_options_and_files(args, piece, tmp_path):
    good, binary = tmp_path / "good.csv", tmp_path / "binary.csv"
    good.write_text(csv_text(GOOD + OTHER + THIRD, HEADER))
    binary.write_bytes(b"\xff\xfe\x00depth")
    code, out, err = run_cli(*[a.format(good=good, binary=binary) for a in args])
    assert (code, out) == (2, "")
    assert len(err.strip().splitlines()) == 1 and piece in err, err
    assert not (tmp_path / "fit.json").exists()


def test_bad_field_writes_no_rule_file(tmp_path):
    good = tmp_path / "good.csv"
    good.write_text(csv_text(GOOD + OTHER + THIRD, HEADER))
    code, out, err = run_cli("fit", str(good), "--save", str(tmp_path / "r.json"), "--field", "nope")
    assert code == 2 and not (tmp_path / "r.json").exists()


def test_fit_output_is_deterministic_for_a_seed(tmp_path):
    good = tmp_path / "good.csv"
    good.write_text(csv_text(GOOD + OTHER + THIRD, HEADER))
    first = run_cli("fit", str(good), "--format", "json", "--bootstrap", "100", "--seed", "3")
    assert first[0] == 0
    assert run_cli("fit", str(good), "--format", "json", "--bootstrap", "100", "--seed", "3") == first
    assert run_cli("fit", str(good), "--format", "json", "--bootstrap", "100", "--seed", "4")[1] != first[1]


@pytest.mark.parametrize("fmt", ["table", "csv", "jsonl"])
def test_other_formats(fmt, tmp_path):
    good = tmp_path / "good.csv"
    good.write_text(csv_text(GOOD + OTHER + THIRD, HEADER))
    code, out, err = run_cli("fit", str(good), "--format", fmt, "--bootstrap", "100")
    assert code == 0, err
    assert ("levine" in out) and ("power" in out)


# ---- the picture -------------------------------------------------------------------------------

def test_fit_figure_has_its_artists(tmp_path):
    pytest.importorskip("matplotlib")
    from depthwidth.output.plot import save_figure
    from depthwidth.output.plot_fit import fit_figure

    text = csv_text(sweep_rows(lambda N: levine_optimum(5.039, 0.0555, N), np.random.default_rng(11)))
    runs = parse_results(text, "s.csv")
    report = fit_results(runs, Source("s.csv", "0" * 64), bootstrap=100)
    fig = fit_figure(report, runs)
    found = {a.get_gid() for a in fig.findobj(lambda a: a.get_gid() is not None)}
    for group in report.groups:
        for kind in ("runs", "parabola", "optimum", "interval"):
            assert f"{kind}:{group.label}" in found
    assert {"optima:levine", "law:levine", "optima:power", "law:power"} <= found
    (optimum,) = fig.findobj(lambda a: a.get_gid() == f"optimum:{report.groups[1].label}")
    assert list(optimum.get_xdata()) == [report.groups[1].optimal_depth]
    (runs_line,) = fig.findobj(lambda a: a.get_gid() == f"runs:{report.groups[0].label}")
    assert len(runs_line.get_xdata()) == report.groups[0].runs
    path = save_figure(fig, tmp_path / "fit.png")
    assert path.read_bytes()[:4] == b"\x89PNG"


def test_plot_fit_command_writes_a_png(tmp_path):
    pytest.importorskip("matplotlib")
    results = tmp_path / "results.csv"
    results.write_text(csv_text(sweep_rows(lambda N: levine_optimum(5.039, 0.0555, N), np.random.default_rng(12))))
    code, out, err = run_cli("plot", "fit", str(results), "--out", str(tmp_path / "fit.png"), "--bootstrap", "100")
    assert code == 0, err
    assert (tmp_path / "fit.png").read_bytes()[:4] == b"\x89PNG"
    code, out, err = run_cli("plot", "fit", str(tmp_path / "missing.csv"), "--out", str(tmp_path / "x.png"))
    assert (code, out) == (2, "") and "no such file" in err


# ---- issue 25: no law claimed on noise; held-out goodness ------------------------------------------

@pytest.mark.parametrize("seed", range(6))
def test_noise_gets_no_law_and_never_a_near_1_r2(seed):
    """The optimum is depth 20 at every size (it does not move) and the losses carry noise: the fit
    fits no law, or, if the bootstrap intervals happen to separate, its held-out r2 is far from 1."""
    rng = np.random.default_rng(seed)
    rows = sweep_rows(lambda N: 20.0, rng, sizes=(1e8, 1e9, 1e10, 1e11), noise=0.01)
    report = fit_text(csv_text(rows), bootstrap=200, seed=seed)
    if report.law_note:
        assert report.levine is None and report.power is None and report.form == "none"
        assert "do not move with size" in report.law_note or "no fitted parabola" in report.law_note
        return
    for law in (report.levine, report.power):
        assert law.r2 is None or law.r2 < 0.9


def test_held_out_r2_is_high_on_a_real_law():
    rng = np.random.default_rng(21)
    report = fit_text(csv_text(sweep_rows(lambda N: levine_optimum(5.039, 0.0555, N), rng)), bootstrap=300, seed=1)
    assert report.levine.r2 > 0.95 and report.levine.heldout_rmse < 0.1
    assert any("leave-one-size-out" in n for n in report.notes)


# ---- rule files: what the planner shows ------------------------------------------------------------

def _power_rule(**power) -> dict:
    law = {"k": 0.363, "alpha": 0.4, "alpha_interval": [0.38, 0.42], "k_interval": [0.3, 0.4], "depth_k": 0.6,
           "depth_beta": 0.2, "beta_interval": [0.18, 0.22], "r2": None, "rmse": 0.01, **power}
    rule = _valid_rule()
    rule.update(format="depthwidth-rule/2", form="power", levine=None, power=law)
    return rule


def test_fitted_depth_of_a_power_rule_with_its_interval():
    """L = depth_k·N^beta; with the covariance (v_c, v_cb, v_b) of (ln L at the pivot, beta) the 95%
    interval is L·exp(±1.96·sqrt(v_c + 2·x·v_cb + x²·v_b)), x = ln N - pivot."""
    from depthwidth.advice.rules.law import fitted_depth

    pivot, cov = math.log(1e8), [[0.01, 0.001], [0.001, 0.0004]]
    rule = parse_rule(json.dumps(_power_rule(depth_covariance=cov, depth_pivot=pivot)))
    for budget, inside in ((1e9, True), (1e12, False)):
        shown = fitted_depth(rule, budget)
        depth = 0.6 * budget ** 0.2
        x = math.log(budget) - pivot
        half = 1.959963984540054 * math.sqrt(0.01 + 2 * x * 0.001 + x * x * 0.0004)
        assert shown.depth == pytest.approx(depth, rel=1e-12)
        assert (shown.low, shown.high) == pytest.approx((depth * math.exp(-half), depth * math.exp(half)), rel=1e-9)
        assert shown.in_range is inside and not shown.clamped
        assert (shown.note is None) is inside
        if not inside:
            assert "outside the sizes" in shown.note


def test_fitted_depth_of_a_levine_rule_solves_the_crossing():
    from depthwidth.advice.rules.law import fitted_depth

    rule = parse_rule(json.dumps(_valid_rule()))  # ln d = 5 + 0.05·L, intervals a 4.9-5.1, b 0.04-0.06
    shown = fitted_depth(rule, 1e9)
    assert shown.depth == pytest.approx(levine_optimum(5.0, 0.05, 1e9), rel=1e-9)
    corners = [levine_optimum(a, b, 1e9) for a in (4.9, 5.1) for b in (0.04, 0.06)]
    assert (shown.low, shown.high) == pytest.approx((min(corners), max(corners)), rel=1e-9)


def test_absurd_rules_are_refused_not_clamped():
    """Issue 25: depth_k = 1e30 recommended 5086x128 without a word."""
    with pytest.raises(InputError, match="implausible law"):
        parse_rule(json.dumps(_power_rule(depth_k=1e30)))
    with pytest.raises(InputError, match="implausible law"):
        parse_rule(json.dumps(_power_rule(k=1e12)))


def test_clamped_depth_is_flagged():
    """A plausible law over its fitted sizes can still leave 1..10^4 far outside them."""
    from depthwidth.advice.rules.law import fitted_depth

    rule = parse_rule(json.dumps(_power_rule(depth_beta=0.6, depth_k=1e-4, beta_interval=[0.55, 0.65])))
    shown = fitted_depth(rule, 1e15)  # 1e-4·1e15^0.6 = 1e5 layers
    assert shown.clamped and shown.depth == 1e4 and "clamped" in shown.note


def test_plan_without_a_rule_file_imports_no_pydantic_rulefile():
    code = (f"import sys; sys.path.insert(0, {str(ROOT)!r}); from depthwidth.advice.planner import plan; plan(10**9); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'pydantic' or m.endswith(('rules.file', 'rules.filemodels'))))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


# ---- the one bounded reader ------------------------------------------------------------------------

@pytest.mark.parametrize("args", [["fit", "/dev/zero"], ["plan", "--params", "1e9", "--rule-file", "/dev/zero"]])
def test_devices_are_refused_at_once(args):
    """Issue 25: `fit /dev/zero` read 23 GB until the kernel killed it."""
    done = subprocess.run([sys.executable, "-m", "depthwidth", *args], capture_output=True, text=True, timeout=60,
                          env={**__import__("os").environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 2 and done.stdout == ""
    assert "is a device" in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_fifos_directories_and_oversize_files(tmp_path):
    import os

    from depthwidth.core import userfile

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="named pipe"):  # never opened: no writer needed, nothing blocks
        userfile.read_bytes(str(fifo), "results file")
    with pytest.raises(InputError, match="is a folder"):
        userfile.read_bytes(str(tmp_path), "results file")
    big = tmp_path / "big.csv"
    big.write_bytes(b"x" * 101)
    with pytest.raises(InputError, match="larger than"):
        userfile.read_bytes(str(big), "results file", limit=100)
    assert userfile.read_bytes(str(big), "results file", limit=101) == b"x" * 101
    import io

    with pytest.raises(InputError, match="'standard input': larger than"):
        userfile.read_bytes("-", "results file", limit=10, stdin=io.BytesIO(b"y" * 11))


# ---- results in every form ---------------------------------------------------------------------------

def _sweep_records():
    """A sweep's JSON rows (the fields `depthwidth sweep --format json` writes that fit reads)."""
    rng = np.random.default_rng(31)
    records = []
    for size in (1e8, 1e9, 1e10):
        best = levine_optimum(5.0, 0.06, size)
        for i, t in enumerate(np.linspace(-1.1, 1.1, 6)):
            depth = max(1, round(best * math.exp(t)))
            width = math.sqrt(size / (12 * depth))
            count = 12 * depth * width * width * (1 + 0.03 * (-1) ** i)  # a flagged-in-tolerance deviation
            records.append({"id": f"{size:.0e}-{i:02d}", "budget": size, "budget_count": "params_nonembedding",
                            "depth": depth, "width": width, "params_nonembedding": count, "loss": None,
                            "true_loss": 2 + CURVATURE * math.log(depth / best) ** 2 + rng.normal(0, 0.003)})
    return records


def test_sweep_json_and_jsonl_with_losses_fit_like_the_csv(tmp_path):
    from depthwidth.loop.results import load_runs

    records = _sweep_records()
    for r in records:
        r["loss"] = r.pop("true_loss")
    (tmp_path / "r.json").write_text(json.dumps(records))
    (tmp_path / "r.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    header = list(records[0])
    (tmp_path / "r.csv").write_text(",".join(header) + "\n" + "".join(",".join(str(r[h]) for h in header) + "\n" for r in records))
    reports = []
    for name in ("r.json", "r.jsonl", "r.csv"):
        runs, source, _ = load_runs(str(tmp_path / name))
        assert [r.group for r in runs] == [f"{r['budget']:.6g}" for r in records]  # grouped by budget
        assert [r.size for r in runs] == pytest.approx([r["params_nonembedding"] for r in records])
        reports.append(fit_results(runs, Source("r", "0" * 64), bootstrap=100))
    assert reports[0] == reports[1] == reports[2]


def test_wandb_export_joined_to_the_sweep_by_id(tmp_path):
    from depthwidth.loop.results import load_runs

    records = _sweep_records()
    losses = {r["id"]: r.pop("true_loss") for r in records}
    (tmp_path / "sweep.json").write_text(json.dumps(records))
    wandb = "Name,State,eval/loss\n" + "".join(f"{i},finished,{loss}\n" for i, loss in reversed(list(losses.items())))
    (tmp_path / "wandb.csv").write_text(wandb)
    runs, _, sources = load_runs(str(tmp_path / "wandb.csv"), sweep=str(tmp_path / "sweep.json"), id_column="Name",
                                 loss_column="eval/loss")
    assert [r.loss for r in runs] == [losses[r["id"]] for r in records] and len(sources) == 2
    (tmp_path / "short.csv").write_text("\n".join(wandb.splitlines()[:-1]) + "\n")
    with pytest.raises(InputError, match=re.escape(f"run '{records[0]['id']}'") + ".*has no loss in"):
        load_runs(str(tmp_path / "short.csv"), sweep=str(tmp_path / "sweep.json"), id_column="Name", loss_column="eval/loss")
    with pytest.raises(InputError, match="needs columns 'id'"):
        load_runs(str(tmp_path / "wandb.csv"), sweep=str(tmp_path / "sweep.json"), loss_column="eval/loss")


# ---- directories of Hugging Face Trainer runs ------------------------------------------------------

RUNS = ROOT / "tests" / "fixtures" / "trainer_runs"


@pytest.mark.parametrize("metric", ["last", "best"])
def test_real_trainer_states_are_read(metric):
    """The 15 real Trainer runs (tests/fixtures/make_trainer_runs.py): each loss is the last (or lowest)
    eval_loss of its trainer_state.json's log_history, read here with json alone."""
    from depthwidth.loop.results import load_runs

    runs, source, sources = load_runs(runs_dir=str(RUNS), metric=metric)
    manifest = json.loads((RUNS / "manifest.json").read_text())["runs"]
    assert [r.id for r in runs] == [m["id"] for m in manifest] and len(runs) == 15
    for run, row in zip(runs, manifest):
        history = json.loads((RUNS / row["id"] / "trainer_state.json").read_text())["log_history"]
        evals = [e["eval_loss"] for e in history if "eval_loss" in e]
        assert run.loss == (evals[-1] if metric == "last" else min(evals))
        assert (run.depth, run.width, run.size, run.group) == (row["depth"], row["width"], row["params_nonembedding"],
                                                               f"{row['budget']:.6g}")
    import hashlib

    assert len(sources) == 16 and sources[1].sha256 == hashlib.sha256((RUNS / manifest[0]["id"] / "trainer_state.json").read_bytes()).hexdigest()


def test_real_runs_fit_as_their_csv_does(tmp_path):
    """Same runs, same outcome: these 60-step runs put the lowest loss at depth 1 for the smallest
    size, so both ways in give the same answer (since 0.4.0 the per-size optima and no law; the
    CSV carries the sweep's heads and kv_heads, so the layout the runs held is the same too)."""
    from depthwidth.loop.results import load_runs

    runs, _, _ = load_runs(runs_dir=str(RUNS))
    csv_path = tmp_path / "runs.csv"
    csv_path.write_text("id,budget,depth,width,params_nonembedding,heads,kv_heads,head_dim,loss\n" + "".join(
        f"{r.id},{r.group},{r.depth!r},{r.width!r},{r.size!r},{r.heads or ''},{r.kv_heads or ''},{r.head_dim or ''},"
        f"{r.loss!r}\n" for r in runs))
    outcomes = []
    for how in ({"runs_dir": str(RUNS)}, {"path": str(csv_path)}):
        loaded, source, _ = load_runs(**how)
        assert [(r.depth, r.width, r.size, r.loss, r.group) for r in loaded] == [(r.depth, r.width, r.size, r.loss, r.group) for r in runs]
        try:
            outcomes.append(fit_results(loaded, Source("x", "0" * 64), bootstrap=100))
        except InputError as err:
            outcomes.append(str(err))
    assert outcomes[0] == outcomes[1]


def _runs_dir_from(records, tmp_path, metric_values):
    """A runs directory in the Trainer's own layout, built from a real trainer_state.json of the
    fixture with only its eval_loss values replaced (so the structure is exactly what Trainer writes)."""
    template = json.loads((RUNS / "1e6-02-2x192x12-s0" / "trainer_state.json").read_text())
    root = tmp_path / "runs"
    root.mkdir()
    for record in records:
        state = json.loads(json.dumps(template))
        values = iter(metric_values(record))
        for entry in state["log_history"]:
            if "eval_loss" in entry:
                entry["eval_loss"] = next(values)
        folder = root / record["id"] / "checkpoint-60"  # a checkpoint folder, as save_strategy="steps" leaves
        folder.mkdir(parents=True)
        (folder / "trainer_state.json").write_text(json.dumps(state))
    (root / "manifest.json").write_text(json.dumps([{k: v for k, v in r.items() if k != "true_loss"} for r in records]))
    return root


def test_runs_dir_gives_the_same_rule_as_the_equivalent_csv(tmp_path):
    from depthwidth.loop.results import load_runs

    records = _sweep_records()
    root = _runs_dir_from(records, tmp_path, lambda r: (r["true_loss"] + 0.5, r["true_loss"]))  # last = the true loss
    csv_path = tmp_path / "same.csv"
    csv_path.write_text("id,budget,depth,width,params_nonembedding,loss\n" + "".join(
        f"{r['id']},{r['budget']},{r['depth']},{r['width']!r},{r['params_nonembedding']!r},{r['true_loss']!r}\n" for r in records))
    by_dir = fit_results(load_runs(runs_dir=str(root))[0], Source("s", "0" * 64), bootstrap=200)
    by_csv = fit_results(load_runs(str(csv_path))[0], Source("s", "0" * 64), bootstrap=200)
    assert by_dir == by_csv and by_dir.levine is not None
    best = load_runs(runs_dir=str(root), metric="best")[0]
    assert [r.loss for r in best] == [r["true_loss"] for r in records]


def test_missing_or_bad_trainer_state_is_one_line_naming_run_and_file(tmp_path):
    from depthwidth.loop.results import load_runs

    records = _sweep_records()
    root = _runs_dir_from(records, tmp_path, lambda r: (r["true_loss"], r["true_loss"]))
    victim = records[4]["id"]
    state = root / victim / "checkpoint-60" / "trainer_state.json"
    state.write_text("{not json")
    with pytest.raises(InputError, match=re.escape(f"run '{victim}'") + ".*trainer_state.json is not valid JSON"):
        load_runs(runs_dir=str(root))
    state.write_text(json.dumps({"log_history": [{"loss": 3.0, "step": 10}]}))
    with pytest.raises(InputError, match=re.escape(f"run '{victim}'") + ".*has no finite eval_loss"):
        load_runs(runs_dir=str(root))
    import shutil

    shutil.rmtree(root / victim)
    with pytest.raises(InputError, match=re.escape(f"run '{victim}': no trainer_state.json in")):
        load_runs(runs_dir=str(root))
    (root / "manifest.json").unlink()
    with pytest.raises(InputError, match="no manifest.json"):
        load_runs(runs_dir=str(root))
