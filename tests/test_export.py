"""export: config files people train with, checked without importing transformers (developers'
guide: the default run never does). Hugging Face counts come from golden data transformers
measured (tests/golden/make_export_counts.py -> export_counts.json); nanoGPT, LitGPT and
Megatron-LM files are read by faithful re-implementations of each project's own parser, with the
key names copied from the version checked (cited at each list). The transformers round trip lives
in test_export_transformers.py (DEPTHWIDTH_TRANSFORMERS=1).
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import shlex
import subprocess
import sys

import pytest

from depthwidth.arch import blocks

from depthwidth.loop import export, export_blocks

from depthwidth.core import staging
from depthwidth.core.errors import EnvironmentFailure, InputError
from depthwidth.arch.hardware import Constraints
from depthwidth.advice.planner import PlanOptions, plan
from depthwidth.arch.spending import Spending
from conftest import run

GOLDEN = json.loads((pathlib.Path(__file__).parent / "golden" / "export_counts.json").read_text())

# karpathy/nanoGPT train.py (commit e2221318e607eb5ee0669d6b7641af25a2111545): its config globals,
# `config_keys = [k for k,v in globals().items() if not k.startswith('_') and isinstance(v, (int, float, bool, str))]`
# taken right before `exec(open('configurator.py').read())`. There is no vocab_size among them.
NANOGPT_GLOBALS = {
    "out_dir", "eval_interval", "log_interval", "eval_iters", "eval_only", "always_save_checkpoint", "init_from",
    "wandb_log", "wandb_project", "wandb_run_name", "dataset", "gradient_accumulation_steps", "batch_size",
    "block_size", "n_layer", "n_head", "n_embd", "dropout", "bias", "learning_rate", "max_iters", "weight_decay",
    "beta1", "beta2", "grad_clip", "decay_lr", "warmup_iters", "lr_decay_iters", "min_lr", "backend", "device",
    "dtype", "compile"}
# Lightning-AI/litgpt litgpt/config.py (commit 293089e26877cfe9f49bc0d7d79b71d35f67fa65): the fields of
# `class Config`; Config.from_file is Config(**yaml.safe_load(file)), so a key outside them is a TypeError.
LITGPT_FIELDS = {
    "name", "hf_config", "scale_embeddings", "attention_scores_scalar", "block_size", "sliding_window_size",
    "sliding_window_layer_placing", "vocab_size", "padding_multiple", "padded_vocab_size", "n_layer", "n_head",
    "head_size", "n_embd", "rotary_percentage", "parallel_residual", "bias", "lm_head_bias", "n_query_groups",
    "shared_attention_norm", "norm_class_name", "post_attention_norm", "post_mlp_norm", "norm_eps", "mlp_class_name",
    "gelu_approximate", "intermediate_size", "rope_condense_ratio", "rope_base", "rope_adjustments", "n_expert",
    "n_expert_per_token", "attention_logit_softcapping", "final_logit_softcapping"}
LITGPT_MLPS = {"GptNeoxMLP", "LLaMAMLP", "GemmaMLP", "LLaMAMoE"}
LITGPT_NORMS = {"LayerNorm", "RMSNorm"}


def megatron_parser() -> argparse.ArgumentParser:
    """The model options of NVIDIA/Megatron-LM megatron/training/arguments.py (commit
    307dcf37f03d44da131ba21999278abe4112d2ad), names, types and choices as declared there
    (_add_network_size_args, _add_data_args, _add_moe_args, _add_distributed_args, _add_training_args)."""
    parser = argparse.ArgumentParser(allow_abbrev=False)
    for name in ("--num-layers", "--hidden-size", "--ffn-hidden-size", "--num-attention-heads", "--kv-channels",
                 "--max-position-embeddings", "--seq-length", "--vocab-size", "--num-experts"):
        parser.add_argument(name, type=int, default=None)
    parser.add_argument("--num-query-groups", type=int, default=1)
    parser.add_argument("--moe-router-topk", type=int, default=2)
    parser.add_argument("--tensor-model-parallel-size", type=int, default=1)
    for flag in ("--group-query-attention", "--swiglu", "--untie-embeddings-and-output-weights", "--disable-bias-linear"):
        parser.add_argument(flag, action="store_true")
    parser.add_argument("--position-embedding-type", type=str, default="learned_absolute", choices=["learned_absolute", "rope"])
    parser.add_argument("--normalization", default="LayerNorm", choices=["LayerNorm", "RMSNorm"])
    return parser


def megatron_tokens(text: str) -> list[str]:
    """The words of the MODEL_ARGS=( ... ) bash array, as bash would split them."""
    body = text.split("MODEL_ARGS=(", 1)[1].rsplit(")", 1)[0]
    return shlex.split(body, comments=True)


def options_for(fmt: str, options: dict) -> PlanOptions:
    name = export.TARGETS[fmt].preset
    # cli.plan_options: the user's head size only; the golden configs were made before shapes of 1B+ had to split
    # 8 ways (issue 42: shard_from), so the rule is off here to rebuild the shapes transformers counted
    constraints = Constraints(head_dim=options.get("head_dim"), shard_from=None)
    # the golden configs were made from levine-fit plans (the default until 0.2); the consensus is checked in test_wire
    return PlanOptions(spending=Spending(name, tuple(sorted(options.items()))), constraints=constraints, rule="levine-fit")


# ---- Hugging Face: golden counts from transformers ----------------------------------------------

@pytest.mark.parametrize("entry", GOLDEN["entries"], ids=lambda e: f"{e['kind']}-{e['format']}-"
                         f"{e.get('budget') or e.get('shape') or e.get('model')}-{'-'.join(map(str, e.get('options', {}).values()))}")
def test_hf_exports_count_what_transformers_builds(entry):
    """The config depthwidth writes today is the golden one, and blocks.py's counts equal the counts
    transformers measured on the model it built from it (meta device, transformers version in the file)."""
    fmt = entry["format"]
    if entry["kind"] == "plan":
        options = options_for(fmt, entry["options"])
        block = export_blocks.plan_architecture(entry["budget"], fmt, options)
        planned = plan(entry["budget"], options)
        assert (block.depth, block.width) == (planned.recommended.depth, planned.recommended.width)
        assert options.spending.params(block) == entry["counts"]["nonembedding"]  # the plan's own count
        for key, value in entry["options"].items():  # every option reached the block
            if key in ("kv_heads", "head_dim", "experts", "top_k"):
                assert getattr(block, key) == value
    elif entry["kind"] == "shape":
        depth, width, heads = map(int, entry["shape"].split("x"))
        block = export_blocks.export_architecture(fmt, depth, width, heads, **entry.get("options", {}))
    else:
        block = export_blocks.model_architecture(entry["model"], fmt)
    assert export.config_for(block, fmt) == entry["config"]
    counts = entry["counts"]
    assert blocks.params_nonembedding(block) == counts["nonembedding"]
    assert blocks.params_active(block) == counts["active"]
    assert blocks.params_embedding(block) == counts["embedding"]


def test_catalogue_names_export_the_model_not_the_preset():
    """Issue 22: `export llama3-8b` gave ffn 11008, `export llama2-7b` 8 KV heads and a 128k vocab.
    Llama 3 8B: 8 KV heads, ffn 14336, vocab 128256, untied, rope_theta 500000 (meta-llama/llama3
    llama/model.py ModelArgs); Llama 2 7B: multi-head (32 KV heads), ffn 11008, vocab 32000."""
    llama3 = export.config_for(export_blocks.model_architecture("llama3-8b", "hf-llama"), "hf-llama")
    assert (llama3["num_key_value_heads"], llama3["intermediate_size"], llama3["vocab_size"]) == (8, 14336, 128256)
    assert llama3["tie_word_embeddings"] is False and llama3["rope_theta"] == 500000.0 and llama3["rms_norm_eps"] == 1e-5
    llama2 = export.config_for(export_blocks.model_architecture("llama2-7b", "hf-llama"), "hf-llama")
    assert (llama2["num_attention_heads"], llama2["num_key_value_heads"], llama2["intermediate_size"],
            llama2["vocab_size"]) == (32, 32, 11008, 32000)
    with pytest.raises(InputError, match="not in the catalogue"):
        export_blocks.model_architecture("llama9-1t", "hf-llama")
    with pytest.raises(InputError, match="only --vocab and --tied"):
        export_blocks.model_architecture("llama3-8b", "hf-llama", kv_heads=4)


def test_every_block_option_reaches_the_export():
    block = export_blocks.export_architecture("hf-mixtral", 16, 2048, None, kv_heads=4, head_dim=64, ffn_mult=2.0, experts=4,
                                       top_k=1, vocab=50000, tied=True)
    assert (block.heads, block.kv_heads, block.head_dim, block.experts, block.top_k, block.vocab, block.tied) == \
        (32, 4, 64, 4, 1, 50000, True)
    assert block.ffn == -(-int(2.0 * (2 * 4 * 2048 // 3)) // 256) * 256  # LLaMA's rule with ffn_dim_multiplier 2
    with pytest.raises(InputError, match="--tp"):
        export_blocks.export_architecture("hf-llama", 24, 2048, 16, kv_heads=4, tp=3)
    with pytest.raises(InputError, match="option"):
        export_blocks.export_architecture("hf-llama", 24, 2048, 16, n_layer=3)


# ---- nanoGPT, LitGPT, Megatron-LM: each project's own parser -------------------------------------

def test_nanogpt_file_is_python_train_py_execs(tmp_path):
    block = export_blocks.export_architecture("nanogpt", 12, 768, 12)
    path = export.write_config(export.config_for(block, "nanogpt", 1024), str(tmp_path), fmt="nanogpt", block=block)
    assert path == str(tmp_path / "train_config.py")
    scope: dict = {}
    exec(pathlib.Path(path).read_text(), scope)  # what configurator.py does with a config file argument
    written = {k: v for k, v in scope.items() if not k.startswith("__")}
    assert set(written) <= NANOGPT_GLOBALS  # every assignment overrides a train.py setting
    assert written == {"n_layer": 12, "n_head": 12, "n_embd": 768, "block_size": 1024, "bias": False, "dropout": 0.0}
    assert all(isinstance(v, (int, float, bool, str)) for v in written.values())
    record = export.export_record(block, "nanogpt", path, 1024)
    assert record.params_nonembedding == 12 * (4 * 768 * 768 + 2 * 768 * 4 * 768)  # MHA + 4d MLP (nanoGPT model.py)


@pytest.mark.parametrize("arch, kw", [("llama", {"kv_heads": 4}), ("gpt2", {}), ("mixtral", {"experts": 4, "top_k": 2})])
def test_litgpt_yaml_is_a_litgpt_config(arch, kw, tmp_path):
    yaml = pytest.importorskip("yaml")
    block = export_blocks.export_architecture("litgpt", 24, 2048, 16, arch=arch, **kw)
    path = export.write_config(export.config_for(block, "litgpt", 4096), str(tmp_path), fmt="litgpt", block=block)
    assert path.endswith("model_config.yaml")
    config = yaml.safe_load(pathlib.Path(path).read_text())  # Config.from_file
    assert set(config) <= LITGPT_FIELDS
    assert config["mlp_class_name"] in LITGPT_MLPS and config["norm_class_name"] in LITGPT_NORMS
    assert config["n_head"] % config["n_query_groups"] == 0  # Config.__post_init__'s assertion
    # LitGPT's model.py: qkv (n_head + 2·n_query_groups)·head_size x n_embd, proj n_head·head_size x n_embd;
    # GptNeoxMLP 2 matrices, LLaMAMLP 3, LLaMAMoE n_expert LLaMAMLPs + an n_embd x n_expert gate.
    d, h, f = config["n_embd"], config["head_size"], config["intermediate_size"]
    attention = (config["n_head"] + 2 * config["n_query_groups"]) * h * d + config["n_head"] * h * d
    mlp = {"GptNeoxMLP": 2 * d * f, "LLaMAMLP": 3 * d * f}.get(config["mlp_class_name"])
    if config["mlp_class_name"] == "LLaMAMoE":
        mlp = config["n_expert"] * 3 * d * f + d * config["n_expert"]
    record = export.export_record(block, "litgpt", path, 4096)
    assert record.params_nonembedding == config["n_layer"] * (attention + mlp)
    assert (config["block_size"], config["padded_vocab_size"]) == (4096, block.vocab)
    # litgpt/model.py GPT: wte and lm_head are separate padded_vocab_size x n_embd matrices
    assert record.params_embedding == 2 * config["padded_vocab_size"] * config["n_embd"] and not record.tied


@pytest.mark.parametrize("arch, kw, tp", [("llama", {"kv_heads": 4}, 2), ("gpt2", {}, 1), ("mixtral", {"experts": 8}, 1)])
def test_megatron_args_parse_with_megatrons_option_names(arch, kw, tp, tmp_path):
    block = export_blocks.export_architecture("megatron", 24, 2048, 16, arch=arch, **kw)
    path = export.write_config(export.config_for(block, "megatron", 4096, tp=tp), str(tmp_path), fmt="megatron", block=block)
    text = pathlib.Path(path).read_text()
    args = megatron_parser().parse_args(megatron_tokens(text))  # an unknown option would exit here
    assert (args.num_layers, args.hidden_size, args.num_attention_heads, args.kv_channels) == (24, 2048, 16, 128)
    assert args.swiglu == block.gated and args.untie_embeddings_and_output_weights == (not block.tied)
    groups = args.num_query_groups if args.group_query_attention else args.num_attention_heads
    assert groups == block.kv_heads and args.seq_length == args.max_position_embeddings == 4096
    assert args.tensor_model_parallel_size == tp
    # Megatron's layers: qkv hidden x (heads + 2·groups)·kv_channels, proj; MLP 2 or 3 matrices of ffn-hidden-size
    # (--swiglu fuses two); MoE: num-experts such MLPs + a hidden x num-experts router.
    h, c, f = args.hidden_size, args.kv_channels, args.ffn_hidden_size
    attention = h * (args.num_attention_heads + 2 * groups) * c + args.num_attention_heads * c * h
    mlp = (3 if args.swiglu else 2) * h * f
    if args.num_experts:
        mlp = args.num_experts * mlp + h * args.num_experts
    assert export.export_record(block, "megatron", path).params_nonembedding == args.num_layers * (attention + mlp)


def test_formats_refuse_what_they_cannot_express():
    with pytest.raises(InputError, match="plain experts"):
        export.config_for(blocks.Architecture(4, 256, 4, 4, 64, 1024, False, experts=4, top_k=1, expert_ffn=1024), "litgpt")
    with pytest.raises(InputError, match="untied"):
        export.config_for(export_blocks.export_architecture("hf-llama", 4, 512, 4, tied=False), "nanogpt")  # 0.4.0: small llamas tie


# ---- writing: names, unwritable places, signals ------------------------------------------------

@pytest.mark.parametrize("length", [241, 250, 255])
def test_long_file_names_are_written(length, tmp_path):
    """Issue 25: a 241-255 byte name failed because the staging name added 14 bytes past 255."""
    config = export.config_for(export_blocks.export_architecture("hf-llama", 4, 512, 4), "hf-llama")
    name = "m" * (length - 5) + ".json"
    path = export.write_config(config, str(tmp_path / name))
    assert os.path.basename(path) == name and len(name.encode()) == length
    assert json.loads(pathlib.Path(path).read_text())["num_hidden_layers"] == 4
    folder = "d" * length
    export.write_config(config, str(tmp_path / folder))
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([name, folder])
    assert len(os.path.basename(staging.staging_name(str(tmp_path / folder), ".tmp")).encode()) <= 255


def test_unwritable_place_is_one_line_exit_1(tmp_path):
    """Issue 25: `--out /proc/x.json` was an internal error."""
    config = export.config_for(export_blocks.export_architecture("hf-llama", 4, 512, 4), "hf-llama")
    with pytest.raises(EnvironmentFailure, match="cannot write '/proc/x.json'"):
        export.write_config(config, "/proc/x.json")
    result = run(["export", "24x2048x16", "--to", "hf-llama", "--out", "/proc/x.json"])
    assert result.code == 1 and result.stdout == "" and "cannot write '/proc/x.json'" in result.stderr
    assert len(result.error_lines) == 1 and "internal error" not in result.stderr


KILL_SCRIPT = """
import os, signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)  # a background job inherits SIGINT ignored (bash: `&`)
from depthwidth.loop import export, export_blocks
from depthwidth.core import staging
count, fill = [], staging._fill
def counting_fill(root, files):  # staging._fill one file at a time, sending the signal after the N-th file
    for relative, data in files.items():
        fill(root, {relative: data})
        count.append(1)
        if len(count) == int(sys.argv[3]):
            os.kill(os.getpid(), getattr(signal, sys.argv[2]))
