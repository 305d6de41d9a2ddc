"""The consensus rule: a depth band from the in-range evidence, and one shape inside it chosen by cost.

No single rule is the answer (reference card, "How a recommendation is made"). For a budget N:
- floor: the theory's minimal depth (Levine et al. 2020), passed in by the caller;
- evidence: what each registered rule of kind fit or practice gives at N (``rules.py``), flagged in
  range or not and verified or not, and what the catalogue's published decoder language models of
  similar size trained (``catalog.json``), each carried to N at its own aspect ratio d/L;
- band [lo, hi]: the shortest depth interval holding ``COVER`` of the used evidence (in range,
  verified), widened on each side by the scatter of trained depths at one size (``practice_scatter``),
  to whole layers, never below the floor;
- pick: the cheapest valid shape inside the band by a cost function the caller supplies
  (``costs.run_costs``; injected, so this module never imports the planner or the cost model).

Kaplan et al. 2020 (Figure 5, Section 3.1) found the loss nearly flat over a factor of 40 in d/L at
fixed size: inside such a flat bowl the evidence fixes a band, not a point, and cost may choose.
Pure: no I/O, except that ``depth_band`` reads the catalogue once (cached) unless the models are passed in.
"""
from __future__ import annotations

import math
from typing import Callable, Iterable

from . import published
from .rule_type import _crossing
from .rules import FIT, PRACTICE, REGISTRY, loglog_fit
from ..theory.frozen import frozen

SIMILAR_SIZE = 2.0  # catalogue models within this factor of the budget (in 12·L·d²) count as similar
COVER = 0.75  # the band holds this share of the used evidence (the shortest such interval)
WIDEN = (2.0, 4.0, 8.0, 16.0, 64.0, 1e3, math.inf)  # windows tried, in order, until some evidence is used
PREFERENCES = ("train", "serve", "balanced")
DEFAULT_PREFERENCE = "balanced"
KAPLAN_NOTE = ("Kaplan et al. 2020 (arXiv 2001.08361, Figure 5 and Section 3.1): at fixed size the aspect ratio d/L can "
               "vary by a factor of 40 with loss changing only a few percent; inside that shallow bowl the evidence fixes a "
               "band of depths, not one depth, and the pick inside the band weighs each shape's predicted loss penalty "
               "against its speed (time to the best shape's loss; docs/loss.md)")


def practice_scatter(shapes=published.CHINCHILLA_A9) -> float:
    """Standard deviation of ln L about the log-log fit L = k·N^beta over Chinchilla's Table A9 shapes
    (Hoffmann et al. 2022): how far apart one team's trained depths lie at one size (about 0.096,
    i.e. ±10% in depth). The band is widened by it on each side."""
    k, beta = loglog_fit(shapes)
    residuals = [math.log(L) - math.log(k * params_12(L, d) ** beta) for L, d in shapes]
    return math.sqrt(sum(r * r for r in residuals) / len(residuals))


# Registry rules built from catalogue models: leaving one of these models out leaves the rule out too.
RULE_MODELS = {"llama3-practice": ("llama3-8b", "llama3-70b", "llama3-405b")}


@frozen
class Evidence:
    """One piece of evidence at a budget: a registry rule or a published model (``kind`` "published")."""

    name: str
    kind: str  # fit | practice | published
    depth: float  # the depth it gives at this budget (a published model: its own d/L carried to the budget)
    width: float
    in_range: bool
    verified: bool
    used: bool
    status: str  # verified | second-hand | unverified (the weakest constant; "verified" for a published shape)
    source: str
    note: str


@frozen
class Band:
    """The band of depths the used evidence gives, with everything considered (``evidence``)."""

    budget: float
    floor: int
    depth_band: tuple[int, int]
    evidence: tuple[Evidence, ...]
    window: float  # the similar-size factor that was needed (SIMILAR_SIZE unless no evidence was within it)
    notes: tuple[str, ...]


@frozen
class Pick:
    """The chosen shape, its costs, its score and the sentence saying why (field names: plan JSON)."""

    arch: object
    costs: object
    score: float
    prefer: str
    why: str
    ranked: tuple  # (score, arch, costs) of every valid shape in the band, cheapest first


def paper_width(budget: float) -> Callable[[float], float]:
    """The iso-budget width of the paper's block: 12·L·d² = N, d = sqrt(N/(12·L))."""
    return lambda depth: math.sqrt(budget / (12 * depth))


