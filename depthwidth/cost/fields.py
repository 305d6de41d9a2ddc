"""The costs of a training run (``cost.run.run_costs``) as fields of a shape record.

Every shape record that `plan`, `compare` and `inspect` print gains the same cost fields, in the
same order (README "Output fields"); the ones that need a training length are null without one.
Pure: no I/O."""
from __future__ import annotations

import dataclasses
from functools import lru_cache

from ..core.frozen import frozen

COST_FIELDS = ("tokens", "train_flops_per_token", "train_flops", "train_gpu_hours", "train_days",
               "weights_bytes_per_gpu", "gradients_bytes_per_gpu", "optimizer_bytes_per_gpu", "activations_bytes_per_gpu",
               "train_memory_per_gpu_bytes", "fits_on_gpu", "kv_cache_bytes_per_sequence", "inference_memory_bytes")
NEED_TOKENS = ("tokens", "train_flops", "train_gpu_hours", "train_days")
# The run fields on every shape record with a training length: a sweep row's costs,
# and (without ``tokens``) the ones a plan repeats for its recommended shape (``recommended_`` + name).
RUN_FIELDS = ("tokens", "train_flops", "train_gpu_hours", "train_days", "train_memory_per_gpu_bytes", "fits_on_gpu",
              "kv_cache_bytes_per_sequence")
RECOMMENDED_FIELDS = RUN_FIELDS[1:]
# the performance model's account of a given shape's run (compare, inspect; cost/modeled.MODEL_FIELDS but decode)
TIME_FIELDS = ("step_seconds", "tokens_per_second", "mfu", "layout", "calibrated_on")


def cost_fields(costs, tokens_given: bool = True) -> dict:
    """The COST_FIELDS of a ``cost.run.RunCosts``; without a training length the fields that need one
    are None (the costs may have been computed at an assumed length, for ranking only)."""
    out = {name: getattr(costs, name) for name in COST_FIELDS}
    if not tokens_given:
        out.update(dict.fromkeys(NEED_TOKENS))
    return out


def empty_cost_fields() -> dict:
    """Every cost field None (the time fields too): a shape whose layout is unknown cannot be costed."""
    return dict.fromkeys(COST_FIELDS + TIME_FIELDS)


@lru_cache(maxsize=None)
def costed_type(cls, loss: bool = False):
    """``cls`` (a ``@frozen`` shape record) extended with its ``run`` and ``serve`` records (``Run``, ``Serve``;
    None: not costed), and with ``loss`` its ``loss`` record between them (``Loss``, as plan's candidates)."""
    from ..core.frozen import frozen_class

    names = ("run", "loss", "serve") if loss else ("run", "serve")
    return frozen_class(cls.__name__, [(name, f"{name.title()} | None", dataclasses.field(default=None)) for name in names],
                        bases=(cls,), module=__name__)


def with_costs(record, fields: dict, spec=None):
    """A copy of the shape record ``record`` with ``run`` and ``serve`` records after its own fields, nested
    (``nested``) from the flat cost (and time) ``fields`` under the run ``spec``; both None when every cost
    field is None (a shape whose layout is unknown). With loss fields among ``fields`` (``loss_vs_best``...:
    ``NESTED``), a ``loss`` record between them. Notes kept as they are."""
    values = {f.name: getattr(record, f.name) for f in dataclasses.fields(record)}
    parts = nested(fields, spec) if any(v is not None for v in fields.values()) else {}
    if "loss_vs_best" in fields:
        return costed_type(type(record), True)(**values, **{name: parts.get(name) for name in ("run", "loss", "serve")})
    return costed_type(type(record))(**values, run=parts.get("run"), serve=parts.get("serve"))


# The nested run of a shape record: ``run``, ``loss`` and ``serve`` hold what the flat
# fields above held, under these names. The map old flat name -> new path is also what `--field`
# accepts for one minor version (output/renames.py) and the CHANGELOG's table.
NESTED = {
    "tokens": "run.tokens", "train_flops_per_token": "run.train_flops_per_token", "train_flops": "run.train_flops",
    "train_gpu_hours": "run.train_gpu_hours", "train_days": "run.train_days",
    "weights_bytes_per_gpu": "run.weights_bytes_per_gpu", "gradients_bytes_per_gpu": "run.gradients_bytes_per_gpu",
    "optimizer_bytes_per_gpu": "run.optimizer_bytes_per_gpu", "activations_bytes_per_gpu": "run.activations_bytes_per_gpu",
    "train_memory_per_gpu_bytes": "run.memory_per_gpu_bytes", "fits_on_gpu": "run.fits",
    "time_to_target_days": "run.time_to_target_days", "time_to_target_gpu_hours": "run.time_to_target_gpu_hours",
    "mfu": "run.mfu", "tokens_per_second": "run.tokens_per_second", "step_seconds": "run.step_seconds",
    "layout": "run.layout", "calibrated_on": "run.calibrated_on",
    "loss_vs_best": "loss.vs_best", "loss_vs_best_low": "loss.low", "loss_vs_best_high": "loss.high",
    "kv_cache_bytes_per_sequence": "serve.kv_cache_bytes_per_sequence", "inference_memory_bytes": "serve.inference_memory_bytes",
    "decode_seconds_per_token": "serve.decode_seconds_per_token",
}