staging._fill = counting_fill
rows = [(f"{i:03d}", export_blocks.export_architecture("hf-gpt2", 2, 128)) for i in range(50)]
export.write_configs(rows, "hf-gpt2", sys.argv[1], False, [])
"""


@pytest.mark.parametrize("sig, code", [("SIGTERM", 143), ("SIGINT", None)])
@pytest.mark.parametrize("after", [1, 20])
def test_a_signal_during_a_directory_export_leaves_nothing(sig, code, after, tmp_path):
    """Issue 25: SIGTERM during `sweep --export` left hidden .DIR.*.tmp folders (one with 325 of 1000 rows)."""
    out = tmp_path / "sweep"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(pathlib.Path(export.__file__).parents[2]),
                                                         os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", KILL_SCRIPT, str(out), sig, str(after)], capture_output=True,
                          text=True, env=env, timeout=120)
    assert proc.returncode != 0
    if code is not None:
        assert proc.returncode == code and proc.stderr == ""
    else:
        assert "KeyboardInterrupt" in proc.stderr
    assert list(tmp_path.iterdir()) == []  # no staging folder, no half export


# ---- writing: never overwrite, never half-write (no transformers needed) -------------------------

def _fail_on(monkeypatch, name: str, calls: int = 1, error=OSError):
    """Make staging's os.<name> raise on its ``calls``-th call (a disk failure mid-write)."""
    real, seen = getattr(os, name), []

    def failing(*args, **kwargs):
        seen.append(args)
        if len(seen) == calls:
            raise error(28, "No space left on device")
        return real(*args, **kwargs)

    monkeypatch.setattr(staging.os, name, failing)


