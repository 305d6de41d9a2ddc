"""The plan's records (field names are the JSON contract; README and docs/json.md document each):
``Candidate`` (one iso-budget shape with its run, loss and serving: what ``recommended`` and each of
``candidates`` is), ``PlanBrief`` (the threshold rule's answer, all of `plan --brief`) and ``Plan``
(one nested record, every figure under the shape it describes). ``planner`` fills them.
"""
from __future__ import annotations

from dataclasses import fields

from ..arch.blocks import Architecture
from ..arch.record import COUNT_FIELDS, COUNT_TYPES, LAYOUT_FIELDS, ShapeRecord, repeats, shape_record
from ..arch.snapping import Snapped
from ..cost.fields import Loss, Run, Serve
from ..theory.separation import CONSISTENT, bounds
from ..core.frozen import frozen, frozen_class


# the shape record's fields first, repeated rather than inherited, as ShapeRecord repeats Bounds' (arch/record.py)
@frozen
@repeats(ShapeRecord, tuple(ShapeRecord.__annotations__), after=None)
class Candidate:
    """One iso-budget shape: the shape record (``arch.record.ShapeRecord``), its aspect ratio d/L,
    ``budget_deviation`` (the relative deviation of the count the budget limits, ``budget.count``,
    from the budget), whether its depth lies in the evidence band, and its training ``run``, predicted
    ``loss`` penalty and ``serve`` figures (``cost.fields``: Run, Loss, Serve)."""

    aspect_ratio: float
    budget_deviation: float
    in_band: bool = False
    run: Run | None = None
    loss: Loss | None = None
    serve: Serve | None = None


def candidate(snapped: Snapped, context: int, reading: str = CONSISTENT, costs: dict | None = None,
              in_band: bool = False, spec=None) -> Candidate:
    """The candidate record of a snapped shape (``costs``: its flat cost, loss and model fields, nested
    by ``cost.fields.nested`` under the run ``spec``)."""
    from ..cost.fields import nested

    arch = snapped.arch
    record = shape_record(bounds(arch.depth, arch.width, arch.heads, reading), arch, context)
    parts = nested(costs, spec) if costs else {}
    return Candidate(**record.__dict__, aspect_ratio=arch.width / arch.depth, budget_deviation=snapped.deviation,
                     in_band=in_band, **parts)


@frozen
class Budget:
    """The budget: its ``value``, its ``spelling`` (1B), how it was given (``source``: params, days or
    flops), the count it limits (``count``: params_nonembedding, params_active or params_with_embeddings)
    and the block preset (``arch``)."""

    value: int
    spelling: str
    source: str
    count: str
    arch: str


@frozen
@repeats(Architecture, LAYOUT_FIELDS, after="width")
@repeats(COUNT_TYPES, COUNT_FIELDS, after="params_12Ld2")
class Threshold:
    """The paper's minimal-depth shape (Levine et al. 2020; ``threshold.py``): the smallest depth L with
    3^L >= width, exact and whole, the width that spends the budget at it (exact and snapped), its block,
    counts and regime. Not the answer: a floor under it (its run, where costed, is its candidate's)."""

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


# the budget, then the threshold's shape: the same fields, in the same order (--brief's CSV columns)
PlanBrief = frozen_class("PlanBrief", [("budget", "int"), ("budget_source", "str"), ("arch", "str"), ("budget_count", "str")]
                         + [(f.name, f.type) for f in fields(Threshold)], module=__name__,
                         doc="The threshold rule's answer for one budget: all of `plan --brief` (``brief.py``).")


@frozen
class RuleUsed:
    """The rule that gave the answer (``name``: consensus, or a registry rule or rule file), what the
    consensus pick minimizes (``prefer``), the rule's own unsnapped depth and width (null for the
    consensus), and with --rule-file the fitted depth's 95% interval, whether the budget is in its range
    and whether the depth was clamped to it."""

    name: str
    prefer: str
    empirical_depth: float | None = None
    empirical_width: float | None = None
    depth_low: float | None = None
    depth_high: float | None = None
    in_range: bool | None = None
    clamped: bool | None = None


@frozen
class DepthBand:
    """The evidence band of depths (``evidence.depth_band``) and how many valid shapes it holds (null
    when the consensus did not pick: a rule, or past the evidence); ``centre``, the depth published
    practice trains at this size (layers, not whole: the fit the band is drawn around, ``bandfit``), and
    ``extrapolated``, whether the size lies beyond every published model that fit is made on."""

    low: int
    high: int
    valid_shapes: int | None = None
    centre: float | None = None
    extrapolated: bool = False


@frozen
class LossModel:
    """The loss model at the budget (cost/loss.py; docs/loss.md): its optimal depth and interval, the
    sizes its data span and whether the budget lies in them, and whether it tells the band's depths apart
    (``decides``; else the pick is by time alone)."""

    optimal_depth: float
    optimal_depth_low: float
    optimal_depth_high: float
    fitted_params_low: float
    fitted_params_high: float
    in_fitted_range: bool
    decides: bool


@frozen
class Setup:
    """What every shape was costed under: the accelerator and GPU count (``gpus_assumed``: one node, no
    --gpus), the time model (performance model, or a flat --mfu), the layout fields the user fixed, the
    context, the training length (``tokens_assumed``: 20 per parameter), the calibration profile's line,
    and what billed time typically is against the predicted (cost/billed.py)."""

    gpu: str
    gpus: int | None
    gpus_assumed: bool
    time_model: str
    mfu: float | None
    fixed_layout: dict
    context: int
    tokens: float | None
    tokens_assumed: bool
    calibrated_on: str | None
    billed_ratio: float
    billed_note: str
    tokens_from_days: float | None = None  # plan --params --days: the days the tokens were fitted to (sizing.tokens_for_days)


@frozen
@repeats(Architecture, LAYOUT_FIELDS[1:4], after="why")
class Plan:
    """The plan record for one budget (field names are the JSON contract; docs/json.md documents each):
    the budget, the threshold rule's floor, the rule, the evidence band, the answer (``recommended``, a
    Candidate), the loss model, the costing setup, the candidates, and why. ``kv_heads``, ``head_dim``,
    ``ffn``, ``gated``, ``params_active``, ``flops_per_token`` and ``kv_bytes_per_token`` repeat the
    answer's block at the top (the same as ``recommended``'s)."""

    budget: Budget
    threshold: Threshold
    rule: RuleUsed
    band: DepthBand
    recommended: Candidate
    why: str
    gated: bool | None
    params_active: int | None
    flops_per_token: int | None
    kv_bytes_per_token: int | None
    loss_model: LossModel
    setup: Setup
    candidates: tuple[Candidate, ...]
    evidence: tuple[dict, ...]
    warnings: tuple[str, ...]
    notes: tuple[str, ...]
