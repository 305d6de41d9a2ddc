"""depthwidth certify benchmarks (issue 17): exact rank mod p against matrix size, and whole runs.

    python benchmarks/certify.py

Prints one run's figures on this machine next to the target (a 700 x 700 rank in under a
second), with "ok" or "MISSED"; asserts nothing. Each figure is the best of a few runs, since
figures move with machine load. About half a minute. The last part measures the fixed cost of
one layer (NumPy calls on tiny arrays) against what ``estimate_work`` counts for it.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from depthwidth.theory.certify import DEFAULT_PRIME, LAYER_OVERHEAD, MAX_WORK, certify, estimate_work  # noqa: E402
from depthwidth.theory.gridrank import draw, grid_matrix, rank_mod  # noqa: E402

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


def layer_overhead() -> None:
    """The fixed cost of one layer on one batch (issue 25): deep narrow shapes at a small M are
    nothing but NumPy's per-call cost, which estimate_work counts as LAYER_OVERHEAD multiply-adds."""
    print("fixed cost per layer (deep narrow shapes, one batch of pairs; the slope between two depths)")
    rate = MAX_WORK / 60  # multiply-adds per second that the cap's "about a minute" assumes
    for width, m in ((2, 2), (2, 10), (4, 10)):
        shallow, deep = 500, 2500
        t_shallow = best(lambda: certify(shallow, width, 1, templates=m))
        t_deep = best(lambda: certify(deep, width, 1, templates=m))
        per_layer = (t_deep - t_shallow) / (deep - shallow)
        modelled = (estimate_work(deep, width, 1, 2, m) - estimate_work(shallow, width, 1, 2, m)) / (deep - shallow)
        print(f"  Lx{width}x1, M = {m}: {per_layer * 1e6:6.1f} us per layer; estimate_work counts {modelled:,.0f} "
              f"multiply-adds per layer = {modelled / rate * 1e6:.0f} us at the cap's {rate / 1e6:.0f} M/s "
              f"(LAYER_OVERHEAD {LAYER_OVERHEAD:,}) {'ok' if modelled / rate >= per_layer else 'UNDER-COUNTED'}")
    work = estimate_work(1_000_000, 2, 1, 2, 10)
    print(f"  1000000x2x1 at M = 10 (216 s in the outside stress test): estimated {work:.3g}, cap {MAX_WORK:.0e}: "
          f"{'refused' if work > MAX_WORK else 'ACCEPTED'}")


def main() -> None:
    ranks()
    runs()
    layer_overhead()


if __name__ == "__main__":
    main()