def params_12(depth: float, width: float) -> float:
    """The paper's count 12·L·d² (Kaplan et al. 2020)."""
    return 12 * depth * width * width


def published_models():
    """The catalogue's decoder-only language models (no encoders, no encoder-decoders)."""
    from ..arch.catalog import load_models

    return tuple(m for m in load_models() if not m.encoder_only and not m.decoder_depth)


def _at_aspect(ratio: float, width_at_depth: Callable[[float], float]) -> tuple[float, float]:
    """The depth where d = ratio·L spends the budget (``width_at_depth`` gives the budget's width)."""
    depth = _crossing(lambda L: math.log(ratio * L), width_at_depth)
    return depth, ratio * depth


def rule_evidence(budget: float, width_at_depth, exclude: Iterable[str] = ()) -> list[Evidence]:
    """Each registry rule of kind fit or practice at this budget (one entry per rule)."""
    excluded = set(exclude)
    out = []
    for rule in REGISTRY.values():
        if rule.kind not in (FIT, PRACTICE):
            continue
        depth, width = rule.recommend(budget, width_at_depth)
        in_range = not rule.extrapolated(budget, depth)
        left_out = bool(excluded & set(RULE_MODELS.get(rule.name, ())))
        used = in_range and rule.verified and not left_out
        why = ("used" if used else "left out: built from a model left out" if left_out
               else "not used: outside its range " + rule.fit_range if not in_range else "not used: unverified constants")
        out.append(Evidence(rule.name, rule.kind, depth, width, in_range, rule.verified, used, rule.status,
                            rule.source, why))
    return out


def model_evidence(budget: float, width_at_depth, window: float, exclude: Iterable[str] = (),
                   models=None) -> list[Evidence]:
    """Published decoder LMs within ``window`` of the budget (12·L·d²), each carried to the budget at its d/L
    (``models``: catalogue rows to consider; default the catalogue's decoder LMs)."""
    excluded = set(exclude)
    out = []
    for model in published_models() if models is None else models:
        size = params_12(model.depth, model.width)
        if model.name in excluded or abs(math.log(size / budget)) > math.log(window):
            continue
        depth, width = _at_aspect(model.width / model.depth, width_at_depth)
        in_range = abs(math.log(size / budget)) <= math.log(SIMILAR_SIZE)
        note = (f"trained {model.depth}x{model.width} at 12·L·d² = {size:.3g} (d/L {model.width / model.depth:.0f}); "
                "same d/L at this budget" + ("" if in_range else f": beyond the similar-size factor {SIMILAR_SIZE:g}"))
        out.append(Evidence(f"model:{model.name}", "published", depth, width, in_range, True, True, "verified",
                            model.source, note))
    return out


def shortest_cover(depths: list[float], cover: float = COVER) -> tuple[float, float]:
    """The shortest interval (in log depth) holding ceil(cover·n) of the depths."""
    ordered = sorted(depths)
    k = max(1, math.ceil(cover * len(ordered)))
    spans = [(math.log(ordered[i + k - 1] / ordered[i]), i) for i in range(len(ordered) - k + 1)]
    _, start = min(spans)
    return ordered[start], ordered[start + k - 1]


