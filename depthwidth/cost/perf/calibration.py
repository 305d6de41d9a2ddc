"""Calibration from one's own run: the stack's efficiency that makes the performance model
reproduce a measured step time. Pure: numbers in, numbers out.

The performance model times the compute of a step (``perf.step.train_step``: matrix multiplies, the
attention core, element-wise work, the output head) and divides it by one factor, the share of the
modelled compute time a real stack achieves (``perf.step.STEP_EFFICIENCY``, 0.82 out of the box, set on
the published-runs table). Communication (``comm.py``) is not scaled. One measurement fixes one
factor: calibration solves predicted step(efficiency) = measured step for it, in the layout the
search picks at that efficiency (the same search ``cost --profile`` then runs, so the calibrated run
is reproduced). The predicted step falls as the efficiency grows (every layout's compute does, and
the exposed communication never grows faster than the compute it hides behind), so there is one root,
found by bracketed regula falsi in 1/efficiency (``fit_efficiency``). A measured step the model cannot reach at any efficiency
in ``EFFICIENCY_RANGE`` (faster than its communication alone, or over 50x slower than its compute)
is refused.

The interval: a log gives many steps; the efficiency fitted to the 10th and the 90th percentile step
times bounds the efficiency 80% of the measured steps ran at. One number (--step-seconds,
--tokens-per-second) has no spread: the interval is null, with that reason.
"""
from __future__ import annotations

import math

from ...core.errors import InputError

EFFICIENCY_RANGE = (0.02, 4.0)  # the shares of the modelled compute time a fit may land on
TOLERANCE = 1e-7  # relative, on the step time (or the bracket): where the root search stops


def predicted_step(arch, spec, fixed: tuple, efficiency: float) -> tuple[float, dict]:
    """(step seconds, the chosen layout) of ``arch`` under ``spec`` with the stack's ``efficiency``."""
    from dataclasses import replace

    from .modeled import cluster
    from .predict import predict

    record = predict(arch, cluster(replace(spec, efficiency=efficiency), fixed, count_layouts=False))
    return record["step_seconds"], record["layout"]


def fit_efficiency(arch, spec, fixed: tuple, step_seconds: float, what: str = "--step-seconds") -> float:
    """The efficiency at which the model's step of ``arch`` under ``spec`` is ``step_seconds``
    (module docstring); InputError naming ``what`` when no efficiency in EFFICIENCY_RANGE gives it.

    Solved in x = 1/efficiency, in which the step is linear but for the exposed communication and a
    change of layout: regula falsi with the Illinois step (Dowell and Jarratt 1971), kept inside its
    bracket, so a few model evaluations reach TOLERANCE where bisection takes twenty-five."""
    def excess(x):
        return predicted_step(arch, spec, fixed, 1.0 / x)[0] - step_seconds

    lo, hi = 1.0 / EFFICIENCY_RANGE[1], 1.0 / EFFICIENCY_RANGE[0]
    f_lo, f_hi = excess(lo), excess(hi)
    if not f_lo <= 0 <= f_hi:
        fastest, slowest = f_lo + step_seconds, f_hi + step_seconds
        side = (f"faster than the model allows even at efficiency {EFFICIENCY_RANGE[1]:g} ({fastest:.4g} s: communication "
                "and memory traffic alone)" if f_lo > 0 else
                f"slower than the model gives even at efficiency {EFFICIENCY_RANGE[0]:g} ({slowest:.4g} s)")
        raise InputError(what, f"{step_seconds:.6g} s per step", side + "; check the shape, --gpus, the layout and the batch")
    side = 0
    for _ in range(200):
        x = (lo * f_hi - hi * f_lo) / (f_hi - f_lo) if f_hi != f_lo else (lo + hi) / 2
        f_x = excess(x)
        if abs(f_x) <= TOLERANCE * step_seconds or hi - lo <= TOLERANCE * lo:
            return 1.0 / x
        if f_x > 0:
            hi, f_hi = x, f_x
            f_lo = f_lo / 2 if side == -1 else f_lo  # Illinois: the end kept twice is halved
            side = -1
        else:
            lo, f_lo = x, f_x
            f_hi = f_hi / 2 if side == 1 else f_hi
            side = 1
    return 1.0 / x


COMPUTE_BOUND = 0.5  # below this share of the step in compute, a measured step fixes the efficiency loosely


def compute_share(arch, spec, fixed: tuple, efficiency: float, step_seconds: float, step: float = 0.01) -> float:
    """The share of the predicted step that the efficiency scales (the compute; the rest is exposed
    communication and memory traffic): -d ln(step) / d ln(efficiency), by a ``step`` of 1% in the
    efficiency. Near 0, the run is bound by communication: its measured step says little about the
    compute speed, and an efficiency fitted on it predicts runs bound by compute poorly (docs/performance.md,
    "Measured error on published runs": the DeepSpeed ZeRO-3 runs)."""
    faster = predicted_step(arch, spec, fixed, efficiency * (1 + step))[0]
    return min(max((step_seconds - faster) / step_seconds / (1 - 1 / (1 + step)), 0.0), 1.0)


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (0-1) of ``values``, linear between order statistics (NumPy's default)."""
    ordered = sorted(values)
    position = q * (len(ordered) - 1)
    below = math.floor(position)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (ordered[above] - ordered[below]) * (position - below)


def step_summary(steps: list[float]) -> tuple[float, float | None, float | None]:
    """(median, 10th percentile, 90th percentile) of measured step times; no percentiles for one step."""
    if len(steps) == 1:
        return steps[0], None, None
    return percentile(steps, 0.5), percentile(steps, 0.1), percentile(steps, 0.9)
