"""Issue 42 beyond plan: `cost`, `sweep`, `compare`, `inspect` and `models` give a shape's run, loss and serving
as the same records as plan's candidates (``run``, ``loss``, ``serve``; ``predicted_loss`` in a sweep, whose
``loss`` is the measured loss to fill in). Every number their text prints is a field of their JSON at the
precision printed; --field takes the dotted paths and, for one minor version, the 0.4 flat names with one
deprecation line on stderr; CSV headers are the dotted paths."""
from __future__ import annotations

import json
import re

import pytest

from conftest import run

# a number as the tables print it, with its unit: %, GB, ms, h (hours of a run under a day), K/M/B/T counts
NUMBER = re.compile(r"(?<![\w.^*=-])([+-]?\d[\d,]*(?:\.\d+)?(?:e[+-]\d+)?)(%| ?GB| ?ms| h(?![a-z-])|[KMBT](?![a-z]))?")
SCALE = {"%": 0.01, "GB": 1e9, "ms": 1e-3, "h": 1 / 24, "K": 1e3, "M": 1e6, "B": 1e9, "T": 1e12}


def pool(value, key: str = "") -> list[float]:
    """Every number of a JSON value; byte counts also in GB and seconds per token also in ms, as the
    tables' columns headed GB/GPU and ms/token print them."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return []
    if isinstance(value, (int, float)):
        return [float(value)] + ([value / 1e9] if "bytes" in key else []) + ([value * 1e3] if "per_token" in key else [])
    items = value.items() if isinstance(value, dict) else ((key, v) for v in value)
    return [x for k, v in items for x in pool(v, k)]


def printed(text: str) -> list[tuple[str, float, float]]:
    """(token, value, half a unit of its last printed digit) of every number in ``text``."""
    out = []
    for m in NUMBER.finditer(text):
        digits, unit = m.group(1).replace(",", ""), (m.group(2) or "").strip()
        mantissa, _, exponent = digits.partition("e")
        decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
        scale = SCALE.get(unit, 1.0) * (10.0 ** int(exponent) if exponent else 1.0)
        out.append((m.group(0), float(mantissa) * scale, 0.5 * 10**-decimals * scale))
    return out


def assert_printed_in(text: str, record) -> None:
    numbers = pool(record)
    for token, value, half in printed(text):
        assert any(abs(v - value) <= half * (1 + 1e-9) + 1e-12 for v in numbers), (token, text)


def json_of(args):
    out = run([*args, "--format", "json"])
    assert out.code == 0, out.stderr
    return json.loads(out.stdout)


def text_of(args) -> str:
    out = run([*args, "--wide"])
    assert out.code == 0, out.stderr
    return out.stdout


COSTS = [["cost", "24x2048", "--arch", "llama", "--gpus", "64", "--tokens", "2e11", "--serve"],
         ["cost", "12x768", "32x4096", "--tokens", "2e10"], ["cost", "80x8192", "--arch", "llama", "--gpus", "512", "--tp", "8"],
         ["cost", "--config", "tests/configs/llama-7b.json", "--gpus", "64", "--tokens", "2e12", "--serve", "--batch", "8"]]


@pytest.mark.parametrize("args", COSTS, ids=lambda a: " ".join(a[1:4]))
def test_every_figure_of_the_cost_table_is_in_its_json(args):
    records = json_of(args)
    body = text_of(args).split("Notes:")[0]
    body = re.sub(r"\S*config\.json|\b\d+x\d+(x\d+)?\b|h100", "", body)  # names, shapes and the accelerator
    assert_printed_in(body, [{k: v for k, v in r.items() if k != "notes"} for r in records])
    for r in records:  # the paths the public acceptance check reads
        assert {"tokens_per_second", "layout", "mfu", "train_days"} <= set(r["run"]) and "vs_best" in r["loss"]
        assert r["run"]["fits"] == (r["run"]["memory_per_gpu_bytes"] <= 80e9)


def test_every_figure_of_a_costed_sweep_row_is_in_its_json():
    args = ["sweep", "--params", "1e9", "--arch", "llama", "--count", "3", "--tokens", "2e10", "--gpus", "8"]
    rows = json_of(args)
    lines = {line.split()[0]: line for line in text_of(args).splitlines() if line.split() and "x" in line.split()[0]}
    for r in rows:
        assert_printed_in(lines[r["id"]].removeprefix(r["id"]), r)
        assert r["run"]["layout"]["dp"] * r["run"]["layout"]["micro_batch"] * r["run"]["layout"]["accumulation"] == \
            r["run"]["global_batch"]
        assert set(r["predicted_loss"]) == {"vs_best", "low", "high"} and r["loss"] is None  # the loss to fill in
    assert list(rows[0])[-1] == "loss"


COMPARES = [["compare", "--deep", "24x2048", "--shallow", "12x2944", "--tokens", "2e10", "--gpus", "8"],
            ["compare", "--deep", "12x768", "--shallow", "6x1086", "--tokens", "2e10"],  # one node assumed
            ["compare", "--deep", "12x768", "--shallow", "6x1086"],  # and 20 tokens per parameter
            ["compare", "--deep", "80x8192", "--shallow", "40x11585", "--tokens", "2e12"],  # two nodes: the smallest that holds it
            ["compare", "--deep", "80x8192", "--shallow", "12x768", "--gpu", "h100"]]  # the smaller on the larger's two nodes


@pytest.mark.parametrize("args", COMPARES, ids=lambda a: " ".join(a[1:]))
def test_every_figure_of_the_compare_screen_is_in_its_json(args):
    """The figures table (loss vs best, days to the target loss, days and GPU-hours, step, memory, decode) and the
    train line's cluster, length and target size are fields of the JSON, with or without --gpus and --tokens."""
    record = json_of(args)
    text = text_of(args)
    labels = ("loss vs best", "days to target loss", "days at", "step time, MFU", "memory per GPU", "decode latency",
              "params, regime")
    lines = [line for line in text.splitlines() if line.startswith(labels)]
    assert len(lines) == len(labels)
    for line in lines:
        assert_printed_in(re.sub(r"\(deep\)|\(shallow\)|\[95%\]", "", line), [record["deep"], record["shallow"]])
    train = text.split("why ")[0].split("train ")[1]  # its shapes, accelerator and the cited 20 tokens per parameter aside
    assert_printed_in(re.sub(r"\b\d+x\d+\b|h100|\(no --tokens[^)]*\)", "", train), record)
    assert record["deep"]["run"]["layout"] and record["deep"]["serve"]["decode_seconds_per_token"] > 0
    setup = record["setup"]
    assert setup["gpus_assumed"] is ("--gpus" not in args) and setup["tokens_assumed"] is ("--tokens" not in args)
    assert ("no --gpus" in text) is setup["gpus_assumed"] and f"{setup['gpus']:,} x {setup['gpu']}" in text
    for side in (record["deep"], record["shallow"]):  # days = GPU-hours / GPUs / 24 on the cluster stated
        run = side["run"]
        assert run["train_days"] == pytest.approx(run["train_gpu_hours"] / setup["gpus"] / 24, rel=1e-9)
        assert run["tokens"] == setup["tokens"] and side["loss"]["low"] <= side["loss"]["vs_best"] <= side["loss"]["high"]
        if run["time_to_target_days"] is None:  # "never": no length reaches the target (the screen says so)
            assert run["time_to_target_gpu_hours"] is None and "never" in text
        else:
            assert run["time_to_target_days"] == pytest.approx(run["time_to_target_gpu_hours"] / setup["gpus"] / 24, rel=1e-9)


