"""The evidence band's coverage against its width (issue 46): the numbers and the curve in docs/evidence.md.

    python benchmarks/band_coverage.py          # the tables (about a minute: one fit per family and year)
    python benchmarks/band_coverage.py --plot docs/band_coverage.png   # and the curve as a figure

The band (advice/bandfit.py) is fitted on the catalogue's decoder LMs and advice/published_dense.json.
Every figure here is out of sample: a model's band is fitted with its whole lineage (family without
version) left out. Printed: the coverage of the 2023-26 models against the width factor q (the
curve; the shipped q is the narrowest that reaches 85%), the misses at the shipped q, the coverage
with q itself refitted without the family (nested), each year left out, the forward time split
(fitted up to 2023, measured on 2024-26), and the kernel scales tried.
"""
from __future__ import annotations

import math
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from depthwidth.advice import bandfit  # noqa: E402
from depthwidth.advice.evidence import COVER, SHIPPED_Q, practice_points  # noqa: E402


def curve(predictions, factors):
    """Rows (q, coverage, n inside, median hi/lo) of the held-out predictions at each factor."""
    rows = []
    for q in factors:
        share, median, _ = bandfit.coverage(predictions, q)
        rows.append((q, share, round(share * len(predictions)), median))
    return rows


def nested(points):
    """(inside, n, median hi/lo): each lineage left out of the fit AND of q's calibration."""
    inside, ratios = 0, []
    for group in sorted({p.group for p in points if p.year >= bandfit.TARGET_FIRST_YEAR}):
        rest = [p for p in points if p.group != group]
        fitted, q = bandfit.fit_practice(rest), bandfit.calibrate(rest, COVER)
        held = [(p, fitted) for p in points if p.group == group and p.year >= bandfit.TARGET_FIRST_YEAR]
        share, _, _ = bandfit.coverage(held, q)
        inside += round(share * len(held))
        ratios += [hi / lo for lo, hi in (bandfit.layers(fitted.interval(p.x, q)) for p, _ in held)]
    return inside, len(ratios), statistics.median(ratios)


def by_year(points):
    """Lines: each year of 2023-2025 left out of the fit and of q; then fitted up to 2023, measured on 2024-26."""
    lines = []
    for year in (2023, 2024, 2025):
        rest = [p for p in points if p.year != year]
        fitted, q = bandfit.fit_practice(rest), bandfit.calibrate(rest, COVER)
        held = [(p, fitted) for p in points if p.year == year]
        share, median, misses = bandfit.coverage(held, q)
        lines.append(f"| {year} left out | {round(share * len(held))}/{len(held)} ({share:.1%}) | {median:.2f} | q {q:.2f} |")
    old = [p for p in points if p.year <= 2023]
    fitted, q = bandfit.fit_practice(old), bandfit.calibrate(old, COVER)
    held = [(p, fitted) for p in points if p.year >= 2024]
    share, median, _ = bandfit.coverage(held, q)
    lines.append(f"| fitted up to 2023, on 2024-26 | {round(share * len(held))}/{len(held)} ({share:.1%}) | {median:.2f} | q {q:.2f} |")
    return lines


def scales(points):
    """Lines: the kernel scales h (centre) and h_s (spread) tried, each at its own calibrated q."""
    saved = bandfit.CENTRE_SCALE, bandfit.SPREAD_SCALE, bandfit.local_line.__defaults__
    lines = []
    try:
        for h in (math.log(2) / 3, math.log(2) / 2, math.log(2)):
            cells = []
            for hs in (math.log(2) / 4, math.log(2) / 2, math.log(2)):
                bandfit.CENTRE_SCALE, bandfit.SPREAD_SCALE, bandfit.local_line.__defaults__ = h, hs, (h,)
                q = bandfit.calibrate(points, COVER)
                share, median, _ = bandfit.coverage(bandfit.held_out_predictions(points), q)
                cells.append(f"{median:.2f} ({share:.0%})")
            lines.append(f"| {math.exp(h):.2f}x | " + " | ".join(cells) + " |")
    finally:
        bandfit.CENTRE_SCALE, bandfit.SPREAD_SCALE, bandfit.local_line.__defaults__ = saved
    return lines


def plot(rows, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.6))
    ax.plot([r[3] for r in rows], [100 * r[1] for r in rows], marker=".")
    ax.axhline(100 * COVER, color="grey", lw=0.8, ls="--")
    ax.set_xlabel("median hi/lo of the band")
    ax.set_ylabel("2023-26 models inside (%), family left out")
    ax.set_title("Evidence band: coverage against width")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv):
    points = practice_points()
    predictions = bandfit.held_out_predictions(points)
    factors = sorted({round(0.1 * k, 1) for k in range(5, 21)} | {SHIPPED_Q})
    rows = curve(predictions, factors)
    print(f"{len(points)} published decoder LMs, {len(predictions)} of 2023-26; each lineage left out\n")
    print("| q | inside | coverage | median hi/lo |\n| --- | --- | --- | --- |")
    for q, share, inside, median in rows:
        mark = " (shipped)" if q == SHIPPED_Q else ""
        print(f"| {q:.2f}{mark} | {inside}/{len(predictions)} | {share:.1%} | {median:.2f} |")
    _, _, misses = bandfit.coverage(predictions, SHIPPED_Q)
    print("\nmisses at the shipped q:", "; ".join(f"{n} {d} [{lo}, {hi}]" for n, d, lo, hi in misses))
    inside, n, median = nested(points)
    print(f"\nnested (q refitted without the family too): {inside}/{n} ({inside / n:.1%}) at median hi/lo {median:.2f}\n")
    print("| held out | inside | median hi/lo | q |\n| --- | --- | --- | --- |")
    print("\n".join(by_year(points)))
    print("\n| centre scale h | h_s = 1.19x | h_s = 1.41x | h_s = 2x |\n| --- | --- | --- | --- |")
    print("\n".join(scales(points)))
    if "--plot" in argv:
        plot(rows, argv[argv.index("--plot") + 1])


if __name__ == "__main__":
    main(sys.argv[1:])
