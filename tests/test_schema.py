"""`depthwidth schema RECORD` (issue 20): each schema validates what its command really prints.

The validator is the `jsonschema` package (the reference implementation of JSON Schema, an
outside library), not Pydantic, which builds the schemas."""
from __future__ import annotations

import json

import pytest

jsonschema = pytest.importorskip("jsonschema")

OUTPUTS = {
    "plan": [["plan", "--params", "1e9"], ["plan", "--params", "1e9", "--params", "7e10", "--arch", "llama", "--tp", "8"],
             ["plan", "--tokens", "2e11", "--arch", "mixtral", "--count", "with-embeddings"]],
    "plan-rules": [["plan", "--params", "1e9", "--rules"]],
    "bounds": [["bounds", "12x768", "6x729", "2x10x9", "gpt2-xl", "llama3-70b"]],
    "grid": [["bounds", "--depth", "1:6", "--width", "2:730:52"]],
    "compare": [["compare", "--deep", "12x768", "--shallow", "6x1086"], ["compare", "--deep", "llama-7b", "--shallow", "2x64x1"]],
    "equiv": [["equiv", "--deep", "6x1000x16", "--depth", "1:5"], ["equiv", "--deep", "2x9", "--depth", "1"]],
    "models": [["models"]],
    "inspect": [["inspect", "tests/configs/llama-7b.json", "tests/configs/t5-base.json", "tests/configs/gpt2.json"],
                ["inspect", "tests/configs/llama-7b.json", "--tokens", "2e12", "--gpus", "64"]],
    "rules": [["rules"]],
    "reproduce": [["reproduce"]],
    "certify": [["certify", "2x8x1", "--templates", "40"]],
    "sweep": [["sweep", "--params", "1e9", "--count", "4"], ["sweep", "--params", "1e9", "--count", "2", "--tokens", "2e10", "--gpus", "8"]],
    "cost": [["cost", "24x2048", "12x768", "--tokens", "2e10", "--serve"], ["cost", "32x4096", "--arch", "llama", "--mfu", "0.4"]],
}


_VALIDATORS: dict = {}


def schema_of(run, name: str):
    """A validator of ``depthwidth schema NAME``'s schema, checked against its meta-schema once per
    process (the check takes half a second: ``jsonschema.validate`` repeats it on every call)."""
    if name not in _VALIDATORS:
        out = run(["schema", name])
        assert out.code == 0, out.stderr
        schema = json.loads(out.stdout)
        jsonschema.Draft202012Validator.check_schema(schema)
        cls = jsonschema.validators.validator_for(schema)  # as jsonschema.validate picks it
        if cls is not jsonschema.Draft202012Validator:
            cls.check_schema(schema)
        _VALIDATORS[name] = cls(schema)
    return _VALIDATORS[name]


def validate(instance, validator) -> None:
    """``jsonschema.validate`` with a checked validator: raise the best-matching error, if any."""
    error = jsonschema.exceptions.best_match(validator.iter_errors(instance))
    if error is not None:
        raise error


@pytest.mark.parametrize("name, args", [(n, a) for n, runs in OUTPUTS.items() for a in runs],
                         ids=lambda v: v if isinstance(v, str) else " ".join(v[:3]))
def test_schema_validates_real_output(run, name, args):
    out = run(args + ["--format", "json"])
    assert out.code == 0, out.stderr
    validate(json.loads(out.stdout), schema_of(run, name))


def test_plan_schema_rejects_a_renamed_field(run):
    """The schema is strict enough to catch the 0.2 names: a plan record without ``budget`` fails."""
    [record] = json.loads(run(["plan", "--params", "1e9", "--format", "json"]).stdout)
    record["params"] = record.pop("budget")
    with pytest.raises(jsonschema.ValidationError, match="budget"):
        validate([record], schema_of(run, "plan"))


def test_export_schema_validates_export(run, tmp_path):
    out = run(["export", "24x2048x16", "--to", "hf-llama", "--out", str(tmp_path), "--format", "json"])
    assert out.code == 0, out.stderr
    validate(json.loads(out.stdout), schema_of(run, "export"))


def test_candidate_and_shape_schemas_validate_single_records(run):
    [plan] = json.loads(run(["plan", "--params", "1e9", "--format", "json"]).stdout)
    for candidate in plan["candidates"]:
        validate(candidate, schema_of(run, "candidate"))
    [shape] = json.loads(run(["bounds", "12x768", "--format", "json"]).stdout)
    validate(shape, schema_of(run, "shape"))


def test_unknown_record_is_bad_input(run):
    out = run(["schema", "plans"])
    assert out.code == 2 and out.stdout == ""
    assert "bad record 'plans'" in out.stderr and "expected one of plan, plan-brief, candidate" in out.stderr
