"""Typed messages: a plan's warnings carry what happened and which shape they concern, and the CLI
selects them by that, not by searching the sentence; the text prints as before."""
from __future__ import annotations

import json
import pickle

import pytest

from conftest import run
from depthwidth.core.messages import KINDS, Message, concerns


def test_a_message_is_its_text_with_a_kind_and_fields():
    message = Message("off-budget", "budget 7e+09: off by 10%", shape="threshold", deviation=0.1)
    assert message == "budget 7e+09: off by 10%" and message.text == "budget 7e+09: off by 10%"
    assert (message.kind, message.fields) == ("off-budget", {"shape": "threshold", "deviation": 0.1})
    assert json.dumps([message]) == '["budget 7e+09: off by 10%"]'  # JSON prints the sentence alone
    copy = pickle.loads(pickle.dumps(message))
    assert (copy, copy.kind, copy.fields) == (message, "off-budget", message.fields)
    assert concerns(message) == "threshold" and concerns("a plain string") is None


def test_an_unknown_kind_is_refused():
    with pytest.raises(ValueError, match="not one of"):
        Message("something-else", "text")
    assert len(set(KINDS)) == len(KINDS)


def test_a_plans_warnings_are_typed_where_they_happen():
    """7e9 llama: the minimal-depth shape 9x8192 is off the budget beyond the ±5% tolerance, a warning
    about the threshold's shape."""
    record = json.loads(run(["plan", "--params", "7e9", "--arch", "llama", "--format", "json"]).stdout)[0]
    assert any("the planned shape 9x8192" in w for w in record["warnings"])
    from depthwidth.advice.planner import PlanOptions, plan
    from depthwidth.arch.spending import Spending

    p = plan(7_000_000_000, PlanOptions(spending=Spending("llama")))
    (planned,) = [w for w in p.warnings if "the planned shape" in w]
    assert (planned.kind, concerns(planned)) == ("off-budget", "threshold")


@pytest.mark.parametrize("field, shown", [("threshold.min_depth", True), ("recommended.depth", False), ("warnings", True)])
def test_field_selects_a_warning_by_the_shape_it_concerns(field, shown):
    out = run(["plan", "--params", "7e9", "--arch", "llama", "--field", field])
    assert out.code == 0
    assert ("the planned shape 9x8192" in out.stderr) is shown


def test_pipeline_warnings_concern_the_recommended_shape():
    """--pp 30 at 2e8: the pick is deepened to 41 layers (not a multiple of 30): both warnings are about
    the recommended shape, so a threshold field hides them and a recommended field shows them."""
    args = ["plan", "--params", "2e8", "--pp", "30", "--gpus", "30", "--field"]
    hidden, shown = run(args + ["threshold.width"]), run(args + ["recommended.depth"])
    assert "--pp 30" not in hidden.stderr
    assert "--pp 30: the recommended shape" in shown.stderr and "--pp 30 does not divide" in shown.stderr


@pytest.mark.parametrize("mode", [[], ["--brief"]])
def test_a_refused_budget_keeps_its_spelling_and_line(mode):
    """The core refuses 1e8 for deepseek by number (``InputError.number``); the CLI names the budget
    as typed and the standard-input line it came from, in the scalar and the --brief (column) paths."""
    out = run(["plan", "--params", "-", "--arch", "deepseek", *mode], input="7e9\n100M\n")
    assert out.code == 2 and out.stdout == ""
    assert out.stderr.startswith("depthwidth: error: bad budget '100M' (standard input line 2): too small for --arch deepseek")


# ---- notes: typed where they are made, selected by kind (never by their sentence) ------------------------
CUSTOM = {"model_type": "custom", "hidden_act": "gelu", "hidden_size": 1024, "intermediate_size": 4096,
          "num_attention_heads": 16, "num_hidden_layers": 12, "vocab_size": 32000}


def test_a_configs_assumptions_are_typed_assumed():
    """A family transformers does not define: each guess is a note of kind "assumed" (its fields name the
    family for the first), the same as ``assumptions``; the notes that are not guesses have no such kind."""
    from depthwidth.hf.config import inspect_config

    model = inspect_config(dict(CUSTOM), "custom")
    typed = [n for n in model.notes if getattr(n, "kind", None) == "assumed"]
    assert typed and list(model.assumptions) == typed and all(n.startswith("assumed: ") for n in typed)
    assert typed[0].fields == {"family": "custom"}
    assert all(n.startswith("assumed: ") == (getattr(n, "kind", None) == "assumed") for n in model.notes)
    known = inspect_config({**CUSTOM, "model_type": "llama"}, "llama")
    assert not any(getattr(n, "kind", None) == "assumed" for n in known.notes)


