"""Iso-budget sweeps (issue 14): valid shapes of one size, depths strictly increasing, an empty loss
column, and `plan --rules` / `--rule` / `--rule-file` wiring."""
from __future__ import annotations

import csv
import io
import json
import math

import pytest

from conftest import completed
from depthwidth.arch.hardware import Constraints
from depthwidth.advice.planner import PlanOptions
from depthwidth.arch.spending import Spending
from depthwidth.core.errors import InputError
from depthwidth.loop.sweep import budget_label, sweep, sweep_many, target_depths


def cli(*args, input=None):
    return completed(args, input)  # in-process (conftest.completed)


def llama_options(tp: int = 1) -> PlanOptions:
    return PlanOptions(spending=Spending("llama"), constraints=Constraints(tp=tp))


# the Llama block by size (issue 33), from the published configs: Llama 3.2 1B (params.json: head_dim 64,
# ffn_dim_multiplier 1.5, multiple_of 256) below 2e9 parameters; Llama 3 8B (head_dim 128, ffn_dim_multiplier 1.3,
# multiple_of 1024) at 1e10
LLAMA_1B, LLAMA_8B = (64, 1.5, 256), (128, 1.3, 1024)


def llama_count(depth: int, width: int, kv_heads: int, size=LLAMA_8B) -> int:
    """Non-embedding weights of a LLaMA block, written out from LLaMA's model.py: q and o are d x d, k and v
    d x (kv_heads·head_dim), the SwiGLU feed-forward 3·d·f with f = int(m·int(2·4d/3)) rounded up to multiple_of."""
    head_dim, m, multiple = size
    ffn = -(-int(m * (2 * 4 * width // 3)) // multiple) * multiple
    return depth * (2 * width * width + 2 * width * kv_heads * head_dim + 3 * width * ffn)


def test_sweep_csv_valid_shapes_with_an_empty_loss_column():
    proc = cli("sweep", "--params", "1e9", "--arch", "llama", "--count", "6", "--format", "csv")
    assert proc.returncode == 0, proc.stderr
    rows = list(csv.DictReader(io.StringIO(proc.stdout)))
    assert len(rows) == 6 and all(r["loss"] == "" for r in rows)
    depths = [int(r["depth"]) for r in rows]
    assert depths == sorted(set(depths)) and len({r["width"] for r in rows}) == 6
    assert len({int(r["heads"]) // int(r["kv_heads"]) for r in rows}) == 1  # one attention layout, held
    for r in rows:
        width, heads, head_dim, kv = (int(r[k]) for k in ("width", "heads", "head_dim", "kv_heads"))
        assert width % 128 == 0 and width == heads * head_dim and head_dim == 64  # Llama 3.2 1B's head size
        count = llama_count(int(r["depth"]), width, kv, LLAMA_1B)
        assert int(r["params_nonembedding"]) == count and abs(count / 1e9 - 1) <= 0.05
        assert float(r["budget_deviation"]) == pytest.approx(count / 1e9 - 1)


def test_default_sweep_spreads_over_the_plans_depth_band():
    """Issue 33: `sweep --params 1e9 --arch llama --count 4` gave 10, 15, 23, 42 for a band of [21, 48]."""
    from depthwidth.advice.planner import plan

    for options in (PlanOptions(), llama_options()):
        lo, hi = (lambda b: (b.low, b.high))(plan(10**9, options).band)
        rows = sweep(10**9, options, count=4)
        assert len(rows) == 4 and len({r.width for r in rows}) == 4
        assert all(lo <= r.depth <= hi for r in rows) and rows[-1].depth / rows[0].depth >= (hi / lo) ** 0.5
        assert all(r.within_tolerance for r in rows)


@pytest.mark.parametrize("budget, count", [(3 * 10**8, 5), (15 * 10**7, 6), (10**9, 8)])
def test_llama_sweeps_give_distinct_depths_and_widths_within_tolerance(budget, count):
    """Issue 33 done-when: 3e8 x 5, 1.5e8 x 6 and the default 1e9 sweep, every count from LLaMA's formula."""
    rows = sweep(budget, llama_options(), count=count)
    assert len(rows) == count and len({r.depth for r in rows}) == count and len({r.width for r in rows}) == count
    for r in rows:
        assert abs(llama_count(r.depth, r.width, r.kv_heads, LLAMA_1B) / budget - 1) <= 0.05


def test_requested_depths_are_kept_exactly_with_tp_8():
    """Issue 22: `sweep --params 1e10 --arch llama --tp 8 --depths 16:64:8` gave depths 15, 25, 36, 37, 56, 57, 58."""
    requested = list(range(16, 65, 8))
    rows = sweep(10**10, llama_options(8), depths=requested)
    assert [r.depth for r in rows] == requested  # every depth kept, none moved, none twice
    assert len({r.kv_heads for r in rows}) == 1 or len({r.heads // r.kv_heads for r in rows}) == 1  # one layout
    for r in rows:
        assert r.heads % 8 == 0 and (r.kv_heads % 8 == 0 or 8 % r.kv_heads == 0) and 8 in r.tp_sizes
        count = llama_count(r.depth, r.width, r.kv_heads)
        assert r.params_nonembedding == count and r.budget_deviation == pytest.approx(count / 1e10 - 1)
        assert r.within_tolerance == (abs(count / 1e10 - 1) <= 0.05)
        assert r.within_tolerance or (r.note and "from the budget" in r.note)
        # its width is the best valid one: one width step (1024 at tp 8, head_dim 128) either way is no nearer
        # under the row's own layout (a fixed ratio, or fixed KV heads), among widths whose KV heads shard 8 ways
        ratio = r.heads // r.kv_heads if len({q.heads // q.kv_heads for q in rows}) == 1 else None
        for other in (r.width - 1024, r.width + 1024):
            kv = other // 128 // ratio if ratio else r.kv_heads
            if other >= 1024 and (kv % 8 == 0 or 8 % kv == 0):
                assert abs(llama_count(r.depth, other, kv) / 1e10 - 1) >= abs(r.budget_deviation) - 1e-12
    if any(not r.within_tolerance for r in rows):
        assert any("more than ±5%" in line for line in rows.skipped)


def test_small_budget_rows_share_neither_depth_nor_width_and_hold_the_kv_ratio():
    """Issue 22: `sweep --params 3e7 --arch llama` put 5 of 8 runs at one width."""
    rows = sweep(3 * 10**7, llama_options())
    assert len({r.depth for r in rows}) == len(rows) and len({r.width for r in rows}) == len(rows)
    assert len({r.heads // r.kv_heads for r in rows}) == 1 and all(r.heads % r.kv_heads == 0 for r in rows)
    assert all(abs(r.params_nonembedding / 3e7 - 1) <= 0.05 for r in rows)
    if len(rows) < 8:
        assert any("not 8" in line for line in rows.skipped)


def test_absurd_depths_get_a_line_not_another_depth():
    """Issue 22: `--depths 100000:100002` at 1e9 gave 5340x128..5342x128. Depth 100000 leaves a width of
    sqrt(1e9 / (12·100000)) = 28.9, below the narrowest valid shape (2 heads of 64)."""
    with pytest.raises(InputError) as err:
        sweep(10**9, depths=[100000, 100001, 100002])
    assert "depth 100000" in str(err.value) and "28.9" in str(err.value)
    rows = sweep(10**9, depths=[100000, 20])  # 20x2048 (32 heads) is within 5% and splits 8 ways (issue 42)
    assert [r.depth for r in rows] == [20] and len(rows.skipped) == 1 and rows.skipped[0].startswith("depth 100000:")


def test_deep_requested_depths_are_kept_and_flagged():
    """Issue 22: `--depths 1000:1010` at 1e9 gave depths 1271-1281. At depth 1000 the widths 256 and 384
    (multiples of 128) spend 12·1000·256² = 0.786e9 (-21%) and 12·1000·384² = 1.77e9 (+77%)."""
    rows = sweep(10**9, depths=list(range(1000, 1011)))
    assert [r.depth for r in rows] == list(range(1000, 1011))
    first = rows[0]
    assert first.width == 256 and first.budget_deviation == pytest.approx(12 * 1000 * 256**2 / 1e9 - 1)
    assert not first.within_tolerance and "-21.4%" in first.note


def test_a_thousand_rows_stay_in_range_and_within_tolerance():
    """Issue 22: `--count 1000` at 1e9 ran to depth 5912 with 572 of 1000 rows more than 5% off. The list
    now stays between the minimal depth (8) and 2.5 times the top of the plan's band, every row within ±5% of
    12·L·d² = 1e9, no depth and no width twice."""
    from depthwidth.advice.planner import plan

    hi = plan(10**9).band.high
    rows = sweep(10**9, count=1000)
    assert 8 <= rows[0].depth and rows[-1].depth <= 2.5 * hi
    assert all(abs(12 * r.depth * r.width**2 / 1e9 - 1) <= 0.05 for r in rows)
    assert len({r.depth for r in rows}) == len(rows) == len({r.width for r in rows})
    assert any("not 1000" in line for line in rows.skipped)


def test_count_gives_that_many_distinct_widths_when_they_exist():
    """`sweep --params 1e9 --arch llama --count 6` gave 4 rows with head_dim 128 (widths in steps of 512); with
    Llama 3.2 1B's head_dim 64 there are enough widths within ±5% near the band."""
    rows = sweep(10**9, llama_options(), count=6)
    depths, widths = [r.depth for r in rows], [r.width for r in rows]
    assert len(rows) == 6 and depths == sorted(set(depths)) and len(set(widths)) == 6
    for r in rows:
        assert abs(llama_count(r.depth, r.width, r.kv_heads, LLAMA_1B) / 1e9 - 1) <= 0.05


def test_a_huge_budget_is_a_bounded_search():
    """Issue 34 finding 1: `sweep -p 1e20` ran for minutes (every depth from the minimal one tried in turn).
    The work is now a bounded number of shapes, whatever the budget: counted, not timed."""
    import depthwidth.loop.sweep as module

    calls = []
    real = module.valid_arch

    def counted(*args):
        calls.append(1)
        if len(calls) > 20000:
            raise AssertionError("more than 20000 shapes built for one budget")
        return real(*args)

    for budget in (10**15, 10**20, 10**30):
        calls.clear()
        module.valid_arch = counted
        try:
            rows = sweep(budget, count=8)
        finally:
            module.valid_arch = real
        assert len(rows) == 8 and all(r.within_tolerance for r in rows) and len(calls) <= 20000


def test_deepseek_rows_are_within_tolerance():
    """Issue 22: `sweep --params 1e9 --arch deepseek` had rows at +17.6% to +130.2% without a word."""
    rows = sweep(10**9, PlanOptions(spending=Spending("deepseek")))
    assert rows and all(abs(r.budget_deviation) <= 0.05 and r.within_tolerance for r in rows)


@pytest.mark.parametrize("kw, ratio, fixed", [({"kv_ratio": 2}, 2, None), ({"kv_heads": 2}, None, 2), ({"kv_ratio": 1}, 1, None)])
def test_the_attention_layout_is_the_one_asked_for(kw, ratio, fixed):
    rows = sweep(10**9, llama_options(), **kw)
    assert rows
    for r in rows:
        assert (r.heads == ratio * r.kv_heads) if ratio else (r.kv_heads == fixed)
        assert r.params_nonembedding == llama_count(r.depth, r.width, r.kv_heads, LLAMA_1B)


def test_layout_options_are_checked():
    with pytest.raises(InputError, match="not both"):
        sweep(10**9, llama_options(), kv_heads=8, kv_ratio=4)
    with pytest.raises(InputError, match="latent attention"):
        sweep(10**9, PlanOptions(spending=Spending("deepseek")), kv_ratio=2)


def test_multi_size_ids_are_the_export_folder_names(tmp_path):
    """Issue 22: multi-size exports named folders 1e+08-01-... while the id was 01-..."""
    from depthwidth.loop.export import write_configs

    rows = sweep_many([10**8, 10**9], count=3)
    ids = [r.id for r in rows]
    assert len(set(ids)) == len(ids)
    assert all(i.startswith(("1e8-", "1e9-")) for i in ids) and ids[0].startswith("1e8-01-")
    write_configs(list(zip(ids, rows.architectures)), "hf-gpt2", str(tmp_path / "out"), False, [])
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == sorted(ids + ["manifest.json"])
    assert [r.id for r in sweep(10**9, count=3)][0].startswith("01-")


def test_budget_labels():
    assert [budget_label(b) for b in (10**9, 3 * 10**7, 1_300_000_000, 350)] == ["1e9", "3e7", "1.3e9", "350"]


def test_target_depths_are_log_spaced():
    depths = target_depths(8, 64.0, 4)
    assert depths[0] == 8 and depths[-1] == pytest.approx(64)
    assert depths[1] / depths[0] == pytest.approx(depths[2] / depths[1]) == pytest.approx(2.0)


def test_sweep_json_loss_is_null():
    proc = cli("sweep", "--params", "350M", "--count", "3", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    records = json.loads(proc.stdout)
    assert len(records) == 3 and all(r["loss"] is None for r in records)
    assert all(r["id"].startswith(f"{i:02d}-") for i, r in enumerate(records, 1))
    assert all("params" not in r for r in records)  # record.md: the bare word is no field


@pytest.mark.parametrize("args, what", [
    (["--count", "0"], "--count"),
    (["--depths", "8:x"], "--depths"),
    (["--export", "hf-llama"], "--export/--out"),
])
def test_sweep_bad_input_exits_2(args, what):
    proc = cli("sweep", "--params", "1e9", *args)
    assert proc.returncode == 2 and proc.stdout == "" and what in proc.stderr and "Traceback" not in proc.stderr


def test_plan_rules_side_by_side():
    proc = cli("plan", "--params", "7e9", "--rules", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    rows = {r["rule"]: r for r in json.loads(proc.stdout)}
    assert {"levine-fit", "nanochat", "depth-delusion", "llama3-practice", "mobilellm"} <= set(rows)
    for r in rows.values():
        for key in ("kind", "depth", "width", "heads", "source", "fit_range", "verified", "extrapolated", "notes"):
            assert key in r
        assert abs(r.get("budget_deviation", r.get("params_deviation"))) <= 0.05 and r["width"] % 128 == 0
    nanochat = rows["nanochat"]
    assert _nanochat_or_sharded(nanochat["depth"], nanochat["width"], nanochat["heads"])
    assert rows["depth-delusion"]["kind"] == "guard"
    # Depth Delusion: D_crit = 2.43·ln(W); its row sits at the crossing with the iso-budget curve
    assert rows["depth-delusion"]["rule_depth"] == pytest.approx(2.43 * math.log(rows["depth-delusion"]["rule_width"]), rel=1e-6)


def _nanochat_or_sharded(depth: int, width: int, heads: int) -> bool:
    """nanochat's own shape, d = 64·L rounded up to 128; or, where that shape's heads (of 64) cannot split
    8 ways, a snapped shape whose heads can (issue 42: every shape of a 1B+ plan shards 8 ways)."""
    own = 128 * math.ceil(64 * depth / 128)
    return width == own or (heads % 8 == 0 and (own // 64) % 8 != 0)


def test_plan_rule_nanochat_recommends_64_per_layer():
    proc = cli("plan", "--params", "1e9", "--rule", "nanochat", "--format", "json")
    record = json.loads(proc.stdout)[0]
    depth, width = record["recommended"]["depth"], record["recommended"]["width"]
    assert width % 128 == 0 and _nanochat_or_sharded(depth, width, record["recommended"]["heads"])
    assert abs(record["recommended"]["budget_deviation"]) <= 0.05


def test_plan_rule_guard_is_refused():
    proc = cli("plan", "--params", "1e9", "--rule", "depth-delusion")
    assert proc.returncode == 2 and "guard" in proc.stderr


def test_plan_rule_file_recommends_the_fitted_optimum(tmp_path):
    """A hand-written Levine-form rule file (format depthwidth-rule/1): ln d = 6.0 + 0.03·L.
    With N = 12·L·d² the optimum solves 12·L·exp(2(6 + 0.03L)) = 1e9, found here by bisection."""
    rule = {"format": "depthwidth-rule/1", "name": "mine", "form": "levine",
            "levine": {"a": 6.0, "b": 0.03, "a_interval": [5.9, 6.1], "b_interval": [0.02, 0.04], "r2": 0.99, "rmse": 0.01},
            "power": None, "group_by": "params",
            "fit_range": {"size": [1e8, 1e10], "depth": [4, 48], "width": [256, 4096]},
            "groups": [], "source": {"file": "runs.csv", "sha256": "0" * 64}, "created": "2026-11-22", "tool": "depthwidth"}
    path = tmp_path / "rule.json"
    path.write_text(json.dumps(rule))
    lo, hi = 1.0, 1000.0
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if 12 * mid * math.exp(2 * (6.0 + 0.03 * mid)) < 1e9 else (lo, mid)
    proc = cli("plan", "--params", "1e9", "--rule-file", str(path), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    record = json.loads(proc.stdout)[0]
    assert record["rule"]["empirical_depth"] == pytest.approx(lo, rel=1e-6)
    # the valid shape nearest the fitted depth: at a 1B budget widths split 8 ways, multiples of 512
    # (8 heads of 64), each at the depths whose 12·L·d² is within 5% of the budget
    valid = [(L, w) for w in range(512, 8192, 512) for L in range(1, 200) if abs(12 * L * w * w / 1e9 - 1) <= 0.05]
    # (hardware.md: depths within 8% of the target count as equal, then the one nearest the budget)
    nearest = min(valid, key=lambda s: (int(abs(math.log(s[0] / lo)) / 0.08), abs(12 * s[0] * s[1] ** 2 / 1e9 - 1)))
    assert (record["recommended"]["depth"], record["recommended"]["width"]) == nearest
    assert abs(record["recommended"]["budget_deviation"]) <= 0.05


def test_sweep_rows_export_with_their_own_blocks(tmp_path):
    """The architectures a sweep returns are what an export writes: the row's key/value heads and ffn."""
    from depthwidth.loop.export import write_configs

    rows = sweep(10**9, llama_options(), count=3)
    out = tmp_path / "runs"
    write_configs(list(zip([r.id for r in rows], rows.architectures)), "hf-llama", str(out), False, [])
    for row in rows:
        config = json.loads((out / row.id / "config.json").read_text())
        assert (config["num_hidden_layers"], config["hidden_size"], config["num_attention_heads"],
                config["num_key_value_heads"], config["intermediate_size"]) == (row.depth, row.width, row.heads,
                                                                                row.kv_heads, row.ffn)


def test_sweep_export_writes_one_config_per_row_and_inspect_reads_them_back(tmp_path):
    out = tmp_path / "runs"
    proc = cli("sweep", "--params", "1e9", "--count", "3", "--export", "hf-llama", "--out", str(out), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)
    manifest = json.loads((out / "manifest.json").read_text())
    assert [r["id"] for r in manifest] == [r["id"] for r in rows]
    for row in rows:  # --export hf-llama without --arch plans with the llama block
        config = json.loads((out / row["id"] / "config.json").read_text())
        assert (config["num_hidden_layers"], config["hidden_size"], config["num_attention_heads"]) == \
            (row["depth"], row["width"], row["heads"])
        assert config["num_key_value_heads"] == row["kv_heads"] and config["intermediate_size"] == row["ffn"]
        back = json.loads(cli("inspect", str(out / row["id"]), "--format", "json").stdout)[0]
        assert back["params_nonembedding"] == row["params_nonembedding"]
    again = cli("sweep", "--params", "1e9", "--count", "3", "--export", "hf-llama", "--out", str(out))
    assert again.returncode == 2 and again.stdout == ""


def test_threshold_rule_recommends_the_planned_shape():
    """The theory's answer is the minimal depth: 8x3200 for 1e9 (12·8·9^8 >= 1e9; 3200 = 25·128)."""
    [record] = json.loads(cli("plan", "--params", "1e9", "--rule", "threshold", "--format", "json").stdout)
    assert (record["recommended"]["depth"], record["recommended"]["width"]) == (record["threshold"]["min_depth"], record["threshold"]["width"]) == (8, 3200)
    rows = {r["rule"]: r for r in json.loads(cli("plan", "--params", "1e9", "--rules", "--format", "json").stdout)}
    assert (rows["threshold"]["depth"], rows["threshold"]["width"]) == (8, 3200)


@pytest.mark.parametrize("budget, arch, count", [(10**9, "vanilla", 8), (10**9, "llama", 10), (3 * 10**8, "qwen2", 6),
                                                 (10**10, "mistral", 12), (3 * 10**7, "gpt2", 20)])
def test_count_rows_are_distinct_depths_within_tolerance_or_a_line_says_why(budget, arch, count):
    """Whatever the block: distinct depths, no width more than twice, every row within ±5% of the budget, and
    fewer rows than asked only with a line saying so; widths are shared only when a line says they ran out."""
    options = PlanOptions(spending=Spending(arch))
    rows = sweep(budget, options, count=count)
    depths, widths = [r.depth for r in rows], [r.width for r in rows]
    assert depths == sorted(set(depths)) and len(set(widths)) == len(widths)
    assert all(r.within_tolerance and abs(r.params_nonembedding / budget - 1) <= 0.05 for r in rows)
    assert len(rows) == count or any(f"not {count}" in line for line in rows.skipped)


def test_enough_widths_in_range_means_one_row_per_width_and_no_growth():
    """1e9 with the paper's block: the plan's band [20, 47] holds 6 widths (multiples of 128 from
    sqrt(1e9/(12·47)) = 1332 to sqrt(1e9/(12·20)) = 2041), so 4 rows take 4 of them and the band never grows."""
    rows = sweep(10**9, count=4)
    assert len({r.width for r in rows}) == 4 and rows.skipped == () and rows[-1].depth <= 57
