"""Named calibration profiles: `--profile NAME` for the software stacks of the published-runs
table (tests/data/published_runs.json), instead of a profile file of one's own run.

Each is the stack's efficiency (``perf.step.Layout.efficiency``: the share of the modelled compute time it
achieves) on one accelerator: the median of the efficiencies calibrated on each of the stack's
published runs there (what ``depthwidth calibrate`` fits on one run), tested by leaving one run out
(each run predicted at the median of the others'; never fitted per row). The figures are
``benchmarks/perf_accuracy.py --profiles``'s, and tests/test_perf_accuracy.py checks they are still
the table's. Pure data: no I/O.
"""
from __future__ import annotations

# name: (the stack, its sources (the rows' papers), {accelerator: (efficiency, runs, leave-one-out median, max)})
STACK_PROFILES = {
    "megatron-lm-2021": ("Megatron-LM 2021-22 (no fused attention, gradients reduced after the backward pass)",
                         "Narayanan et al. 2021 Tables 1-2; Korthikanti et al. 2022 Table 5",
                         {"a100-80gb": (0.847, 25, 0.040, 0.087)}),
    "megascale-megatron-2023": ("Megatron-LM @285068c8 (2023) on MegaScale's network, flash attention, data-parallel "
                                "communication not overlapped", "Jiang et al. 2024 (MegaScale) Table 2",
                                {"a100-80gb": (0.761, 8, 0.033, 0.066)}),
    "deepspeed-zero3-2021": ("DeepSpeed ZeRO-3 without model parallelism (weight gathers not hidden)",
                             "Narayanan et al. 2021 Table 2", {"a100-80gb": (1.341, 6, 0.051, 0.148)}),
    "llm-foundry-2023": ("MosaicML llm-foundry / Composer, PyTorch FSDP FULL_SHARD, Triton flash attention",
                         "llm-foundry scripts/train/benchmarking/README.md @061f2c7c",
                         {"a100-80gb": (0.826, 4, 0.078, 0.098), "h100": (0.714, 6, 0.142, 0.182),
                          "a100-40gb": (0.833, 3, 0.046, 0.064)}),
    "meta-4d-2024": ("Meta's 4D parallelism for Llama 3 (FSDP-style ZeRO, context parallelism)",
                     "Llama Team 2024 (The Llama 3 Herd of Models) Table 4", {"h100": (0.900, 3, 0.063, 0.097)}),
    "torchtitan-2024": ("torchtitan, PyTorch FSDP2 with SDPA flash attention",
                        "pytorch/torchtitan docs/performance.md @04133643", {"a100-80gb": (0.794, 4, 0.040, 0.066)}),
}


def stack_profile(name: str, gpu: str) -> tuple[float, str] | None:
    """(efficiency, the line saying what it was calibrated on) of the named profile on ``gpu``; None when
    ``name`` names no profile; ValueError (its message names the accelerators it has) when it has none for
    ``gpu``."""
    if name not in STACK_PROFILES:
        return None
    stack, sources, fitted = STACK_PROFILES[name]
    if gpu not in fitted:
        raise ValueError(f"is fitted on {', '.join(fitted)} runs only, and this run is on {gpu}")
    efficiency, runs, median, most = fitted[gpu]
    return efficiency, (f"named profile {name}: {stack}, the median efficiency of {runs} published runs on {gpu} "
                        f"({sources}); leave one run out: median error {median:.1%}, max {most:.1%}")
