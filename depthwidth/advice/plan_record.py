"""The plan's records (field names are the JSON contract; README and docs/costs.md document each):
``Candidate`` (one iso-budget shape with its costs and loss), ``PlanBrief`` (the threshold rule's
answer, all of `plan --brief`) and ``Plan`` (the brief, then the rule, the recommendation, the
evidence and the run). ``planner`` fills them; they are importable from there too.
"""
from __future__ import annotations


from ..arch.blocks import Architecture
from ..arch.record import COUNT_FIELDS, COUNT_TYPES, LAYOUT_FIELDS, ShapeRecord, repeats, shape_record
from ..arch.snapping import Snapped
from ..cost.fields import COST_FIELDS
from ..cost.run import RunCosts
from ..theory.separation import CONSISTENT, bounds
from ..theory.frozen import frozen


@frozen
class Candidate(ShapeRecord):
    """One iso-budget shape: the shape record (``arch.record.ShapeRecord``), its aspect ratio d/L,
    ``budget_deviation`` (the relative deviation of the count the budget limits, the plan's
    ``budget_count``, from the budget), whether its depth lies in the evidence band, and the costs
    of its training run (``run_records.COST_FIELDS``; null where they need what was not given)."""

    aspect_ratio: float
    budget_deviation: float
    in_band: bool = False
    tokens: float | None = None
    train_flops_per_token: int | None = None
    train_flops: float | None = None
    train_gpu_hours: float | None = None
    train_days: float | None = None
    weights_bytes_per_gpu: int | None = None
    gradients_bytes_per_gpu: int | None = None
    optimizer_bytes_per_gpu: int | None = None
    activations_bytes_per_gpu: int | None = None
    train_memory_per_gpu_bytes: int | None = None
    fits_on_gpu: bool | None = None
    kv_cache_bytes_per_sequence: int | None = None
    inference_memory_bytes: int | None = None
    loss_vs_best: float | None = None  # target.LOSS_FIELDS: the loss model's penalty and the time to the best shape's loss
    loss_vs_best_low: float | None = None
    loss_vs_best_high: float | None = None
    time_to_target_days: float | None = None
    time_to_target_gpu_hours: float | None = None
    mfu: float | None = None  # cost/modeled.MODEL_FIELDS: the performance model's account of the shape (null with --mfu)
    tokens_per_second: float | None = None
    step_seconds: float | None = None
    layout: dict | None = None
    decode_seconds_per_token: float | None = None


def candidate(snapped: Snapped, context: int, reading: str = CONSISTENT, costs: dict | None = None,
              in_band: bool = False) -> Candidate:
    """The candidate record of a snapped shape (``costs``: its cost fields, run_records.cost_fields)."""
    arch = snapped.arch
    record = shape_record(bounds(arch.depth, arch.width, arch.heads, reading), arch, context)
    return Candidate(**record.__dict__, aspect_ratio=arch.width / arch.depth, budget_deviation=snapped.deviation,
                     in_band=in_band, **(costs or {}))


@frozen
@repeats(Architecture, LAYOUT_FIELDS, after="width")
@repeats(COUNT_TYPES, COUNT_FIELDS, after="params_12Ld2")
class PlanBrief:
    """The threshold rule's answer for one budget: the leading fields of every plan record, and
    all of `plan --brief` (``brief.py``)."""

    budget: int
    budget_source: str
    arch: str
    budget_count: str
    min_depth_exact: float
    min_depth: int
    width_exact: float
    width: int
    params_12Ld2: int
    budget_deviation: float
    flops_per_token: int
    kv_bytes_per_token: int | None
    tp_sizes: tuple[int, ...]
    regime: str


@frozen
@repeats(RunCosts, COST_FIELDS, after="run")
class Plan(PlanBrief):
    """The plan record for one budget (field names are the JSON contract; README documents each):
    the PlanBrief fields, then the rule, the recommendation, the evidence and the run."""

    rule: str
    empirical_depth: float | None
    empirical_width: float | None
    recommended_depth: int
    recommended_width: int
    recommended_heads: int
    recommended_kv_heads: int
    recommended_ffn: int
    recommended_params_nonembedding: int
    recommended_params_active: int
    recommended_params_with_embeddings: int | None
    recommended_budget_deviation: float
    recommended_tp_sizes: tuple[int, ...]
    # the evidence and the pick (evidence.py; README "How the recommendation is made")
    prefer: str
    depth_band: tuple[int, int]
    why: str
    evidence: tuple[dict, ...]
    rule_depth_low: float | None  # --rule-file: the 95% interval of the fitted depth, in range, clamped
    rule_depth_high: float | None
    rule_in_range: bool | None
    rule_clamped: bool | None
    # the training run (cost/run.py; README "Costs of a training run"): the minimal-depth shape's costs
    run: dict  # then cost.fields.COST_FIELDS, as cost.run.RunCosts types them
    # ... and the recommended shape's
    recommended_train_flops: float | None
    recommended_train_gpu_hours: float | None
    recommended_train_days: float | None
    recommended_train_memory_per_gpu_bytes: int
    recommended_fits_on_gpu: bool
    recommended_kv_cache_bytes_per_sequence: int | None
    recommended_loss_vs_best: float | None
    recommended_loss_vs_best_low: float | None
    recommended_loss_vs_best_high: float | None
    recommended_time_to_target_days: float | None
    recommended_mfu: float | None  # the performance model's (cost/modeled.py); null with --mfu
    recommended_tokens_per_second: float | None
    recommended_step_seconds: float | None
    recommended_layout: dict | None
    recommended_decode_seconds_per_token: float | None
    billed_ratio: float  # what billed time typically is against the predicted (cost/billed.py), with its source:
    billed_note: str
    optimal_depth: float  # the loss model's optimal depth at the budget (cost/loss.py; inspect and models report the same)
    optimal_depth_low: float
    optimal_depth_high: float
    loss_fitted_params_low: float  # the sizes the loss model's data span (cost.loss.fitted_range; docs/loss.md)
    loss_fitted_params_high: float
    loss_in_fitted_range: bool  # the budget lies inside them (outside, the optimum's interval widens with the distance)
    loss_decides: bool  # the loss model tells the band's depths apart (else the pick is by time alone; target.loss_decides)
    candidates: tuple[Candidate, ...]
    warnings: tuple[str, ...]
    notes: tuple[str, ...]
