"""The Pydantic models of Hugging Face files (depthwidth/hffiles.py, issue 20): ``ConfigFile`` for
config.json (``inspect``), ``TrainerState`` for trainer_state.json (``fit --runs``).

Real files pass (tests/configs, every config of the golden corpus inspect reads, the fixture Trainer
runs); crafted bad ones are one exact line through the CLI. Expectations come from outside the
models: JSON Schema (the ``jsonschema`` package, a second implementation) on the models' own
schemas, and the json module reading the real trainer states.
"""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from conftest import assert_bad_input
from pydantic import ValidationError

from depthwidth.hf.files import ConfigFile, TrainerState
from depthwidth.loop.results import load_runs

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ROOT / "tests" / "configs"
GOLDEN = ROOT / "tests" / "golden" / "hf_counts.json"
RUNS = ROOT / "tests" / "fixtures" / "trainer_runs"
EXPECTED = "; expected a Hugging Face config.json"
STATE_EXPECTED = "; expected a Hugging Face Trainer's trainer_state.json"

# The golden configs whose role keys are not whole numbers: per-stage lists of hierarchical vision
# models, Gemma 3n's per-layer feed-forward sizes, LXMERT's three stacks, GLM-5-next's head_dim 0.
# inspect refused each of these before the model existed too (by "missing keys" or by the same key).
REFUSED_GOLDEN = {"clap_audio_model", "cvt", "dinat", "donut-swin", "florence_vision", "gemma3n", "gemma3n_text", "glm5_next",
                  "glm5_next_text", "glpn", "hiera", "levit", "lxmert", "maskformer-swin", "pvt", "pvt_v2", "segformer", "swin",
                  "swin2sr", "swinv2"}


def accepts(model, value) -> bool:
    try:
        model.model_validate(value)
        return True
    except ValidationError:
        return False


# ---- config.json ------------------------------------------------------------------------------------

@pytest.mark.parametrize("path", sorted(CONFIGS.glob("*.json")), ids=lambda p: p.name)
def test_every_test_config_is_accepted(path):
    assert accepts(ConfigFile, json.loads(path.read_text()))


def test_the_golden_corpus_is_accepted_but_for_the_configs_with_no_whole_role_numbers():
    schema = jsonschema.Draft202012Validator(ConfigFile.model_json_schema())
    rows = [r for r in json.loads(GOLDEN.read_text())["rows"] if "config" in r]
    assert len(rows) > 800
    refused = {r["model_type"] for r in rows if not accepts(ConfigFile, r["config"])}
    assert refused == REFUSED_GOLDEN
    assert [r["model_type"] for r in rows if schema.is_valid(r["config"]) != accepts(ConfigFile, r["config"])] == []


def test_pydantic_is_what_validates_a_config():
    """The model itself, and its JSON Schema read by jsonschema, refuse a float depth, a bool, a
    string; the CLI's line names a key path only the model knows (text_config.num_hidden_layers)."""
    schema = jsonschema.Draft202012Validator(ConfigFile.model_json_schema())
    for bad in (12.5, True, "12", 0, 10**16, [12]):
        assert not accepts(ConfigFile, {"num_hidden_layers": bad}), bad
        assert not accepts(ConfigFile, {"text_config": {"num_hidden_layers": bad}}), bad
        assert not schema.is_valid({"num_hidden_layers": bad}), bad
    assert not accepts(ConfigFile, {"num_hidden_layers": 12.0})  # strict, as the hand check was (JSON Schema allows 12.0)
    assert accepts(ConfigFile, {"num_local_experts": 0}) and not accepts(ConfigFile, {"num_local_experts": -1})
    assert accepts(ConfigFile, {"num_hidden_layers": None, "vocab_size": 10**15, "unread_key": [1.5, "x"]})
    with pytest.raises(ValidationError) as caught:
        ConfigFile.model_validate({"llm_config": {"text_config": {"hidden_size": 1.5}}})
    assert caught.value.errors()[0]["loc"] == ("llm_config", "text_config", "hidden_size")


LLAMA = json.loads((CONFIGS / "llama-7b.json").read_text())

BAD_CONFIGS = {
    "float depth": ({**LLAMA, "num_hidden_layers": 32.0}, "num_hidden_layers = 32.0 is not a whole number from 1 to 10^15"),
    "a second depth key": ({**LLAMA, "n_layer": "32"}, "n_layer = '32' is not a whole number from 1 to 10^15"),
    "nested key": ({"model_type": "llava", "text_config": {**LLAMA, "num_hidden_layers": 1.5}},
                   "text_config.num_hidden_layers = 1.5 is not a whole number from 1 to 10^15"),
    "nested not an object": ({"model_type": "llava", "text_config": "llama"}, "text_config = 'llama' is not a JSON object"),
    "experts": ({**LLAMA, "num_local_experts": -8}, "num_local_experts = -8 is not a whole number from 0 to 10^15"),
    "architectures": ({**LLAMA, "architectures": "LlamaForCausalLM"},
                      "architectures = 'LlamaForCausalLM' is not a list of strings"),
    "model_type": ({**LLAMA, "model_type": 7}, "model_type = 7 is not a string"),
    "long value": ({**LLAMA, "num_attention_heads": [32] * 20},
                   "num_attention_heads = [32, 32, 32, 32, 32, 32, 32, 32, 32,... is not a whole number from 1 to 10^15"),
    "yes/no as text": ({**LLAMA, "tie_word_embeddings": "false"}, "tie_word_embeddings = 'false' is not true or false"),
    "two problems": ({**LLAMA, "hidden_size": 4096.5, "vocab_size": "32000"},
                     "hidden_size = 4096.5 is not a whole number from 1 to 10^15 (and 1 more problem)"),
}


