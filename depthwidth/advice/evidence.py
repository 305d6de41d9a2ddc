"""The consensus rule: a depth band from the in-range evidence, and the record of the shape picked inside it.

No single rule is the answer (reference card, "How a recommendation is made"). For a budget N:
- floor: the theory's minimal depth (Levine et al. 2020), passed in by the caller;
- evidence: what each registered rule of kind fit or practice gives at N (``rules.py``), flagged in
  range or not and verified or not, and what the catalogue's published decoder language models of
  similar size trained (``catalog.json``), each carried to N at its own aspect ratio d/L;
- band [lo, hi]: a prediction interval for the depth a published model of size N trains at
  (``bandfit.py``): a local fit of ln depth on ln size over the published dense decoder LMs (the
  catalogue's and ``published_dense.json``; newer models weigh more), its spread below and above
  measured by size, as wide as ``COVER`` of the 2023-26 models needed when each family was left
  out, wider beyond the sizes of the data; to whole layers, never below the floor. The evidence
  above is listed (and flagged in the band or not) but does not set the band;
- the pick inside the band is made above this module (``pick.consensus_pick``: the shape that reaches
  the best shape's loss soonest, ``target.py``); ``Consensus`` and ``Pick`` hold its answer.

Kaplan et al. 2020 (Figure 5, Section 3.1) found the loss nearly flat over a factor of 40 in d/L at
fixed size: inside such a flat bowl the evidence fixes a band, not a point.
Pure: no I/O, except that ``depth_band`` reads the catalogue and ``published_dense.json`` once (cached).
"""
from __future__ import annotations

import math
from typing import Callable, Iterable

from functools import lru_cache
from pathlib import Path

from .bandfit import Point, Practice, ends, fit_practice, layers, point
from .rules.builtin import REGISTRY
from .rules.record import FIT, PRACTICE, _crossing
from ..core.frozen import frozen

SIMILAR_SIZE = 2.0  # catalogue models within this factor of the budget (in 12·L·d²) count as similar
COVER = 0.85  # the band's target: the share of published 2023-26 models' depths it holds, each family left out
WIDEN = (2.0, 4.0, 8.0, 16.0, 64.0, 1e3, math.inf)  # windows tried, in order, until some evidence is used
PREFERENCES = ("train", "serve", "balanced")
DEFAULT_PREFERENCE = "balanced"
KAPLAN_NOTE = ("Kaplan et al. 2020 (arXiv 2001.08361, Figure 5 and Section 3.1): at fixed size the aspect ratio d/L can "
               "vary by a factor of 40 with loss changing only a few percent; inside that shallow bowl the evidence fixes a "
               "band of depths, not one depth, and the pick inside the band weighs each shape's predicted loss penalty "
               "against its speed (time to the best shape's loss; docs/loss.md)")


# Registry rules built from catalogue models: leaving one of these models out leaves the rule out too.
# (The MobileLLM, MiniCPM and DeepSeek names are rows of published_dense.json, not of the catalogue.)
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
    centre: float | None = None  # published practice's depth at this size (layers; ``bandfit``)
    extrapolated: bool = False  # the size lies beyond every published model the band is fitted on


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


PUBLISHED_DENSE = Path(__file__).with_name("published_dense.json")  # the band's data besides the catalogue


@lru_cache(maxsize=1)
def practice_points() -> tuple:
    """The band's data (``bandfit.Point``): the catalogue's decoder LMs and the verified rows of
    ``published_dense.json`` (published dense decoder LMs of 2023-26 not in the catalogue)."""
    import json

    rows = json.loads(PUBLISHED_DENSE.read_text(encoding="utf-8"))["rows"]
    points = [point(m.name, m.family, m.year, m.depth, m.width) for m in published_models()]
    return tuple(points + [point(r["name"], r["family"], r["year"], r["depth"], r["width"]) for r in rows if r["verified"]])


@lru_cache(maxsize=64)
def practice(exclude: frozenset = frozenset()) -> Practice:
    """Published practice fitted on ``practice_points()`` without the names in ``exclude``; with none left
    out, the shipped fit of the committed data (``shipped_practice``, written by docs/gen_practice.py)."""
    if exclude:
        return fit_practice(p for p in practice_points() if p.name not in exclude)
    from . import shipped_practice as shipped

    points = tuple(Point(*row[:5]) for row in shipped.POINTS)
    return Practice(points, tuple(row[5] for row in shipped.POINTS), max(p.year for p in points), shipped.BETA,
                    shipped.BELOW, shipped.ABOVE)


# bandfit.calibrate(practice_points(), COVER) on the committed data (tests/test_evidence_band.py refits
# and compares): shipped so that a plan does not refit one band per left-out family (about 1 s) at every start.
SHIPPED_Q = 1.224994


