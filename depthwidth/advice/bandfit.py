"""The evidence band as a fitted model of published practice: a size-dependent centre and spread.

The data are published dense decoder-only LMs (``Point``: ln 12·L·d², ln L, year, family lineage):
the catalogue's and the table ``published_dense.json`` (evidence.py reads both). At a size N:

- weight of a model of size s and year t: exp(-(ln(s/N)/h)²/2 - (latest - t)/RECENCY). A Gaussian
  kernel in log size (h = ``CENTRE_SCALE``, a factor of sqrt(2): of the scales tried in
  docs/evidence.md, sqrt(2) and below gave the narrowest bands at the same held-out coverage; sqrt(2)
  is the widest of those, so a centre still rests on the models within about 2x of N), and
  newer models weigh more: one ``RECENCY`` years older weighs 1/e (practice moved deeper since 2023).
- centre mu(N): the local linear regression of ln L on ln s with these weights (Fan & Gijbels 1996,
  "Local Polynomial Modelling and Its Applications", Chapman & Hall, section 3.1): practice's depth
  at N, following its slope with size instead of carrying each model at its own d/L (which moves
  depth as N^(1/3) where practice moves as about N^0.2).
- spread, below and above the centre separately (practice is skewed: the deep-thin small models of
  2024 lie far above a centre that most models sit near): the weighted root mean square of the models'
  residuals below (above) the centre, with the same kernel (``SPREAD_SCALE``), shrunk toward the
  all-size value by one pseudo-model (``PRIOR_WEIGHT``) where few models are near.
- band: exp(mu - q·s_below) .. exp(mu + q·s_above), rounded outward to whole layers; q is the smallest
  factor with which the band, refitted with each lineage left out in turn, holds ``cover`` of that
  lineage's 2023-26 models (``calibrate``): the cover-quantile of held-out scores, the cross-validation
  interval of Barber, Candès, Ramdas and Tibshirani 2021 ("Predictive inference with the jackknife+",
  Annals of Statistics 49(1):486-507) with a lineage as the fold (conformal prediction's scores, Lei
  et al. 2018, JASA 113(523):1094-1111), made asymmetric as in Romano, Patterson and Candès 2019
  ("Conformalized quantile regression", NeurIPS); so the coverage of a new family is approximate,
  not guaranteed (docs/evidence.md gives it measured with q itself refitted without the family).
- beyond the sizes of the data (distance D in ln size past the nearest edge), the centre moves on
  with the practice slope beta (a recency-weighted log-log fit over every model) and both spreads
  widen to sqrt(s² + (gap·D)²), gap = 1/3 - beta: how far keeping the published aspect ratio
  (depth ∝ N^(1/3)) and keeping practice's trend part per e-fold of size.

Pure: no I/O, no NumPy (about a hundred models: plain sums are fast enough for ``plan``'s start).
"""
from __future__ import annotations

import math
import re

from ..core.frozen import frozen

CENTRE_SCALE = math.log(2.0) / 2  # h: a model's weight falls to exp(-1/2) at a factor of sqrt(2) in size
SPREAD_SCALE = math.log(2.0) / 2  # h_s: the spread is as local as the centre
RECENCY = 2.0  # years: a model this much older than the newest weighs 1/e
PRIOR_WEIGHT = 1.0  # the all-size spread counts as one model of full weight in each local spread
TARGET_FIRST_YEAR = 2023  # calibrate holds the band to the models of this year and later


@frozen
class Point:
    """One published model: x = ln 12·L·d², y = ln L, its year and its lineage (``lineage``)."""

    name: str
    group: str
    year: int
    x: float
    y: float


def lineage(family: str) -> str:
    """A family without its version (``Llama 3.2`` -> ``llama``, ``Qwen2.5`` -> ``qwen``): the unit
    left out together, so that a model's band never learns from its own siblings."""
    return re.sub(r"[\s\d.-]+$", "", family.lower()) or family.lower()


def point(name: str, family: str, year: int, depth: int, width: int) -> Point:
    return Point(name, lineage(family), year, math.log(12 * depth * width * width), math.log(depth))


def _weights(points, x0: float, scale: float, latest: int) -> list[float]:
    """Kernel-in-log-size times recency weights, relative to the largest (no underflow far out)."""
    logs = [-0.5 * ((p.x - x0) / scale) ** 2 - (latest - p.year) / RECENCY for p in points]
    top = max(logs)
    return [math.exp(v - top) for v in logs]


def local_line(points, x0: float, latest: int, scale: float = CENTRE_SCALE) -> tuple[float, float]:
    """(intercept, slope) at x0 of the weighted least-squares line of y on x - x0."""
    s0 = s1 = s2 = t0 = t1 = 0.0
    for wi, p in zip(_weights(points, x0, scale, latest), points):  # one pass: a plan fits ~100 lines at start
        dx = p.x - x0
        s0 += wi
        s1 += wi * dx
        s2 += wi * dx ** 2
        t0 += wi * p.y
        t1 += wi * dx * p.y
    det = s0 * s2 - s1 * s1
    if det <= 1e-12 * s0 * s0:  # every weighted model at one size: no slope to fit
        return t0 / s0, 0.0
    return (s2 * t0 - s1 * t1) / det, (s0 * t1 - s1 * t0) / det


