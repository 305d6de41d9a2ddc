"""`cost`'s row: the run on the cluster as `cost` reports it (``ClusterRun``), the loss penalty with the
sizes its model was fitted on (``ShapeLoss``), serving with the serving model's times (``Serving``), and
the row itself (``CostRow``, filled by ``cost_row`` from ``predict.predict``'s flat record, whose fields
``cost.fields.COST_NESTED`` maps). They extend the records every command shares (``cost.fields``: Run,
Loss, Serve) and live apart from them, so that the commands that do not print `cost`'s row do not build
their classes. Pure: no I/O."""
from __future__ import annotations

from ..arch.record import BLOCK_FIELDS, ShapeRecord, repeats
from ..core.frozen import frozen
from .fields import COST_NESTED, Loss, Run, Serve


@frozen
class ClusterRun(Run):
    """The run as `cost` reports it: ``Run``'s fields, then the accelerator and GPU count it was costed on,
    the pipeline's interleave, the rate per GPU, the hardware FLOPs utilization (recomputation counted), the
    pipeline bubble's share of the step, how many layouts the search tried and how many fit, and what billed
    time typically is against the predicted (``cost/billed.py``). Not broken down by ``cost``: the memory's
    parts (``weights_bytes_per_gpu`` ...: compare and inspect give them), null here."""

    gpu: str | None = None
    gpus: int | None = None
    interleave: int | None = None
    tokens_per_second_per_gpu: float | None = None
    hfu: float | None = None
    bubble_fraction: float | None = None
    layouts_searched: int | None = None
    layouts_fitting: int | None = None
    billed_ratio: float | None = None


@frozen
class ShapeLoss(Loss):
    """``Loss`` with the sizes the loss model's data span and whether the shape's size lies inside them
    (outside, the interval widens with the distance; cost/loss.py ``fitted_range``)."""

    fitted_params_low: float | None = None
    fitted_params_high: float | None = None
    in_fitted_range: bool | None = None


@frozen
class Serving(Serve):
    """``Serve`` with the serving model's times (`cost --serve`; cost/serve.py): prefill of one sequence,
    decode tokens per second at the batch, the tensor-parallel degree served on and the model's measured
    error against published serving runs."""

    prefill_seconds: float | None = None
    decode_tokens_per_second: float | None = None
    tp: int | None = None
    measured_error: dict | None = None


def grouped(flat: dict, paths: dict) -> dict:
    """The flat fields of ``flat`` named in ``paths`` (old name -> ``group.name``) as one dict per group."""
    parts = {}
    for old, path in paths.items():
        if old in flat:
            group, name = path.split(".")
            parts.setdefault(group, {})[name] = flat[old]
    return parts


@frozen
@repeats(ShapeRecord, BLOCK_FIELDS, after="arch")
class CostRow:
    """One row of `cost`: the shape as given (``shape``: its text or config path), its depth, width, heads,
    block preset and block (``arch.record.ShapeRecord``'s fields), then its ``run`` on the cluster, the loss
    model's ``loss`` penalty and, with --serve, ``serve`` (null without), and the notes."""

    shape: str
    depth: int
    width: int
    heads: int
    arch: str
    run: ClusterRun
    loss: ShapeLoss | None
    serve: Serving | None
    notes: tuple[str, ...]


def cost_row(shape: str, arch, flat: dict, hbm_bytes: float, serve_batch: int | None, attention: str | None = None) -> CostRow:
    """The `cost` row of ``arch`` (a blocks.Architecture, shown as ``shape``) from ``predict``'s flat record
    ``flat`` (its 0.4 fields, ``COST_NESTED``), timed with the ``attention`` kernel given (None: the
    performance model's default, ``perf.step.attention_kernel``): whether it fits is its memory against ``hbm_bytes``;
    the FLOPs are the run's own (``run.train_flops_per_token``); ``serve`` (null without --serve, no
    ``serve_batch``) takes its cache and inference memory at that batch from ``run.run_costs``."""
    from ..arch.record import block_fields
    from .perf.step import Layout, attention_kernel
    from .run import RunSpec, run_costs, train_flops_per_token

    parts = grouped(flat, COST_NESTED)
    run = parts["run"]
    memory = run.get("memory_per_gpu_bytes")
    run["fits"] = None if memory is None else bool(memory <= hbm_bytes)
    run["attention"] = attention_kernel(arch, Layout(attention=attention))
    run["train_flops_per_token"] = per_token = train_flops_per_token(arch, run["context"])
    run["train_flops"] = None if run.get("tokens") is None else float(per_token * run["tokens"])
    fields, _ = block_fields(arch, context=run["context"])
    loss = ShapeLoss(**parts["loss"]) if parts.get("loss", {}).get("vs_best") is not None else None
    serve = None
    if serve_batch is not None:
        costs = run_costs(arch, RunSpec(gpu=run["gpu"], context=run["context"], batch=serve_batch))
        serve = Serving(kv_cache_bytes_per_sequence=costs.kv_cache_bytes_per_sequence,
                        inference_memory_bytes=costs.inference_memory_bytes, **parts["serve"])
    return CostRow(shape=shape, depth=arch.depth, width=arch.width, heads=arch.heads, arch=arch.family, **fields,
                   run=ClusterRun(**run), loss=loss, serve=serve, notes=tuple(flat.get("notes", ())))
