"""Issue 46: the loss model across studies. Petty et al. 2023's rows against the paper's text, leaving a whole
study out (both directions), the shipped model on every group of both studies, and its intervals where no
ablation reaches (frontier shapes at 15T tokens)."""
import json
import math

import numpy as np
import pytest

from depthwidth.cost import lossfit
from depthwidth.cost.loss import SHIPPED

from conftest import run


@pytest.fixture(scope="module")
def rows():
    return lossfit.loss_rows(lossfit.load_ablations())


@pytest.fixture(scope="module")
def studies(rows):
    return {h.study: h for h in lossfit.leave_one_study_out(rows)}


def _best(rs):
    return min(rs, key=lambda r: r["value"])


def _low_of_measured_best(model, rs) -> float:
    """loss_vs_best_low of a group's measured best shape at the group's geometric-mean count."""
    best = _best(rs)
    ref = float(np.exp(np.mean(np.log([r["params"] for r in rs]))))
    return float(model.penalty(best["depth"], ref, best["width"], best["ffn"])[1])


def test_petty_rows_are_the_papers_table():
    """Petty et al. 2023 (arXiv 2310.19956), Tables 2 and 3 as printed in the stored text
    (thanhbn/arxiv-downloader@deb54df, lines 1122-1153): 134M, 12 layers: d_model 768, d_ff 2048, C4 PPL 18.1;
    374M, 24 layers: 1024, 2816, 14.4; 41M, 4 and 5 layers: 28.8 both. The abbreviated '36k' (134M, 1 layer) is
    Eq. 1, d_ff(n) = n0/n·(d0 + A/beta) - A/beta with A = 4·d², beta = 3·d (n0 = 12, d0 = 2048): 12·3072 - 1024."""
    data = lossfit.load_ablations()
    petty = {(r["group"].split("|")[1], r["depth"]): r for r in data["rows"] if r["study"] == "petty2023"}
    assert len(petty) == 26 and all(r["metric"] == "ppl" and r["tokens"] == 10 ** 6 * 128 * 1024 for r in petty.values())
    for (size, depth), (width, ffn, ppl) in {("134M", 12): (768, 2048, 18.1), ("374M", 24): (1024, 2816, 14.4),
                                             ("41M", 4): (512, 682, 28.8), ("41M", 5): (512, 409, 28.8),
                                             ("134M", 1): (768, 12 * 3072 - 1024, 33.6)}.items():
        r = petty[size, depth]
        assert (r["width"], r["ffn"], r["value"]) == (width, ffn, ppl)
        assert r["params_non_embedding"] == depth * (3 * width * ffn + 4 * width * width)
        assert r["params"] == r["params_non_embedding"] + 2 * width * 32128
    assert petty["134M", 1].get("d_ff_derived") and not petty["134M", 12].get("d_ff_derived")
    # the class names: 2·d·32128 untied embeddings make the baselines 41M, 134M and 374M
    for (size, depth), want in {("41M", 2): 41e6, ("134M", 12): 134e6, ("374M", 24): 374e6}.items():
        assert petty[size, depth]["params"] == pytest.approx(want, rel=0.01)


def test_gemstones_alone_predicts_petty(studies, capsys):
    """Fit on Gemstones alone (the ffn term at its prior), predict Petty: the predicted best shape is within 0.5%
    of the measured best (measured loss) in at least 2 of 3 groups, and each group's measured best keeps
    loss_vs_best_low = 0 under that fit (with the spread between studies)."""
    petty = studies["petty2023"]
    with capsys.disabled():
        print("\nfit on Gemstones, Petty held out\n" + lossfit.table(list(petty.groups)))
    assert len(petty.groups) == 3 and sum(h.hit for h in petty.groups) >= 2


def test_petty_alone_predicts_gemstones(studies, capsys):
    """Fit on Petty alone, predict Gemstones: reported (docs/loss.md), no threshold: Petty varies depth at one width
    per size and cannot place the optimum of widths it never tried."""
    gem = studies["gemstones2025"]
    with capsys.disabled():
        print("\nfit on Petty, Gemstones held out\n" + lossfit.table(list(gem.groups)))
    assert len(gem.groups) == 20


def test_held_out_bests_are_not_ruled_out(rows, studies):
    """In both directions each held-out group's measured best has loss_vs_best_low = 0 under the held-out fit,
    carrying the spread between studies (a one-study fit cannot estimate it: it is the shipped one)."""
    for study, h in studies.items():
        model = lossfit.with_spread(h.model, SHIPPED.tau_k, SHIPPED.tau_a)
        for group, rs in lossfit.groups_of([r for r in rows if r["study"] == study]).items():
            assert _low_of_measured_best(model, rs) == 0.0, group