def depth_band(budget: float, floor: int, width_at_depth: Callable[[float], float] | None = None,
               exclude: Iterable[str] = (), models=None) -> Band:
    """The consensus band at ``budget`` (non-embedding parameters of the caller's block).

    ``floor``: the theory's minimal depth. ``width_at_depth(L)``: the width spending the budget at
    depth L with the caller's block (default: the paper's 12·L·d²). ``exclude``: catalogue model
    names to leave out (leave-one-out checks; a rule built from such a model is left out too).
    ``models``: the published models to weigh (default ``published_models()``, the one read of
    catalog.json; pass them in to keep the call free of I/O)."""
    width_at_depth = width_at_depth or paper_width(budget)
    exclude = tuple(exclude)
    rules = rule_evidence(budget, width_at_depth, exclude)
    notes = [KAPLAN_NOTE]
    for window in WIDEN:
        found = model_evidence(budget, width_at_depth, window, exclude, models)
        used = [e for e in rules + found if e.used]
        if used:
            break
    if window > SIMILAR_SIZE:
        notes.append(f"no rule's range covers {budget:.3g} and no published model lies within a factor of "
                     f"{SIMILAR_SIZE:g}: the band comes from the nearest published models ("
                     + ("of any size" if math.isinf(window) else f"within a factor of {window:g}")
                     + ") at their own d/L, an extrapolation")
    low, high = shortest_cover([e.depth for e in used])
    scatter = practice_scatter()
    low, high = low * math.exp(-scatter), high * math.exp(scatter)
    lo = max(floor, math.floor(low))
    hi = max(lo, math.ceil(high))
    if lo > math.floor(low):
        notes.append(f"the evidence reaches down to depth {low:.1f}; the band starts at the theory's minimal depth {floor}")
    inside = sum(1 for e in used if lo <= e.depth <= hi)
    notes.append(f"band [{lo}, {hi}]: the shortest depth range holding {COVER:.0%} of the {len(used)} pieces of used "
                 f"evidence ({inside} inside), widened by ±{scatter:.3f} in ln depth (the scatter of the depths "
                 f"Chinchilla's Table A9 trained at one size), never below the minimal depth {floor}")
    return Band(budget, floor, (lo, hi), tuple(rules + found), window, tuple(notes))


# ---- the pick inside the band: cheapest by the caller's cost model

_METRICS = {  # (field of costs.RunCosts or "depth", what it stands for)
    "train": (("train_gpu_hours", "GPU-hours"), ("train_memory_per_gpu_bytes", "memory per GPU")),
    "serve": (("kv_cache_bytes_per_sequence", "KV cache per sequence"), ("depth", "sequential latency (∝ depth)")),
}
_METRICS["balanced"] = _METRICS["train"] + _METRICS["serve"]


def _value(arch, costs, field: str):
    return arch.depth if field == "depth" else getattr(costs, field, None)


def score_shapes(shapes: list[tuple[object, object]], prefer: str) -> list[tuple[float, object, object]]:
    """Scores (lower is cheaper) of (arch, costs) pairs: the mean over the preference's metrics of
    ln(value / smallest value among the shapes), i.e. the log of the geometric mean of each metric's
    ratio to the cheapest shape. train: GPU-hours and memory per GPU; serve: KV cache per sequence and
    depth (per-token latency grows with the number of sequential layers); balanced: all four, equally
    weighted. A metric some shape lacks (None) is left out for all; shapes that do not fit on the GPU
    come after every shape that does."""
    if prefer not in PREFERENCES:
        raise ValueError(f"prefer must be one of {', '.join(PREFERENCES)}, got {prefer!r}")
    fields = [f for f, _ in _METRICS[prefer] if all(_value(a, c, f) is not None for a, c in shapes)]
    best = {f: min(_value(a, c, f) for a, c in shapes) for f in fields}
    scored = []
    for arch, costs in shapes:
        logs = [math.log(_value(arch, costs, f) / best[f]) if best[f] > 0 else 0.0 for f in fields]
        score = sum(logs) / len(logs) if logs else 0.0
        penalty = 0 if getattr(costs, "fits_on_gpu", True) is not False else 1
        scored.append((penalty, score, arch.depth, arch.width, arch, costs))
    scored.sort(key=lambda s: s[:4])
    return [(score, arch, costs) for _, score, _, _, arch, costs in scored]


def pick(band: Band | tuple[int, int], candidates: Iterable, cost: Callable[[object], object],
         prefer: str = DEFAULT_PREFERENCE) -> Pick | None:
    """The cheapest valid shape inside the band for the preference (None when no candidate is in it).

    ``candidates``: hardware-valid architectures (anything with ``depth`` and ``width``) the caller
    built; those outside the band are ignored. ``cost(arch)`` returns an object with the fields of
    ``costs.RunCosts`` (train_gpu_hours, train_memory_per_gpu_bytes, kv_cache_bytes_per_sequence,
    fits_on_gpu, ...)."""
    lo, hi = band.depth_band if isinstance(band, Band) else band
    inside = [a for a in candidates if lo <= a.depth <= hi]
    if not inside:
        return None
    ranked = score_shapes([(a, cost(a)) for a in inside], prefer)
    score, arch, costs = ranked[0]
    return Pick(arch, costs, score, prefer, why_sentence(ranked, (lo, hi), prefer), tuple(ranked))


