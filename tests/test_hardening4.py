"""Hardening, round four (issue 34): one regression test per finding of the adversarial run of
0.3 (finding 1, the linear sweep search, is issue 33's). Values checked come from formulas in the
tests, the issue's own numbers, or the tool's limits as documented (docs/errors.md)."""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import pytest

from conftest import ROOT, assert_bad_input, parse_json, run

MAX_DEPTH = 10**6  # what `bounds` and `inspect` accept (README: depth 1 to 1,000,000)


def first(records):
    return records[0] if isinstance(records, list) else records


def warnings_of(out) -> list[str]:
    return [line for line in out.error_lines if line.startswith("depthwidth: warning:")]


# ---- 2: never a shape the tool itself refuses ------------------------------------------------------

def _lambert_min_depth(n: float) -> int:
    """The paper's block: L* = W(ln3·N/6)/(2·ln3) (theory.md), by Newton on w·e^w = x; the minimal depth is ceil(L*)."""
    x = math.log(3) * n / 6
    w = math.log(x) - math.log(math.log(x))
    for _ in range(50):
        w -= (w * math.exp(w) - x) / (math.exp(w) * (w + 1))
    return math.ceil(w / (2 * math.log(3)))


@pytest.mark.parametrize("budget", ["1e25", "1e30"])
def test_plan_past_the_evidence_answers_with_the_threshold_shape(budget):
    """Issue 34 #2: plan 1e25 recommended 3111284x518413056 (bounds refuses depth > 10^6). Where the band
    passes the accepted depths the threshold rule answers; below that a shape in the band (issue 42,
    tests/test_shards.py)."""
    p = first(parse_json(run(["plan", "-p", budget, "--format", "json"])))
    assert p["recommended"]["depth"] == p["threshold"]["min_depth"] == _lambert_min_depth(float(budget))
    assert "no published evidence reaches" in p["why"]
    assert all(c["depth"] <= MAX_DEPTH for c in p["candidates"])
    shape = f"{p['recommended']['depth']}x{p['recommended']['width']}x{p['recommended']['heads']}"
    assert run(["bounds", shape, "--format", "json"]).code == 0


def test_export_plan_writes_what_inspect_reads(tmp_path):
    """Issue 34 #2: export --plan 1e25 wrote a 3,306,232-layer config that inspect refused."""
    out = tmp_path / "big"
    assert run(["export", "--plan", "1e25", "--to", "hf-llama", "--out", str(out)]).code == 0
    config = json.loads((out / "config.json").read_text())
    assert config["num_hidden_layers"] <= MAX_DEPTH
    assert run(["inspect", str(out / "config.json"), "--format", "json"]).code == 0


def test_a_named_rule_past_the_accepted_depth_is_refused_as_typed():
    """nanochat's d = 64·L at 1e25 (12·L·(64L)² = N: L ≈ 5.9e6) passes 10^6: exit 2, not a shape."""
    assert (1e25 / (12 * 64**2)) ** (1 / 3) > MAX_DEPTH
    assert_bad_input(run(["plan", "-p", "1e25", "--rule", "nanochat"]), "'1e25'")


def test_plan_rules_leaves_out_rules_past_the_accepted_depth():
    out = run(["plan", "--rules", "-p", "1e25", "--format", "json"])
    rows = parse_json(out)
    assert rows and all(r["depth"] <= MAX_DEPTH for r in rows)
    assert "nanochat" not in {r["rule"] for r in rows}
    assert any("nanochat" in w and "left out" in w for w in warnings_of(out))


# ---- 3: bounded stdin -------------------------------------------------------------------------------

def test_stdin_over_the_line_limit_is_refused_the_same_for_every_command():
    """Issue 34 #3: 52 MB of '1x2' lines ended in MemoryError; the limit is 10^6 lines for every command."""
    data = "1x2\n" * (10**6 + 1)
    for args in (["bounds", "-", "--format", "csv"], ["equiv", "--deep", "-", "--depth", "1"]):
        assert_bad_input(run(args, input=data), "at most 1,000,000 lines")
    assert_bad_input(run(["plan", "-p", "-"], input="1e9\n" * (10**6 + 1)), "at most 1,000,000 lines")


def test_bounds_stdin_in_chunks_spells_what_the_arguments_spell():
    shapes = [f"{L}x{64 * k}" for L in range(1, 40) for k in range(2, 40, 7)]
    piped = run(["bounds", "-", "--format", "csv"], input="# a comment\n\n" + "\r\n".join(shapes) + "\n")
    given = run(["bounds", *shapes, "--format", "csv"])
    assert piped.code == given.code == 0 and piped.stdout == given.stdout


