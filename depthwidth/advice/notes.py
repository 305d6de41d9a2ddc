"""The warnings and notes of a plan: what the threshold rule says, how the recommendation was made
(the evidence band and its pick, or the chosen rule), what the snapping cost, what the guards say
(``rules.builtin.guard_messages``: warnings only inside their range with verified constants) and what was
assumed about the training run. Pure: typed messages (``core.messages.Message``: a kind naming what
each says, and the values it names) from the planner's values."""
from __future__ import annotations

from ..arch.snapping import BUDGET_TOLERANCE
from .evidence import beyond_evidence
from ..core.messages import Message
from ..theory.separation import THRESHOLD, compare_pow3


def advice(budget, options, theory, planned, recommended, optimum, rule, candidates, band, cost,
           fitted=None) -> tuple[list[str], list[str]]:
    """(warnings, notes) of a plan. Warnings: a shape off the budget by more than the tolerance, a
    verified guard broken inside its range, a pipeline degree that does not divide the depth, a
    rule file's clamped depth. Notes: everything else worth knowing."""
    from .rules.builtin import guard_messages

    rec = recommended.arch
    warnings: list[str] = []
    notes = _threshold_notes(options.spending, planned.arch.depth, planned.arch.width)
    _off_budget(budget, planned, recommended, warnings)
    _recommendation(budget, options, rec, optimum, rule, band, warnings, notes)
    if fitted is not None:
        _rule_file(budget, fitted, warnings, notes)
    notes += [Message("band", n, band=band.depth_band) for n in band.notes]
    guard_warnings, guard_notes = guard_messages(rec.depth, rec.width, budget)
    warnings += guard_warnings
    notes += guard_notes
    _run(rec, cost, warnings, notes)
    if max(c.depth for c in candidates) >= 48:
        notes.append(Message("deep-stack", "stacks of ~60 layers diverged without special initialization (Liu et al. 2020, "
                             "ADMIN); residual connections and MLPs counter rank collapse (Dong et al. 2021)"))
    if any(c.regime == THRESHOLD for c in candidates):
        notes.append(Message("on-threshold", "a candidate sits exactly on d = 3^L, where neither theorem applies"))
    return warnings, notes


def _threshold_notes(spending, depth: int, width: int) -> list[str]:
    """What the threshold rule says of the minimal-depth shape (and a learned position table's size)."""
    notes = [Message("threshold", f"threshold rule (Levine et al. 2020): depth {depth} is the smallest with 3^L >= width "
                     f"for this budget ({spending.arch} block, the budget limiting {spending.budget_count}); below "
                     "log3(width), adding depth pays off double-exponentially, above it depth and width trade evenly",
                     depth=depth, width=width)]
    if spending.learns_positions:  # GPT-2's wpe: context x width, in params_embedding (and in a with-embeddings budget)
        from ..arch.blocks import position_table_note

        notes.append(Message("position-table", position_table_note(spending.position_rows), rows=spending.position_rows))
    if compare_pow3(depth, width) < 0:
        notes.append(Message("past-threshold", f"no valid width at depth {depth} keeps depth >= log3(width): {width} is past "
                             f"3^{depth}", depth=depth, width=width))
    return notes


def _off_budget(budget, planned, recommended, warnings: list[str]) -> None:
    """A warning for the planned or recommended shape off the budget by more than the tolerance."""
    depth, width = planned.arch.depth, planned.arch.width
    rec = recommended.arch
    if abs(planned.deviation) > BUDGET_TOLERANCE:
        warnings.append(Message("off-budget", f"budget {budget:.4g}: the planned shape {depth}x{width} is {planned.deviation:+.1%} "
                                f"from the budget (beyond ±{BUDGET_TOLERANCE:.0%}): the nearest valid width at the minimal depth",
                                shape="threshold", deviation=planned.deviation))
    if abs(recommended.deviation) > BUDGET_TOLERANCE:
        warnings.append(Message("off-budget", f"budget {budget:.4g}: the recommended shape {rec.depth}x{rec.width} is "
                                f"{recommended.deviation:+.1%} from the budget (beyond ±{BUDGET_TOLERANCE:.0%}): no valid shape "
                                "near it spends the budget closer", shape="recommended", deviation=recommended.deviation))


