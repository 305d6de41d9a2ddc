"""The registry of empirical rules (rules.py): values against formulas written here, guard
semantics, provenance, the `rules` command, and rule files read back as rules.

Expected values are computed in this file from each rule's published formula with the paper's
block N = 12·L·d² as the iso-budget width; SciPy's Lambert W gives the closed forms."""
from __future__ import annotations

import json
import math

import pytest
from scipy.special import lambertw

from depthwidth.core.errors import InputError
from depthwidth.advice.rules.builtin import REGISTRY, get_rule, guard_messages, shape_positions
from depthwidth.advice.rules.record import GUARD, THEORY
from depthwidth.advice.rules.record import KINDS
from depthwidth.advice.rules.user import rule_from_file

from conftest import assert_finite_json_text, run

N7B = 7e9


def iso(budget):
    """The iso-budget width of the paper's block: 12·L·d² = N."""
    return lambda L: math.sqrt(budget / (12 * L))


def levine_closed_form(budget, a=5.039, b=0.0555):
    """ln d = a + b·L with N = 12·L·d²: L = W(2b·N·e^(-2a)/12)/(2b)."""
    depth = lambertw(2 * b * budget * math.exp(-2 * a) / 12).real / (2 * b)
    return depth, math.exp(a + b * depth)


def aspect_depth(budget, ratio):
    """d = ratio·L with N = 12·L·d²: L = (N / (12·ratio²))^(1/3)."""
    return (budget / (12 * ratio * ratio)) ** (1 / 3)


# ---- the figures for 7e9 non-embedding parameters


def test_levine_fit_7b_about_55_layers():
    depth, width = get_rule("levine-fit").recommend(N7B, iso(N7B))
    want_depth, want_width = levine_closed_form(N7B)
    assert depth == pytest.approx(want_depth, rel=1e-9) and width == pytest.approx(want_width, rel=1e-9)
    assert round(depth) == 55


def test_levine_fit_headline_claims_and_the_posts_pair():
    depth, width = get_rule("levine-fit").recommend(1e12, iso(1e12))
    assert 29_000 < width < 30_500 and 90 < depth < 100  # "width 30K optimal for 1T"
    assert math.exp(5.039 + 0.0555 * 92) == pytest.approx(25_463, abs=1)  # not the post's (92, 30K)
    gpt3_depth, _ = get_rule("levine-fit").recommend(12 * 96 * 12288**2, iso(12 * 96 * 12288**2))
    assert gpt3_depth < 96  # "GPT-3 175B is too deep for its size"


def test_nanochat_7b_about_52_layers_width_multiple_of_128():
    depth, width = get_rule("nanochat").recommend(N7B, iso(N7B))
    real = aspect_depth(N7B, 64)
    assert depth in (math.floor(real), math.ceil(real)) and depth == 52
    assert width % 128 == 0 and width == math.ceil(64 * depth / 128) * 128
    # of the two integer depths, the one whose rounded width is nearest the budget's width
    def miss(L):
        return abs(math.log((math.ceil(64 * L / 128) * 128) / iso(N7B)(L)))
    assert miss(depth) == min(miss(math.floor(real)), miss(math.ceil(real)))
    assert get_rule("nanochat").heads(width) == width // 128


