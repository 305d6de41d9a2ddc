"""A shape's run costs with its time from the performance model: what `plan` and `sweep`
rank and print for every candidate.

``run.run_costs`` gives FLOPs, memory and the KV cache of one layout; the performance model
(``predict.predict``: the layout search of ``layout.py`` over ``perf.py``'s step time) gives the
fastest layout that fits on the cluster and its tokens per second. Here the two meet: the layout the
search chose is costed by ``run_costs`` (so the memory fields describe that layout), and the time
fields (``train_gpu_hours``, ``train_days``) are the model's. The reader's fields (``MODEL_FIELDS``)
say why a shape is fast or slow: its MFU, tokens per second, layout and decode latency (one sequence
at the run's context, ``serve.serving``). Pure: no I/O.
"""
from __future__ import annotations

from dataclasses import replace

MODEL_FIELDS = ("mfu", "tokens_per_second", "step_seconds", "layout", "decode_seconds_per_token", "global_batch")


def cluster(spec, fixed: tuple = (), **options):
    """The ``predict.Cluster`` of a ``run.RunSpec``: what every command that shows time hands the
    performance model (cost, plan, sweep, compare, inspect, calibrate), so that one run gets one answer."""
    from .predict import Cluster

    return Cluster(gpu=spec.gpu, gpus=spec.gpus, context=spec.context, global_batch=spec.global_batch, tokens=spec.tokens,
                   fixed=tuple(fixed), attention=spec.attention, efficiency=spec.efficiency,
                   calibrated_on=spec.calibrated_on, serving_efficiency=spec.serving_efficiency, **options)


def modeled_costs(arch, spec, fixed: tuple = (), serve: bool = True) -> tuple:
    """(``run.RunCosts`` of ``arch`` in its best layout, with the model's time; the MODEL_FIELDS dict,
    without ``decode_seconds_per_token`` when ``serve`` is False: ``decode_seconds`` gives it alone).

    ``spec`` is a ``run.RunSpec`` giving the accelerator, GPUs (None: one node), context and tokens;
    ``fixed`` the layout fields the user gave ((name, value) pairs: tp, pp, zero, recompute,
    micro_batch), the rest searched. A recomputation of ``none`` under a flash kernel keeps what
    selective keeps (no T x T scores; ``layout.memory_per_gpu``), so its memory is costed as selective."""
    from .step import attention_kernel, Layout
    from .predict import predict
    from ..run import run_costs

    record = predict(arch, cluster(spec, fixed, serve=serve, batch=1, count_layouts=False))
    lay = record["layout"]
    recompute = lay["recompute"]
    if recompute == "none" and attention_kernel(arch, Layout(attention=spec.attention)) == "flash":
        recompute = "selective"
    costs = run_costs(arch, replace(spec, gpus=record["gpus"], tp=lay["tp"], pp=lay["pp"], zero=lay["zero"],
                                    recompute=recompute, micro_batch=lay["micro_batch"]))
    memory = record["train_memory_per_gpu_bytes"]
    states = costs.weights_bytes_per_gpu + costs.gradients_bytes_per_gpu + costs.optimizer_bytes_per_gpu
    costs = replace(costs, train_gpu_hours=record["train_gpu_hours"], train_days=record["train_days"],
                    activations_bytes_per_gpu=max(0, memory - states), train_memory_per_gpu_bytes=memory,
                    fits_on_gpu=memory <= spec.hardware.hbm_bytes)
    extra = {"mfu": record["mfu"], "tokens_per_second": record["tokens_per_second"], "step_seconds": record["step_seconds"],
             "layout": dict(lay), "global_batch": record["global_batch"]}
    if serve:
        extra["decode_seconds_per_token"] = record["decode_seconds_per_token"]
    return costs, extra


def smallest_cluster(arch, spec, fixed: tuple = ()) -> tuple[int, str | None]:
    """(GPUs, note or None): one node of ``spec``'s accelerator, or the smallest cluster that holds ``arch``
    when one node does not (``predict.smallest_cluster``: as cost, compare and inspect choose it)."""
    from .predict import smallest_cluster as smallest

    return smallest(arch, cluster(replace(spec, gpus=None), fixed))


def time_floor(arch, spec, fixed: tuple = ()) -> tuple[float, float] | None:
    """Lower bounds of ``modeled_costs``' train_days and train_gpu_hours (``predict.time_floor``)."""
    from .predict import time_floor as floor

    return floor(arch, cluster(spec, fixed))


def decode_seconds(arch, spec, fixed: tuple = (), tp: int | None = None) -> float:
    """``modeled_costs``' decode latency alone: one sequence at the run's context on ``spec``'s
    accelerator, at the serving tensor-parallel degree (``predict.predict`` with ``serve``), or at ``tp``
    when given (a fixed --tp wins)."""
    from ...arch.hardware import accelerator
    from ..serve import serving

    return serving(arch, accelerator(spec.gpu), spec.context, 1, dict(fixed).get("tp") or tp,
                   spec.serving_efficiency or 1.0)["decode_seconds_per_token"]


def serving_degree(arch, spec, fixed: tuple = ()) -> int:
    """The tensor-parallel degree ``decode_seconds`` serves ``arch`` at (``serve.serving_tp``)."""
    from ...arch.hardware import accelerator
    from ..serve import serving_tp

    return serving_tp(arch, accelerator(spec.gpu), spec.context, 1, dict(fixed).get("tp"))
