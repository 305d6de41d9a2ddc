"""depthwidth certify benchmarks (issue 17): exact rank mod p against matrix size, and whole runs.

    python benchmarks/certify.py

Prints one run's figures on this machine next to the target (a 700 x 700 rank in under a
second), with "ok" or "MISSED"; asserts nothing. Each figure is the best of a few runs, since
figures move with machine load. About half a minute.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from depthwidth.certify import DEFAULT_PRIME, certify, draw, grid_matrix, rank_mod  # noqa: E402

SIZES = (100, 300, 500, 700, 1000, 1500, 2000)
TARGET_700 = 1.0  # seconds, issue 17


def best(run, repeats: int = 3) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def ranks() -> None:
    print("rank mod 2^31 - 1 (python-flint nmod_mat, including the hand-over from NumPy)")
    print(f"  {'matrix':>11}  {'seconds':>8}  {'rank':>5}")
    rng = np.random.default_rng(0)
    for m in SIZES:
        matrix = rng.integers(0, DEFAULT_PRIME, size=(m, m), dtype=np.int64)
        seconds = best(lambda: rank_mod(matrix, DEFAULT_PRIME), 3 if m <= 1000 else 1)
        word = ("ok" if seconds < TARGET_700 else "MISSED") if m == 700 else ""
        target = f"(target < {TARGET_700:g} s) {word}" if m == 700 else ""
        print(f"  {m:>5} x {m:<5}  {seconds:8.3f}  {rank_mod(matrix, DEFAULT_PRIME):>5}  {target}")
    net, points = draw(2, 8, 1, 2, 700, DEFAULT_PRIME, seed=0)
    grid = grid_matrix(net, points, DEFAULT_PRIME)
    seconds = best(lambda: rank_mod(grid, DEFAULT_PRIME))
    print(f"  the 700 x 700 grid of 2x8x1 (rank {rank_mod(grid, DEFAULT_PRIME)}): {seconds:.3f} s "
          f"(target < {TARGET_700:g} s) {'ok' if seconds < TARGET_700 else 'MISSED'}")


def runs() -> None:
    print("whole certify runs (grid of the forward pass + rank)")
    for depth, width, heads, m in ((1, 26, 1, 700), (2, 4, 1, 700), (2, 8, 1, 700), (3, 26, 1, 300)):
        result = {}
        seconds = best(lambda: result.setdefault("c", certify(depth, width, heads, templates=m)), 1)
        c = result["c"]
        print(f"  {depth}x{width}x{heads}, M = {m}: rank {c.rank}{' (saturated)' if c.saturated else ''}, "
              f"{seconds:.2f} s, {c.work / seconds / 1e6:.0f} M multiply-adds/s (work {c.work:.2g})")


def main() -> None:
    ranks()
    runs()


if __name__ == "__main__":
    main()