def why_sentence(ranked, band: tuple[int, int], prefer: str) -> str:
    """One sentence: why the first shape of ``ranked`` over the others in the band."""
    score, arch, costs = ranked[0]
    shape = f"{arch.depth}x{arch.width}"
    if len(ranked) == 1:
        return (f"{shape} is the only valid shape in the evidence band [{band[0]}, {band[1]}], so it is picked "
                f"whatever the preference ({prefer}).")
    _, runner, runner_costs = ranked[1]
    parts = []
    for field, label in _METRICS[prefer]:
        mine, theirs = _value(arch, costs, field), _value(runner, runner_costs, field)
        if mine is not None and theirs:
            parts.append(f"{label} {mine / theirs - 1:+.0%}")
    return (f"{shape} is the cheapest of the {len(ranked)} valid shapes in the evidence band [{band[0]}, {band[1]}] "
            f"for prefer={prefer} (vs the next, {runner.depth}x{runner.width}: {', '.join(parts)}); inside the band "
            "the loss is expected to differ by only a few percent (Kaplan et al. 2020), so cost decides.")


def evidence_records(band: Band) -> list[dict]:
    """The plan JSON's ``evidence`` list: one record per piece of evidence (finite numbers only)."""
    return [dict(name=e.name, kind=e.kind, depth=round(e.depth, 2), width=round(e.width, 1), in_range=e.in_range,
                 verified=e.verified, status=e.status, used=e.used, in_band=band.depth_band[0] <= e.depth <= band.depth_band[1],
                 source=e.source, note=e.note) for e in band.evidence]


@frozen
class Consensus:
    """The consensus rule's whole answer: the band, the pick in it (None: no valid shape in the
    band), and the plan JSON fields ``depth_band``, ``evidence`` and ``why``."""

    band: Band
    pick: Pick | None
    named: tuple = ()  # the Snapped shapes the why names (the pick and its runner-up): every one is a candidate
    valid_shapes: int | None = None  # how many valid shapes the band holds (the why's count)

    @property
    def depth_band(self) -> list[int]:
        return list(self.band.depth_band)

    @property
    def evidence(self) -> list[dict]:
        return evidence_records(self.band)

    @property
    def why(self) -> str:
        if self.pick is not None:
            return self.pick.why
        lo, hi = self.band.depth_band
        return f"no valid shape has a depth in the evidence band [{lo}, {hi}] under these constraints."

    @property
    def notes(self) -> tuple[str, ...]:
        return self.band.notes


def consensus(budget: float, floor: int, candidates, cost: Callable[[object], object],
              prefer: str = DEFAULT_PREFERENCE, width_at_depth: Callable[[float], float] | None = None,
              exclude: Iterable[str] = ()) -> Consensus:
    """The band at ``budget`` and the cheapest valid shape in it. ``candidates``: hardware-valid
    architectures, or a callable ``(lo, hi) -> architectures`` that builds them once the band is
    known (the planner snaps one shape per depth of the band)."""
    band = depth_band(budget, floor, width_at_depth, exclude)
    shapes = candidates(*band.depth_band) if callable(candidates) else candidates
    return Consensus(band, pick(band, shapes, cost, prefer))


def beyond_evidence(budget: float, band) -> str | None:
    """The consensus answer when the budget lies above all the evidence (no rule's range covers it and
    no published model is within evidence.SIMILAR_SIZE, the largest below it): the band then only
    carries published width/depth ratios far past any trained model (issue 34: 6,703 layers at 1e17,
    3,111,284 at 1e25), so the threshold rule's shape is recommended, saying why. None otherwise."""
    if band.window <= SIMILAR_SIZE:
        return None
    largest = max(published_models(), key=lambda m: params_12(m.depth, m.width))
    size = params_12(largest.depth, largest.width)
    if budget <= size * SIMILAR_SIZE:
        return None
    return (f"no published evidence reaches {budget:.3g}: the largest published model, {largest.name} "
            f"({largest.depth}x{largest.width}, 12·L·d² = {size:.3g}), is {budget / size:.3g}x smaller and no rule's range "
            f"covers this budget, so the recommendation is the threshold rule's minimal-depth shape; the evidence "
            f"band [{band.depth_band[0]:,}, {band.depth_band[1]:,}] only extrapolates published d/L and is not used.")
