"""Issue 33: presets by size, fit on one or two sizes, and a rule file that keeps its sweep's budgets and layout."""
import json
import math

import numpy as np
import pytest

from conftest import completed
from depthwidth.arch.blocks import params_nonembedding
from depthwidth.arch.presets import PRESETS
from depthwidth.arch.spending import Spending


def cli(*args):
    return completed(args)  # in-process (conftest.completed)


# ---- presets: each size builds its published model ----------------------------------------------------------

# (preset, budget, depth, width) -> (heads, kv_heads, head_dim, ffn, tied), from each model's config.json
PUBLISHED = {
    ("llama", 1e9, 16, 2048): (32, 8, 64, 8192, True),  # Llama 3.2 1B
    ("llama", 3e9, 28, 3072): (24, 8, 128, 8192, True),  # Llama 3.2 3B
    ("llama", 8e9, 32, 4096): (32, 8, 128, 14336, False),  # Llama 3 8B
    ("llama", 7e10, 80, 8192): (64, 8, 128, 28672, False),  # Llama 3 70B
    ("qwen2", 4e8, 24, 896): (14, 2, 64, 4864, True),  # Qwen2.5-0.5B
    ("qwen2", 1.4e9, 28, 1536): (12, 2, 128, 8960, True),  # Qwen2.5-1.5B
    ("qwen2", 7e9, 28, 3584): (28, 4, 128, 18944, False),  # Qwen2-7B
}


@pytest.mark.parametrize("key, published", PUBLISHED.items(), ids=[f"{k[0]}-{k[2]}x{k[3]}" for k in PUBLISHED])
def test_each_size_builds_its_published_model(key, published):
    name, budget, depth, width = key
    arch = Spending(name).at_budget(budget).architecture(depth, width)
    assert (arch.heads, arch.kv_heads, arch.head_dim, arch.ffn, arch.tied) == published
    assert PRESETS[name].for_shape(depth, width).architecture(depth, width) == arch  # an export of the shape: the same


def test_llama_3_2_1b_counts_what_its_config_says():
    """16 layers of q, o (2048 x 2048), k, v (2048 x 512) and a SwiGLU of 3 x 2048 x 8192: 973,078,528."""
    arch = Spending("llama").at_budget(1e9).architecture(16, 2048)
    assert params_nonembedding(arch) == 16 * (2 * 2048**2 + 2 * 2048 * 512 + 3 * 2048 * 8192) == 973_078_528


