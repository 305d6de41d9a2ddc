"""Issue 42: the plan's answer as one nested record. Every shape the text's ``why`` names is among
the JSON candidates, and every number the text's ``run`` and ``why`` lines print equals a field of
the JSON record at the precision printed; --field takes the new dotted paths and, for one minor
version, the old flat names with one deprecation line on stderr."""
from __future__ import annotations

import json
import math
import re

import pytest

from conftest import run, section

PLANS = [
    ["--params", "1e8"], ["--params", "1e9"], ["--params", "1e10"],
    ["--params", "1e8", "--arch", "gpt2"], ["--params", "1e9", "--arch", "gpt2"],
    ["--params", "1e9", "--arch", "llama"], ["--params", "7e9", "--arch", "llama"], ["--params", "1e10", "--arch", "llama"],
    ["--params", "1e11", "--arch", "llama", "--gpus", "512", "--tp", "8"],
    ["--params", "1e9", "--arch", "mistral"], ["--params", "1e10", "--arch", "mistral", "--gpus", "64"],
    ["--params", "1e9", "--arch", "qwen2"], ["--params", "1e10", "--arch", "qwen2"],
    ["--params", "7e9", "--arch", "llama", "--gpus", "64", "--gpu", "h100"],
    ["--params", "1e9", "--gpu", "a100-80gb", "--gpus", "16"],
    ["--params", "1e9", "--arch", "llama", "--prefer", "serve"],
    ["--params", "1e10", "--prefer", "train"],
    ["--params", "3e9", "--arch", "qwen2", "--prefer", "serve"],
    ["--params", "1e9", "--arch", "gpt2", "--tokens", "5e10", "--gpus", "32"],
    ["--params", "3e9", "--arch", "mistral", "--prefer", "train", "--gpus", "16"],
    ["--params", "1e9", "--tokens", "2e10", "--gpus", "64", "--gpu", "h100"],
]
# citations and constants in the text that are no field: a year, Hoffmann et al.'s 20 tokens per parameter, a docs path
CITED = re.compile(r"\([^()]*(?:et al\.|loss model:|docs/|serving model's)[^()]*\)")
NUMBER = re.compile(r"(?<![\w.^*-])([+-]?\d[\d,]*(?:\.\d+)?)(%|[KMBT](?![a-z])| ?GB| ?ms)?")
SCALE = {"%": 0.01, "K": 1e3, "M": 1e6, "B": 1e9, "T": 1e12, "GB": 1e9, "ms": 1e-3}


