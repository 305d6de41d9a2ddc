"""Real models in: catalogue reports, config reports, and the reproduction of the paper's claims."""
import math
import json
from pathlib import Path

import pytest

from conftest import completed
from depthwidth.arch.catalog import load_models, lookup
from depthwidth.advice.claims import DERIVED, DIFFERS, REPRODUCED, claims
from depthwidth.hf.config import inspect_config
from depthwidth.hf.read import read_config_file
from depthwidth.advice.reports import config_report, model_report

CONFIGS = Path(__file__).parent / "configs"


def run(*args, stdin=None):
    return completed(args, stdin)  # in-process (conftest.completed)


def test_model_reports():
    bert = model_report(lookup("bert-base"))
    assert (bert.depth, bert.width, bert.heads, bert.regime) == (12, 768, 12, "depth-inefficient")
    assert round(bert.log3_sep_lower, 3) == 1681.565
    assert round(bert.log3_sep_upper, 3) == 11206.654 and bert.c2_reading == "consistent"
    literal = model_report(lookup("bert-base"), "literal")
    assert round(literal.log3_sep_upper, 3) == 9053.928 and literal.c2_reading == "literal"
    gpt3 = model_report(lookup("gpt3-175b"))
    assert (gpt3.depth, gpt3.width, gpt3.heads) == (96, 12288, 96)
    assert gpt3.empirical_depth == pytest.approx(80.5, abs=0.1) and gpt3.depth > gpt3.empirical_depth
    assert any("Levine et al. fit alone" in n and "depth 80.5" in n for n in gpt3.notes)
    # one optimum across plan, inspect and models: the loss model's L*(N) = exp(a + b·ln(N/1e9)) (cost/loss.py)
    from depthwidth.cost.loss import SHIPPED
    optimum = math.exp(SHIPPED.a + SHIPPED.b * math.log(gpt3.params_12Ld2 / 1e9))
    assert gpt3.optimal_depth == pytest.approx(optimum) and gpt3.optimal_depth_low < optimum < gpt3.optimal_depth_high
    assert any(f"deeper by {96 / optimum - 1:.0%}" in n and "loss model" in n for n in gpt3.notes)


@pytest.mark.parametrize("name, shape, real", [
    ("bert-base", (12, 768, 12), 12 * (4 * 768**2 + 2 * 768 * 3072)),
    ("gpt2", (12, 768, 12), 12 * (4 * 768**2 + 2 * 768 * 3072)),
    ("llama-7b", (32, 4096, 32), 6_476_005_376),
])
def test_config_reports(name, shape, real):
    report = config_report(inspect_config(read_config_file(CONFIGS / f"{name}.json"), name))
    assert (report.depth, report.width, report.heads) == shape
    assert report.params_nonembedding == real and report.params_12Ld2 == 12 * shape[0] * shape[1] ** 2
    assert report.min_depth >= 1 and report.empirical_depth > 0


def test_vocabulary_bottleneck_note():
    cfg = json.loads((CONFIGS / "gpt2.json").read_text())
    cfg.update(n_embd=1024 * 64, n_head=64, vocab_size=50257)
    report = config_report(inspect_config(cfg, "wide"))
    assert report.vocab_bottleneck and any("Wies et al. 2021" in n for n in report.notes)


def test_claims_recompute_and_report_the_worked_example_honestly():
    by_id = {c.claim: c for c in claims()}
    assert by_id["threshold-width-1000"].status == REPRODUCED
    assert by_id["worked-example-depth-3"].status == DIFFERS and by_id["worked-example-depth-3"].computed == "76,137"
    assert by_id["worked-example-depth-2"].status == DIFFERS and "145.0" in by_id["worked-example-depth-2"].reason
    assert by_id["worked-example-depth-2"].computed == "7,336,209,056,879,055"  # exact below 2^53
    assert by_id["kaplan-depth-6"].computed_value == 6
    assert by_id["1t-width-30k"].status == REPRODUCED and abs(by_id["1t-width-30k"].computed_value - 29657) < 5
    assert by_id["gpt3-too-deep"].status == REPRODUCED
    assert {c.status for c in claims()} <= {REPRODUCED, DIFFERS, DERIVED}