def test_many_named_shapes_name_the_bad_line_first():
    lines = ["12x768"] * 100_050 + ["12x0"]
    assert_bad_input(run(["bounds", "-", "--format", "csv"], input="\n".join(lines)), "standard input line 100051")
    lines[-1] = "gpt2"
    assert_bad_input(run(["bounds", "-", "--format", "csv"], input="\n".join(lines)), "at most 100,000")


# ---- 4: bad input is never an internal error -----------------------------------------------------------

@pytest.mark.parametrize("text, needle", [("1" + "0" * 10**6, "expected a parameter count"),
                                          ("1" + "0" * 10**6 + "K", "expected a parameter count"),
                                          ("0." + "0" * 1_100_000 + "1", "expected a parameter count")],
                         ids=["1e1000000", "1e1000003", "1e-1100001"])
def test_a_million_digit_budget_is_bad_input(text, needle):
    """Issue 34 #4 and LOW: decimal.Overflow (internal error); a positive number called non-positive."""
    line = assert_bad_input(run(["plan", "-p", "-"], input=text + "\n"), needle)
    assert "must be positive" not in line


def _results(scale=1.0) -> list[dict]:
    """Three sizes, losses a parabola in ln L whose vertex moves (20, 24.6, 30.3): a law fit accepts."""
    rows = []
    for s in (1, 2, 4):
        for L in (8, 12, 16, 20, 28, 40):
            n = 5e8 * s
            rows.append({"depth": L, "width": int((n / (12 * L)) ** 0.5), "params": n * scale,
                         "loss": 3.0 - 0.1 * math.log(s) + 0.04 * math.log(L / (20 * s**0.3)) ** 2})
    return rows


def _csv(rows, newline="\n") -> str:
    keys = list(rows[0])
    return newline.join([",".join(keys)] + [",".join(str(r[k]) for k in keys) for r in rows]) + newline


def test_results_with_cr_line_endings_are_read(tmp_path):
    """Issue 34 #4: CR-only line endings (old Mac) were an internal error."""
    path = tmp_path / "r.csv"
    path.write_bytes(_csv(_results(), "\r").encode())
    assert run(["fit", str(path), "--format", "json"]).code == 0


def test_a_cell_over_the_csv_field_limit_is_bad_input():
    """Issue 34 #4: a `fit -` line over 131,072 characters (csv's field_size_limit) was an internal error."""
    text = "depth,width,params,loss\n8," + "5" * 140_000 + ",1e8,3\n"
    assert_bad_input(run(["fit", "-"], input=text), "not valid CSV")


# ---- 5, 6: one range per option -----------------------------------------------------------------------

@pytest.mark.parametrize("option, value", [("--tokens", "1e308"), ("--tokens", "0.5"), ("--tokens", "1e-308"),
                                           ("--mfu", "nan"), ("--mfu", "-1"), ("--mfu", "1e308"), ("--mfu", "1e-308")])
def test_sweep_and_plan_take_the_same_ranges(option, value):
    """Issue 34 #5/#6: sweep took --tokens 1e308 (empty FLOPs) and --mfu nan without --tokens; plan
    --mfu 1e-308 printed inf GPU-h. Both refuse, with the same line."""
    swept = assert_bad_input(run(["sweep", "-p", "1e9", option, value]), f"'{value}'")
    planned = assert_bad_input(run(["plan", "-p", "1e9", option, value, "--tokens", "2e10"] if option == "--mfu"
                                   else ["plan", "-p", "1e9", option, value]), f"'{value}'")
    assert swept == planned


def test_ffn_mult_has_a_floor():
    """Issue 34 #6: --ffn-mult 1e-308 gave ffn 1."""
    assert_bad_input(run(["plan", "-p", "1e9", "--ffn-mult", "1e-308"]), "'1e-308'")


# ---- 7: repeats ---------------------------------------------------------------------------------------

def test_a_repeated_budget_is_swept_once_with_the_same_ids():
    """Issue 34 #7: -p 1e9 -p 1e9 repeated every id and switched them to 1000000000-01-..."""
    once = parse_json(run(["sweep", "-p", "1e9", "--format", "json"]))
    out = run(["sweep", "-p", "1e9", "-p", "1_000_000_000", "--format", "json"])
    twice = parse_json(out)
    assert [r["id"] for r in twice] == [r["id"] for r in once]
    assert len({r["id"] for r in twice}) == len(twice)
    assert any("--params repeats" in w for w in warnings_of(out))


