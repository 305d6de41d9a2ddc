"""The layout search by brute force, the reference ``layout.search`` is tested against: every layout
(``layout.combinations`` x recomputations x ZeRO stages) evaluated at once as NumPy arrays, the
fastest that fits chosen (ties: ZeRO 0-2 before ZeRO 3, then the least memory; none fitting, the
least memory). Only tests and benchmarks run it: the commands search on plain numbers."""
from __future__ import annotations

from .layout import FIELDS, answer, combinations, memory_per_gpu, recomputations, zero_stages
from .step import Layout, attention_kernel, training_rates


def candidates(arch, hw, gpus: int, context: int, global_batch: int, fixed: dict) -> dict:
    """Every layout to try, as equal-length NumPy arrays keyed by Layout field (before the memory check)."""
    import numpy as np

    rows = combinations(arch, hw, gpus, context, global_batch, fixed)
    if not rows:
        return {}
    grid = np.array(rows, dtype=np.float64)
    rcs, zeros = recomputations(fixed), zero_stages(fixed)
    n, k, z = len(grid), len(rcs), len(zeros)
    grid = np.repeat(grid, k * z, axis=0)
    rc = np.tile(np.repeat(np.array(rcs, dtype=np.float64), z), n)
    zero = np.tile(np.array(zeros, dtype=np.float64), n * k)
    return {**{name: grid[:, i] for i, name in enumerate(FIELDS)}, "recompute": rc, "zero": zero}


def search_grid(arch, hw, gpus: int, context: int, global_batch: int, fixed: dict | None = None,
                attention: str | None = None, overlap: bool = True, memory_limit: float | None = None, **options):
    """``search`` by brute force: every layout evaluated at once as NumPy arrays (the reference)."""
    import numpy as np

    fixed = fixed or {}
    lay = candidates(arch, hw, gpus, context, global_batch, fixed)
    if not lay:
        return None
    layout = Layout(**lay, attention=attention, overlap=overlap, **options)
    memory = memory_per_gpu(arch, lay, context, options.get("sequence_parallel", True), attention_kernel(arch, layout) == "flash")
    step = np.asarray(training_rates(arch, hw, layout, context, global_batch, gpus)["step_seconds"], dtype=np.float64)
    fits = memory <= (hw.hbm_bytes if memory_limit is None else memory_limit)
    # ties: ZeRO 0-2 before ZeRO 3 (the simpler stage), then the least memory
    order = (np.lexsort((memory, lay["zero"] >= 3, np.where(fits, step, np.inf))) if fits.any()
             else np.argsort(memory, kind="stable"))
    i = int(order[0])
    return answer(arch, hw, {k: v[i] for k, v in lay.items()}, bool(fits[i]), memory[i], int(step.size),
                   int(fits.sum()), context, global_batch, gpus, Layout(attention=attention, overlap=overlap, **options))