@pytest.mark.parametrize("cfg, said", BAD_CONFIGS.values(), ids=BAD_CONFIGS.keys())
def test_bad_configs_are_one_exact_line(run, tmp_path, monkeypatch, cfg, said):
    monkeypatch.chdir(tmp_path)  # a short path: a long one is shortened in the line
    Path("bad.json").write_text(json.dumps(cfg))
    line = assert_bad_input(run(["inspect", "bad.json"]), None)
    assert line == f"depthwidth: error: bad config 'bad.json': {said}{EXPECTED}"


def test_not_an_object_keeps_its_message(run, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("list.json").write_text("[1, 2]")
    line = assert_bad_input(run(["inspect", "list.json"]), None)
    assert line == f"depthwidth: error: bad config 'list.json': a JSON list, not an object{EXPECTED}"


def _inspect_imports(config: Path) -> list[str]:
    code = ("import contextlib, io, sys; from depthwidth.cli import app\n"
            "with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):\n"
            "    try:\n"
            f"        app(['inspect', {str(config)!r}, '--format', 'json'], standalone_mode=False)\n"
            "    except Exception:\n"
            "        pass\n"
            "print('pydantic' in sys.modules, 'depthwidth.hf.files' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    return done.stdout.split()


def test_inspect_loads_pydantic_only_for_a_config_it_must_judge(tmp_path):
    """A plainly valid config (read.plainly_valid) skips Pydantic (~0.2 s of inspect's start); a bad
    one is judged, and worded, by ConfigFile (the startup tests check plan and bounds never load it)."""
    assert _inspect_imports(CONFIGS / "gpt2.json") == ["False", "False"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"num_hidden_layers": 12.5, "hidden_size": 768}))
    assert _inspect_imports(bad) == ["True", "True"]


def _crafted(rng, depth=0):
    """A config of role, yes/no, nested and other keys with values of every kind, valid or not."""
    from depthwidth.hf.read import FLAG_KEYS, NESTED_KEYS, ROLES

    keys = [k for keys in ROLES for k in keys] + list(FLAG_KEYS) + ["architectures", "model_type", "other", "model_config"]
    values = [None, 0, 1, 2, -1, 10**15, 10**15 + 1, True, False, 1.0, 12.5, "7", [], {}, [1], ["a"], ["a", 1], "x"]
    cfg = {}
    for _ in range(rng.randint(0, 6)):
        key = rng.choice(keys + (list(NESTED_KEYS) if depth < 2 else []))
        nested = key in NESTED_KEYS and rng.random() < 0.6
        cfg[key] = _crafted(rng, depth + 1) if nested else rng.choice(values)
    return cfg


def test_plainly_valid_vouches_only_for_what_the_model_accepts():
    """plainly_valid (no Pydantic) is never True for a config ConfigFile refuses, so skipping the
    model changes no verdict and no message; on real configs and most crafted ones both agree."""
    import random

    from depthwidth.hf.read import plainly_valid

    def accepted(cfg):
        try:
            ConfigFile.model_validate(cfg)
            return True
        except ValidationError:
            return False

    rng = random.Random(43)
    crafted = [_crafted(rng) for _ in range(3000)]
    real = [json.loads(path.read_text()) for path in sorted(CONFIGS.glob("*.json"))]
    for cfg in crafted + real:
        if plainly_valid(cfg):
            assert accepted(cfg), cfg
    assert sum(map(plainly_valid, crafted)) > 300 and all(plainly_valid(cfg) for cfg in real if accepted(cfg))
    assert not plainly_valid([1, 2]) and not plainly_valid({1: 2}) and not plainly_valid({"text_config": {"n_layer": True}})


# ---- trainer_state.json -----------------------------------------------------------------------------

STATES = sorted(RUNS.glob("*/trainer_state.json"))


def test_every_fixture_trainer_state_is_accepted():
    assert len(STATES) == 15
    for path in STATES:
        state = TrainerState.model_validate(json.loads(path.read_text()))
        evals = [e["eval_loss"] for e in json.loads(path.read_text())["log_history"] if "eval_loss" in e]
        assert [e.eval_loss for e in state.log_history if e.eval_loss is not None] == evals