def test_claims_quote_only_the_authors_texts_with_their_sections():
    """No row quotes the project's own reference card; 6.3 is the authors' post's (not in the paper)."""
    for c in claims():
        assert "card" not in c.source.lower() and "card" not in (c.quoted or "").lower()
        assert any(word in c.source for word in ("Sec.", "section", "abstract", "Fig.")), c.source
        assert c.status == DERIVED or c.quoted
    by_id = {c.claim: c for c in claims()}
    assert "blog post" in by_id["threshold-width-1000"].source and "6.3" in by_id["threshold-width-1000"].quoted
    for budget in ("1e+07", "1e+09", "1e+12"):
        row = by_id[f"min-depth-{budget}"]
        assert row.status == DERIVED and row.quoted is None and row.quoted_value is None


def test_claims_added_by_issue_10():
    by_id = {c.claim: c for c in claims()}
    budget = by_id["kaplan-depth-6-budget"]
    assert 12 * 6 * 9**6 == 38_263_752 and "38,263,752" in budget.computed and budget.status == REPRODUCED
    growth = by_id["double-exponential-replicate"]
    assert growth.status == REPRODUCED and growth.computed_value > 60  # 10^63.46 at depth 1
    aside = by_id["theorem1-positivity-aside"]
    assert aside.status == DIFFERS and aside.computed_value == pytest.approx(-0.6309, abs=1e-4)  # -log3 2 at 2x10x9
    fit = by_id["1t-width-30k"].reason
    assert "RECALLED" in fit and "25,463" in fit and "depth 92" in fit


def test_reproduce_cli_strict_exit_code():
    plain, strict = run("reproduce"), run("reproduce", "--strict")
    assert plain.returncode == 0 and "reproduced" in plain.stdout and "differs" in plain.stdout
    assert strict.returncode == 1 and strict.stdout == plain.stdout
    differing = {c.claim for c in claims() if c.status == DIFFERS}
    assert "worked-example-depth-2" in differing
    assert all(f"claim {name} differs" in strict.stderr for name in differing)
    assert plain.stderr == ""


def test_models_cli():
    records = json.loads(run("models", "--format", "json").stdout)
    assert len(records) == len(load_models()) >= 30
    llamas = json.loads(run("models", "--filter", "llama*", "--sort", "depth", "--format", "json").stdout)
    assert llamas and all(r["name"].startswith("llama") for r in llamas)
    assert [r["depth"] for r in llamas] == sorted(r["depth"] for r in llamas)
    big = json.loads(run("models", "--min-params", "100B", "--format", "json").stdout)
    assert big and all(r["published_params"] >= 1e11 for r in big)


def test_model_names_work_wherever_shapes_do():
    result = json.loads(run("compare", "--deep", "gpt3-175b", "--shallow", "80x13440", "--format", "json").stdout)
    assert (result["deep"]["depth"], result["deep"]["width"]) == (96, 12288)
    out = run("bounds", "BERT-Base", "llama-7b", "--field", "width")
    assert out.stdout.split() == ["768", "4096"]
    miss = run("bounds", "bert-bas")
    assert miss.returncode == 2 and "bert-base" in miss.stderr and miss.stdout == ""


def test_inspect_cli_files_and_stdin():
    out = json.loads(run("inspect", str(CONFIGS / "llama-7b.json"), str(CONFIGS / "t5-base.json"), "--format", "json").stdout)
    assert out[0]["params_nonembedding"] == 6_476_005_376 and out[1]["model_type"] == "t5"
    piped = json.loads(run("inspect", "-", "--format", "json", stdin=(CONFIGS / "bert-base.json").read_text()).stdout)
    assert piped[0]["source"] == "standard input" and piped[0]["width"] == 768
    bad = run("inspect", str(CONFIGS / "not-a-config.json"))
    assert bad.returncode == 2 and "num_hidden_layers" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1