def numbers(value) -> list[float]:
    """Every number in a JSON value (the plan record without its evidence and notes)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return []
    if isinstance(value, (int, float)):
        return [float(value)]
    items = value.values() if isinstance(value, dict) else value
    return [x for v in items for x in numbers(v)]


def printed(text: str) -> list[tuple[str, float, float]]:
    """(token, value, half a unit of its last printed digit) of every number in a line of the text."""
    text = CITED.sub("", text)
    text = re.sub(r"\b\d+x\d+\b", "", text)  # shapes: checked against the candidates
    out = []
    for m in NUMBER.finditer(text):
        digits, unit = m.group(1).replace(",", ""), (m.group(2) or "").strip()
        decimals = len(digits.split(".")[1]) if "." in digits else 0
        scale = SCALE.get(unit, 1.0)
        out.append((m.group(0), float(digits) * scale, 0.5 * 10**-decimals * scale))
    return out


def plan_pair(args):
    text = run(["plan", *args])
    assert text.code == 0, text.stderr
    out = run(["plan", *args, "--format", "json"])
    return text.stdout, json.loads(out.stdout)[0]


@pytest.mark.parametrize("args", PLANS, ids=[" ".join(a) for a in PLANS])
def test_every_figure_of_the_text_is_in_the_record(args):
    text, record = plan_pair(args)
    shapes = {(c["depth"], c["width"]) for c in record["candidates"]}
    why = " ".join(section(text, "why").split())
    for depth, width in re.findall(r"\b(\d+)x(\d+)\b", why):
        assert (int(depth), int(width)) in shapes, (depth, width, sorted(shapes))
    pool = numbers({k: v for k, v in record.items() if k not in ("evidence", "notes", "warnings")})
    for label in ("run", "why"):
        line = " ".join(section(text, label).split())
        for token, value, half in printed(line):
            assert any(abs(v - value) <= half * (1 + 1e-9) + 1e-12 for v in pool), (label, token, line)
    rec = record["recommended"]
    assert (rec["depth"], rec["width"]) in shapes and rec in record["candidates"]  # the answer is a candidate, the same record
    if "days" in why:
        assert rec["run"]["time_to_target_days"] is not None  # issue 42: null while the why printed days


@pytest.mark.parametrize("prefer, field, unit", [("train", "time_to_target_gpu_hours", "GPU-hours"),
                                                   ("balanced", "time_to_target_days", "days")])
def test_why_gives_the_pick_time_in_the_unit_it_ranks_by(prefer, field, unit):
    """--prefer train ranks by GPU-hours, so its why gives GPU-hours (it printed days labelled GPU-hours)."""
    text, record = plan_pair(["--params", "1e9", "--prefer", prefer])
    why = " ".join(section(text, "why").split())
    shown = re.search(r"\], ([\d,.]+) (GPU-hours|days) (?:of training|to the target)", why)
    assert shown and shown.group(2) == unit, why
    want = record["recommended"]["run"][field]
    digits = shown.group(1).replace(",", "")
    assert abs(float(digits) - want) <= 0.5 * 10 ** -(len(digits.split(".")[1]) if "." in digits else 0) * (1 + 1e-9)


def test_plan_record_is_nested_and_small():
    _, record = plan_pair(["--params", "1e9"])
    assert len(record) <= 20
    rec = record["recommended"]
    for name in ("kv_heads", "head_dim", "ffn", "gated", "params_active", "flops_per_token", "kv_bytes_per_token"):
        assert record[name] == rec[name]  # the top level describes the answer, never another shape
    assert "width" not in record and "heads" not in record and "train_days" not in record
    assert record["threshold"]["min_depth"] == 8 and record["threshold"]["width"] == 3200  # the paper's shape, under its name
    layout = rec["run"]["layout"]
    assert set(layout) == {"tp", "pp", "dp", "cp", "micro_batch", "accumulation", "zero", "recompute"}
    assert rec["run"]["global_batch"] == layout["dp"] * layout["micro_batch"] * layout["accumulation"]
    assert "zero" not in record["setup"] and "recompute" not in record["setup"]  # no second layout to contradict the run's
    assert set(rec["loss"]) == {"vs_best", "low", "high"} and rec["loss"]["low"] <= rec["loss"]["vs_best"] <= rec["loss"]["high"]


def test_field_takes_dotted_paths_and_old_names_once_deprecated():
    _, record = plan_pair(["--params", "1e9"])
    out = run(["plan", "--params", "1e9", "--field", "recommended.depth"])
    assert out.stdout.strip() == str(record["recommended"]["depth"]) and "deprecated" not in out.stderr
    out = run(["plan", "--params", "1e9", "--field", "recommended.run.mfu"])
    assert math.isclose(float(out.stdout), record["recommended"]["run"]["mfu"], rel_tol=1e-15)
    old = run(["plan", "--params", "1e9", "--field", "recommended_depth"])
    assert old.code == 0 and old.stdout.strip() == str(record["recommended"]["depth"])
    lines = [line for line in old.stderr.splitlines() if "deprecated" in line]
    assert len(lines) == 1 and "recommended.depth" in lines[0]
    both = run(["plan", "--params", "1e9", "--field", "recommended_layout", "--field", "band", "--format", "json"])
    assert json.loads(both.stdout) == [{"recommended.run.layout": record["recommended"]["run"]["layout"], "band": record["band"]}]


def test_csv_headers_are_the_dotted_field_names():
    out = run(["plan", "--params", "1e9", "--format", "csv"])
    header = out.stdout.splitlines()[0].split(",")
    assert {"budget.value", "threshold.min_depth", "recommended.depth", "recommended.run.layout.tp", "recommended.loss.vs_best",
            "band.low", "loss_model.optimal_depth"} <= set(header)
    assert not any(name.startswith("recommended_") for name in header)


@pytest.mark.parametrize("args, beyond", [(["--params", "1e9"], False), (["--params", "7e10", "--arch", "llama"], False),
                                          (["--params", "5e12", "--arch", "llama"], True)])
def test_band_gives_its_centre_and_whether_it_extrapolates(args, beyond):
    """``band.centre`` is the depth the band note says practice trains (printed to 0.1 layer), inside the band;
    ``band.extrapolated`` is true past every published model (the 5e12 plan's warning says so), false inside."""
    out = run(["plan", *args, "--format", "json"])
    [record] = json.loads(out.stdout)
    band = record["band"]
    said = next(n for n in record["notes"] if n.startswith(f"band [{band['low']}, {band['high']}]"))
    trains = float(re.search(r"trains ([\d.]+) layers", said).group(1))
    assert abs(band["centre"] - trains) <= 0.05 + 1e-9
    assert band["low"] <= band["centre"] <= band["high"]
    assert band["extrapolated"] is beyond
    assert ("no published evidence reaches this size" in out.stderr) is beyond


def test_band_centre_at_70b_is_near_the_published_70b_depth():
    """Llama 3 70B trains 80 layers at 8192 wide (github.com/pytorch/torchtitan torchtitan/models/llama3/flavors.py,
    flavor 70B: n_layers 80, dim 8192): practice's centre at that size is within 10% of it."""
    [record] = json.loads(run(["plan", "--params", "7e10", "--arch", "llama", "--format", "json"]).stdout)
    assert abs(record["band"]["centre"] / 80 - 1) < 0.10


def test_schema_plan_has_the_band_centre_and_extrapolated():
    schema = json.loads(run(["schema", "plan"]).stdout)
    band = schema["$defs"]["DepthBand"]["properties"]
    assert {"low", "high", "valid_shapes", "centre", "extrapolated"} <= set(band)
    assert band["extrapolated"]["type"] == "boolean"
