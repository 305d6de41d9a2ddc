"""The costs of a training run (``cost.run.run_costs``) as fields of a shape record.

Every shape record that `plan`, `compare` and `inspect` print gains the same cost fields, in the
same order (README "Output fields"); the ones that need a training length are null without one.
Pure: no I/O."""
from __future__ import annotations

import dataclasses
from functools import lru_cache

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
def _with_cost_fields(cls):
    """``cls`` (a ``@frozen`` shape record) extended with the cost and time fields, all defaulting to None."""
    from ..theory.frozen import frozen_class

    return frozen_class(cls.__name__, [(name, object, dataclasses.field(default=None)) for name in COST_FIELDS + TIME_FIELDS],
                        bases=(cls,))


def with_costs(record, fields: dict):
    """A copy of the shape record ``record`` with the cost (and time) fields after its own (notes kept as they are)."""
    values = {f.name: getattr(record, f.name) for f in dataclasses.fields(record)}
    return _with_cost_fields(type(record))(**values, **fields)
