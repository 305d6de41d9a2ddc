"""The pick by time to the target loss: every candidate's predicted loss penalty
(``cost.loss``), the extra training it needs to match the best shape of the budget (the loss law),
and its time to that target on the user's cluster (its own training time, ``cost.run.run_costs``, x
the extra-token factor: whatever model of throughput run_costs uses, the pick follows it).

Preferences: ``balanced`` (the default) picks the least wall-clock time to the target (days; GPU-hours
when no GPU count is given); ``train`` the least GPU-hours to the target; ``serve`` the least geometric
mean of the time to the target, the KV cache per sequence and the decode latency (the serving model's
seconds per token, ``cost.serve``: weights, KV cache, all-reduces and per-layer overhead, every
shape at one tensor-parallel degree, ``pick.Costing.decode_alike``; ∝ depth when a shape has none). With a loss tolerance, the pick is the fastest shape
(its own training time, not to the target) whose predicted penalty is within the tolerance.
Shapes that do not fit on the GPU come after every shape that does. Pure: no I/O.
"""
from __future__ import annotations

import math

from ..cost.loss import DEFAULT_LAW, LossLaw, PenaltyModel, loss_penalty, time_to_target
from ..core.frozen import frozen

LOSS_FIELDS = ("loss_vs_best", "loss_vs_best_low", "loss_vs_best_high", "time_to_target_days", "time_to_target_gpu_hours")


@frozen
class Targeted:
    """One shape on the way to the target loss: its arch and costs, the predicted penalty (value,
    low, high), its own training time and its time to the target (None: no length reaches it)."""

    arch: object
    costs: object
    penalty: tuple[float, float, float]
    time: float  # its training time for the plan's tokens (days, or GPU-hours without a GPU count)
    to_target: float | None  # the same unit, to the best shape's loss
    unit: str  # "days" | "GPU-hours"
    decode: float | None = None  # modelled decode seconds per token (prefer=serve ranks by it)

    def fields(self, tokens_given: bool = True) -> dict:
        """The LOSS_FIELDS of this shape (times null without a training length: a ranking length is assumed)."""
        value, low, high = self.penalty
        days = _scaled(getattr(self.costs, "train_days", None), self)
        hours = _scaled(getattr(self.costs, "train_gpu_hours", None), self)
        return dict(loss_vs_best=value, loss_vs_best_low=low, loss_vs_best_high=high,
                    time_to_target_days=days if tokens_given else None, time_to_target_gpu_hours=hours if tokens_given else None)


def _scaled(time, shape: Targeted):
    if time is None or shape.to_target is None:
        return None
    return time * shape.to_target / shape.time if shape.time else None


