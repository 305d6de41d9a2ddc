"""`plan --brief`: the threshold rule's answer for many budgets, vectorized (issue 25).

The references are independent of the vectorized path: the scalar planner (``planner.plan``) for
the values, and the generic record writer (``output.writers.emit``) for the bytes."""
from __future__ import annotations

import io
import json
import random
from dataclasses import replace

import pytest

from depthwidth.core.errors import InputError

from conftest import assert_bad_input, parse_csv, parse_json
from depthwidth.advice.brief import FIELDS, PlanBrief, brief_columns
from depthwidth.arch.hardware import Constraints
from depthwidth.output.columns import write_columns
from depthwidth.output.writers import emit
from depthwidth.advice.planner import PlanOptions, plan
from depthwidth.arch.spending import Spending


def _budgets(n: int, seed: int, low: float = 6, high: float = 13) -> list[int]:
    rng = random.Random(seed)
    return [int(10 ** rng.uniform(low, high)) for _ in range(n)]


OPTIONS = [
    PlanOptions(),
    PlanOptions(spending=Spending("llama"), constraints=Constraints(tp=8)),
    PlanOptions(spending=Spending("mixtral", count="active"), constraints=Constraints(tp=2)),
    PlanOptions(spending=Spending("gpt2", count="with-embeddings")),
]


PLAN_PATHS = {"budget": "budget.value", "budget_source": "budget.source", "arch": "budget.arch", "budget_count": "budget.count"}


def plan_value(full, name):
    """A brief field's value in the full plan record: the budget's, else the threshold shape's (the nested record)."""
    path = PLAN_PATHS.get(name, "threshold." + name)
    value = full
    for part in path.split("."):
        value = getattr(value, part)
    return value


def _plannable(budget: int, options) -> bool:
    """Whether --brief answers ``budget`` (cheap); when it refuses, the scalar plan refuses it with the same line
    (mixtral's active 4.7e8: its shapes of 1B+ total parameters split 8 ways, and none is near)."""
    try:
        brief_columns([budget], options, "params")
    except InputError as err:
        with pytest.raises(InputError) as full:
            plan(budget, options, "params")
        assert str(full.value) == str(err)
        return False
    return True


@pytest.mark.parametrize("half", [0, 1])  # the scalar plans in two tests that workers share
@pytest.mark.parametrize("options", OPTIONS, ids=["vanilla", "llama-tp8", "mixtral-active", "gpt2-embeddings"])
def test_each_brief_record_is_the_scalar_plans_leading_fields(options, half):
    budgets = [b for b in _budgets(60, 7, low=8.5) if _plannable(b, options)]
    assert len(budgets) >= 50
    columns = brief_columns(budgets, options, "params")  # all in one call; each half checks every other row
    for row, budget in list(enumerate(budgets))[half::2]:  # the threshold record does not depend on the time
        full = plan(budget, replace(options, perf=False), "params")  # model (test_plan_columns checks): flat MFU, 5x less CPU
        for name in FIELDS:
            assert columns[name][row] == plan_value(full, name), (budget, name)


@pytest.mark.parametrize("fmt,field", [("csv", None), ("json", None), ("jsonl", None), ("csv", "tp_sizes"),
                                       ("csv", "min_depth_exact"), ("json", "params_embedding"), ("csv", "regime")])
def test_columns_are_written_byte_for_byte_as_the_record_writer_writes_records(fmt, field):
    options = PlanOptions(spending=Spending("llama"))
    columns = brief_columns(_budgets(200, 11, low=8), options, "params")
    records = [PlanBrief(*row) for row in zip(*columns.values())]
    by_columns, by_records = io.StringIO(), io.StringIO()
    write_columns(columns, fmt, field, by_columns)
    emit(records, fmt, field, None, out=by_records)
    assert by_columns.getvalue() == by_records.getvalue()


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_long_columns_are_written_as_the_record_writer_writes_records(fmt):
    """Columns of 1,500 rows take the fast spellings (orjson for floats and 64-bit integers); budgets
    up to 1e30 put integers past 64 bits in the count columns, which fall back to str."""
    options = PlanOptions(spending=Spending("llama"))
    columns = brief_columns(_budgets(1500, 13, low=8, high=30), options, "params")
    assert max(columns["params_nonembedding"]) > 2**64 and len(columns["budget"]) == 1500
    records = [PlanBrief(*row) for row in zip(*columns.values())]
    by_columns, by_records = io.StringIO(), io.StringIO()
    write_columns(columns, fmt, None, by_columns)
    emit(records, fmt, None, None, out=by_records)
    assert by_columns.getvalue() == by_records.getvalue()
    small = {name: values[:1200] if name != "params_nonembedding" else [min(v, 2**40) for v in values[:1200]]
             for name, values in columns.items()}  # every integer column within 64 bits
    by_columns, by_records = io.StringIO(), io.StringIO()
    write_columns(small, fmt, None, by_columns)
    emit([PlanBrief(*row) for row in zip(*small.values())], fmt, None, None, out=by_records)
    assert by_columns.getvalue() == by_records.getvalue()


def test_cli_brief_matches_plan_for_the_same_budgets(run):
    budgets = [str(b) for b in _budgets(25, 5, low=8, high=12)]
    stdin = "\n".join(budgets) + "\n"
    brief = run(["plan", "--params", "-", "--brief", "--arch", "llama", "--format", "csv"], input=stdin)
    full = run(["plan", "--params", "-", "--arch", "llama", "--format", "csv"], input=stdin)
    assert brief.code == 0 and full.code == 0, brief.stderr + full.stderr
    brief_rows, full_rows = parse_csv(brief), parse_csv(full)
    assert list(brief_rows[0]) == list(FIELDS)
    assert [{k: r[PLAN_PATHS.get(k, "threshold." + k)] for k in FIELDS} for r in full_rows] == brief_rows


def test_cli_brief_json_and_field(run):
    out = run(["plan", "--params", "1e9", "--params", "1e12", "--brief", "--format", "json"])
    records = parse_json(out)
    # the reference card's computed values: N = 1e9 -> minimal depth 8, N = 1e12 -> 11
    assert [r["min_depth"] for r in records] == [8, 11]
    assert set(records[0]) == set(FIELDS)
    depths = run(["plan", "--params", "1e9", "--params", "1e12", "--brief", "--field", "min_depth"])
    assert depths.stdout.split() == ["8", "11"]


def test_cli_brief_refuses_the_whole_call_for_one_bad_budget(run):
    out = run(["plan", "--params", "-", "--brief", "--format", "csv"], input="1e9\n1e40\n")
    assert_bad_input(out, "'1e40' (standard input line 2)")  # as typed (issue 34), with its line


def test_brief_has_its_own_schema(run):
    out = run(["schema", "plan-brief"])
    assert out.code == 0, out.stderr
    schema = json.loads(out.stdout)
    assert set(schema["$defs"]["PlanBrief"]["properties"]) == set(FIELDS)
