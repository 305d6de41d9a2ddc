"""The evidence band's coverage against its width (issue 46): the numbers and the curve in docs/evidence.md.

    python benchmarks/band_coverage.py

For each cover (the share the band is fitted to hold, ``evidence.fit_practice_spread``), the band is
refitted on the catalogue and measured on the held-out table tests/data/published_dense_2023_26.json
(verified rows: published dense decoder LMs of 2023-2026 not in the catalogue), each model at its own
12·L·d² with itself and any rule built from it left out; then the catalogue's own leave-one-out
coverage, and the time split (fitted on the catalogue's models up to 2022, measured on every model of
2023-2026). Prints markdown tables; a few seconds.
"""
from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from depthwidth.advice.evidence import RULE_MODELS, depth_band, fit_practice_spread, published_models  # noqa: E402


def minimal_depth(budget):
    depth = 1
    while 12 * depth * 9**depth < budget:
        depth += 1
    return depth


def measure(rows, spread, models=None, exclude=()):
    """(inside, n, median hi/lo, the names outside) of (name, depth, width) rows."""
    inside, ratios, misses = 0, [], []
    for name, depth, width in rows:
        size = 12 * depth * width**2
        lo, hi = depth_band(size, minimal_depth(size), exclude=(name, *exclude), models=models, spread=spread).depth_band
        inside += lo <= depth <= hi
        ratios.append(hi / lo)
        if not lo <= depth <= hi:
            misses.append(f"{name} {depth} [{lo}, {hi}]")
    return inside, len(rows), statistics.median(ratios), misses


def main():
    table = [r for r in json.loads((ROOT / "tests/data/published_dense_2023_26.json").read_text())["rows"] if r["verified"]]
    held = [(r["name"], r["depth"], r["width"]) for r in table]
    catalogue = published_models()
    own = [(m.name, m.depth, m.width) for m in catalogue]
    print("| cover fitted | q | held-out coverage | held-out median hi/lo | catalogue leave-one-out | its median hi/lo |")
    print("| --- | --- | --- | --- | --- | --- |")
    for cover in (0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95):
        spread = fit_practice_spread(catalogue, cover)
        a, n, ra, misses = measure(held, spread)
        b, m, rb, _ = measure(own, spread)
        print(f"| {cover:.2f} | {spread.q:.2f} | {a}/{n} ({a / n:.1%}) | {ra:.2f} | {b}/{m} ({b / m:.1%}) | {rb:.2f} |")
        if cover == 0.85:
            shipped_misses = misses
    print("\nheld-out misses at 0.85:", "; ".join(shipped_misses))
    old = tuple(m for m in catalogue if m.year <= 2022)
    later = tuple(name for names in RULE_MODELS.values() for name in names)
    spread = fit_practice_spread(old, exclude=later)
    rows = [(m.name, m.depth, m.width) for m in catalogue if m.year >= 2023] + held
    a, n, ra, _ = measure(rows, spread, models=old, exclude=later)
    print(f"\ntime split (fitted on {len(old)} models up to 2022): {a}/{n} ({a / n:.1%}) of 2023-2026 at median hi/lo {ra:.2f}")


if __name__ == "__main__":
    main()
