"""What one shape costs on a cluster: the layout search, training rates, days and serving,
as one record of plain values (the `cost` command's JSON fields; docs/performance.md). Pure."""
from __future__ import annotations


from ...arch import blocks
from ...core.errors import InputError
from ..billed import BILLED_NOTE, BILLED_RATIO
from ...core.frozen import frozen


@frozen
class Cluster:
    """The run and the cluster: accelerator, GPUs (None: one node), context, global batch in sequences
    (None: GPT-3's by size), training tokens, an MFU override, the fixed layout fields, serving batch,
    whether to count the layouts that fit."""

    gpu: str = "h100"
    gpus: int | None = None
    context: int = blocks.DEFAULT_CONTEXT
    global_batch: int | None = None
    tokens: float | None = None
    mfu: float | None = None
    fixed: tuple = ()
    attention: str | None = None
    serve: bool = False
    batch: int = 1
    count_layouts: bool = True  # False: layouts_fitting is null (the search skips counting; a plan's candidates)
    efficiency: float | None = None  # a calibration profile's share of the modelled compute time (None: perf.STEP_EFFICIENCY)
    calibrated_on: str | None = None  # what that profile was measured on (printed with every answer it times)
    serving_efficiency: float | None = None  # a profile's serving section: decode steps divided by it (serve.serving)

    @property
    def options(self) -> dict:
        """The Layout fields beyond the layout search's own: the calibrated efficiency, when there is one, and
        with --recompute op the op-level policy (``perf.step.recompute_options``)."""
        from .step import recompute_options

        options = {} if self.efficiency is None else {"efficiency": self.efficiency}
        return {**options, **recompute_options(dict(self.fixed).get("recompute"))}


def _setting(arch, cluster: Cluster) -> tuple:
    """(accelerator, GPUs: one node when not given, fixed layout fields, global batch in sequences)."""
    from ...arch.hardware import accelerator, node_gpus
    from .layout import default_global_batch

    hw = accelerator(cluster.gpu)
    fixed = dict(cluster.fixed)
    degrees = fixed.get("tp", 1) * fixed.get("pp", 1) * fixed.get("cp", 1)  # one node, rounded up to hold the fixed degrees
    return (hw, cluster.gpus or node_gpus(hw, degrees), fixed,
            cluster.global_batch or default_global_batch(blocks.params_nonembedding(arch), cluster.context))


def time_floor(arch: blocks.Architecture, cluster: Cluster) -> tuple[float, float] | None:
    """Lower bounds of ``predict``'s train_days and train_gpu_hours (the step's, ``layout.step_floor``),
    without timing a layout; None without a training length, with --mfu or when no layout divides the GPUs."""
    from .layout import step_floor

    if cluster.tokens is None or cluster.mfu is not None:
        return None
    hw, gpus, fixed, batch = _setting(arch, cluster)
    step = step_floor(arch, hw, gpus, cluster.context, batch, fixed, cluster.attention, **cluster.options)
    if step is None:
        return None
    return _days_and_gpu_hours(cluster.tokens * step / (batch * cluster.context), gpus)


def _days_and_gpu_hours(seconds, gpus: int) -> tuple:
    """A run of ``seconds`` on ``gpus`` GPUs in days of wall clock and in GPU-hours."""
    return seconds / 86400, seconds * gpus / 3600


MOST_NODES = 1 << 12  # without --gpus, the largest cluster tried for a model one node cannot hold