def test_equiv_depths_are_deduplicated_like_sweep_depths():
    """Issue 34 LOW: equiv --depth 2,2,3 repeated rows while sweep --depths 8,8,8 deduplicates."""
    out = run(["equiv", "--deep", "6x1024x16", "--depth", "2,2,3", "--format", "json"])
    assert [r["shallow_depth"] for r in parse_json(out)] == [2, 3]
    assert any("--depth repeats" in w for w in warnings_of(out))


# ---- 8, 13, LOW: writers ---------------------------------------------------------------------------------

def test_sweep_export_checks_field_before_writing(tmp_path):
    """Issue 34 #8: --field bogus wrote all of D, then exited 2."""
    out = tmp_path / "D"
    assert_bad_input(run(["sweep", "-p", "1e8", "--export", "hf-llama", "--out", str(out), "--field", "bogus"]), "'bogus'")
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_every_writer_exits_1_when_it_cannot_write(tmp_path):
    """Issue 34 #13: export and sweep --export exit 1, fit --save exit 2 for the same kind of place."""
    results = tmp_path / "r.json"
    results.write_text(json.dumps(_results()))
    for args in (["export", "12x768", "--to", "hf-llama", "--out", "/proc/x.json"],
                 ["sweep", "-p", "1e8", "--export", "hf-llama", "--out", "/proc/x"],
                 ["fit", str(results), "--save", "/proc/x.json"]):
        out = run(args)
        assert out.code == 1 and out.stdout == "" and "cannot write" in out.stderr, (args, out)
        assert "internal error" not in out.stderr and len(out.error_lines) == 1


def test_fit_save_in_a_missing_folder_is_bad_input_as_for_export(tmp_path):
    results = tmp_path / "r.json"
    results.write_text(json.dumps(_results()))
    assert_bad_input(run(["fit", str(results), "--save", str(tmp_path / "no" / "r.json")]), "does not exist")
    assert_bad_input(run(["export", "12x768", "--to", "hf-llama", "--out", str(tmp_path / "no" / "c.json")]), "does not exist")


def test_export_out_names(tmp_path, monkeypatch):
    """Issue 34 LOW: --out x.yaml for hf-llama made a folder x.yaml; --out '' exited 1."""
    monkeypatch.chdir(tmp_path)
    assert_bad_input(run(["export", "12x768", "--to", "hf-llama", "--out", "x.yaml"]), "'x.yaml'")
    assert_bad_input(run(["export", "12x768", "--to", "hf-llama", "--out", ""]), "''")
    assert list(tmp_path.iterdir()) == []
    assert run(["export", "12x768", "--to", "litgpt", "--out", "x.yaml"]).code == 0 and (tmp_path / "x.yaml").is_file()


# ---- 9: fit refuses what is not a loss or a count --------------------------------------------------------

def test_fit_refuses_params_in_millions(tmp_path):
    """Issue 34 #9: params 1009.6 for a 20x2000 shape (12·L·d² = 9.6e8) still gave a law."""
    path = tmp_path / "r.json"
    path.write_text(json.dumps(_results(scale=1e-6)))
    assert_bad_input(run(["fit", str(path)]), "not millions")


def test_fit_refuses_negative_and_mixed_losses(tmp_path):
    rows = _results()
    rows[3]["loss"] = -0.5
    path = tmp_path / "r.json"
    path.write_text(json.dumps(rows))
    assert_bad_input(run(["fit", str(path)]), "never negative")
    rows = _results()
    for r in rows[:6]:
        r["loss"] = math.exp(r["loss"])  # the first size's perplexities
    path.write_text(json.dumps(rows))
    assert_bad_input(run(["fit", str(path)]), "perplexities mixed with losses")


# ---- 10: ALBERT's inner groups ---------------------------------------------------------------------

def _albert(tmp_path, inner: int, layers: int = 12, groups: int = 1) -> dict:
    cfg = {"model_type": "albert", "num_hidden_layers": layers, "num_hidden_groups": groups, "inner_group_num": inner,
           "hidden_size": 768, "num_attention_heads": 12, "intermediate_size": 3072, "embedding_size": 128,
           "vocab_size": 30000}
    path = tmp_path / f"albert-{inner}-{layers}-{groups}.json"
    path.write_text(json.dumps(cfg))
    return first(parse_json(run(["inspect", str(path), "--format", "json"])))


