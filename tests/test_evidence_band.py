"""The evidence band against the published dense decoder LMs of 2023-2026, each family left out (issue 46,
"The evidence band").

The band is a local fit of published practice (advice/bandfit.py) on the catalogue's decoder LMs and
depthwidth/advice/published_dense.json (published dense decoder LMs of 2023-2026 not in the
catalogue, each row with its source and where its numbers were read; rows not verified are listed
there and left out). Its coverage is measured out of sample: each lineage (a family without its
version: Llama 2, 3 and 3.2 together) is left out of the fit, and its 2023-26 models are checked
against the band at their own 12·L·d², as ``plan`` would draw it.

Expected values: the depths are the published ones (the data files, read here); the thresholds are
the issue's targets (at least 85% at a median hi/lo of at most 1.6) and, for the checks the issue
sets no target for, the figures measured when the band was fitted (docs/evidence.md), so a
regression fails.
"""
from __future__ import annotations

import json
import math
import statistics
from pathlib import Path

import pytest

from depthwidth.advice.bandfit import calibrate, fit_practice, lineage
from depthwidth.advice import shipped_practice as shipped
from depthwidth.advice.evidence import COVER, PUBLISHED_DENSE, SHIPPED_Q, depth_band, practice, practice_points
from test_evidence import decoder_lms as catalogue_lms, minimal_depth  # the catalogue's decoder LMs; the threshold rule

CATALOG = Path(__file__).resolve().parents[1] / "depthwidth" / "arch" / "catalog.json"


def table(verified_only: bool = True):
    rows = json.loads(PUBLISHED_DENSE.read_text(encoding="utf-8"))["rows"]
    return [r for r in rows if r["verified"] or not verified_only]




def family_left_out(rows, first_year=2023, q=None):
    """(share of the rows of ``first_year`` or later inside their band, median hi/lo, the misses), each
    row's band fitted without its lineage (and, with ``q`` None, at the shipped factor)."""
    points = practice_points()
    inside, ratios, misses = [], [], []
    for group in sorted({lineage(r["family"]) for r in rows if r["year"] >= first_year}):
        fitted = fit_practice(p for p in points if p.group != group)
        for r in (r for r in rows if lineage(r["family"]) == group and r["year"] >= first_year):
            size = 12 * r["depth"] * r["width"] ** 2
            lo, hi = depth_band(size, minimal_depth(size), fitted=fitted, q=q).depth_band
            inside.append(lo <= r["depth"] <= hi)
            ratios.append(hi / lo)
            if not inside[-1]:
                misses.append(r["name"])
    return sum(inside) / len(inside), statistics.median(ratios), misses


def test_the_table_is_sourced_and_outside_the_catalogue():
    rows = table(verified_only=False)
    catalogue = {r["name"] for r in json.loads(CATALOG.read_text(encoding="utf-8"))}
    assert len({r["name"] for r in rows}) == len(rows) and not catalogue & {r["name"] for r in rows}
    for row in rows:
        assert 2023 <= row["year"] <= 2026 and row["source"]
        assert (row["verified_at"] is not None) == row["verified"], row["name"]
    assert len(table()) == 59  # 16 rows could not be read in a stored source: listed, not fitted, not tested
    assert len(practice_points()) == len(table()) + len(catalogue_lms()) == 102


def test_each_family_left_out_the_band_holds_85_percent_at_a_median_hi_lo_of_1_6():
    rows = catalogue_lms() + table()
    share, ratio, misses = family_left_out(rows)
    assert share >= 0.85 and ratio <= 1.6, (share, ratio, misses)  # measured 68 of 80 (85.0%) at 1.57
    # the misses docs/evidence.md names: 1B models of 16 layers, the deep-thin MobileLLM/MiniCPM, and a few more
    assert {"mobilellm-1b", "minicpm-1.2b", "olmo-1b"} <= set(misses) and len(misses) == 12


def test_shipped_q_is_the_fit_of_the_committed_data():
    # bisection to 1e-6 on q; the fit itself is closed-form weighted least squares (no optimizer)
    assert calibrate(practice_points(), COVER) == pytest.approx(SHIPPED_Q, rel=1e-5)


