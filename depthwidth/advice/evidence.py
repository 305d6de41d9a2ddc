"""The consensus rule: a depth band from the in-range evidence, and the record of the shape picked inside it.

No single rule is the answer (reference card, "How a recommendation is made"). For a budget N:
- floor: the theory's minimal depth (Levine et al. 2020), passed in by the caller;
- evidence: what each registered rule of kind fit or practice gives at N (``rules.py``), flagged in
  range or not and verified or not, and what the catalogue's published decoder language models of
  similar size trained (``catalog.json``), each carried to N at its own aspect ratio d/L;
- band [lo, hi]: a prediction interval for the depth a published model of size N trains at
  (``bandfit.py``): centred on the weighted mean of the used evidence's ln depths (published models
  weighted by their distance in size), as wide as ``COVER`` of the catalogue's own models needed when
  each was left out of its own band (size-dependent spread, conformal factor), wider where the
  evidence lies far in size; to whole layers, never below the floor;
- the pick inside the band is made above this module (``pick.consensus_pick``: the shape that reaches
  the best shape's loss soonest, ``target.py``); ``Consensus`` and ``Pick`` hold its answer.

Kaplan et al. 2020 (Figure 5, Section 3.1) found the loss nearly flat over a factor of 40 in d/L at
fixed size: inside such a flat bowl the evidence fixes a band, not a point.
Pure: no I/O, except that ``depth_band`` reads the catalogue once (cached) unless the models are passed in.
"""
from __future__ import annotations

import math
from typing import Callable, Iterable

from functools import lru_cache

from .bandfit import Spread, fit_spread, log_kernel_weight, weighted_centre
from .rules.record import _crossing
from .rules.builtin import REGISTRY, loglog_fit
from .rules.record import FIT, PRACTICE
from ..core.frozen import frozen

SIMILAR_SIZE = 2.0  # catalogue models within this factor of the budget (in 12·L·d²) count as similar
COVER = 0.85  # the band's target: the share of published models' depths it holds, by conformal prediction
WIDEN = (2.0, 4.0, 8.0, 16.0, 64.0, 1e3, math.inf)  # windows tried, in order, until some evidence is used
PREFERENCES = ("train", "serve", "balanced")
DEFAULT_PREFERENCE = "balanced"
KAPLAN_NOTE = ("Kaplan et al. 2020 (arXiv 2001.08361, Figure 5 and Section 3.1): at fixed size the aspect ratio d/L can "
               "vary by a factor of 40 with loss changing only a few percent; inside that shallow bowl the evidence fixes a "
               "band of depths, not one depth, and the pick inside the band weighs each shape's predicted loss penalty "
               "against its speed (time to the best shape's loss; docs/loss.md)")


# Registry rules built from catalogue models: leaving one of these models out leaves the rule out too.
# (The MobileLLM, MiniCPM and DeepSeek names are rows of tests/data/published_dense_2023_26.json, not of the catalogue.)
RULE_MODELS = {"llama3-practice": ("llama3-8b", "llama3-70b", "llama3-405b"),
               "mobilellm": ("mobilellm-125m", "mobilellm-350m", "mobilellm-600m", "mobilellm-1b", "mobilellm-1.5b"),
               "minicpm": ("minicpm-1.2b", "minicpm-2.4b"), "deepseek-llm": ("deepseek-llm-7b", "deepseek-llm-67b")}


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
    size: float | None = None  # a published model's own 12·L·d² (None for a rule: it answers at the budget)


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
    ranked: tuple  # (score, arch, costs) of every valid shape in the band, best first (target.score)


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
                            model.source, note, size))
    return out


def used_evidence(budget: float, width_at_depth, exclude: Iterable[str] = (), models=None):
    """(every piece considered, the used pieces, the similar-size window that was needed): the rules,
    then the published models within a window of the budget, the window doubling (``WIDEN``) until
    some piece is used."""
    rules = rule_evidence(budget, width_at_depth, exclude)
    for window in WIDEN:
        found = model_evidence(budget, width_at_depth, window, exclude, models)
        used = [e for e in rules + found if e.used]
        if used:
            return rules + found, used, window
    return rules + found, used, window


def centre(used: list[Evidence], budget: float) -> tuple[float, float, float]:
    """(mu, n_eff, distance) of the used evidence (``bandfit``): the weighted mean of ln depth, its
    effective count, and the distance in ln size to the nearest piece (0 when a rule answers at N)."""
    points = [(math.log(e.depth), 0.0 if e.size is None else log_kernel_weight(e.size, budget)) for e in used]
    mu, n_eff = weighted_centre(points)
    distance = min(0.0 if e.size is None else abs(math.log(e.size / budget)) for e in used)
    return mu, n_eff, distance


