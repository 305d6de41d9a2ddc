"""One shape record (issue 20): the same shape has the same count fields, with the same names and
values, in every command that prints it; the bare word ``params`` is no JSON field anywhere.

Expected values are the paper's convention written here: 12·L·d² for the vanilla block
(Kaplan et al. 2020, as Levine et al. 2020 count), with no embedding counted.
"""
from __future__ import annotations

import json

import pytest

from depthwidth.arch.record import BLOCK_FIELDS

SHAPES = ["12x768", "24x1024x16", "6x1000x16", "6x729", "2x10x9", "48x1600x25", "32x4096x32", "8x3200x50",
          "40x1280x10", "80x12288x96", "1x3", "3x100x7", "16x2048", "20x5120x40", "96x12288", "7x2186x1",
          "9x4608x36", "60x8192x64", "4x256x4", "36x1280x20"]
SHAPE_FIELDS = ("depth", "width", "heads", "params_12Ld2", *BLOCK_FIELDS)


def cli_json(run, args):
    out = run(args + ["--format", "json"])
    assert out.code == 0, out.stderr
    return json.loads(out.stdout)


def keys_everywhere(value) -> set:
    if isinstance(value, dict):
        return set(value) | set().union(*map(keys_everywhere, value.values()))
    if isinstance(value, list):
        return set().union(*map(keys_everywhere, value)) if value else set()
    return set()


def test_twenty_shapes_alike_in_bounds_and_compare(run):
    records = cli_json(run, ["bounds", *SHAPES])
    for text, record in zip(SHAPES, records):
        L, d = record["depth"], record["width"]
        assert record["params_12Ld2"] == 12 * L * d * d
        whole = d % record["heads"] == 0
        assert record["params_nonembedding"] == record["params_active"] == 12 * L * d * d  # 4d² attention + 8d² MLP
        assert record["params_embedding"] is None and record["params_with_embeddings"] is None
        assert (record["head_dim"] == d // record["heads"]) if whole else record["head_dim"] is None
        compared = cli_json(run, ["compare", "--deep", text, "--shallow", "1x3"])
        assert {k: compared["deep"][k] for k in SHAPE_FIELDS} == {k: record[k] for k in SHAPE_FIELDS}


@pytest.mark.parametrize("budget", ["1e8", "1e9", "1e11"])
def test_plan_candidates_are_the_bounds_records_of_their_shapes(run, budget):
    [plan] = cli_json(run, ["plan", "--params", budget])
    assert plan["budget"]["value"] == int(float(budget)) and plan["budget"]["count"] == "params_nonembedding"
    shapes = [f'{c["depth"]}x{c["width"]}x{c["heads"]}' for c in plan["candidates"]]
    for candidate, record in zip(plan["candidates"], cli_json(run, ["bounds", *shapes])):
        assert {k: candidate[k] for k in SHAPE_FIELDS} == {k: record[k] for k in SHAPE_FIELDS}
        assert candidate["budget_deviation"] == pytest.approx(candidate["params_nonembedding"] / plan["budget"]["value"] - 1, rel=1e-12)
    [planned] = cli_json(run, ["bounds", f'{plan["threshold"]["min_depth"]}x{plan["threshold"]["width"]}x{plan["threshold"]["heads"]}'])
    assert {k: plan["threshold"][k] for k in SHAPE_FIELDS if k in plan["threshold"]} == {k: planned[k] for k in SHAPE_FIELDS if k != "depth"}


def test_with_embeddings_is_the_sum(run):
    [plan] = cli_json(run, ["plan", "--params", "1e9", "--arch", "llama", "--count", "with-embeddings"])
    assert plan["budget"]["count"] == "params_with_embeddings"
    for record in [plan["threshold"], *plan["candidates"]]:
        assert record["params_with_embeddings"] == record["params_nonembedding"] + record["params_embedding"]
    assert plan["threshold"]["budget_deviation"] == pytest.approx(plan["threshold"]["params_with_embeddings"] / 1e9 - 1, rel=1e-12)
    assert plan["recommended"]["budget_deviation"] == pytest.approx(plan["recommended"]["params_with_embeddings"] / 1e9 - 1, rel=1e-12)


@pytest.mark.parametrize("name", ["gpt2-xl", "llama-7b", "bert-base", "llama3-70b", "gpt3-xl"])
def test_models_and_bounds_agree_on_a_catalogue_model(run, name):
    [model] = [m for m in cli_json(run, ["models"]) if m["name"] == name]
    [record] = cli_json(run, ["bounds", name])
    assert {k: model[k] for k in SHAPE_FIELDS} == {k: record[k] for k in SHAPE_FIELDS}


COMMANDS = [
    ["plan", "--params", "1e9", "--arch", "llama"], ["plan", "--params", "1e9", "--rules"], ["bounds", "12x768", "gpt2-xl"],
    ["bounds", "--depth", "1:3", "--width", "64:128:64"], ["compare", "--deep", "12x768", "--shallow", "6x1086"],
    ["equiv", "--deep", "6x1000x16", "--depth", "2,3"], ["models"], ["inspect", "tests/configs/llama-7b.json"],
]


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: " ".join(a[:2]))
def test_no_bare_params_field(run, args):
    assert "params" not in keys_everywhere(cli_json(run, args))


@pytest.mark.parametrize("name", ["gpt2-small", "gpt2-medium", "gpt2-xl"])
def test_export_then_inspect_gives_the_bounds_record_of_the_model(run, tmp_path, name):
    [exported] = cli_json(run, ["export", name, "--to", "hf-gpt2", "--out", str(tmp_path)])
    [seen] = cli_json(run, ["inspect", str(tmp_path)])
    [record] = cli_json(run, ["bounds", name])
    assert {k: seen[k] for k in SHAPE_FIELDS} == {k: record[k] for k in SHAPE_FIELDS}
    assert exported["params_nonembedding"] == record["params_nonembedding"]
    assert (exported["params_active"], exported["params_embedding"]) == (record["params_active"], record["params_embedding"])


def test_sweep_rows_are_the_bounds_records_of_their_shapes(run):
    rows = cli_json(run, ["sweep", "--params", "1e9", "--count", "5"])
    shapes = [f'{r["depth"]}x{r["width"]}x{r["heads"]}' for r in rows]
    same = ("depth", "width", "heads", "kv_heads", "head_dim", "ffn", "gated", "params_active", "params_embedding",
            "flops_per_token", "kv_bytes_per_token", "tp_sizes", "regime", "log3_sep_lower", "log3_sep_upper")
    for row, record in zip(rows, cli_json(run, ["bounds", *shapes])):
        assert {k: row[k] for k in same} == {k: record[k] for k in same}
        assert row["params_nonembedding"] == record["params_nonembedding"]