def test_pydantic_is_what_validates_a_trainer_state():
    schema = jsonschema.Draft202012Validator(TrainerState.model_json_schema())
    for bad in ("3.1", True, [3.1], {"v": 3.1}):
        state = {"log_history": [{"eval_loss": bad, "step": 10}]}
        assert not accepts(TrainerState, state) and not schema.is_valid(state), bad
    for bad in (float("nan"), float("inf")):  # JSON has no NaN, so only the model can say this
        assert not accepts(TrainerState, {"log_history": [{"eval_loss": bad}]})
    assert accepts(TrainerState, {"log_history": [{"eval_loss": 3, "grad_norm": float("nan")}], "best_metric": None})
    assert not accepts(TrainerState, {"log_history": ["x"]}) and not accepts(TrainerState, {"log_history": {}})


def runs_with(tmp_path, change) -> tuple[Path, str, Path, object]:
    """A copy of the fixture runs with the first run's trainer_state.json changed by ``change``
    (which returns the index of the entry it changed)."""
    root = tmp_path / "runs"
    shutil.copytree(RUNS, root)
    victim = json.loads((RUNS / "manifest.json").read_text())["runs"][0]["id"]
    path = root / victim / "trainer_state.json"
    state = json.loads(path.read_text())
    index = change(state)
    path.write_text(json.dumps(state, indent=2))  # json writes NaN as the Trainer does
    return root, victim, path, index


def set_entry(which: int, **values):
    """A change: the ``which``-th evaluation entry gets ``values``; returns its log_history index."""
    def change(state):
        index = [i for i, entry in enumerate(state["log_history"]) if "eval_loss" in entry][which]
        state["log_history"][index].update(values)
        return index
    return change


BAD_STATES = {
    "string loss": (set_entry(0, eval_loss="3.1"), "log_history.{i}.eval_loss = '3.1' is not a finite number"),
    "NaN loss": (set_entry(-1, eval_loss=float("nan")), "log_history.{i}.eval_loss = nan is not a finite number"),
    "huge loss": (set_entry(-1, eval_loss=1e308 * 10), "log_history.{i}.eval_loss = inf is not a finite number"),
    "bool step": (set_entry(0, step=True), "log_history.{i}.step = True is not a finite number"),
    "not an object": (lambda s: s["log_history"].insert(0, "oops") or 0, "log_history.{i} = 'oops' is not a JSON object"),
}


@pytest.mark.parametrize("change, said", BAD_STATES.values(), ids=BAD_STATES.keys())
def test_bad_trainer_states_are_one_exact_line(run, tmp_path, change, said):
    root, victim, path, index = runs_with(tmp_path, change)
    line = assert_bad_input(run(["fit", "--runs", str(root)]), None)
    assert line == f"depthwidth: error: bad run {victim!r}: {path}: {said.format(i=index)}{STATE_EXPECTED}"


def test_a_nan_where_fit_reads_nothing_is_kept(tmp_path):
    """An fp16 run logs a NaN grad_norm on an overflowing step; the run's eval_loss is still read."""
    root, victim, path, _ = runs_with(tmp_path, lambda s: s["log_history"][0].update(grad_norm=float("nan")))
    assert "NaN" in path.read_text()
    runs, _, _ = load_runs(runs_dir=str(root))
    last = [entry["eval_loss"] for entry in json.loads(path.read_text())["log_history"] if "eval_loss" in entry][-1]
    assert next(r.loss for r in runs if r.id == victim) == last


def test_a_missing_log_history_keeps_its_message(tmp_path, run):
    root, victim, path, _ = runs_with(tmp_path, lambda s: s.pop("log_history"))
    line = assert_bad_input(run(["fit", "--runs", str(root)]), None)
    assert line == f"depthwidth: error: bad run {victim!r}: {path} has no log_history list (not a Trainer state?)"


def test_a_yes_no_key_reads_true_false_0_and_1_the_same(run, tmp_path):
    """Untied: the output head adds vocab·width parameters (transformers' lm_head), tied it does not;
    "false" as text was read as tied before the model refused it."""
    embedding = LLAMA["vocab_size"] * LLAMA["hidden_size"]
    counts = {}
    for value in (True, False, 1, 0):
        path = tmp_path / f"{value!r}.json"
        path.write_text(json.dumps({**LLAMA, "tie_word_embeddings": value}))
        counts[repr(value)] = json.loads(run(["inspect", str(path), "--format", "json"]).stdout)[0]["params_embedding"]
    assert counts == {"True": embedding, "1": embedding, "False": 2 * embedding, "0": 2 * embedding}


def test_a_results_file_nested_too_deeply_is_bad_input(run, tmp_path, monkeypatch):
    """It was ``internal error: RecursionError`` (exit 1)."""
    monkeypatch.chdir(tmp_path)  # a short path: a long one is shortened in the line
    Path("deep.json").write_text("[" * 100_000)
    line = assert_bad_input(run(["fit", "deep.json"]), None)
    assert line == "depthwidth: error: bad results file 'deep.json': not valid JSON or JSONL (nested too deeply)"