def _cluster_search(arch, hw, gpus: int, cluster: Cluster, batch: int, fixed: dict, fits_only: bool = False) -> tuple:
    """(GPUs, ``layout.search``'s answer, a note or None): on the GPUs given; without --gpus on one node,
    or when no layout fits there, on the smallest cluster of 2, 4, 8, ... nodes where one does
    (a 70B plan is not costed on one node it does not fit). With ``fits_only`` the answer is only
    whether a layout fits (``layout.fits``, True, False or None: no layout is timed)."""
    from ...core.messages import Message
    from .layout import fits, search

    def searched(n):
        if fits_only:
            return fits(arch, hw, n, cluster.context, batch, fixed, cluster.attention, **cluster.options)
        return search(arch, hw, n, cluster.context, batch, fixed, cluster.attention, count=cluster.count_layouts, **cluster.options)

    holds = (lambda found: found) if fits_only else (lambda found: found[0]["fits"])
    found = searched(gpus)
    if cluster.gpus is not None:
        return gpus, found, None
    if found is None or holds(found):
        return gpus, found, Message("gpus-assumed", f"no --gpus: one node of {gpus} {hw.label}")
    nodes = 2
    while nodes <= MOST_NODES:
        more = searched(nodes * gpus)
        if more is not None and holds(more):
            return nodes * gpus, more, Message("smallest-cluster", f"no --gpus: one node of {gpus} {hw.label} cannot hold it; "
                                               f"the smallest cluster that fits, {nodes * gpus:,} GPUs ({nodes} nodes), is costed "
                                               "(set --gpus)")
        nodes *= 2
    return gpus, found, Message("no-cluster", f"no --gpus: no cluster of up to {MOST_NODES:,} nodes of {hw.label} holds it; "
                                              "one node is shown")


def smallest_cluster(arch: blocks.Architecture, cluster: Cluster) -> tuple[int, str | None]:
    """(GPUs, note or None) of ``cluster`` without --gpus: one node when a layout of ``arch`` fits there,
    else the smallest cluster of 2, 4, 8, ... nodes that holds it, with the note ``predict`` prints
    (what `plan` ranks its shapes on, so that it does not present a plan that does not fit); one node,
    with a note saying so, when no cluster up to MOST_NODES nodes holds it."""
    from dataclasses import replace

    hw, gpus, fixed, batch = _setting(arch, cluster)
    gpus, found, note = _cluster_search(arch, hw, gpus, replace(cluster, gpus=None), batch, fixed, fits_only=True)
    return gpus, note if found is not None and note is not None and note.kind != "gpus-assumed" else None


def predict(arch: blocks.Architecture, cluster: Cluster) -> dict:
    """The cost record of ``arch`` on ``cluster`` (see docs/performance.md for every field)."""
    from ..loss import shape_loss_fields

    hw, gpus, fixed, batch = _setting(arch, cluster)
    nonembedding, embedding = blocks.params_nonembedding(arch), blocks.params_embedding(arch)
    notes = []
    if cluster.global_batch is None:
        notes.append(f"global batch {batch:,} sequences of {cluster.context:,} tokens: GPT-3's batch for this size "
                     "(Brown et al. 2020, Table 2.1) rounded to a power of two; set --global-batch")
    if cluster.mfu is not None:  # --mfu: the layout given, at that utilization (flat_costs)
        found = _given(arch, hw, gpus, cluster, batch, fixed)
        notes.append(f"--mfu {cluster.mfu}: time from that utilization in the layout given (none searched), not the "
                     "performance model")
    else:
        gpus, found, note = _cluster_search(arch, hw, gpus, cluster, batch, fixed)
        notes += [note] if note else []
    if found is None:
        raise InputError("--gpus", gpus, "no layout of the fixed degrees divides it: tp x cp x pp must divide the GPUs")
    layout, rates, memory, tried, fitting = found
    depth = arch.depth + arch.decoder_depth
    notes += _layout_notes(arch, hw, layout, rates, batch)
    tokens_per_second, mfu = rates["tokens_per_second"], rates["mfu"]
    step = batch * cluster.context / tokens_per_second
    days = hours = None
    if cluster.tokens is not None:
        days, hours = _days_and_gpu_hours(cluster.tokens / tokens_per_second, gpus)
        notes.append(BILLED_NOTE)
    record = {
        "params_nonembedding": nonembedding, "params_embedding": embedding,
        "gpu": hw.name, "gpus": gpus, "context": cluster.context, "global_batch": batch,
        "layout": {**{k: layout[k] for k in ("tp", "pp", "dp", "cp", "micro_batch", "recompute", "zero")},
                   "accumulation": int(rates["micro_batches"])},
        "interleave": layout["interleave"],
        "step_seconds": step, "tokens_per_second": tokens_per_second, "tokens_per_second_per_gpu": tokens_per_second / gpus,
        "mfu": mfu, "hfu": rates["hfu"], "bubble_fraction": rates["bubble_seconds"] / rates["step_seconds"],
        "train_memory_per_gpu_bytes": int(memory), "layouts_searched": tried, "layouts_fitting": fitting,
        "calibrated_on": cluster.calibrated_on if cluster.mfu is None else None,
        "tokens": cluster.tokens, "train_days": days, "train_gpu_hours": hours, "billed_ratio": BILLED_RATIO,
        "prefill_seconds": None, "decode_seconds_per_token": None, "decode_tokens_per_second": None, "serving_tp": None,
        "serving_measured_error": None,
    }
    # the loss model counts all parameters, embeddings included (Gemstones' counts, docs/loss.md)
    record.update(shape_loss_fields(depth, nonembedding + (embedding or 0), cluster.tokens, days, hours,
                                    width=arch.width, ffn=arch.ffn))
    if cluster.serve:
        notes += _serve(arch, hw, cluster, fixed, record)
    record["notes"] = notes + overflowed(record)
    return record


