"""The evidence band against published models it has never seen (issue 46, "The evidence band").

The held-out set is tests/data/published_dense_2023_26.json: published dense decoder LMs of 2023-2026
that are not in the catalogue, each row with its source (a config.json of a public Hugging Face
repository or a paper's table) and where its numbers were read (``verified_at``); rows not verified
are listed there and left out here. A model's band is taken at its own 12·L·d² with the paper's block,
the model itself and any rule built from it left out (MobileLLM, MiniCPM, DeepSeek: ``RULE_MODELS``).

Expected values: the depths are the published ones (the data file); the thresholds below are the
coverage and width measured when the band was fitted (docs/evidence.md), so a regression fails. The
issue's target (85% at a median hi/lo of at most 1.8) is NOT met: docs/evidence.md gives the curve.
"""
from __future__ import annotations

import json
import math
import statistics
from pathlib import Path

import pytest

from depthwidth.advice.evidence import (COVER, RULE_MODELS, SHIPPED_SPREAD, depth_band, fit_practice_spread,
                                        practice_spread, published_models)

DATA = Path(__file__).parent / "data" / "published_dense_2023_26.json"
CATALOG = Path(__file__).resolve().parents[1] / "depthwidth" / "arch" / "catalog.json"


def held_out(verified_only: bool = True):
    rows = json.loads(DATA.read_text(encoding="utf-8"))["rows"]
    return [r for r in rows if r["verified"] or not verified_only]


def minimal_depth(budget):
    """Smallest L with 12·L·9^L >= N (Levine et al. 2020, the threshold rule with the paper's block)."""
    depth = 1
    while 12 * depth * 9**depth < budget:
        depth += 1
    return depth


def coverage(rows, exclude=(), **band_options):
    """(share of rows whose depth lies in its own band, median hi/lo) over (name, depth, width) rows."""
    inside, ratios = [], []
    for name, depth, width in rows:
        size = 12 * depth * width**2
        lo, hi = depth_band(size, minimal_depth(size), exclude=(name, *exclude), **band_options).depth_band
        inside.append(lo <= depth <= hi)
        ratios.append(hi / lo)
    return sum(inside) / len(inside), statistics.median(ratios)


def test_the_held_out_table_is_sourced_and_outside_the_catalogue():
    rows = held_out(verified_only=False)
    catalogue = {r["name"] for r in json.loads(CATALOG.read_text(encoding="utf-8"))}
    assert len({r["name"] for r in rows}) == len(rows) and not catalogue & {r["name"] for r in rows}
    for row in rows:
        assert 2023 <= row["year"] <= 2026 and row["source"]
        assert (row["verified_at"] is not None) == row["verified"], row["name"]
    assert len(held_out()) == 56  # 19 rows could not be read in a stored source: listed, not tested


def test_band_covers_the_held_out_published_models():
    rows = [(r["name"], r["depth"], r["width"]) for r in held_out()]
    share, ratio = coverage(rows)
    # measured: 47 of 56 (83.9%) at a median hi/lo of 2.18 (the old band: 35 of 56, 62.5%, at 1.70)
    assert share >= 0.83 and ratio <= 2.25, (share, ratio)


def test_deep_thin_small_models_are_inside_or_named_misses():
    """The issue's first complaint: 30-54 layers at 125M-1.5B. The band now holds MobileLLM 125M and
    350M, SmolLM2 360M and MiniCPM 2.4B; MobileLLM 600M-1.5B and MiniCPM 1.2B (40-54 layers) stay
    outside: at about 1e9 published depths run from 16 (OLMo 1B, Pythia 1B) to 54, farther apart than
    any 85% band of this width can reach (docs/evidence.md)."""
    rows = {r["name"]: r for r in held_out()}
    for name in ("mobilellm-125m", "mobilellm-350m", "smollm2-360m", "minicpm-2.4b", "qwen3-4b", "gemma3-4b"):
        row = rows[name]
        size = 12 * row["depth"] * row["width"] ** 2
        lo, hi = depth_band(size, minimal_depth(size), exclude=(name,)).depth_band
        assert lo <= row["depth"] <= hi, (name, lo, hi)


def test_catalogue_leave_one_out_coverage_is_the_conformal_target():
    rows = [(m.name, m.depth, m.width) for m in published_models()]
    share, ratio = coverage(rows)
    assert share >= COVER - 1 / len(rows)  # the conformal rank: about the cover, within one model
    assert ratio <= 2.1  # measured 2.04


def test_shipped_spread_is_the_fit_of_the_catalogue():
    fitted = practice_spread()
    # Nelder-Mead stops at xatol 1e-8 on (c0, c1); the shipped numbers carry 6 significant digits
    assert (fitted.n, fitted.cover) == (SHIPPED_SPREAD.n, SHIPPED_SPREAD.cover)
    for budget in (1e8, 1e9, 7e9, 7e10, 1e12):
        assert fitted.sigma(budget) == pytest.approx(SHIPPED_SPREAD.sigma(budget), rel=1e-4)
    assert fitted.q == pytest.approx(SHIPPED_SPREAD.q, rel=1e-4)
    assert fitted.gap == pytest.approx(SHIPPED_SPREAD.gap, rel=1e-4)
    assert fitted.c1 < 0  # the spread narrows with size: small models scatter most


def test_band_widens_with_the_distance_to_the_evidence():
    near = depth_band(7e10, minimal_depth(7e10))
    far = depth_band(4e13, minimal_depth(4e13))  # 75x past the largest published model
    ratio = lambda band: band.depth_band[1] / band.depth_band[0]
    assert far.window > near.window and ratio(far) > ratio(near)


def test_fitted_before_2023_it_covers_what_came_after():
    """Time split: the spread and the published evidence from the catalogue's models up to 2022 only,
    the rules built from later models left out; coverage measured on every model of 2023-2026 (the
    catalogue's and the held-out table's). nanochat (a 2025-26 rule, depths 12-28) stays in."""
    old = tuple(m for m in published_models() if m.year <= 2022)
    later = tuple(name for names in RULE_MODELS.values() for name in names)
    spread = fit_practice_spread(old, exclude=later)
    rows = [(m.name, m.depth, m.width) for m in published_models() if m.year >= 2023]
    rows += [(r["name"], r["depth"], r["width"]) for r in held_out()]
    share, ratio = coverage(rows, exclude=later, models=old, spread=spread)
    assert share >= 0.8 and ratio <= 2.6, (share, ratio)  # measured: see docs/evidence.md