@pytest.mark.parametrize("depth, width", [(20, 1280), (26, 1664), (21, 1408), (13, 896)])
def test_nanochat_rounds_up_to_head_dim(depth, width):
    # base_train.py: model_dim = ((depth*64 + 127) // 128) * 128
    assert get_rule("nanochat").width_for_depth(depth) == width == ((depth * 64 + 127) // 128) * 128


def test_llama3_practice_7b_about_33_layers_ratio_128():
    depth, width = get_rule("llama3-practice").recommend(N7B, iso(N7B))
    assert depth == pytest.approx(aspect_depth(N7B, 128), rel=1e-9)
    assert round(depth) == 33 and width / depth == pytest.approx(128)


def test_depth_delusion_critical_depth_about_21_at_that_width():
    _, width = get_rule("llama3-practice").recommend(N7B, iso(N7B))
    limit = get_rule("depth-delusion").max_depth(width)
    assert limit == pytest.approx(2.43 * math.log(width))
    assert 19.5 < limit < 21.5


def test_mobilellm_ratio_is_inside_its_published_band():
    depth, width = get_rule("mobilellm").recommend(3.5e8, iso(3.5e8))
    assert 576 / 30 <= width / depth <= 960 / 32
    assert depth == pytest.approx(aspect_depth(3.5e8, width / depth), rel=1e-9)


def test_threshold_crossing_is_lambert_w():
    for budget in (1e7, 1e9, 1e12):
        depth, width = get_rule("threshold").threshold_crossing(iso(budget))
        assert depth == pytest.approx(lambertw(math.log(3) * budget / 6).real / (2 * math.log(3)), rel=1e-9)
        assert width == pytest.approx(3**depth, rel=1e-9)
    assert get_rule("threshold").recommend(1e9, iso(1e9)) is None  # the planner's integer minimal depth answers


def test_crossing_with_another_block():
    # any decreasing iso-budget width: a gated block 4·d² + 3·d·(8d/3) = 12·d² per layer plus a 2·d² overhead
    budget = 1e10
    width_at = lambda L: math.sqrt(budget / (14 * L))
    depth, width = get_rule("llama3-practice").recommend(budget, width_at)
    assert depth == pytest.approx((budget / (14 * 128**2)) ** (1 / 3), rel=1e-9)


def test_tiny_budget_never_below_one_layer():
    depth, _ = get_rule("levine-fit").recommend(1e3, iso(1e3))
    assert depth == 1.0


# ---- guards


def test_guards_recommend_nothing_and_bound_the_depth():
    for rule in REGISTRY.values():
        if rule.kind == GUARD:
            assert rule.recommend(1e9, iso(1e9)) is None
            assert rule.max_depth(4096) > 0
        else:
            assert rule.max_depth(4096) is None
    # Kaplan et al. Figure 5's caption: (48, 1600) and (6, 4288) within 3% of each other; the low end is d/L of (48, 1600)
    assert get_rule("kaplan-band").max_depth(4096) == pytest.approx(4096 / (1600 / 48))


def test_depth_delusion_position_notes():
    rule = get_rule("depth-delusion")
    assert rule.position(24, 1024, 12 * 24 * 1024**2) == (
        f"deeper than the Depth Delusion critical depth for its width (24 > {2.43 * math.log(1024):.1f})")
    assert rule.position(12, 4096, 12 * 12 * 4096**2).startswith("within the Depth Delusion critical depth")


def test_llama3_band_position():
    rule = get_rule("llama3-practice")
    assert rule.position(32, 4096, 6.4e9) == "within the LLaMA-3 practice band (d/L 102-130, here 128)"
    assert rule.position(48, 1600, 1.5e9).startswith("deeper and thinner than the LLaMA-3 practice band")


def test_shape_positions_for_gpt3():
    notes = shape_positions(96, 12288, 12 * 96 * 12288**2)
    assert any(n.startswith("within the LLaMA-3 practice band") for n in notes)
    assert any(n.startswith(f"deeper than the Depth Delusion critical depth for its width (96 > {2.43 * math.log(12288):.1f})")
               and "[second-hand constants, outside its range]" in n for n in notes)
    assert not any("MobileLLM" in n for n in notes)  # 175B is far outside MobileLLM's sizes
    assert not any("Levine" in n for n in shape_positions(96, 12288, 2e11, skip=("levine-fit",)))


def test_extrapolation():
    assert get_rule("nanochat").extrapolated(N7B)  # fitted on d12-d28, about 0.08B-1.1B
    assert not get_rule("llama3-practice").extrapolated(N7B)
    assert get_rule("levine-fit").extrapolated(N7B, 55)  # depths 6-48
    assert not get_rule("levine-fit").extrapolated(N7B, 40)
    assert not get_rule("threshold").extrapolated(1e15, 12)
    assert get_rule("nanochat").params_range == (12 * 12 * 768**2, 12 * 28 * 1792**2)


# ---- provenance


def test_every_rule_cites_and_flags():
    assert set(REGISTRY) == {"threshold", "levine-fit", "nanochat", "llama3-practice", "mobilellm", "depth-delusion",
                             "kaplan-band", "chinchilla", "deepseek-llm", "minicpm"}
    order = ("verified", "second-hand", "unverified")
    for rule in REGISTRY.values():
        assert rule.kind in KINDS and rule.source and rule.verification and rule.fit_range and rule.formula
        assert ("arXiv" in rule.source) or ("github.com/" in rule.source)
        assert rule.verified == all(c.verified for c in rule.constants.values()), rule.name
        assert rule.status == max((c.status for c in rule.constants.values()), key=order.index), rule.name
        for constant in rule.constants.values():
            assert constant.verified == (constant.status != "unverified") and constant.provenance
    assert [r.name for r in REGISTRY.values() if r.kind == THEORY] == ["threshold"]
    levine = get_rule("levine-fit")
    assert levine.verified and levine.status == "second-hand"
    # the two second-hand locations (issue 24's fact-check): BloombergGPT §3.2 'Shape' and BigScience math/README.md
    assert "2303.17564" in levine.verification and "3.2 'Shape'" in levine.verification
    assert "bigscience-workshop/bigscience math/README.md" in levine.verification and "Width-depth tradeoff" in levine.verification
    # BloombergGPT chose L = 70 and D = 7510: the quoted fit gives exactly that width
    assert round(math.exp(5.039 + 0.0555 * 70)) == 7510
    assert get_rule("levine-fit").constants["a"].value == 5.039 and get_rule("levine-fit").constants["b"].value == 0.0555
    assert get_rule("llama3-practice").constants["band_low"].value == pytest.approx(8192 / 80)
    assert get_rule("llama3-practice").constants["band_high"].value == pytest.approx(16384 / 126)


def test_unknown_rule_lists_the_names():
    with pytest.raises(InputError) as err:
        get_rule("gopher")
    message = str(err.value)
    assert message.startswith("bad rule 'gopher'") and all(name in message for name in REGISTRY)


# ---- the `rules` command


def test_rules_cli_json_fields():
    out = run(["rules", "--format", "json"])
    assert out.code == 0 and out.stderr == ""
    assert_finite_json_text(out.stdout)
    records = json.loads(out.stdout)
    assert [r["name"] for r in records] == list(REGISTRY)
    for record in records:
        assert {"name", "kind", "formula", "constants", "source", "fit_range", "params_range", "depth_range", "verified",
                "verification", "notes"} <= set(record)
        for constant in record["constants"].values():
            assert set(constant) == {"value", "provenance", "verified", "status"}
        assert record["status"] in ("verified", "second-hand", "unverified")
    by_name = {r["name"]: r for r in records}
    assert by_name["depth-delusion"]["kind"] == "guard" and by_name["depth-delusion"]["status"] == "second-hand"
    assert by_name["levine-fit"]["verified"] is True and by_name["levine-fit"]["status"] == "second-hand"
    assert by_name["nanochat"]["constants"]["ratio"]["value"] == 64


def test_rules_cli_table_and_field():
    table = run(["rules"])
    assert table.code == 0 and all(name in table.stdout for name in REGISTRY)
    assert "BloombergGPT" in table.stdout and "Width-depth tradeoff" in table.stdout and "20-200" not in table.stdout
    kinds = run(["rules", "--field", "kind"])
    assert kinds.stdout.split() == [r.kind for r in REGISTRY.values()]
    bad = run(["rules", "--field", "nope"])
    assert bad.code == 2 and bad.stdout == ""


# ---- rule files (RULEFILE format depthwidth-rule/1)


def rule_file(tmp_path, form, group_by="params"):
    data = {
        "format": "depthwidth-rule/1", "name": "my-fit", "form": form,
        "levine": {"a": 5.2, "b": 0.05, "a_interval": [5.1, 5.3], "b_interval": [0.045, 0.055], "r2": 0.97, "rmse": 0.04},
        "power": {"k": 0.5, "alpha": 0.4, "alpha_interval": [0.35, 0.45], "k_interval": [0.3, 0.7],
                  "depth_k": 0.02, "depth_beta": 0.3, "beta_interval": [0.25, 0.35], "r2": 0.95, "rmse": 0.05},
        "group_by": group_by,
        "fit_range": {"size": [1e7, 1e9], "depth": [4, 32], "width": [128, 2048]},
        "groups": [{"size": 1e7, "optimal_depth": 6.0, "depth_interval": [5.0, 7.0], "runs": 4},
                   {"size": 1e9, "optimal_depth": 24.0, "depth_interval": [20.0, 28.0], "runs": 4}],
        "source": {"file": "results.csv", "sha256": "ab" * 32},
        "created": "2026-01-01", "tool": "depthwidth 0.2.0",
    }
    path = tmp_path / f"{form}-{group_by}.json"
    path.write_text(json.dumps(data))
    return path


def test_rule_from_file_levine(tmp_path):
    rule = rule_from_file(rule_file(tmp_path, "levine"))
    assert rule.name == "my-fit" and rule.kind == "fit" and rule.verified
    assert rule.verification == "fitted on your data: results.csv sha256 " + "ab" * 32
    depth, width = rule.recommend(1e9, iso(1e9))
    assert (depth, width) == pytest.approx(levine_closed_form(1e9, 5.2, 0.05), rel=1e-9)
    assert rule.depth_range == (4, 32) and rule.params_range == (1e7, 1e9)
    assert rule.extrapolated(1e10) and not rule.extrapolated(1e8, 20)


def test_rule_from_file_power(tmp_path):
    rule = rule_from_file(rule_file(tmp_path, "power"))
    depth, width = rule.recommend(1e9, iso(1e9))
    assert depth == pytest.approx(0.02 * 1e9**0.3, rel=1e-12)
    assert width == pytest.approx(math.sqrt(1e9 / (12 * depth)), rel=1e-12)


def test_rule_from_file_power_in_flops(tmp_path):
    rule = rule_from_file(rule_file(tmp_path, "power", "flops"))
    depth, _ = rule.recommend(1e9, iso(1e9))
    assert depth == pytest.approx(0.02 * (120 * 1e9**2) ** 0.3, rel=1e-12)  # C = 6·N·(20·N)
    assert rule.params_range == pytest.approx((math.sqrt(1e7 / 120), math.sqrt(1e9 / 120)))


def test_rule_from_file_bad(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{"format": "something-else"}')
    with pytest.raises(InputError):
        rule_from_file(path)


# ---- plot phase --rules


def test_phase_figure_draws_each_rule(tmp_path):
    pytest.importorskip("matplotlib")
    from depthwidth.advice.phase import phase_data
    from depthwidth.output.plot import phase_figure

    fig = phase_figure(phase_data(budgets=(1e9,), models=(), rules=True))
    lines = {line.get_gid(): line for line in fig.axes[0].get_lines() if (line.get_gid() or "").startswith("rule:")}
    assert set(lines) == {f"rule:{r.name}" for r in REGISTRY.values() if r.kind != THEORY}
    x, y = (line.astype(float) for line in lines["rule:depth-delusion"].get_data())
    assert y == pytest.approx(2.43 * __import__("numpy").log(x))
    x, y = (line.astype(float) for line in lines["rule:llama3-practice"].get_data())
    assert x / y == pytest.approx(128.0)
    assert "[unverified]" not in lines["rule:levine-fit"].get_label()  # verified second-hand (issue 24)
    assert not any(g.startswith("rule:") for g in (l.get_gid() or "" for l in phase_figure(phase_data(budgets=(1e9,), models=())).axes[0].get_lines()))
    out = run(["plot", "phase", "--rules", "--out", str(tmp_path / "phase.svg")])
    assert out.code == 0 and 'id="rule:depth-delusion"' in (tmp_path / "phase.svg").read_text()


# ---- the rules added in issue 24, against the published numbers written here


def test_chinchilla_rule_is_a_fit_over_table_a9():
    import numpy as np

    from depthwidth.advice.published import CHINCHILLA_A9

    rule = get_rule("chinchilla")
    # Hoffmann et al. 2022 (arXiv 2203.15556), Table A9 "All models": 50 rows, e.g. 44M = 8 x 512,
    # 1,018M = 23 x 1792, 4,516M = 36 x 3072, 9,293M = 42 x 4096, 16,183M = 47 x 5120
    assert len(CHINCHILLA_A9) == 50
    for shape in ((8, 512), (16, 640), (23, 1792), (36, 3072), (42, 4096), (47, 5120)):
        assert shape in CHINCHILLA_A9
    assert CHINCHILLA_A9[0] == (8, 512) and CHINCHILLA_A9[-1] == (47, 5120)
    sizes = np.array([12 * L * d * d for L, d in CHINCHILLA_A9], float)
    beta, log_k = np.polyfit(np.log(sizes), np.log([L for L, _ in CHINCHILLA_A9]), 1)  # NumPy's least squares
    assert rule.constants["depth_beta"].value == pytest.approx(beta, rel=1e-9)
    assert rule.constants["depth_k"].value == pytest.approx(math.exp(log_k), rel=1e-9)
    assert 0.24 < beta < 0.28  # the reference card: "roughly L ∝ N^0.27"
    assert rule.params_range == (12 * 8 * 512**2, 12 * 47 * 5120**2)
    assert min(d / L for L, d in CHINCHILLA_A9) == 40 and max(d / L for L, d in CHINCHILLA_A9) == pytest.approx(5120 / 47)
    depth, _ = rule.recommend(N7B, iso(N7B))
    assert depth == pytest.approx(math.exp(log_k) * N7B**beta) and 38 < depth < 43
    assert rule.verified and rule.status == "verified" and "Table A9" in rule.verification


def test_deepseek_llm_rule_passes_through_its_two_models():
    rule = get_rule("deepseek-llm")
    # DeepSeek LLM (arXiv 2401.02954): 7B = 30 layers x 4096, 67B = 95 x 8192
    for depth, width in ((30, 4096), (95, 8192)):
        size = 12 * depth * width**2
        got, _ = rule.recommend(size, iso(size))
        assert got == pytest.approx(depth, rel=1e-9)
    assert rule.params_range == (12 * 30 * 4096**2, 12 * 95 * 8192**2)
    # eq. (4): M_opt = 0.1715·C^0.5243, D_opt = 5.8316·C^0.4757; the exponents sum to 1 (C = M·D)
    law = {k: rule.constants[k].value for k in ("m_opt_base", "m_opt_exponent", "d_opt_base", "d_opt_exponent")}
    assert law == {"m_opt_base": 0.1715, "m_opt_exponent": 0.5243, "d_opt_base": 5.8316, "d_opt_exponent": 0.4757}
    assert law["m_opt_exponent"] + law["d_opt_exponent"] == pytest.approx(1.0)
    assert law["m_opt_base"] * law["d_opt_base"] == pytest.approx(1.0, abs=2e-4)
    assert all(rule.constants[k].status == "second-hand" for k in law) and rule.status == "second-hand"


def test_minicpm_rule_band():
    rule = get_rule("minicpm")
    # MiniCPM (arXiv 2404.06395; released configs): 1.2B = 52 x 1536, 2.4B = 40 x 2304
    assert rule.constants["band_low"].value == pytest.approx(1536 / 52)
    assert rule.constants["band_high"].value == pytest.approx(2304 / 40)
    assert rule.constants["ratio"].value == pytest.approx(math.sqrt(1536 / 52 * 2304 / 40), abs=0.05)
    assert rule.params_range == (12 * 52 * 1536**2, 12 * 40 * 2304**2)
    assert rule.position(40, 2304, 12 * 40 * 2304**2).startswith("within the MiniCPM band")


def test_corrected_wording_nanochat_and_kaplan():
    nanochat = get_rule("nanochat")
    assert "SSSL" in " ".join(nanochat.notes) and "master" in nanochat.source
    assert "pull" not in nanochat.verification and "23acb17f173fa22ae42435a90f4195b1220852f0" in nanochat.verification
    kaplan = get_rule("kaplan-band")
    assert kaplan.constants["factor"].value == 40 and kaplan.status == "second-hand"
    for rule in REGISTRY.values():  # "20-200" / "20 <= d/L <= 200" is not Kaplan et al.'s wording
        assert "20 <= d/L <= 200" not in rule.formula and "20-200" not in rule.formula
    delusion = get_rule("depth-delusion")
    assert "2601.20994" in delusion.source and delusion.constants["kappa"].status == "second-hand"
    assert delusion.constants["exponent"].value == 0.44 and delusion.constants["exponent"].status == "verified"


# ---- guards: warn only in range, with a verified constant, status in the same line


def test_guards_never_warn_on_second_hand_constants():
    # Llama 3 8B (32 x 4096, arXiv 2407.21783 Table 3): past 2.43·ln 4096 = 20.2, inside Depth Delusion's 17M-7B
    warnings, notes = guard_messages(32, 4096, 12 * 32 * 4096**2)
    assert warnings == []
    assert any("depth-delusion" in n and "second-hand constants: a note, not a warning" in n for n in notes)
    for rule in REGISTRY.values():
        if rule.kind == GUARD:
            assert rule.status != "verified"  # so no registered guard can warn today
    for depth, width in ((96, 12288), (48, 1600), (72, 3072), (200, 1024)):
        assert guard_messages(depth, width, 12 * depth * width**2)[0] == []


def test_a_verified_guard_warns_only_inside_its_range(monkeypatch):
    import depthwidth.advice.rules.builtin as rules

    guard = rules.Rule(
        name="test-guard", kind=GUARD, formula="L_max = d/100", constants={"low": rules.Constant(100.0, "test", True)},
        source="arXiv 0000.00000 (a test guard)", fit_range="1e8-1e10", params_range=(1e8, 1e10), depth_range=None,
        verified=True, verification="verified: test", notes=(), relation="band")
    monkeypatch.setattr(rules, "_REGISTRY_RULES", (guard,))
    warnings, notes = guard_messages(64, 4096, 1e9)  # 64 > 4096/100
    assert len(warnings) == 1 and not notes
    assert "test-guard" in warnings[0] and "[verified; evidence range 1e8-1e10]" in warnings[0]
    warnings, notes = guard_messages(64, 4096, 1e11)  # outside its range: a note only
    assert warnings == [] and "outside its evidence range" in notes[0]
    assert guard_messages(30, 4096, 1e9) == ([], [])  # within the guard