def test_every_figure_of_the_inspect_run_line_is_in_its_json():
    args = ["inspect", "tests/configs/llama-7b.json", "--tokens", "2e12", "--gpus", "64"]
    [record] = json_of(args)
    line = next(line for line in text_of(args).splitlines() if line.startswith("run "))
    assert_printed_in(line.replace(" d;", ";"), record)
    assert set(record["loss"]) == {"vs_best", "low", "high"} and record["loss"]["low"] <= record["loss"]["vs_best"]


# (command, old 0.4 name, its new path)
OLD_NAMES = [
    (["cost", "24x2048", "--tokens", "2e10", "--serve"], "layout", "run.layout"),
    (["cost", "24x2048", "--tokens", "2e10", "--serve"], "loss_vs_best", "loss.vs_best"),
    (["cost", "24x2048", "--tokens", "2e10", "--serve"], "train_memory_per_gpu_bytes", "run.memory_per_gpu_bytes"),
    (["cost", "24x2048", "--tokens", "2e10", "--serve"], "loss_in_fitted_range", "loss.in_fitted_range"),
    (["cost", "24x2048", "--tokens", "2e10", "--serve"], "serving_tp", "serve.tp"),
    (["cost", "24x2048", "--tokens", "2e10", "--serve"], "gpus", "run.gpus"),
    (["sweep", "--params", "1e9", "--count", "2"], "loss_vs_best_high", "predicted_loss.high"),
    (["sweep", "--params", "1e9", "--count", "2", "--tokens", "2e10"], "fits_on_gpu", "run.fits"),
    (["sweep", "--params", "1e9", "--count", "2", "--tokens", "2e10"], "kv_cache_bytes_per_sequence", "serve.kv_cache_bytes_per_sequence"),
    (["compare", "--deep", "12x768", "--shallow", "6x1086", "--tokens", "2e10"], "deep.tokens", "deep.run.tokens"),
    (["compare", "--deep", "12x768", "--shallow", "6x1086"], "shallow.train_memory_per_gpu_bytes", "shallow.run.memory_per_gpu_bytes"),
    (["inspect", "tests/configs/llama-7b.json"], "loss_vs_best_low", "loss.low"),
    (["inspect", "tests/configs/llama-7b.json"], "step_seconds", "run.step_seconds"),
    (["models", "--filter", "llama3-*"], "loss_vs_best", "loss.vs_best"),
]