def test_shipped_model_on_every_group(rows, capsys):
    """The shipped model (both studies): the best shape within 0.5% in at least 8/9 of the groups, every
    group's measured best inside its interval (loss_vs_best_low = 0: not ruled out), median Spearman >= 0.8."""
    groups = lossfit.groups_of(rows)
    results = [lossfit.held_out(SHIPPED, rs) for rs in groups.values()]
    with capsys.disabled():
        print("\nshipped model, in sample\n" + lossfit.table(results))
    assert len(results) == 23 and sum(h.hit for h in results) >= 8 / 9 * len(results)
    assert float(np.median([h.spearman for h in results])) >= 0.8
    for group, rs in groups.items():
        assert _low_of_measured_best(SHIPPED, rs) == 0.0, group


def test_spread_between_studies_is_the_leave_one_study_out_estimate(studies):
    """tau_k: RMS of the held-out studies' own bowl scales; tau_a: RMS of their best-depth errors with the grid's
    resolution (each study once), recomputed here from the held-out records."""
    tau_k = math.sqrt(np.mean([h.ln_scale ** 2 for h in studies.values()]))
    per_study = [np.mean([e * e + v for e, v in zip(h.optimum_errors, h.resolution)]) for h in studies.values()]
    assert SHIPPED.tau_k == pytest.approx(tau_k, rel=1e-3) and SHIPPED.tau_a == pytest.approx(math.sqrt(np.mean(per_study)), rel=1e-3)
    assert 0 < SHIPPED.tau_a < 1 and 0 < SHIPPED.tau_k < 2


def test_practice_depth_exponent_is_the_catalogues():
    """lossfit.PRACTICE_DEPTH_EXPONENT: the log-log slope of depth on parameters over the catalogue's dense decoders."""
    from importlib import resources

    catalog = json.loads(resources.files("depthwidth.arch").joinpath("catalog.json").read_text())
    dense = [m for m in catalog if not m.get("encoder_only") and not m.get("experts") and m.get("params")]
    slope = np.polyfit(np.log([m["params"] for m in dense]), np.log([m["depth"] for m in dense]), 1)[0]
    assert lossfit.PRACTICE_DEPTH_EXPONENT == pytest.approx(slope, abs=5e-4)


def test_interval_widens_with_distance_beyond_the_data():
    """Outside the fitted sizes the optimum's sd grows by tau_ext per e-fold: its log-width at 4e11 exceeds that
    at 7e10, which exceeds the in-range one by at least the rule's share."""
    width = lambda n: math.log(float(SHIPPED.optimal_depth(n)[2]) / float(SHIPPED.optimal_depth(n)[1]))
    inside, far, farther = width(5e8), width(7e10), width(4e11)
    assert inside < far < farther
    extra = 2 * 1.959963984540054 * SHIPPED.tau_ext * math.log(7e10 / SHIPPED.params_range[1])
    assert far ** 2 >= inside ** 2 + extra ** 2 * 0.99


@pytest.mark.parametrize("name, depth", [("llama3-70b", 80), ("llama3-405b", 126)])
def test_frontier_shapes_are_not_ruled_out_at_15T_tokens(name, depth):
    """No ablation has measured a model this large: `cost` on Llama 3 70B (80x8192) and Llama 3.1 405B (126x16384)
    at 15T tokens gives loss_vs_best_low = 0, and says the size is outside the fitted range."""
    result = run(["cost", name, "--tokens", "1.5e13", "--gpus", "16384", "--format", "json"])
    assert result.code == 0, result.stderr
    [record] = json.loads(result.stdout)
    loss = record["loss"]
    assert record["depth"] == depth and loss["low"] == 0.0 and loss["vs_best"] > 0
    assert loss["in_fitted_range"] is False
    assert loss["fitted_params_high"] == SHIPPED.params_range[1] < record["params_nonembedding"]


def test_plan_beyond_the_data_lets_time_decide():
    """`plan --params 7e10 --arch llama`: the notes say the model is beyond its data, the optimum's interval covers
    the band, so the pick is by time alone and the why says so (not the shallow edge for an extrapolated optimum)."""
    result = run(["plan", "--params", "7e10", "--arch", "llama", "--format", "json"])
    assert result.code == 0, result.stderr
    [record] = json.loads(result.stdout)
    assert not record["loss_model"]["in_fitted_range"] and not record["loss_model"]["decides"]
    assert any("beyond its data" in n for n in record["notes"])
    assert "loss cannot tell the band's shapes apart" in record["why"] and "time decided" in record["why"]