def _recommendation(budget, options, rec, optimum, rule, band, warnings: list[str], notes: list[str]) -> None:
    """How the recommended shape was chosen: the evidence band and its pick, or the chosen rule."""
    lo, hi = band.depth_band
    if rule is None and beyond_evidence(budget, band) and lo <= rec.depth <= hi:
        warnings.append(Message("past-evidence", f"budget {budget:.4g}: no published evidence reaches this size; recommending a "
                                f"shape in the evidence band [{lo:,}, {hi:,}], which extrapolates published d/L (the plan's 'why' "
                                "says more)", shape="recommended", band=(lo, hi)))
    elif rule is None and beyond_evidence(budget, band):
        # shown under every --field, as before the messages were typed (its sentence named no shape field)
        warnings.append(Message("past-evidence", f"budget {budget:.4g}: no published evidence reaches this size; recommending the "
                                f"threshold rule's minimal-depth shape {rec.depth}x{rec.width} (the plan's 'why' says more)"))
    elif rule is None:
        notes.append(Message("consensus", f"recommended by the consensus (--rule consensus, prefer {options.prefer}): the "
                             f"evidence band [{lo}, {hi}], then {pick_criterion(options.prefer, options.loss_tolerance)}",
                             prefer=options.prefer, band=(lo, hi)))
        if not lo <= rec.depth <= hi:
            warnings.append(Message("outside-band", f"budget {budget:.4g}: no valid shape lies in the evidence band [{lo}, {hi}]; "
                                    f"recommending the valid shape nearest its middle, {rec.depth}x{rec.width}",
                                    shape="recommended", band=(lo, hi)))
    elif optimum is not None:
        flag = "" if rule.verified else " (constants not verified against a stored source)"
        extrapolated = rule.extrapolated(budget, optimum[0])
        notes.append(Message("rule", f"recommended by rule '{rule.name}' ({rule.kind}){flag}: depth {optimum[0]:.1f}, width "
                             f"{optimum[1]:,.0f} before snapping to a valid shape; {rule.source}"
                             + ("; outside the rule's range: an extrapolation" if extrapolated else ""),
                             rule=rule.name, extrapolated=extrapolated))
    else:
        notes.append(Message("rule", f"rule '{rule.name}' is the threshold rule itself: the recommended shape is the minimal "
                             "depth", rule=rule.name))


def _rule_file(budget, fitted, warnings: list[str], notes: list[str]) -> None:
    """What a rule file's fitted law says at this budget, and whether its depth was clamped."""
    notes.append(Message("rule-file", f"rule file: depth {fitted.depth:.1f} at {budget:.3g} (95% interval {fitted.low:.1f}-"
                         f"{fitted.high:.1f}); " + ("the budget lies inside the fitted sizes" if fitted.in_range
                                                    else "outside the fitted sizes"), in_range=fitted.in_range))
    if fitted.clamped:
        warnings.append(Message("rule-clamped", f"budget {budget:.4g}: {fitted.note}; the recommendation is the clamped depth's "
                                "shape", depth=fitted.depth))
    elif fitted.note:
        notes.append(Message("rule-file", fitted.note, in_range=fitted.in_range))


def _run(rec, cost, warnings: list[str], notes: list[str]) -> None:
    """What the training run's costing assumed: pipeline imbalance, tokens, cluster, memory."""
    spec = cost.spec
    if rec.depth % spec.pp:
        warnings.append(Message("pipeline-imbalance", f"--pp {spec.pp} does not divide the recommended depth {rec.depth}: the "
                                f"most loaded pipeline stage holds {-(-rec.depth // spec.pp)} layers, and every shape is costed "
                                f"with its own imbalance (the pick's time x{-(-rec.depth // spec.pp) * spec.pp / rec.depth:.3f} "
                                "against an even split)", shape="recommended", pp=spec.pp))
    if not cost.tokens_given:
        notes.append(Message("tokens-assumed", f"no --tokens: every cost is at the compute-optimal {cost.ranking.tokens:.3g} "
                             "tokens (20 per parameter, Hoffmann et al. 2022), the length the shapes were ranked at",
                             tokens=cost.ranking.tokens))
    if not cost.gpus_given and cost.cluster_note:
        notes.append(Message("gpus-assumed", cost.cluster_note + "; days scale as 1/GPUs", gpus=cost.ranking.gpus))
    elif not cost.gpus_given:
        notes.append(Message("gpus-assumed", f"no --gpus: costed on one node, {cost.ranking.gpus} x {spec.gpu} (data parallel "
                             f"{cost.ranking.dp}); days scale as 1/GPUs", gpus=cost.ranking.gpus))
    if cost.costs(rec).fits_on_gpu is False:
        need = cost.costs(rec).train_memory_per_gpu_bytes
        notes.append(Message("over-memory", f"the recommended shape needs {need / 1e9:.1f} GB per GPU to train, more than the "
                             f"{spec.hardware.label}'s memory: raise --tp, --pp or --zero, or recompute more",
                             shape="recommended", bytes=need))


def pick_criterion(prefer: str, tolerance: float | None = None) -> str:
    """How ``pick.consensus_pick`` chooses inside the band (``target.score``), in the words of the ``why``."""
    if tolerance is not None:
        return (f"the fastest valid shape in it whose predicted loss penalty against the best shape is within "
                f"{tolerance:.2%} (--loss-tolerance)")
    clock = "GPU-hours" if prefer == "train" else "wall-clock"
    criterion = (f"the valid shape in it that reaches the best shape's loss soonest ({clock}): its training time plus "
                 "the extra tokens its predicted loss penalty costs (docs/loss.md); when loss cannot tell the band's "
                 "shapes apart, the one that trains soonest")
    if prefer == "serve":
        criterion += ", balanced against its KV cache and decode latency (prefer=serve)"
    return criterion
