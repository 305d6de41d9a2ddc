"""Issue 32: one figure per quantity, every --field printed, "did you mean", and no warning about
a shape the user did not ask for."""
import json

import pytest

from conftest import completed


def run(*args, columns="100"):
    return completed(args, columns=columns)  # in-process (conftest.completed)


def test_repeated_field_prints_each_field_tab_separated():
    [record] = json.loads(run("plan", "--params", "1e9", "--format", "json").stdout)
    out = run("plan", "--params", "1e9", "--field", "threshold.min_depth", "--field", "recommended.width", "--field", "setup.gpus")
    assert out.returncode == 0 and out.stdout == f"{record['threshold']['min_depth']}\t{record['recommended']['width']}\t{record['setup']['gpus']}\n"
    brief = run("plan", "--params", "1e9", "--params", "1e12", "--brief", "--field", "min_depth", "--field", "width")
    rows = json.loads(run("plan", "--params", "1e9", "--params", "1e12", "--brief", "--format", "json").stdout)
    assert brief.stdout == "".join(f"{r['min_depth']}\t{r['width']}\n" for r in rows)
    grid = run("bounds", "--depth", "3:4", "--width", "64", "--field", "depth", "--field", "regime", "--format", "csv")
    assert grid.stdout == "3\tdepth-efficient\n4\tdepth-inefficient\n"  # 3^3 = 27 < 64 < 81 = 3^4


@pytest.mark.parametrize("args,flag,meant", [
    (("plan", "--params", "1e9", "--field", "recomended_width"), "--field", "recommended.width"),
    (("plan", "--params", "1e9", "--arch", "lama"), "--arch", "llama"),
    (("plan", "--params", "1e9", "--gpu", "h10"), "--gpu", "h100"),
    (("plan", "--params", "1e9", "--rule", "nanochatt"), "rule", "nanochat"),
    (("bounds", "12x768", "--field", "regim"), "--field", "regime"),
])
def test_a_misspelt_name_gets_did_you_mean(args, flag, meant):
    out = run(*args)
    assert out.returncode == 2 and out.stdout == ""
    [line] = out.stderr.splitlines()
    assert f"bad {flag} " in line and f"did you mean '{meant}'?" in line


def test_warnings_about_a_shape_not_asked_for_stay_off_stderr():
    args = ("plan", "--params", "3e8", "--arch", "llama")
    [record] = json.loads(run(*args, "--format", "json").stdout)
    assert any("the planned shape" in w for w in record["warnings"])  # the minimal-depth shape is -8.2% off the budget
    assert run(*args, "--field", "recommended.width").stderr == ""
    assert "the planned shape" in run(*args, "--field", "width").stderr
    assert "the planned shape" in run(*args).stderr


def test_inspect_prints_the_flops_per_token_its_total_is_made_of():
    [record] = json.loads(run("inspect", "tests/configs/llama-7b.json", "--tokens", "1e12", "--format", "json").stdout)
    per_token = record["run"]["train_flops"] / 1e12  # the total over the tokens: one figure
    table = run("inspect", "tests/configs/llama-7b.json", "--tokens", "1e12", columns="140").stdout
    assert f"{per_token / 1e9:.3g}B" in table
    line = next(l for l in table.splitlines() if "training FLOPs per token" in l)
    assert f"{record['flops_per_token'] / 1e9:.3g}B" not in line  # not the stack-only figure beside the total


def test_sweep_memory_is_in_gb_like_plan():
    rows = json.loads(run("sweep", "--params", "1e9", "--count", "2", "--tokens", "2e10", "--format", "json").stdout)
    table = run("sweep", "--params", "1e9", "--count", "2", "--tokens", "2e10", columns="200").stdout
    assert "GiB" not in table and "GB/GPU" in table  # issue 45: the unit in the header, as plan's screen
    for r in rows:
        line = next(line for line in table.splitlines() if line.startswith(r["id"]))
        assert f" {r['run']['memory_per_gpu_bytes'] / 1e9:,.1f}" in line