def flat_costs(arch, spec) -> tuple:
    """(``run.RunCosts`` of ``arch`` in the layout ``spec`` gives, timed at its flat ``mfu``; the MODEL_FIELDS
    dict without the decode latency): what ``--mfu`` means in every command (cost, plan, sweep, compare,
    inspect). No layout is searched: the fields not given keep the run options' defaults (tp 1, pp 1,
    ZeRO 1, selective recomputation, micro-batch 1; ``run.RunSpec``). The time is ``run_costs``' (the
    model FLOPs at that utilization, times the pipeline's imbalance p·ceil(L/p)/L); the step and the
    throughput follow from it, and ``mfu`` is the utilization the run achieves, the given one over that
    imbalance. Without GPUs (no data-parallel degree) no rate, no step and no accumulation."""
    from ..run import imbalance, run_costs
    from .layout import default_global_batch

    costs = run_costs(arch, spec)
    mfu = spec.mfu / imbalance(arch.depth + arch.decoder_depth, spec.pp)
    rate = step = accumulation = None
    batch = spec.global_batch or default_global_batch(blocks.params_nonembedding(arch), spec.context)
    if spec.gpus is not None:
        rate = mfu * spec.peak_flops * spec.gpus / costs.train_flops_per_token
        step = batch * spec.context / rate
        accumulation = -(-batch // (spec.dp * spec.micro_batch))
    layout = dict(tp=spec.tp, pp=spec.pp, dp=spec.dp, cp=1, micro_batch=spec.micro_batch, recompute=spec.recompute,
                  zero=spec.zero, accumulation=accumulation)
    return costs, {"mfu": mfu, "tokens_per_second": rate, "step_seconds": step, "layout": layout, "global_batch": batch}


def _given(arch: blocks.Architecture, hw, gpus: int, cluster: Cluster, batch: int, fixed: dict) -> tuple:
    """--mfu: ``_cluster_search``'s answer for the layout given (the fields not given at the run options'
    defaults), timed at the flat utilization (``flat_costs``, as plan, sweep, compare and inspect
    time it): (layout, rates, memory, None, None), no layout searched or counted. The hardware FLOPs
    (recomputation's extra forward) are the performance model's count for that layout."""
    from ..run import RunSpec
    from .step import RECOMPUTE_CODE, Layout, training_rates

    spec = RunSpec(tokens=cluster.tokens, gpu=hw.name, gpus=gpus, tp=fixed.get("tp", 1), pp=fixed.get("pp", 1),
                   zero=fixed.get("zero", 1), recompute=fixed.get("recompute", "selective"), mfu=cluster.mfu,
                   context=cluster.context, micro_batch=fixed.get("micro_batch", 1), global_batch=batch,
                   attention=cluster.attention)
    costs, flat = flat_costs(arch, spec)
    lay = flat["layout"]
    counted = training_rates(arch, hw, Layout(tp=lay["tp"], pp=lay["pp"], dp=lay["dp"], micro_batch=lay["micro_batch"],
                                              recompute=RECOMPUTE_CODE[lay["recompute"]], zero=lay["zero"],
                                              attention=cluster.attention, **cluster.options),
                             cluster.context, batch, gpus)
    micro, pp = lay["accumulation"], lay["pp"]
    rates = {"tokens_per_second": flat["tokens_per_second"], "mfu": flat["mfu"], "step_seconds": flat["step_seconds"],
             "hfu": flat["mfu"] * counted["hfu"] / counted["mfu"], "micro_batches": micro,
             "bubble_seconds": flat["step_seconds"] * (pp - 1) / (micro + pp - 1)}  # 1F1B's idle share (Narayanan et al. 2021)
    layout = {k: lay[k] for k in ("tp", "pp", "dp", "cp", "micro_batch", "recompute", "zero")}
    layout.update(interleave=1, fits=costs.fits_on_gpu)
    return layout, rates, costs.train_memory_per_gpu_bytes, None, None


def _layout_notes(arch: blocks.Architecture, hw, layout: dict, rates: dict, batch: int) -> list[str]:
    """What the searched layout costs or leaves out: an uneven pipeline, no fit (``layout["fits"]``
    is popped), a partly filled micro-batch, experts not split by expert parallelism."""
    notes = []
    depth = arch.depth + arch.decoder_depth
    if depth % layout["pp"]:
        notes.append(f"pipeline degree {layout['pp']} does not divide the {depth} layers: costed with the most loaded "
                     f"stage of {-(-depth // layout['pp'])} layers")
    if not layout.pop("fits"):
        notes.append(f"no layout fits in {hw.hbm_bytes / 1e9:.0f} GB per GPU: the least memory one is shown")
    if batch % (layout["dp"] * layout["micro_batch"]):
        notes.append(f"global batch {batch:,} is not a multiple of dp x micro-batch = {layout['dp']} x {layout['micro_batch']}: "
                     f"{int(rates['micro_batches'])} micro-batches per step costed, the last partly filled")
    if arch.moe:
        notes.append("mixture of experts: expert parallelism not searched (experts split by tensor parallelism)")
    return notes


def _serve(arch: blocks.Architecture, hw, cluster: Cluster, fixed: dict, record: dict) -> list[str]:
    """--serve: the serving fields into ``record`` (cost/serve.py); returns their notes."""
    from ..serve import ERROR_NOTE, MEASURED_ERROR, serving

    record.update({k: v for k, v in serving(arch, hw, cluster.context, cluster.batch, fixed.get("tp"),
                                            cluster.serving_efficiency or 1.0).items() if k in record})
    record["serving_measured_error"] = dict(MEASURED_ERROR)
    notes = [ERROR_NOTE.format(**MEASURED_ERROR)]
    if hw.hbm_achievable is None:
        from ...arch.hardware import ACHIEVED_SHARE

        notes.append(f"serving on {hw.label}: no published decode bandwidth read; the datasheet's x A100's measured "
                     f"share ({ACHIEVED_SHARE:.1%}) assumed (arch/hardware.py SYSTEM_SOURCES, unverified)")
    return notes


TIMED = ("step_seconds", "tokens_per_second", "tokens_per_second_per_gpu", "train_days", "train_gpu_hours",
         "time_to_target_days", "time_to_target_gpu_hours", "prefill_seconds", "decode_seconds_per_token", "decode_tokens_per_second")


def overflowed(record: dict) -> list[str]:
    """Set every time figure of ``record`` past the float range (inf, NaN) or rounded to 0 to None, in place,
    and say which: null in every format, shown as - in the table with this note (the outside stress test: the
    table showed days inf and tokens/s 0 where the JSON said null)."""
    import math

    lost = [name for name in TIMED if isinstance(record.get(name), float) and (not math.isfinite(record[name]) or record[name] == 0)]
    for name in lost:
        record[name] = None
    return [f"{', '.join(lost)}: beyond the floating-point range at these inputs, so not given"] if lost else []