def test_shipped_practice_is_the_fit_of_the_committed_data():
    """advice/shipped_practice.py (docs/gen_practice.py) against a refit of the committed data: the same
    models in the same order, and the same figures up to the rounding of logs and ~100-term sums of exp()."""
    refit = fit_practice(practice_points())
    rows = shipped.POINTS
    assert [(name, group, year) for name, group, year, *_ in rows] == [(p.name, p.group, p.year) for p in refit.points]
    assert [x for _, _, _, x, _, _ in rows] == pytest.approx([p.x for p in refit.points], rel=1e-12)
    assert [y for _, _, _, _, y, _ in rows] == pytest.approx([p.y for p in refit.points], rel=1e-12, abs=1e-12)
    assert [r for *_, r in rows] == pytest.approx(refit.residuals, rel=1e-9, abs=1e-12)
    assert (shipped.BETA, shipped.BELOW, shipped.ABOVE) == pytest.approx((refit.beta, refit.below, refit.above), rel=1e-9)
    used = practice()  # the planner's band: the shipped rows
    assert [p.name for p in used.points] == [p.name for p in refit.points] and used.latest == refit.latest
    assert used.residuals == tuple(r for *_, r in rows) and used.beta == shipped.BETA
    left_out = practice(frozenset({refit.points[0].name}))  # a model left out: refitted without it
    assert left_out.residuals == fit_practice(refit.points[1:]).residuals


def test_deep_thin_and_newest_models_inside_or_named_misses():
    """The issue's complaint: deep-thin small models (30-54 layers at 125M-1.5B) and the newest families'
    deeper mid-size models. Each family left out, MobileLLM 125M/350M, SmolLM2 135M/360M, MiniCPM 2.4B,
    Qwen3 4B and Gemma 3 1B/4B are inside; MobileLLM 600M-1.5B and MiniCPM 1.2B (40-54 layers) stay
    outside: about 1e9, published depths run from 16 (OLMo 1B, Llama 3.2 1B) to 54 (docs/evidence.md)."""
    names = ("mobilellm-125m", "mobilellm-350m", "smollm2-135m", "smollm2-360m", "minicpm-2.4b", "qwen3-4b",
             "gemma3-1b", "gemma3-4b")
    rows = [r for r in catalogue_lms() + table() if r["name"] in names]
    assert len(rows) == len(names)
    _, _, misses = family_left_out(catalogue_lms() + table())
    assert not set(names) & set(misses)
    assert {"mobilellm-600m", "mobilellm-1b", "mobilellm-1.5b", "minicpm-1.2b"} <= set(misses)


def test_band_widens_with_the_distance_to_the_data():
    near = depth_band(7e10, minimal_depth(7e10))
    far = depth_band(4e13, minimal_depth(4e13))  # 75x past the largest published model
    ratio = lambda band: band.depth_band[1] / band.depth_band[0]
    assert ratio(far) > ratio(near) and any("an extrapolation" in n for n in far.notes)
    assert not any("an extrapolation" in n for n in near.notes)
    assert far.extrapolated and not near.extrapolated
    for band in (near, far):
        assert band.depth_band[0] <= band.centre <= band.depth_band[1]


def test_published_frontier_models_are_inside_their_bands():
    """Llama 3 70B (80x8192) and Llama 3.1 405B (126x16384), arXiv 2407.21783 Table 3, each with its own
    family left out: the band follows practice's depth with size, not a fixed d/L."""
    share, _, misses = family_left_out([r for r in catalogue_lms() if r["name"] in ("llama3-70b", "llama3-405b")])
    assert share == 1.0, misses


@pytest.mark.slow
def test_leave_one_year_out():
    """Each year of 2023-2025 left out of the fit and of q's calibration: the coverage of that year's models.
    Measured (docs/evidence.md): 2023 24/26, 2024 34/44, 2025 10/10, 68 of 80 in all."""
    points = practice_points()
    counted = []
    for year in (2023, 2024, 2025):
        rest = [p for p in points if p.year != year]
        fitted, q = fit_practice(rest), calibrate(rest, COVER)
        held = [p for p in points if p.year == year]
        inside = 0
        for p in held:
            size = math.exp(p.x)
            lo, hi = depth_band(size, minimal_depth(size), fitted=fitted, q=q).depth_band
            inside += lo <= round(math.exp(p.y)) <= hi
        counted.append((inside, len(held)))
    assert counted[0][0] / counted[0][1] >= 0.9 and counted[2] == (10, 10)
    assert counted[1][0] / counted[1][1] >= 0.75  # 2024, the deep-thin year: the weakest
    assert sum(i for i, _ in counted) / sum(n for _, n in counted) >= 0.8