def test_the_users_block_options_stay_final():
    overrides = (("ffn_mult", 1.0), ("head_dim", 128), ("kv_heads", 4), ("tied", False))
    arch = Spending("llama", overrides).at_budget(1e9).architecture(16, 2048)
    assert (arch.head_dim, arch.heads, arch.kv_heads, arch.tied) == (128, 16, 4, False)
    assert arch.ffn == -(-(2 * 4 * 2048 // 3) // 256) * 256  # ffn_mult 1.0 with Llama 3.2 1B's multiple_of 256


def test_a_1_5b_llama_plan_ties_its_embedding():
    """Issue 33: "a 1.5B llama" became 31x2048 with an untied 128K vocabulary, 1.99B in total."""
    out = cli("plan", "--params", "1.5e9", "--arch", "llama", "--format", "json")
    assert out.returncode == 0, out.stderr
    record = json.loads(out.stdout)
    record = record[0] if isinstance(record, list) else record
    width = record["recommended"]["width"]
    embedding = record["recommended"]["params_with_embeddings"] - record["recommended"]["params_nonembedding"]
    assert embedding == 128256 * width  # tied: one V x d table (Llama 3.2 1B's tie_word_embeddings)
    assert record["recommended"]["params_with_embeddings"] < 1.99e9


# ---- fit on one or two sizes ---------------------------------------------------------------------------------

def sweep_rows(budget: float, depths, optimum: float, rng=None, noise: float = 0.0):
    """Rows of a sweep at one budget (width from 12·L·d² = N), loss a parabola in ln depth around ``optimum``."""
    rows = []
    for depth in depths:
        loss = 3.0 + 0.05 * math.log(depth / optimum) ** 2 + (rng.normal(0, noise) if noise else 0.0)
        rows.append({"budget": budget, "depth": depth, "width": round(math.sqrt(budget / (12 * depth))),
                     "params": budget, "heads": 16, "kv_heads": 4, "head_dim": 64, "loss": loss})
    return rows


def fit(tmp_path, rows, *args):
    path = tmp_path / "results.json"
    path.write_text(json.dumps(rows))
    out = cli("fit", str(path), "--bootstrap", "200", "--format", "json", *args)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_one_size_recovers_its_optimum_with_an_interval(tmp_path):
    rng = np.random.default_rng(3)
    rows = sweep_rows(5e8, (6, 8, 11, 16, 22, 32, 45, 64), 20.0, rng, noise=0.002)
    [record] = fit(tmp_path, rows)
    assert record["budget"] == 5e8 and record["method"] == "parabola"
    assert record["optimal_depth"] == pytest.approx(20.0, rel=0.15)
    assert record["optimal_depth_low"] < 20.0 < record["optimal_depth_high"]
    assert record["form"] == "none" and "at least 3" in record["law_note"]


def test_two_sizes_recover_both_optima_and_no_law(tmp_path):
    rows = sweep_rows(1e8, (4, 6, 9, 14, 20, 30), 10.0) + sweep_rows(1e10, (10, 15, 22, 33, 50, 75), 35.0)
    records = fit(tmp_path, rows)
    assert [r["budget"] for r in records] == [1e8, 1e10]
    assert [r["optimal_depth"] for r in records] == pytest.approx([10.0, 35.0], rel=1e-6)  # noise-free: the vertex
    assert all(r["form"] == "none" and r["levine"] is None and "2 size groups" in r["law_note"] for r in records)
    table = cli("fit", str(tmp_path / "results.json"), "--bootstrap", "200")
    assert table.returncode == 0 and "no law across sizes" in table.stdout


def test_runs_that_support_no_parabola_give_the_measured_best(tmp_path):
    """Three runs (no residual left for an interval), and a best run at the deepest depth tried."""
    [three] = fit(tmp_path, sweep_rows(1e9, (10, 20, 40), 20.0))
    assert (three["method"], three["optimal_depth"], three["optimal_depth_low"], three["optimal_depth_high"]) == \
        ("measured best", 20, 10, 40)
    [edge] = fit(tmp_path, sweep_rows(1e9, (5, 8, 12, 18), 30.0))
    assert (edge["optimal_depth"], edge["optimal_depth_low"], edge["optimal_depth_high"]) == (18, 12, None)


# ---- plan --rule-file: the sweep's budgets and layout ---------------------------------------------------------

def test_a_rule_accepts_its_own_budgets_and_keeps_the_layout(tmp_path):
    """Issue 33: plan --rule-file called the sweep's own 1.5e9 "outside the fitted range"."""
    rows = []
    for budget in ("3e8", "6e8", "9e8"):  # below 1B: 8-way tensor parallelism leaves 2 query heads per KV head few widths above
        out = cli("sweep", "--params", budget, "--arch", "llama", "--count", "7", "--kv-ratio", "2", "--format", "json")
        assert out.returncode == 0, out.stderr
        rows += json.loads(out.stdout)
    for r in rows:
        r["loss"] = 3.0 + 0.05 * math.log(r["depth"] / (20 * (r["budget"] / 1e9) ** 0.3)) ** 2
    fit(tmp_path, rows, "--save", str(tmp_path / "rule.json"))
    for budget in ("3e8", "9e8"):
        out = cli("plan", "--params", budget, "--arch", "llama", "--rule-file", str(tmp_path / "rule.json"), "--format", "json")
        assert out.returncode == 0, out.stderr
        assert "outside" not in out.stderr and "outside the fitted" not in out.stdout
        record = json.loads(out.stdout)
        record = record[0] if isinstance(record, list) else record
        assert record["recommended"]["heads"] == 2 * record["recommended"]["kv_heads"]  # the sweep's 2 query heads per KV head