@frozen
class Practice:
    """Published practice fitted (``fit_practice``): centre and spread at any size (x = ln 12·L·d²)."""

    points: tuple
    residuals: tuple  # y - mu(x) of each point, in the order of ``points``
    latest: int
    beta: float  # practice's slope d ln L / d ln N over every model (recency-weighted)
    below: float  # the all-size RMS of the residuals below the centre (the local spreads' prior)
    above: float

    @property
    def gap(self) -> float:
        return 1 / 3 - self.beta

    def edge(self, x: float) -> tuple[float, float]:
        """(the nearest x inside the data's sizes, the distance D to it)."""
        low, high = min(p.x for p in self.points), max(p.x for p in self.points)
        inside = min(max(x, low), high)
        return inside, abs(x - inside)

    def centre(self, x: float) -> float:
        """mu: the expected ln depth of a published model of 12·L·d² = e^x."""
        inside, distance = self.edge(x)
        mu, _ = local_line(self.points, inside, self.latest)
        return mu + self.beta * (x - inside)

    def spread(self, x: float) -> tuple[float, float]:
        """(s_below, s_above) at e^x, widened by gap·D beyond the data."""
        inside, distance = self.edge(x)
        w = _weights(self.points, inside, SPREAD_SCALE, self.latest)
        out = []
        for side, prior in ((-1, self.below), (1, self.above)):
            pairs = [(wi, r) for wi, r in zip(w, self.residuals) if r * side > 0]
            total = sum(wi * r * r for wi, r in pairs) + PRIOR_WEIGHT * prior * prior
            local = math.sqrt(total / (sum(wi for wi, _ in pairs) + PRIOR_WEIGHT))
            out.append(math.sqrt(local * local + (self.gap * distance) ** 2))
        return out[0], out[1]

    def interval(self, x: float, q: float) -> tuple[float, float]:
        """The band's ends in layers (not rounded) at e^x (``ends``)."""
        return ends(self.centre(x), self.spread(x), q)


def ends(mu: float, spread: tuple[float, float], q: float) -> tuple[float, float]:
    """The band's ends in layers (not rounded) around the centre ``mu`` with the spreads (s_below, s_above):
    exp(mu - q·s_below), exp(mu + q·s_above)."""
    below, above = spread
    return math.exp(mu - q * below), math.exp(mu + q * above)


def _rms(values) -> float:
    values = list(values)
    return math.sqrt(sum(v * v for v in values) / len(values)) if values else 0.0


def fit_practice(points) -> Practice:
    """The centre's residuals at every point, the all-size spreads and the practice slope beta."""
    points = tuple(points)
    latest = max(p.year for p in points)
    residuals = tuple(p.y - local_line(points, p.x, latest)[0] for p in points)
    mean_x = sum(p.x for p in points) / len(points)
    _, beta = local_line(points, mean_x, latest, scale=math.inf)  # h = inf: one recency-weighted line
    below = _rms(r for r in residuals if r < 0)
    above = _rms(r for r in residuals if r > 0)
    return Practice(points, residuals, latest, beta, below, above)


def layers(interval: tuple[float, float], floor: int = 1) -> tuple[int, int]:
    """The band in whole layers: rounded outward, never below ``floor``."""
    lo = max(floor, math.floor(interval[0]))
    return lo, max(lo, math.ceil(interval[1]))


def held_out_predictions(points, first_year: int = TARGET_FIRST_YEAR):
    """(point, fit without its lineage) for every point of ``first_year`` or later: the leave-one-
    lineage-out fits that calibrate and check the band."""
    points = tuple(points)
    out = []
    for group in sorted({p.group for p in points if p.year >= first_year}):
        rest = [p for p in points if p.group != group]
        practice = fit_practice(rest)
        out.extend((p, practice) for p in points if p.group == group and p.year >= first_year)
    return out


def coverage(predictions, q: float) -> tuple[float, float, list]:
    """(share of held-out models inside their band, median hi/lo, the misses) at factor q."""
    inside, ratios, misses = 0, [], []
    for p, practice in predictions:
        lo, hi = layers(practice.interval(p.x, q))
        depth = round(math.exp(p.y))
        inside += lo <= depth <= hi
        ratios.append(hi / lo)
        if not lo <= depth <= hi:
            misses.append((p.name, depth, lo, hi))
    ratios.sort()
    n = len(ratios)
    median = ratios[n // 2] if n % 2 else (ratios[n // 2 - 1] + ratios[n // 2]) / 2
    return inside / n, median, misses


def calibrate(points, cover: float, first_year: int = TARGET_FIRST_YEAR) -> float:
    """q: the smallest factor whose leave-one-lineage-out bands (whole layers) hold ``cover`` of the
    models of ``first_year`` and later. Coverage only grows with q: bisection to 1e-6."""
    predictions = held_out_predictions(points, first_year)
    low, high = 0.0, 1.0
    while coverage(predictions, high)[0] < cover:
        high *= 2
    while high - low > 1e-6:
        mid = (low + high) / 2
        low, high = (mid, high) if coverage(predictions, mid)[0] < cover else (low, mid)
    return high