def _llama_config():
    return export.config_for(export_blocks.export_architecture("hf-llama", 24, 2048, 16), "hf-llama")


def test_existing_file_is_left_byte_identical_without_force(tmp_path):
    target = tmp_path / "m.json"
    original = b'{"keep": "me"}\r\n\x00'
    target.write_bytes(original)
    with pytest.raises(InputError, match="--force"):
        export.write_config(_llama_config(), str(target))
    assert target.read_bytes() == original
    export.write_config(_llama_config(), str(target), force=True)
    assert json.loads(target.read_text())["num_hidden_layers"] == 24 and [p.name for p in tmp_path.iterdir()] == ["m.json"]


def test_out_parent_must_exist(tmp_path):
    with pytest.raises(InputError, match="does not exist"):
        export.write_config(_llama_config(), str(tmp_path / "no" / "such"))
    (tmp_path / "plain").write_text("x")
    with pytest.raises(InputError, match="not a directory"):
        export.write_config(_llama_config(), str(tmp_path / "plain"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plain"]


def test_failed_write_of_a_new_directory_leaves_nothing(tmp_path, monkeypatch):
    _fail_on(monkeypatch, "replace")
    with pytest.raises(EnvironmentFailure, match="No space left"):
        export.write_config(_llama_config(), str(tmp_path / "model"))
    assert list(tmp_path.iterdir()) == []


def test_failed_write_over_a_file_keeps_the_old_one(tmp_path, monkeypatch):
    target = tmp_path / "m.json"
    target.write_bytes(b"old")
    _fail_on(monkeypatch, "replace")
    with pytest.raises(EnvironmentFailure, match="No space left"):
        export.write_config(_llama_config(), str(target), force=True)
    assert target.read_bytes() == b"old" and [p.name for p in tmp_path.iterdir()] == ["m.json"]


def test_interrupted_write_leaves_nothing(tmp_path, monkeypatch):
    _fail_on(monkeypatch, "replace", error=lambda *a: KeyboardInterrupt())
    with pytest.raises(KeyboardInterrupt):
        export.write_config(_llama_config(), str(tmp_path / "model"))
    assert list(tmp_path.iterdir()) == []


def _rows(fmt: str = "hf-llama"):
    return [(f"L{L}", export_blocks.export_architecture(fmt, L, d)) for L, d in ((8, 1024), (16, 768), (24, 640 if fmt == "hf-gpt2" else 512))]


def test_write_configs_writes_every_row_and_the_manifest(tmp_path):
    out = tmp_path / "sweep"
    manifest = [{"id": row_id, "depth": block.depth, "loss": None, "ratio": float("nan")} for row_id, block in _rows()]
    paths = export.write_configs(_rows(), "hf-llama", str(out), False, manifest)
    assert paths == [str(out / row_id / "config.json") for row_id, _ in _rows()]
    assert sorted(p.name for p in out.iterdir()) == ["L16", "L24", "L8", "manifest.json"]
    assert json.loads((out / "manifest.json").read_text())[0] == {"id": "L8", "depth": 8, "loss": None, "ratio": None}
    for row_id, block in _rows():
        config = json.loads((out / row_id / "config.json").read_text())
        assert (config["num_hidden_layers"], config["hidden_size"]) == (block.depth, block.width)
    assert [p.name for p in tmp_path.iterdir()] == ["sweep"]  # no staging directory left beside it


def test_write_configs_in_a_training_format(tmp_path):
    rows = [(f"r{i}", export_blocks.export_architecture("megatron", L, 1024)) for i, L in enumerate((4, 8))]
    paths = export.write_configs(rows, "megatron", str(tmp_path / "runs"), False, [], context=1024)
    assert [os.path.basename(p) for p in paths] == ["megatron_args.sh"] * 2
    args = megatron_parser().parse_args(megatron_tokens(pathlib.Path(paths[1]).read_text()))
    assert args.num_layers == 8 and args.seq_length == 1024


def test_write_configs_refuses_a_non_empty_directory_without_force(tmp_path):
    out = tmp_path / "sweep"
    export.write_configs(_rows(), "hf-llama", str(out), False, [])
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    with pytest.raises(InputError, match="--force"):
        export.write_configs(_rows("hf-mistral"), "hf-mistral", str(out), False, [])
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    export.write_configs(_rows("hf-mistral")[:1], "hf-mistral", str(out), True, {"rows": 1})
    assert sorted(p.name for p in out.iterdir()) == ["L8", "manifest.json"]
    assert json.loads((out / "L8" / "config.json").read_text())["model_type"] == "mistral"
    assert [p.name for p in tmp_path.iterdir()] == ["sweep"]


def test_write_configs_force_never_replaces_a_directory_of_other_files(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(InputError, match="not an earlier export"):
        export.write_configs(_rows(), "hf-llama", str(tmp_path), True, [])
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]


def test_write_configs_checks_everything_before_writing(tmp_path):
    rows = _rows() + [("plain", export_blocks.export_architecture("hf-gpt2", 12, 768))]
    with pytest.raises(InputError, match="plain feed-forward"):
        export.write_configs(rows, "hf-llama", str(tmp_path / "sweep"), False, [])
    for bad in ("", "..", "a/b", "manifest.json", "x" * 256):
        with pytest.raises(InputError, match="id"):
            export.write_configs([(bad, rows[0][1])], "hf-llama", str(tmp_path / "sweep"), False, [])
    with pytest.raises(InputError, match="different id"):
        export.write_configs([("a", rows[0][1]), ("a", rows[1][1])], "hf-llama", str(tmp_path / "sweep"), False, [])
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("calls", [2, 4])  # a second config, the manifest
def test_write_configs_failing_midway_leaves_nothing(tmp_path, monkeypatch, calls):
    real, seen = open, []

    def failing_open(*args, **kwargs):
        seen.append(args)
        if len(seen) == calls:
            raise OSError(28, "No space left on device")
        return real(*args, **kwargs)

    monkeypatch.setattr(staging, "open", failing_open, raising=False)
    with pytest.raises(EnvironmentFailure, match="No space left"):
        export.write_configs(_rows(), "hf-llama", str(tmp_path / "sweep"), False, [])
    assert list(tmp_path.iterdir()) == []


def test_write_configs_failed_swap_keeps_the_earlier_export(tmp_path, monkeypatch):
    out = tmp_path / "sweep"
    export.write_configs(_rows(), "hf-llama", str(out), False, ["first"])
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    _fail_on(monkeypatch, "rename", calls=2)  # moving the old export aside works, moving the new one in fails
    with pytest.raises(EnvironmentFailure, match="No space left"):
        export.write_configs(_rows("hf-mistral"), "hf-mistral", str(out), True, ["second"])
    assert {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert [p.name for p in tmp_path.iterdir()] == ["sweep"]


@pytest.mark.parametrize("args, conflict", [
    (["24x2048x16", "--to", "hf-gpt2", "--arch", "llama"], "gated feed-forward"),
    (["24x2048x16", "--to", "hf-llama", "--arch", "gpt2"], "plain feed-forward"),
    (["24x2048x16", "--to", "hf-mistral", "--arch", "mixtral"], "routed experts"),
    (["24x2048x16", "--to", "hf-mixtral", "--arch", "mistral"], "dense feed-forward"),
    (["24x7168x128", "--to", "hf-mixtral", "--arch", "deepseek"], "latent attention"),
    (["24x2048x15", "--to", "hf-llama"], "do not divide the width"),
    (["24x2000", "--to", "hf-llama"], "give the heads"),
    (["24x2048x16", "--to", "hf-bert"], "expected one of hf-llama"),
])
def test_refusals_are_one_line_and_write_nothing(args, conflict, tmp_path):
    out = tmp_path / "m"
    result = run(["export", *args, "--out", str(out)])
    assert result.code == 2 and result.stdout == ""
    assert len(result.error_lines) == 1 and conflict in result.stderr, result.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("fmt", ["hf-gpt2", "nanogpt"])
def test_a_learned_position_table_counts_in_the_embeddings(tmp_path, fmt):
    """GPT-2 and nanoGPT learn a position table (wpe) of block_size x d: it is part of params_embedding
    (issue 21: Kaplan et al. 2020 leave it out of the non-embedding count, the total includes it)."""
    out = tmp_path / ("m.py" if fmt == "nanogpt" else "m")
    result = run(["export", "12x768", "--to", fmt, "--out", str(out), "--context", "1024", "--format", "json"])
    assert result.code == 0, result.stderr
    [record] = json.loads(result.stdout)
    vocab, width = record["vocab"], 768
    assert record["params_embedding"] == vocab * width + 1024 * width  # tied head: one V x d table, plus wpe
    assert record["params_with_embeddings"] == record["params_nonembedding"] + record["params_embedding"]