def test_inspect_prints_the_assumed_notes_by_kind(tmp_path, monkeypatch):
    """The stderr line lists the notes of kind "assumed"; a plain note whose sentence merely starts with
    "assumed:" is not one (a search of the text would print it)."""
    from dataclasses import replace

    from depthwidth.hf import config

    real = config.inspect_config
    decoys = (Message("assumed", "assumed: a typed guess"), "assumed: a plain sentence")
    monkeypatch.setattr(config, "inspect_config", lambda raw, source: replace(real(raw, source),
                                                                              notes=(*real(raw, source).notes, *decoys)))
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**CUSTOM, "model_type": "llama"}))
    out = run(["inspect", str(path), "--format", "json"])
    assert out.code == 0
    assert "assumed a typed guess" in out.stderr and "a plain sentence" not in out.stderr


def test_fits_table_leaves_out_the_no_law_note_by_kind():
    """Fit's table words the no-law note itself, so it leaves out the note of kind "no-law" (fields: the
    reason); a plain note that starts with the same words stays (a search of the text would drop it)."""
    from dataclasses import replace

    from rich.text import Text

    from depthwidth.output.tables import fit_tables
    from test_fit import GOOD, HEADER, OTHER, csv_text, fit_text

    report = fit_text(csv_text(GOOD + OTHER, HEADER), bootstrap=50)
    (no_law,) = [n for n in report.notes if getattr(n, "kind", None) == "no-law"]
    assert report.law_note and no_law.fields == {"reason": report.law_note}
    decoy = "no law across sizes: a plain note that says so in other words"
    shown = "".join(str(t) for t in fit_tables(replace(report, notes=(*report.notes, decoy))) if isinstance(t, Text))
    assert f"  - {decoy}\n" in shown and f"  - {no_law}\n" not in shown
    assert shown.count(report.law_note) == 1  # once, in the table's own wording


def test_a_plans_notes_carry_their_kind():
    """7e9 llama with no --tokens, no --gpus: the threshold rule's note, the consensus pick's note, the
    band's notes and the assumed run length and cluster, each typed where it is made."""
    from depthwidth.advice.planner import PlanOptions, plan
    from depthwidth.arch.spending import Spending

    p = plan(7_000_000_000, PlanOptions(spending=Spending("llama")))
    kinds = [getattr(n, "kind", None) for n in p.notes]
    assert {"threshold", "consensus", "band", "tokens-assumed", "gpus-assumed"} <= set(kinds)
    threshold = p.notes[kinds.index("threshold")]
    assert threshold.startswith("threshold rule (Levine et al. 2020)") and threshold.fields["depth"] == p.threshold.min_depth
    assert all(k in KINDS for k in kinds if k is not None)


@pytest.mark.parametrize("args", [
    ["--params", "7e9", "--arch", "llama"], ["--params", "2e8", "--pp", "30", "--gpus", "30"],
    ["--params", "7e9", "--rule", "levine-fit"], ["--params", "7e9", "--rule", "threshold"], ["--params", "3e11", "--arch", "gpt2", "--tokens", "2e12", "--gpus", "64"],
    ["--params", "1e12", "--arch", "deepseek"], ["--params", "7e9", "--days", "30", "--gpus", "256"],
])
def test_every_note_of_a_plan_is_typed(args, monkeypatch):
    """Every warning and note of the plans the command emits is a Message whose kind is one of KINDS,
    so no caller needs to read a sentence to know what it says (its text is what JSON prints)."""
    import depthwidth.output as output

    emitted = []
    monkeypatch.setattr(output, "emit", lambda records, *rest, **kw: emitted.extend(records))
    assert run(["plan", *args, "--format", "json"]).code == 0
    messages = [n for p in emitted for n in (*p.warnings, *p.notes)]
    assert emitted and messages
    assert [n for n in messages if not isinstance(n, Message) or n.kind not in KINDS] == []


def test_the_cluster_note_is_selected_by_its_kind():
    """Without --gpus, ``smallest_cluster`` keeps the note only when the cluster grew past one node (kind
    "smallest-cluster"): 70B (140 GB of bf16 weights alone, over 8 x 80 GB with Adam's 16 bytes a parameter)
    does not fit one H100 node, 125M does."""
    from depthwidth.arch.presets import preset
    from depthwidth.cost.perf.predict import Cluster, smallest_cluster

    gpus, note = smallest_cluster(preset("llama").architecture(80, 8192), Cluster(gpu="h100"))
    assert gpus > 8 and gpus % 8 == 0 and note.kind == "smallest-cluster" and f"{gpus:,} GPUs" in note
    assert smallest_cluster(preset("llama").architecture(12, 768), Cluster(gpu="h100")) == (8, None)