def test_albert_runs_every_inner_layer(tmp_path):
    """transformers' AlbertTransformer.forward applies a group num_hidden_layers times and
    AlbertLayerGroup.forward runs all inner_group_num layers (modeling_albert.py, commit 00661e38a9e1):
    12 applications x 2 inner layers = 24 layers run, 2 distinct layers stored."""
    d, f = 768, 3072
    two = _albert(tmp_path, 2)
    assert two["depth"] == 24
    assert two["params_nonembedding"] == 2 * (4 * d * d + 2 * d * f)  # q, k, v, o + two feed-forward matrices
    # the same 24 applications written as 24 hidden layers of 2 groups: the same compute per token
    assert two["flops_per_token"] == _albert(tmp_path, 1, layers=24, groups=2)["flops_per_token"]


# ---- 11: contradictory options -------------------------------------------------------------------------

def test_plan_rules_and_brief_together_are_refused():
    assert_bad_input(run(["plan", "-p", "1e9", "--rules", "--brief"]), "--rules --brief")


@pytest.mark.parametrize("args, named", [
    (["plan", "-p", "1e9", "--brief", "--rule", "nanochat", "--format", "csv"], "--rule nanochat"),
    (["plan", "-p", "1e9", "--brief", "--prefer", "train", "--format", "csv"], "--prefer train"),
    (["plan", "-p", "1e9", "--brief", "--tokens", "2e10", "--format", "csv"], "--tokens 2e10"),
    (["plan", "-p", "1e9", "--brief", "--gpus", "8", "--format", "csv"], "--gpus 8"),
    # --brief costs no run: every run option given goes unused, and is named (they passed silently until 0.5.0)
    (["plan", "-p", "1e9", "--brief", "--mfu", "0.4", "--format", "csv"], "--mfu 0.4"),
    (["plan", "-p", "1e9", "--brief", "--gpu", "a100-80gb", "--pp", "2", "--format", "csv"], "--gpu a100-80gb, --pp 2"),
    (["plan", "-p", "1e9", "--brief", "--micro-batch", "4", "--global-batch", "256", "--format", "csv"],
     "--micro-batch 4, --global-batch 256"),
    (["plan", "-p", "1e9", "--rules", "--rule", "nanochat", "--format", "csv"], "--rule nanochat"),
    (["plan", "-p", "1e9", "--rules", "--gpus", "8", "--tokens", "2e10", "--format", "csv"], "--tokens 2e10, --gpus 8"),
    (["sweep", "-p", "1e9", "--depths", "8,12", "--count", "3", "--format", "csv"], "--count 3"),
    (["sweep", "-p", "1e9", "--count", "2", "--gpus", "8", "--mfu", "0.4", "--format", "csv"], "--gpus 8, --mfu 0.4"),
])
def test_an_ignored_option_is_named_in_one_warning(args, named):
    out = run(args)
    assert out.code == 0
    said = [w for w in warnings_of(out) if named in w]
    assert len(said) == 1 and "ignored" in said[0], out.stderr


def test_plan_rules_lists_a_rule_file_and_does_not_call_it_ignored(tmp_path):
    """--rules shows every rule's shape, the --rule-file's among them: its warning said the file was ignored."""
    saved = tmp_path / "rule.json"
    assert run(["fit", "examples/results.csv", "--save", str(saved)]).code == 0
    out = run(["plan", "-p", "1e9", "--rules", "--rule-file", str(saved), "--format", "json"])
    assert out.code == 0 and not [w for w in warnings_of(out) if "ignored" in w], out.stderr
    assert any(str(saved) in " ".join(row["notes"]) for row in json.loads(out.stdout)), out.stdout


def test_compare_says_when_deep_is_the_shallower():
    out = run(["compare", "--deep", "6x1024x16", "--shallow", "12x768", "--format", "json"])
    assert out.code == 0 and any("shallower than --shallow" in w for w in warnings_of(out))


# ---- 12: a signal after the commit ------------------------------------------------------------------

LATE_SIGNAL = """
import os, signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)  # a background job inherits SIGINT ignored (bash: `&`)
from depthwidth.core import staging
from depthwidth.loop import export
where = sys.argv[1]
if where == "rename":  # during the final rename (signals blocked): pending when the export is complete
    real = os.replace
    def replace(a, b):
        real(a, b)
        os.kill(os.getpid(), signal.SIGINT)
    staging.os.replace = replace
elif where == "after":  # once the export is written, before the table is printed
    real_write = export.write_configs
    def write_configs(*a, **k):
        paths = real_write(*a, **k)
        os.kill(os.getpid(), signal.SIGINT)
        return paths
    export.write_configs = write_configs
else:  # while the files are written: nothing may stay
    real_fill = staging._fill
    def fill(root, files):
        os.kill(os.getpid(), signal.SIGINT)
        real_fill(root, files)
    staging._fill = fill
from depthwidth.cli.app import main
sys.argv = ["depthwidth", "sweep", "-p", "1e8", "--depths", "6,8,10", "--export", "hf-llama", "--out", sys.argv[2],
            "--format", "csv"]
main()
"""


