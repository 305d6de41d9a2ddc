"""Typed messages: a plan's warnings carry what happened and which shape they concern, and the CLI
selects them by that, not by searching the sentence; the text prints as before."""
from __future__ import annotations

import json
import pickle

import pytest

from conftest import run
from depthwidth.advice.messages import KINDS, Message, concerns


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