@frozen
class Run:
    """A shape's training run: its parallel ``layout`` (tp, pp, dp, cp, micro_batch, accumulation, zero,
    recompute: the performance model's best, or the one given), the attention kernel, the global batch
    (sequences), the step time, throughput and MFU, the length, FLOPs, GPU-hours and wall-clock days
    (null without a GPU count), the memory per GPU and whether it fits, and the time to the best shape's
    loss (``advice/target.py``; null where unknown). Every figure is of this one run (costs.RunCosts)."""

    layout: dict | None = None
    attention: str | None = None
    global_batch: int | None = None
    context: int | None = None
    tokens: float | None = None
    step_seconds: float | None = None
    tokens_per_second: float | None = None
    mfu: float | None = None
    train_flops_per_token: int | None = None
    train_flops: float | None = None
    train_gpu_hours: float | None = None
    train_days: float | None = None
    weights_bytes_per_gpu: int | None = None
    gradients_bytes_per_gpu: int | None = None
    optimizer_bytes_per_gpu: int | None = None
    activations_bytes_per_gpu: int | None = None
    memory_per_gpu_bytes: int | None = None
    fits: bool | None = None
    time_to_target_days: float | None = None
    time_to_target_gpu_hours: float | None = None
    calibrated_on: str | None = None


@frozen
class Loss:
    """The loss model's predicted penalty of a shape against the best shape of its size (cost/loss.py):
    ``vs_best`` and its interval [``low``, ``high``]."""

    vs_best: float | None = None
    low: float | None = None
    high: float | None = None


@frozen
class Serve:
    """Serving one sequence at the run's context: the KV cache, the inference memory (weights and
    cache) and the modelled decode time per token (cost/serve.py; null where not modelled)."""

    kv_cache_bytes_per_sequence: int | None = None
    inference_memory_bytes: int | None = None
    decode_seconds_per_token: float | None = None


def nested(flat: dict, spec=None) -> dict:
    """``run``, ``loss`` and ``serve`` records from the flat fields (old names, ``NESTED``) of one shape:
    the layout is the model's or the one given (--mfu: ``predict.flat_costs``), ``spec`` the run.RunSpec they were
    costed under; ``loss`` is None without a penalty."""
    parts = {"run": {}, "loss": {}, "serve": {}}
    for old, path in NESTED.items():
        if old in flat:
            group, name = path.split(".")
            parts[group][name] = flat[old]
    run = parts["run"]
    if spec is not None:
        run.setdefault("context", spec.context)
        run["attention"] = spec.attention or ("flash" if flat.get("mfu") is not None else None)
    layout = run.get("layout")
    if flat.get("global_batch"):  # the batch the run was timed at (a layout whose dp x micro-batch does not divide it
        run["global_batch"] = flat["global_batch"]  # runs a last micro-batch partly filled: the product overstates it)
    elif layout and layout.get("accumulation"):
        run["global_batch"] = layout["dp"] * layout["micro_batch"] * layout["accumulation"]
    elif spec is not None:
        run["global_batch"] = spec.global_batch
    loss = Loss(**parts["loss"]) if any(v is not None for v in parts["loss"].values()) else None
    return dict(run=Run(**run), loss=loss, serve=Serve(**parts["serve"]))


# `cost`'s flat fields (0.4: ``predict.predict``'s record) -> their paths in its row (``CostRow``)
COST_NESTED = {
    **{name: f"run.{name}" for name in ("tokens", "train_gpu_hours", "train_days", "time_to_target_days",
                                         "time_to_target_gpu_hours", "mfu", "tokens_per_second", "step_seconds", "layout",
                                         "calibrated_on")},
    "train_memory_per_gpu_bytes": "run.memory_per_gpu_bytes",
    "loss_vs_best": "loss.vs_best", "loss_vs_best_low": "loss.low", "loss_vs_best_high": "loss.high",
    **{name: f"run.{name}" for name in ("gpu", "gpus", "context", "global_batch", "interleave", "tokens_per_second_per_gpu", "hfu",
                                         "bubble_fraction", "layouts_searched", "layouts_fitting", "billed_ratio")},
    "loss_fitted_params_low": "loss.fitted_params_low", "loss_fitted_params_high": "loss.fitted_params_high",
    "loss_in_fitted_range": "loss.in_fitted_range",
    **{name: f"serve.{name}" for name in ("prefill_seconds", "decode_seconds_per_token", "decode_tokens_per_second")},
    "serving_tp": "serve.tp", "serving_measured_error": "serve.measured_error",
}