# practice_spread() as fitted on the committed catalogue (tests/test_evidence_band.py refits and compares):
# shipped so that a plan does not refit 43 leave-one-out bands (1-2 s) at every start.
SHIPPED_SPREAD = Spread(c0=-1.59712, c1=-0.119532, x0=22.687412, q=1.55997, gap=0.107205, cover=COVER, n=43)


def fit_practice_spread(models, cover: float = COVER, exclude: Iterable[str] = ()) -> Spread:
    """The band's spread fitted on published ``models`` (``bandfit.fit_spread``): each model's depth
    against the centre of the evidence at its own 12·L·d² with itself (and any rule built from it, and
    the names in ``exclude``) left out, with the paper's block there (width sqrt(N/12L))."""
    points = []
    for model in models:
        size = params_12(model.depth, model.width)
        _, used, _ = used_evidence(size, paper_width(size), (model.name, *exclude), models)
        mu, n_eff, distance = centre(used, size)
        points.append((math.log(size), math.log(model.depth) - mu, n_eff, distance))
    _, beta = loglog_fit([(m.depth, m.width) for m in models])
    return fit_spread(points, beta, cover)


@lru_cache(maxsize=None)
def practice_spread(cover: float = COVER) -> Spread:
    """``fit_practice_spread`` on the catalogue's decoder LMs (what ``SHIPPED_SPREAD`` holds at ``COVER``)."""
    return fit_practice_spread(published_models(), cover)


def depth_band(budget: float, floor: int, width_at_depth: Callable[[float], float] | None = None,
               exclude: Iterable[str] = (), models=None, spread: Spread | None = None) -> Band:
    """The consensus band at ``budget`` (non-embedding parameters of the caller's block).

    ``floor``: the theory's minimal depth. ``width_at_depth(L)``: the width spending the budget at
    depth L with the caller's block (default: the paper's 12·L·d²). ``exclude``: catalogue model
    names to leave out (leave-one-out checks; a rule built from such a model is left out too).
    ``models``: the published models to weigh (default ``published_models()``, the one read of
    catalog.json; pass them in to keep the call free of I/O). The spread is the catalogue's fit
    (``SHIPPED_SPREAD``) unless ``spread`` is given (a refit: another cover, other models)."""
    width_at_depth = width_at_depth or paper_width(budget)
    evidence, used, window = used_evidence(budget, width_at_depth, tuple(exclude), models)
    notes = [KAPLAN_NOTE]
    if window > SIMILAR_SIZE:
        notes.append(f"no rule's range covers {budget:.3g} and no published model lies within a factor of "
                     f"{SIMILAR_SIZE:g}: the band comes from the nearest published models ("
                     + ("of any size" if math.isinf(window) else f"within a factor of {window:g}")
                     + ") at their own d/L, an extrapolation")
    mu, n_eff, distance = centre(used, budget)
    spread = spread or SHIPPED_SPREAD
    half = spread.half_width(budget, n_eff, distance)
    low, high = math.exp(mu - half), math.exp(mu + half)
    lo = max(floor, math.floor(low))
    hi = max(lo, math.ceil(high))
    if lo > math.floor(low):
        notes.append(f"the evidence reaches down to depth {low:.1f}; the band starts at the theory's minimal depth {floor}")
    notes.append(f"band [{lo}, {hi}]: {math.exp(mu):.1f} layers (the weighted mean of {len(used)} pieces of used evidence, "
                 f"{n_eff:.1f} effective) times/over e^{half:.2f}, an interval that held {spread.cover:.0%} of the "
                 f"catalogue's {spread.n} published depths when each was left out (spread {spread.sigma(budget):.2f} in "
                 f"ln depth at this size" + (f", widened for evidence {math.exp(distance):.1f}x away in size" if distance > math.log(SIMILAR_SIZE) else "")
                 + f"; docs/evidence.md), never below the minimal depth {floor}")
    return Band(budget, floor, (lo, hi), tuple(evidence), window, tuple(notes))


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


def beyond_evidence(budget: float, band) -> str | None:
    """The consensus answer when the budget lies above all the evidence (no rule's range covers it and
    no published model is within evidence.SIMILAR_SIZE, the largest below it): the band then only
    carries published width/depth ratios far past any trained model (6,703 layers at 1e17,
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
