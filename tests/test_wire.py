"""The loop wired end to end (issue 22): sweep, export and fit on the command line, every option
they take, values from formulas written here (LLaMA's model.py counts, Korthikanti et al. 2022's
activation memory, PaLM's FLOPs per token, the published configs of Llama 2 and Llama 3)."""
from __future__ import annotations

import argparse
import csv
import io
import json
import math
import shlex

import pytest
import yaml

from conftest import completed

# ---- helpers --------------------------------------------------------------------------------------


def cli(*args, input=None):
    return completed(args, input)  # in-process (conftest.completed)


def ok(*args, input=None):
    proc = cli(*args, input=input)
    assert proc.returncode == 0, proc.stderr
    return proc


def bad(*args, piece: str = ""):
    """Bad input: exit 2, one stderr line naming it, nothing on stdout, no traceback."""
    proc = cli(*args)
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert proc.stdout == "" and "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert piece in proc.stderr, proc.stderr
    return proc


def llama_ffn(width: int, mult: float = 1.0, multiple: int = 256) -> int:
    """LLaMA's FeedForward (meta-llama/llama3 llama/model.py): int(2·4d/3), times ffn_dim_multiplier
    (truncated), rounded up to multiple_of."""
    hidden = int(2 * 4 * width / 3)
    if mult != 1.0:
        hidden = int(mult * hidden)
    return multiple * -(-hidden // multiple)


def llama_layers(depth, width, heads, kv_heads, head_dim, ffn, experts=None):
    """Non-embedding weights of a LLaMA-style stack: q (d x H·hd), k and v (d x G·hd), o (H·hd x d), and
    a SwiGLU feed-forward of three d x f matrices (per expert, plus a d x E router)."""
    attention = 2 * width * heads * head_dim + 2 * width * kv_heads * head_dim
    mlp = 3 * width * ffn if experts is None else experts * 3 * width * ffn + width * experts
    return depth * (attention + mlp)


def megatron_parser() -> argparse.ArgumentParser:
    """The model options of NVIDIA/Megatron-LM megatron/training/arguments.py (commit 307dcf37), by their names."""
    p = argparse.ArgumentParser()
    for name in ("--num-layers", "--hidden-size", "--num-attention-heads", "--kv-channels", "--num-query-groups",
                 "--ffn-hidden-size", "--num-experts", "--moe-router-topk", "--seq-length", "--max-position-embeddings",
                 "--vocab-size", "--tensor-model-parallel-size"):
        p.add_argument(name, type=int)
    for name in ("--position-embedding-type", "--normalization"):
        p.add_argument(name)
    for name in ("--group-query-attention", "--swiglu", "--disable-bias-linear", "--untie-embeddings-and-output-weights"):
        p.add_argument(name, action="store_true")
    return p


def megatron_args(path) -> argparse.Namespace:
    text = path.read_text()
    body = text[text.index("MODEL_ARGS=(") + len("MODEL_ARGS=("):text.rindex(")")]
    return megatron_parser().parse_args(shlex.split(body, comments=True))


# ---- sweep -----------------------------------------------------------------------------------------

def test_requested_depths_exactly_one_layout_and_flagged_rows_named():
    """Issue 22's first command: depths 16..64 step 8 exactly, no duplicates, one KV layout, each row's count
    LLaMA's, and every row within ±5% or flagged, with its id on stderr."""
    proc = ok("sweep", "--params", "1e10", "--arch", "llama", "--tp", "8", "--depths", "16:64:8", "--format", "json")
    rows = json.loads(proc.stdout)
    assert [r["depth"] for r in rows] == list(range(16, 65, 8))
    assert len({r["kv_heads"] for r in rows}) == 1 or len({r["heads"] // r["kv_heads"] for r in rows}) == 1
    for r in rows:
        # 1e10: Llama 3 8B's block (params.json: ffn_dim_multiplier 1.3, multiple_of 1024, head_dim 128)
        count = llama_layers(r["depth"], r["width"], r["heads"], r["kv_heads"], 128, llama_ffn(r["width"], 1.3, 1024))
        assert r["params_nonembedding"] == count and r["budget_deviation"] == pytest.approx(count / 1e10 - 1)
        assert r["within_tolerance"] == (abs(count / 1e10 - 1) <= 0.05)
        assert r["heads"] % 8 == 0 and r["id"] == f"{rows.index(r) + 1:02d}-{r['depth']}x{r['width']}x{r['heads']}"
        if not r["within_tolerance"]:
            assert r["note"] and r["id"] in proc.stderr
    assert "depthwidth: warning:" in proc.stderr and "more than ±5%" in proc.stderr


def test_a_depth_without_a_shape_is_a_warning_line():
    proc = ok("sweep", "--params", "1e9", "--depths", "16,100000", "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(proc.stdout)))
    assert [int(r["depth"]) for r in rows] == [16]
    assert any(line.startswith("depthwidth: warning: depth 100000:") for line in proc.stderr.splitlines())


@pytest.mark.parametrize("args, check", [
    (["--kv-heads", "2"], lambda r: r["kv_heads"] == 2),
    (["--kv-ratio", "1"], lambda r: r["kv_heads"] == r["heads"]),
    (["--kv-ratio", "2"], lambda r: r["heads"] == 2 * r["kv_heads"]),
    ([], lambda r: r["heads"] % r["kv_heads"] == 0),  # a ratio held (Llama 3.2 1B's 4, or a finer one: one in all rows)
])
def test_attention_layout_options(args, check):
    rows = json.loads(ok("sweep", "--params", "1e9", "--arch", "llama", "--count", "4", *args, "--format", "json").stdout)
    assert rows and all(check(r) for r in rows)
    assert len({r["kv_heads"] for r in rows}) == 1 or len({r["heads"] // r["kv_heads"] for r in rows}) == 1
    for r in rows:  # 1e9: Llama 3.2 1B's block (params.json: head_dim 64, ffn_dim_multiplier 1.5, multiple_of 256)
        assert r["params_nonembedding"] == llama_layers(r["depth"], r["width"], r["heads"], r["kv_heads"], 64,
                                                        llama_ffn(r["width"], 1.5))


def test_layout_is_a_table_note():
    out = ok("sweep", "--params", "1e9", "--arch", "llama", "--count", "3", "--kv-ratio", "2").stdout
    assert "attention layout: 2 query heads per key/value head in every row" in out


@pytest.mark.parametrize("args, piece", [
    (["--kv-heads", "8", "--kv-ratio", "4", "--arch", "llama"], "not both"),
    (["--arch", "deepseek", "--kv-ratio", "2"], "latent attention"),
    (["--export", "hf-nothing", "--out", "x"], "hf-nothing"),
    (["--tokens", "1e10", "--tokens", "2e10"], "--tokens"),
    (["--tokens", "2e10", "--gpus", "3", "--tp", "2"], "--gpus"),
    (["--tokens", "2e10", "--recompute", "most"], "--recompute"),
    (["--tokens", "2e10", "--gpu", "z80"], "--gpu"),
    (["--tokens", "2e10", "--mfu", "1.5"], "--mfu"),
])
def test_bad_sweep_options(args, piece):
    bad("sweep", "--params", "1e9", *args, piece=piece)


def test_multi_size_export_folders_are_the_ids(tmp_path):
    out = tmp_path / "runs"
    rows = json.loads(ok("sweep", "--params", "1e8", "--params", "1e9", "--count", "3", "--export", "hf-llama", "--out", out,
                         "--format", "json").stdout)
    ids = [r["id"] for r in rows]
    assert len(set(ids)) == len(ids) and {i.split("-")[0] for i in ids} == {"1e8", "1e9"}
    assert sorted(p.name for p in out.iterdir()) == sorted(ids + ["manifest.json"])
    assert json.loads((out / "manifest.json").read_text()) == rows
    for r in rows:
        config = json.loads((out / r["id"] / "config.json").read_text())
        assert (config["num_hidden_layers"], config["hidden_size"], config["num_key_value_heads"], config["intermediate_size"]) == \
            (r["depth"], r["width"], r["kv_heads"], r["ffn"])
    bad("sweep", "--params", "1e9", "--count", "3", "--export", "hf-llama", "--out", out, piece="--force")
    ok("sweep", "--params", "1e9", "--count", "2", "--export", "hf-llama", "--out", out, "--force")
    assert len(json.loads((out / "manifest.json").read_text())) == 2


def test_sweep_exports_train_formats(tmp_path):
    """litgpt YAML, Megatron-LM arguments and nanoGPT Python files, one per row, read back by each project's parser."""
    rows = json.loads(ok("sweep", "--params", "1e9", "--arch", "llama", "--count", "3", "--tp", "2", "--export", "litgpt",
                         "--out", tmp_path / "lit", "--format", "json").stdout)
    for r in rows:
        config = yaml.safe_load((tmp_path / "lit" / r["id"] / "model_config.yaml").read_text())
        assert (config["n_layer"], config["n_embd"], config["n_head"], config["n_query_groups"], config["intermediate_size"]) == \
            (r["depth"], r["width"], r["heads"], r["kv_heads"], r["ffn"])
    rows = json.loads(ok("sweep", "--params", "1e9", "--arch", "llama", "--count", "3", "--tp", "2", "--export", "megatron",
                         "--out", tmp_path / "meg", "--format", "json").stdout)
    for r in rows:
        args = megatron_args(tmp_path / "meg" / r["id"] / "megatron_args.sh")
        assert (args.num_layers, args.hidden_size, args.num_attention_heads, args.num_query_groups, args.ffn_hidden_size,
                args.tensor_model_parallel_size) == (r["depth"], r["width"], r["heads"],
                                                 None if r["kv_heads"] == r["heads"] else r["kv_heads"], r["ffn"], 2)
        assert args.group_query_attention == (r["kv_heads"] != r["heads"])  # Megatron-LM: MHA has no query groups
    rows = json.loads(ok("sweep", "--params", "1e8", "--count", "2", "--export", "nanogpt", "--out", tmp_path / "nano",
                         "--format", "json").stdout)
    for r in rows:
        scope = {}
        exec((tmp_path / "nano" / r["id"] / "train_config.py").read_text(), scope)  # what nanoGPT's configurator.py does
        assert (scope["n_layer"], scope["n_embd"], scope["n_head"]) == (r["depth"], r["width"], r["heads"])


H100_BF16_DENSE = 1979e12 / 2  # NVIDIA H100 SXM datasheet: 1,979 TFLOPS BF16 with sparsity, half of it dense
H100_MEMORY = 80e9
LLAMA_VOCAB = 128256  # Meta-Llama-3-8B config.json


def run_memory(r, gpus: int, context: int = 2048) -> int:
    """Training memory per GPU at tp = pp = 1, ZeRO 1, selective recomputation, micro-batch 1:
    2 + 2 bytes of weights and gradients per parameter, 12 of Adam states over the data-parallel gpus
    (Rajbhandari et al. 2020), and Korthikanti et al. 2022's activations s·h·(18 + 4f/h) per layer plus
    the embedding's (8s + s·h) and the output layer's 4s(h + V); the V x d embedding on the GPU once (1e9:
    Llama 3.2 1B's tied head, tie_word_embeddings true)."""
    params = r["params_nonembedding"] + LLAMA_VOCAB * r["width"]
    s, h, f = context, r["width"], r["ffn"]
    activations = s * (18 * h + 4 * f) * r["depth"] + (8 * s + s * h) + 4 * s * (h + LLAMA_VOCAB)
    return 2 * params + 2 * params + math.ceil(12 * params / gpus) + activations


def test_sweep_rows_carry_the_costs_of_their_training_run():
    proc = ok("sweep", "--params", "1e9", "--arch", "llama", "--count", "3", "--tokens", "2e10", "--gpus", "8", "--format", "json",
              "--mfu", "0.4", "--pp", "1", "--zero", "1", "--recompute", "selective")  # the flat-MFU time (the model's: test_plan_model.py)
    rows = json.loads(proc.stdout)
    assert list(rows[0])[-1] == "loss"
    for r in rows:
        per_token = 6 * r["params_active"] + 12 * r["depth"] * 2048 * r["width"] + 6 * LLAMA_VOCAB * r["width"]  # PaLM App. B
        run_ = r["run"]
        assert run_["tokens"] == 2e10 and run_["train_flops"] == pytest.approx(per_token * 2e10, rel=1e-12)
        hours = per_token * 2e10 / (H100_BF16_DENSE * 0.4) / 3600
        assert run_["train_gpu_hours"] == pytest.approx(hours, rel=1e-3) and run_["train_days"] == pytest.approx(hours / 8 / 24, rel=1e-3)
        assert r["serve"]["kv_cache_bytes_per_sequence"] == 2 * r["depth"] * r["kv_heads"] * 64 * 2 * 2048  # head_dim 64 (1B)
        assert run_["memory_per_gpu_bytes"] == run_memory(r, 8)
        assert run_["fits"] == (run_["memory_per_gpu_bytes"] <= H100_MEMORY)
    table = ok("sweep", "--params", "1e9", "--arch", "llama", "--count", "3", "--tokens", "2e10").stdout
    assert "GPU-hours" in table and "GB/GPU" in table  # issue 45: GPU-hours may give way to the width, named on a line


def test_costs_without_gpus_have_no_days_and_tokens_alone_are_the_budget():
    rows = json.loads(ok("sweep", "--tokens", "2e10", "--arch", "llama", "--count", "2", "--format", "json", "--mfu", "0.4").stdout)
    assert all(r["budget"] == 10**9 and r["run"]["tokens"] == 2e10 and r["run"]["train_days"] is None for r in rows)  # N = D / 20
    assert all(r["run"]["memory_per_gpu_bytes"] == run_memory(r, 1) for r in rows)
    plain = json.loads(ok("sweep", "--params", "1e9", "--count", "2", "--format", "json").stdout)
    assert all("run" not in r and "serve" not in r for r in plain)
    header = ok("sweep", "--params", "1e9", "--count", "2", "--tokens", "2e10", "--format", "csv").stdout.splitlines()[0]
    assert ("run.tokens,run.step_seconds,run.tokens_per_second,run.mfu,run.train_flops_per_token,run.train_flops,"
            "run.train_gpu_hours,run.train_days,") in header and ",run.memory_per_gpu_bytes,run.fits," in header
    assert header.endswith("run.calibrated_on,serve.kv_cache_bytes_per_sequence,serve.inference_memory_bytes,"
                           "serve.decode_seconds_per_token,loss")  # the run and serving records (issue 42), the loss to fill in last
    rows = json.loads(ok("sweep", "--tokens", "2e10", "--arch", "llama", "--count", "2", "--format", "json").stdout)
    assert all(r["run"]["train_days"] is None and 0 < r["run"]["mfu"] < 1
               and r["run"]["layout"]["dp"] * r["run"]["layout"]["tp"] * r["run"]["layout"]["pp"] == 8
               for r in rows)  # searched on one node of 8 H100s; no --gpus: no days


# ---- export ----------------------------------------------------------------------------------------

def test_catalogue_models_export_their_own_blocks(tmp_path):
    """Meta-Llama-3-8B's config.json: 8 KV heads, intermediate_size 14336, vocab 128256, untied, rope_theta
    500000; Llama-2-7b: multi-head (32 KV heads), 11008, vocab 32000."""
    ok("export", "llama3-8b", "--to", "hf-llama", "--out", tmp_path / "m")
    c = json.loads((tmp_path / "m" / "config.json").read_text())
    assert (c["num_key_value_heads"], c["intermediate_size"], c["vocab_size"], c["tie_word_embeddings"], c["rope_theta"]) == \
        (8, 14336, 128256, False, 500000.0)
    ok("export", "llama2-7b", "--to", "hf-llama", "--out", tmp_path / "l2")
    c = json.loads((tmp_path / "l2" / "config.json").read_text())
    assert (c["num_attention_heads"], c["num_key_value_heads"], c["intermediate_size"], c["vocab_size"]) == (32, 32, 11008, 32000)
    ok("export", "llama3-8b", "--to", "hf-llama", "--out", tmp_path / "v", "--vocab", "32000", "--tied")
    c = json.loads((tmp_path / "v" / "config.json").read_text())
    assert (c["vocab_size"], c["tie_word_embeddings"], c["num_key_value_heads"]) == (32000, True, 8)
    bad("export", "llama3-8b", "--to", "hf-llama", "--out", tmp_path / "k", "--kv-heads", "4", piece="--kv-heads")


def test_every_block_option_reaches_the_file(tmp_path):
    proc = ok("export", "24x2048", "--to", "hf-llama", "--out", tmp_path / "a", "--head-dim", "64", "--kv-heads", "4",
              "--ffn-mult", "1.5", "--vocab", "50000", "--untied", "--tp", "4", "--format", "json")
    c = json.loads((tmp_path / "a" / "config.json").read_text())
    ffn = llama_ffn(2048, 1.5)
    assert (c["num_attention_heads"], c["head_dim"], c["num_key_value_heads"], c["intermediate_size"], c["vocab_size"],
            c["tie_word_embeddings"]) == (32, 64, 4, ffn, 50000, False)
    [record] = json.loads(proc.stdout)
    assert record["params_nonembedding"] == llama_layers(24, 2048, 32, 4, 64, ffn)
    assert record["params_embedding"] == 2 * 50000 * 2048
    ok("export", "16x1024", "--to", "hf-mixtral", "--out", tmp_path / "moe", "--experts", "4", "--top-k", "2")
    c = json.loads((tmp_path / "moe" / "config.json").read_text())
    assert (c["num_local_experts"], c["num_experts_per_tok"]) == (4, 2)
    ok("export", "12x768", "--to", "hf-gpt2", "--out", tmp_path / "g", "--plain")
    bad("export", "12x768", "--to", "hf-gpt2", "--out", tmp_path / "g2", "--gated", piece="gated")
    bad("export", "24x2048x16", "--to", "megatron", "--out", tmp_path / "t", "--tp", "32", piece="--tp")
    bad("export", "12x768", "--to", "nanogpt", "--out", tmp_path / "n", "--multiple", "64", piece="--plan")
    assert not (tmp_path / "g2").exists() and not (tmp_path / "t").exists()


@pytest.mark.parametrize("options", [
    ["--arch", "llama", "--ffn-mult", "1.3", "--kv-heads", "4", "--tp", "8"],
    ["--arch", "mistral", "--head-dim", "64", "--budget-count", "with-embeddings"],
    ["--arch", "qwen2", "--multiple", "256", "--rule", "threshold"],
])
def test_plan_export_keeps_every_plan_option(options, tmp_path):
    """The exported counts are the plan's for the same options (issue 22: a 7B plan exported as 5.64B)."""
    plan_options = ["--count" if o == "--budget-count" else o for o in options]
    [plan] = json.loads(ok("plan", "--params", "7e9", *plan_options, "--format", "json").stdout)
    fmt = {"llama": "hf-llama", "mistral": "hf-mistral", "qwen2": "hf-qwen2"}[options[1]]
    [record] = json.loads(ok("export", "--plan", "7e9", *options, "--to", fmt, "--out", tmp_path / "p", "--format", "json").stdout)
    assert (record["depth"], record["width"], record["heads"], record["kv_heads"], record["ffn"]) == \
        (plan["recommended"]["depth"], plan["recommended"]["width"], plan["recommended"]["heads"], plan["recommended"]["kv_heads"],
         plan["recommended"]["ffn"])
    counted = plan["budget"]["count"]
    assert record[counted] == plan["recommended"][counted]
    c = json.loads((tmp_path / "p" / "config.json").read_text())
    head_dim = c.get("head_dim", c["hidden_size"] // c["num_attention_heads"])
    assert llama_layers(c["num_hidden_layers"], c["hidden_size"], c["num_attention_heads"], c["num_key_value_heads"], head_dim,
                        c["intermediate_size"]) == record["params_nonembedding"]


def test_train_formats_from_the_command_line(tmp_path):
    ok("export", "24x2048x16", "--to", "litgpt", "--out", tmp_path / "lit", "--kv-heads", "4")
    config = yaml.safe_load((tmp_path / "lit" / "model_config.yaml").read_text())
    assert (config["n_layer"], config["n_embd"], config["n_head"], config["n_query_groups"], config["head_size"],
            config["intermediate_size"], config["mlp_class_name"]) == (24, 2048, 16, 4, 128, llama_ffn(2048, 1.5), "LLaMAMLP")
    # 24 x 2048 is a ~1.5e9 llama: Llama 3.2 1B's feed-forward (ffn_dim_multiplier 1.5: 8192 at width 2048)
    ok("export", "24x2048x16", "--to", "megatron", "--out", tmp_path / "m.sh", "--tp", "8", "--experts", "8", "--top-k", "2")
    args = megatron_args(tmp_path / "m.sh")
    assert (args.num_layers, args.num_experts, args.moe_router_topk, args.tensor_model_parallel_size, args.swiglu) == (24, 8, 2, 8, True)
    ok("export", "12x768", "--to", "nanogpt", "--out", tmp_path / "n.py")
    scope = {}
    exec((tmp_path / "n.py").read_text(), scope)
    assert (scope["n_layer"], scope["n_head"], scope["n_embd"], scope["bias"]) == (12, 12, 768, False)


# ---- fit -------------------------------------------------------------------------------------------

def optimum(budget: float) -> float:
    """The true optimal depth of the synthetic runs: 4·(N/1e8)^0.25 (4, 7.1 and 12.6 at 1e8, 1e9, 1e10)."""
    return 4 * (budget / 1e8) ** 0.25


def loss_of(row) -> float:
    """A parabola in ln depth around the size's optimum (its vertex is the optimum exactly)."""
    return 2.0 + 0.05 * math.log(row["depth"] / optimum(row["budget"])) ** 2


@pytest.fixture(scope="module")
def sweep_runs(tmp_path_factory):
    """A three-size sweep exported as runs (ids = folders), its rows with the loss filled in."""
    root = tmp_path_factory.mktemp("fit")
    proc = ok("sweep", "--params", "1e8", "--params", "1e9", "--params", "1e10", "--depths", "2:40", "--export", "hf-gpt2",
              "--out", root / "runs", "--format", "json")
    rows = [r for r in json.loads(proc.stdout) if r["within_tolerance"]]
    for r in rows:
        r["loss"] = loss_of(r)
    return root, rows


PER_SIZE = ("budget", "label", "runs", "depths", "best_depth", "optimal_depth", "optimal_depth_low", "optimal_depth_high",
            "optimal_width", "optimal_width_low", "optimal_width_high", "min_loss", "curvature", "method")


def fit_json(*args):
    """fit's JSON (one record per size) as {groups: the per-size fields, levine, power} (the law is in every record)."""
    records = json.loads(ok("fit", *args, "--bootstrap", "50", "--format", "json").stdout)
    return {"groups": [{k: r[k] for k in PER_SIZE} for r in records], "levine": records[0]["levine"], "power": records[0]["power"]}


def test_fit_reads_the_sweeps_own_json_and_jsonl(sweep_runs, tmp_path):
    _, rows = sweep_runs
    (tmp_path / "s.json").write_text(json.dumps(rows))
    (tmp_path / "s.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    a, b = fit_json(tmp_path / "s.json"), fit_json(tmp_path / "s.jsonl")
    assert a["groups"] == b["groups"]
    for group in a["groups"]:
        assert group["optimal_depth"] == pytest.approx(optimum(float(group["label"])), rel=1e-6)  # label: the budget


def test_fit_runs_dir_equals_the_csv_and_metric_best(sweep_runs, tmp_path):
    root, rows = sweep_runs
    runs = root / "runs"
    for r in rows:  # a Trainer's log: the last eval_loss is the true one, an earlier one is lower (for --metric best)
        state = {"log_history": [{"eval_loss": r["loss"] - 0.25, "step": 10}, {"loss": 3.0, "step": 15},
                                 {"eval_loss": r["loss"], "step": 20}]}
        (runs / r["id"] / "trainer_state.json").write_text(json.dumps(state))
    manifest = json.loads((runs / "manifest.json").read_text())
    keep = {r["id"] for r in rows}
    (runs / "manifest.json").write_text(json.dumps([m for m in manifest if m["id"] in keep]))
    header = ["id", "budget", "depth", "width", "params_nonembedding", "loss"]
    (tmp_path / "s.csv").write_text(",".join(header) + "\n" + "".join(",".join(str(r[h]) for h in header) + "\n" for r in rows))
    by_dir, by_csv = fit_json("--runs", runs), fit_json(tmp_path / "s.csv")
    assert by_dir["groups"] == by_csv["groups"] and by_dir["levine"] == by_csv["levine"] and by_dir["power"] == by_csv["power"]
    best = fit_json("--runs", runs, "--metric", "best")
    assert [g["min_loss"] for g in best["groups"]] == pytest.approx([g["min_loss"] - 0.25 for g in by_csv["groups"]])
    (runs / rows[0]["id"] / "trainer_state.json").write_text("{broken")
    proc = bad("fit", "--runs", runs, piece=rows[0]["id"])
    assert "trainer_state.json" in proc.stderr


def test_fit_joins_a_wandb_export_to_the_sweep(sweep_runs, tmp_path):
    _, rows = sweep_runs
    (tmp_path / "sweep.json").write_text(json.dumps([{**r, "loss": None} for r in rows]))
    (tmp_path / "wandb.csv").write_text("Name,State,eval/loss\n" + "".join(f"{r['id']},finished,{r['loss']!r}\n" for r in rows))
    joined = fit_json(tmp_path / "wandb.csv", "--sweep", tmp_path / "sweep.json", "--id-column", "Name", "--loss-column", "eval/loss")
    (tmp_path / "s.json").write_text(json.dumps(rows))
    assert joined["groups"] == fit_json(tmp_path / "s.json")["groups"]
    bad("fit", tmp_path / "wandb.csv", "--sweep", tmp_path / "sweep.json", "--loss-column", "eval/loss", piece="'id'")


def test_fit_refusal_is_one_line_exit_2_and_saves_nothing(sweep_runs, tmp_path):
    _, rows = sweep_runs
    two = [r for r in rows if r["budget"] != 10**10]
    (tmp_path / "two.json").write_text(json.dumps(two))
    bad("fit", tmp_path / "two.json", "--save", tmp_path / "rule.json", piece="at least 3")
    assert not (tmp_path / "rule.json").exists()
    flat = [{**r, "loss": 2.0 + 0.05 * math.log(r["depth"] / 8) ** 2} for r in rows]  # one optimum for every size
    (tmp_path / "flat.json").write_text(json.dumps(flat))
    bad("fit", tmp_path / "flat.json", "--save", tmp_path / "rule.json", piece="do not move with size")
    assert not (tmp_path / "rule.json").exists()


def test_fit_options_are_checked(tmp_path):
    bad("fit", piece="--runs DIR")
    bad("fit", "x.csv", "--runs", tmp_path, piece="not both")
    bad("fit", "--runs", tmp_path, "--metric", "worst", piece="worst")