@pytest.mark.parametrize("args, old, new", OLD_NAMES, ids=lambda v: v if isinstance(v, str) else v[0])
def test_an_old_name_prints_its_new_path_with_one_deprecation_line(args, old, new):
    now = run([*args, "--field", new])
    before = run([*args, "--field", old])
    assert now.code == before.code == 0, before.stderr
    assert before.stdout == now.stdout and now.stdout.strip() and "deprecated" not in now.stderr
    lines = [line for line in before.stderr.splitlines() if "deprecated" in line]
    assert len(lines) == 1 and f"--field {old} " in lines[0] and f"--field {new}" in lines[0]


def test_every_renamed_path_is_a_field_of_its_command():
    """The maps of output/renames.py point at fields the commands print (cost with every section filled)."""
    from depthwidth.output.records import field_names
    from depthwidth.output.renames import BY_COMMAND

    printed_by = {"cost": json_of(["cost", "24x2048", "--tokens", "2e10", "--serve"])[0],
                  "sweep": json_of(["sweep", "--params", "1e9", "--count", "1", "--tokens", "2e10"])[0],
                  "compare": json_of(["compare", "--deep", "12x768", "--shallow", "6x1086"]),
                  "inspect": json_of(["inspect", "tests/configs/llama-7b.json"])[0],
                  "models": json_of(["models", "--filter", "llama3-8b"])[0]}
    for command, record in printed_by.items():
        fields = set(field_names(record))
        assert {new for new in BY_COMMAND[command].values()} <= fields, command
        assert not set(BY_COMMAND[command]) & {name for name in fields if "." not in name}, command  # no old name left


@pytest.mark.parametrize("args, dotted", [
    (["cost", "24x2048", "--tokens", "2e10"], {"run.layout.tp", "run.mfu", "run.train_days", "loss.vs_best", "serve"}),
    (["sweep", "--params", "1e9", "--count", "2", "--tokens", "2e10"], {"run.layout.tp", "run.fits", "predicted_loss.vs_best", "loss"}),
    (["inspect", "tests/configs/llama-7b.json"], {"run.memory_per_gpu_bytes", "loss.vs_best", "serve.kv_cache_bytes_per_sequence"}),
], ids=lambda v: v[0] if isinstance(v, list) else "")
def test_csv_headers_are_the_dotted_paths(args, dotted):
    header = run([*args, "--format", "csv"]).stdout.splitlines()[0].split(",")
    assert dotted <= set(header)
    assert not {"layout", "mfu", "loss_vs_best", "train_days", "fits_on_gpu"} & set(header)


def test_the_cost_schema_rejects_a_flat_row():
    """`depthwidth schema cost` holds the nested row: a row with its run spread flat (0.4) fails on ``run``."""
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(run(["schema", "cost"]).stdout)
    [row] = json_of(["cost", "24x2048", "--tokens", "2e10"])
    jsonschema.validate([row], schema)
    flat = {**{k: v for k, v in row.items() if k != "run"}, **row["run"]}
    with pytest.raises(jsonschema.ValidationError, match="run"):
        jsonschema.validate([flat], schema)