def practice_size(budget: float, width_at_depth, fitted: Practice) -> float:
    """x = ln 12·L·d² of the shape practice would train at ``budget`` with the caller's block: the
    budget's width at practice's depth, found by a few steps of the fixed point (exact for the
    paper's block, where 12·L·d² is the budget)."""
    x = math.log(budget)
    for _ in range(4):
        depth = math.exp(fitted.centre(x))
        width = width_at_depth(depth)
        if not (width > 0 and math.isfinite(width)):  # the block cannot spend the budget there: keep N itself
            return math.log(budget)
        step = math.log(params_12(depth, width))
        if step == x:  # a fixed point (the paper's block, at once): further steps change nothing
            return x
        x = step
    return x


def depth_band(budget: float, floor: int, width_at_depth: Callable[[float], float] | None = None,
               exclude: Iterable[str] = (), models=None, fitted: Practice | None = None, q: float | None = None) -> Band:
    """The consensus band at ``budget`` (non-embedding parameters of the caller's block).

    ``floor``: the theory's minimal depth. ``width_at_depth(L)``: the width spending the budget at
    depth L with the caller's block (default: the paper's 12·L·d²). ``exclude``: model names to
    leave out (leave-one-out checks: of the band's fit, of the listed evidence, and any rule built
    from such a model). ``models``: the catalogue rows listed as evidence (default
    ``published_models()``). The band is published practice (``practice()``, refitted without the
    excluded names) at ``SHIPPED_Q`` unless ``fitted`` or ``q`` is given (a refit: other data, another cover)."""
    width_at_depth = width_at_depth or paper_width(budget)
    exclude = tuple(exclude)
    evidence, _, window = used_evidence(budget, width_at_depth, exclude, models)
    if fitted is None:
        fitted = practice(frozenset(exclude) & {p.name for p in practice_points()} if exclude else frozenset())
    q = SHIPPED_Q if q is None else q
    x = practice_size(budget, width_at_depth, fitted)
    mu, spread = fitted.centre(x), fitted.spread(x)  # once: the interval, the notes and the record use them
    low, high = ends(mu, spread, q)
    lo, hi = layers((low, high), floor)
    notes = [KAPLAN_NOTE, *band_notes(fitted, x, q, (low, high), floor, mu, spread)]
    return Band(budget, floor, (lo, hi), tuple(evidence), window, tuple(notes), math.exp(mu), fitted.edge(x)[1] > 0)


def band_notes(fitted: Practice, x: float, q: float, interval: tuple[float, float], floor: int, mu: float,
               spread: tuple[float, float]) -> list[str]:
    """What the band says: its centre ``mu`` and ``spread`` at e^x, an extrapolation beyond the data, the floor."""
    notes = []
    inside, distance = fitted.edge(x)
    if distance > 0:
        side = "larger" if x > inside else "smaller"
        notes.append(f"12·L·d² = {math.exp(x):.3g} is {math.exp(distance):.3g}x {side} than every published model the "
                     f"band is fitted on: its centre follows practice's slope (depth ∝ N^{fitted.beta:.2f}) and it widens "
                     f"with the distance in log size, an extrapolation")
    lo, hi = layers(interval, floor)
    if lo > math.floor(interval[0]):
        notes.append(f"the evidence reaches down to depth {interval[0]:.1f}; the band starts at the theory's minimal depth {floor}")
    below, above = spread
    notes.append(f"band [{lo}, {hi}]: published practice at this size trains {math.exp(mu):.1f} layers (a "
                 f"local fit of ln depth on ln size over {len(fitted.points)} published dense decoder LMs, newer ones "
                 f"weighed more), the band e^-{q * below:.2f} to e^+{q * above:.2f} around it: as wide as {COVER:.0%} of the "
                 f"2023-26 models needed when each family was left out (docs/evidence.md), never below the minimal depth {floor}")
    return notes


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
    extrapolates practice's trend far past any trained model (up to 9,509 layers at 1e17, 7,226,896
    at 1e25), so the threshold rule's shape is recommended, saying why. None otherwise."""
    if band.window <= SIMILAR_SIZE:
        return None
    largest = max(published_models(), key=lambda m: params_12(m.depth, m.width))
    size = params_12(largest.depth, largest.width)
    if budget <= size * SIMILAR_SIZE:
        return None
    return (f"no published evidence reaches {budget:.3g}: the largest published model, {largest.name} "
            f"({largest.depth}x{largest.width}, 12·L·d² = {size:.3g}), is {budget / size:.3g}x smaller and no rule's range "
            f"covers this budget, so the recommendation is the threshold rule's minimal-depth shape; the evidence "
            f"band [{band.depth_band[0]:,}, {band.depth_band[1]:,}] only extrapolates published practice and is not used.")