@pytest.mark.parametrize("where, code", [("rename", 0), ("after", 0), ("fill", 130)])
def test_sigint_after_the_commit_keeps_exit_0(where, code, tmp_path):
    """Issue 34 #12: a late SIGINT exited 130 with the export already in place. The signal is sent by
    the process to itself at a fixed point (no timing, so no flakiness under load)."""
    out = tmp_path / "sweep"
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    env.pop("DEPTHWIDTH_DEBUG", None)
    proc = subprocess.run([sys.executable, "-c", LATE_SIGNAL, where, str(out)], capture_output=True, text=True,
                          env=env, timeout=300)
    assert proc.returncode == code, proc.stderr
    if code == 0:
        rows = proc.stdout.splitlines()
        assert len(rows) == 4 and sorted(p.name for p in out.iterdir()) == sorted([r.split(",")[0] for r in rows[1:]]
                                                                                   + ["manifest.json"])
        assert "SIGINT arrived after the output was written" in proc.stderr
    else:
        assert list(tmp_path.iterdir()) == [] and proc.stdout == ""


# ---- LOW: values as typed, inspect ------------------------------------------------------------------

@pytest.mark.parametrize("args", [["plan", "-p", "1K"], ["plan", "-p", "1K", "--brief"], ["plan", "-p", "1K", "--rules"],
                                  ["export", "--plan", "1K", "--to", "hf-llama", "--out", "x.json"]])
def test_a_refused_budget_is_quoted_as_typed(args, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert_bad_input(run(args), "'1K'")


@pytest.mark.parametrize("extra, needle", [
    ({"hidden_act": ["silu"]}, "hidden_act"),
    ({"model_type": "qwen2_moe", "num_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 256,
      "mlp_only_layers": [99]}, "mlp_only_layers"),
    ({"model_type": "qwen2_moe", "num_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 256,
      "mlp_only_layers": [-1]}, "mlp_only_layers"),
    ({"model_type": "mixtral", "num_local_experts": 0, "num_experts_per_tok": 2}, "num_local_experts = 0"),
])
def test_inspect_refuses_configs_transformers_cannot_build(extra, needle, tmp_path):
    cfg = {"model_type": "llama", "num_hidden_layers": 4, "hidden_size": 512, "num_attention_heads": 8,
           "num_key_value_heads": 8, "intermediate_size": 1024, "vocab_size": 1000, **extra}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    assert_bad_input(run(["inspect", str(path)]), needle)


def test_gpt2_params_embedding_holds_the_position_table(tmp_path):
    """README said hf-gpt2's params_embedding leaves out position embeddings; it holds V·d + T·d (wpe)."""
    record = first(parse_json(run(["export", "12x768", "--to", "hf-gpt2", "--out", str(tmp_path / "g"), "--format", "json"])))
    assert record["params_embedding"] == 50257 * 768 + 2048 * 768
    readme = (ROOT / "README.md").read_text()
    assert "position embeddings not included" not in readme


@pytest.mark.parametrize("budget", ["1e13", "1e20", "1e25", "1e30"])
def test_a_sweep_past_the_evidence_prints_only_shapes_bounds_accepts(budget):
    """Issue 34's principle for sweeps too: past all published evidence the band only extrapolates
    published d/L (3,111,284 layers at 1e25 in the issue; the sweep printed 6,474,823); the sweep
    then brackets the threshold rule's minimal depth (bounds refuses depths above 10^6)."""
    rows = parse_json(run(["sweep", "-p", budget, "--format", "json"]))
    plan = first(parse_json(run(["plan", "-p", budget, "--format", "json"])))
    depths = [r["depth"] for r in rows]
    assert rows and max(depths) <= 2 * plan["threshold"]["min_depth"] and min(depths) >= plan["threshold"]["min_depth"]
    shapes = [f"{r['depth']}x{r['width']}x{r['heads']}" for r in rows]
    assert run(["bounds", *shapes, "--format", "json"]).code == 0