def _finite(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None


def assess(arch, costs, count: float, budget: float, tokens: float, model: PenaltyModel | None = None,
           law: LossLaw = DEFAULT_LAW, weigh_loss: bool = True) -> Targeted:
    """The Targeted of one shape: ``count`` its parameters (the count the budget limits), ``budget``
    the size of the best shape it is measured against, ``tokens`` the training length. ``weigh_loss``
    False: the time to the target leaves the penalty out (``loss_decides`` False: loss cannot tell the
    band's shapes apart), so only the shape's time and its count's shortfall count."""
    value, low, high = (float(v) for v in loss_penalty(arch.depth, budget, model, arch.width, getattr(arch, "ffn", None)))
    days = getattr(costs, "train_days", None)
    time, unit = (days, "days") if days is not None else (costs.train_gpu_hours, "GPU-hours")
    to_target = _finite(float(time_to_target(time, value if weigh_loss else 0.0, count, tokens, budget, law)))
    return Targeted(arch, costs, (value, low, high), time, to_target, unit)


def _fits(t: Targeted) -> int:
    return 0 if getattr(t.costs, "fits_on_gpu", True) is not False else 1


def fits(t: Targeted) -> bool:
    """Whether the shape's run fits on the GPU (a shape that does not ranks after every one that does)."""
    return _fits(t) == 0


def score_floor(arch, count: float, budget: float, tokens: float, times: tuple[float, float], prefer: str,
                model: PenaltyModel | None = None, law: LossLaw = DEFAULT_LAW, weigh_loss: bool = True) -> float:
    """A lower bound of the shape's ``score`` (``balanced`` or ``train``, no tolerance) from lower bounds of
    its training time ``times`` = (days, GPU-hours): the time to the target is its time x a factor of its
    loss penalty alone (``assess``), so it grows with the time."""
    value = float(loss_penalty(arch.depth, budget, model, arch.width, getattr(arch, "ffn", None))[0]) if weigh_loss else 0.0
    factor = float(time_to_target(1.0, value, count, tokens, budget, law))
    return (times[1] if prefer == "train" else times[0]) * factor


def _log_ratio(value, best):
    if value is None or best is None or best <= 0:
        return 0.0
    return math.log(value / best)


def score(shapes: list[Targeted], prefer: str, tolerance: float | None = None) -> list[tuple[float, Targeted]]:
    """(score, shape) ranked best first (lower is better): see the module docstring."""
    if tolerance is not None:
        within = [t for t in shapes if t.penalty[0] <= tolerance]
        pool = within or sorted(shapes, key=lambda t: t.penalty[0])[:1]
        rest = [t for t in shapes if t not in pool]
        ranked = sorted(pool, key=lambda t: (_fits(t), t.time, t.arch.depth)) + sorted(rest, key=lambda t: (t.penalty[0], t.time))
        return [(t.time, t) for t in ranked]
    big = math.inf
    hours = [getattr(t.costs, "train_gpu_hours", None) for t in shapes]

    def to_target(t, i):
        if prefer == "train" and hours[i] is not None and t.to_target is not None:
            return hours[i] * t.to_target / t.time
        return t.to_target

    targets = [to_target(t, i) for i, t in enumerate(shapes)]
    if prefer in ("balanced", "train"):
        scored = [((big if x is None else x), t) for x, t in zip(targets, shapes)]
    else:  # serve: time to target, KV cache, decode latency (depth without one), as log ratios to the best of each
        kv = [getattr(t.costs, "kv_cache_bytes_per_sequence", None) for t in shapes]
        best_t = min((x for x in targets if x is not None), default=None)
        best_kv = min((x for x in kv if x is not None), default=None) if all(x is not None for x in kv) else None
        timed = all(t.decode for t in shapes)
        latency = [t.decode if timed else t.arch.depth for t in shapes]
        best_latency = min(latency)
        scored = []
        for x, k, t, lat in zip(targets, kv, shapes, latency):
            parts = [big if x is None else _log_ratio(x, best_t), math.log(lat / best_latency)]
            parts += [_log_ratio(k, best_kv)] if best_kv is not None else []
            scored.append((sum(parts) / len(parts), t))
    scored.sort(key=lambda s: (_fits(s[1]), s[0], s[1].arch.depth, s[1].arch.width))
    return scored


def _pct(x: float) -> str:
    return f"{x:+.2%}" if abs(x) < 0.1 else f"{x:+.1%}"


def _shown(t: Targeted, prefer: str) -> tuple[float | None, str]:
    """The time to the target ``why`` shows for ``t``: GPU-hours under ``prefer`` train (what it ranks by;
    the plan's ``run.time_to_target_gpu_hours``), its own unit otherwise."""
    hours = getattr(t.costs, "train_gpu_hours", None)
    if prefer == "train" and t.unit == "days" and hours is not None and t.to_target is not None and t.time:
        return hours * t.to_target / t.time, "GPU-hours"
    return t.to_target, t.unit


def _time(x: float | None, unit: str) -> str:
    if x is None:
        return "never (the penalty exceeds what more data can recover)"
    return f"{x:,.3g} {unit}" if unit == "days" else f"{x:,.0f} {unit}"


def loss_decides(budget: float, band: tuple[int, int], model: PenaltyModel | None = None) -> bool:
    """Whether the loss model can tell the band's depths apart at ``budget``: not when the optimal depth's
    ~95% interval covers the whole band (any depth in it may be the best one: the spread between studies,
    or the distance beyond the fitted sizes, is wider than the band)."""
    from ..cost.loss import optimal_depth

    _, low, high = (float(v) for v in optimal_depth(budget, model))
    return not (low <= band[0] and band[1] <= high)


def _undecided(budget: float | None, model: PenaltyModel | None, prefer: str) -> str:
    from ..cost.loss import SHIPPED, optimal_depth

    m = model or SHIPPED
    depth, low, high = (float(v) for v in optimal_depth(budget, m))
    beyond = "" if m.params_range[0] <= budget <= m.params_range[1] else ", beyond the loss model's data"
    return (f"; loss cannot tell the band's shapes apart at this size (optimum {depth:.0f} [{low:.0f}, {high:.0f}]{beyond}), "
            "so " + ("loss was left out of the balance" if prefer == "serve" else "time decided"))


def _latency(shape: Targeted) -> str:
    """``, X ms per token to decode (the serving model's measured error)`` for a shape timed by the serving
    model (``serve.MEASURED_ERROR``); empty otherwise."""
    if not shape.decode:
        return ""
    from ..cost.serve import MEASURED_ERROR

    return (f", {shape.decode * 1e3:.3g} ms per token to decode (the serving model's median error "
            f"{MEASURED_ERROR['decode_median']:.1%}, worst {MEASURED_ERROR['decode_max']:.0%}, on "
            f"{MEASURED_ERROR['decode_rows']} published measurements)")


def why(ranked: list[tuple[float, Targeted]], band: tuple[int, int], prefer: str, tolerance: float | None = None,
        shapes: int | None = None, budget: float | None = None, model: PenaltyModel | None = None) -> str:
    """One sentence: the pick's predicted penalty and time to the target against the runner-up;
    ``shapes``: how many valid shapes the band holds (default: all ranked). With ``budget``, says when
    loss could not tell the band's shapes apart (``loss_decides``) and time alone decided."""
    _, pick = ranked[0]
    shapes = len(ranked) if shapes is None else shapes
    v, lo, hi = pick.penalty
    shape = f"{pick.arch.depth}x{pick.arch.width}"
    undecided = "" if budget is None or tolerance is not None or loss_decides(budget, band, model) else _undecided(budget, model, prefer)
    mine = f"{_pct(v)} loss vs the best shape [{_pct(lo)}, {_pct(hi)}], {_time(*_shown(pick, prefer))} to the target loss"
    if undecided:
        mine = f"{_pct(v)} loss vs the best shape [{_pct(lo)}, {_pct(hi)}], {_time(*_shown(pick, prefer))} of training"
    clock = "GPU-hours" if prefer == "train" or pick.unit != "days" else "wall-clock"
    if tolerance is not None:
        head = f"{shape} is the fastest of the {shapes} valid shapes in the band [{band[0]}, {band[1]}] within the loss tolerance {tolerance:.2%}"
    elif prefer == "serve":
        latency = "decode latency" if pick.decode else "depth"
        head = (f"{shape} best balances time to the target loss, KV cache and {latency} (prefer=serve) among the "
                f"{shapes} valid shapes in the band [{band[0]}, {band[1]}]{undecided}")
        mine += _latency(pick)
    elif undecided:
        head = f"{shape} trains soonest ({clock}) of the {shapes} valid shapes in the band [{band[0]}, {band[1]}]{undecided}"
    else:
        head = (f"{shape} reaches the best shape's loss soonest ({clock}) of the "
                f"{shapes} valid shapes in the band [{band[0]}, {band[1]}]")
    if len(ranked) == 1:
        return f"{head}: predicted {mine}."
    _, other = ranked[1]
    ov = other.penalty[0]
    theirs = f" and {other.decode * 1e3:.3g} ms per token" if prefer == "serve" and other.decode else ""
    return (f"{head}: predicted {mine}, against {other.arch.depth}x{other.arch.width} at {_pct(ov)} and "
            f"{_time(*_shown(other, prefer))}{theirs} (loss model: Gemstones and Petty 2023 ablations, docs/loss.md).")


def rule_loss_model(path: str | None) -> PenaltyModel | None:
    """The loss penalty a rule file carries (``fit --save`` refits it on the user's sweep), or None."""
    if path is None:
        return None
    from .rules.file import read_rule_file

    stored = read_rule_file(path).loss_model
    return None if stored is None else PenaltyModel.from_dict(stored)


def loss_notes(budget: float, tokens: float | None, model: PenaltyModel | None = None) -> list[str]:
    """The plan's note on the loss model (one line): its optimum at the budget, and where the budget
    or the training length lies outside the data it was fitted on."""
    from ..cost.loss import SHIPPED, SHIPPED_TOKENS_PER_PARAM, optimal_depth

    m = model or SHIPPED
    depth, low, high = (float(v) for v in optimal_depth(budget, m))
    outside = []
    if not m.params_range[0] <= budget <= m.params_range[1]:
        outside.append(f"this size (beyond its data: it saw {m.params_range[0]:.2g}-{m.params_range[1]:.2g} parameters; "
                       f"the optimum's interval widens with the distance in log size)")
    ratio = (tokens or 20 * budget) / budget
    if model is None and not SHIPPED_TOKENS_PER_PARAM[0] <= ratio <= SHIPPED_TOKENS_PER_PARAM[1]:
        outside.append(f"{ratio:.3g} tokens per parameter (its runs trained on {SHIPPED_TOKENS_PER_PARAM[0]:.0f}-"
                       f"{SHIPPED_TOKENS_PER_PARAM[1]:.0f}; the length's effect on the penalty is not modelled)")
    return [f"loss model (docs/loss.md): optimal depth {depth:.0f} [{low:.0f}, {high:.0f}]; loss_vs_best = "
            f"{m.k:.4f}·[ln(depth/{depth:.1f})² + {m.q:.2f}·ln(ffn/width/{m.ffn_ratio:g})²], fitted on {m.points} losses of "
            f"{m.shapes} shapes, scatter {m.scatter:.2%}"
            + ("; extrapolated to " + " and ".join(outside) if outside else "")]
