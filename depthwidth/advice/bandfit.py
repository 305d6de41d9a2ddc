"""The evidence band's centre and width as a fitted model of published practice.

At a budget N the used evidence (``evidence.py``: rules in range, published models carried to N at
their own d/L) gives depths y_i = ln L_i. The band is a prediction interval for the depth a published
model of size N trains at:

- centre mu(N): the weighted mean of y_i. A rule answers at N itself (weight 1); a published model of
  size s weighs exp(-(ln(s/N)/ln 2)²/2), a Gaussian kernel in log size whose scale is the old
  similar-size factor of 2. n_eff = (sum w)²/sum w² is the evidence's effective count.
- spread sigma(N): the size-dependent scatter of published depths about that centre,
  ln sigma = c0 + c1·(ln N - x0), fitted by maximum likelihood on the catalogue's leave-one-out
  residuals r_i = ln L_i - mu_{-i}(N_i) (each model left out of its own centre).
- extrapolation: carrying a model at its own d/L moves depth as N^(1/3); published practice moves
  as N^beta (beta from a log-log fit over the same models), so a centre built from models a distance
  D = min |ln(s/N)| away carries an error that grows as (1/3 - beta)·D.
- half-width q·s, s² = sigma(N)²·(1 + 1/n_eff) + ((1/3 - beta)·D)², with q the ceil((n+1)·cover)-th
  smallest leave-one-out score |r_i|/s_i: the rank of split conformal prediction (Lei et al. 2018,
  "Distribution-free predictive inference for regression", JASA 113(523):1094-1111, Algorithm 1),
  applied to leave-one-out residuals (their jackknife variant, scores scaled by s as in their locally
  weighted intervals), so the guarantee of >= cover for a new model is approximate, not exact.

Pure: no I/O; SciPy is imported inside ``fit_spread`` only.
"""
from __future__ import annotations

import math

from ..core.frozen import frozen

KERNEL_SCALE = math.log(2.0)  # a published model's weight falls to exp(-1/2) at a factor of 2 in size


def log_kernel_weight(size: float, budget: float) -> float:
    """The log of the weight of a published model of 12·L·d² ``size`` in the centre at ``budget``."""
    return -0.5 * (math.log(size / budget) / KERNEL_SCALE) ** 2


def weighted_centre(points: list[tuple[float, float]]) -> tuple[float, float]:
    """(mu, n_eff) of (ln depth, log weight) points: the weighted mean and Kish's effective count.
    The weights are taken relative to the largest, so that far evidence (all weights tiny) never underflows."""
    top = max(lw for _, lw in points)
    weights = [math.exp(lw - top) for _, lw in points]
    total = sum(weights)
    mu = sum(y * w for (y, _), w in zip(points, weights)) / total
    return mu, total * total / sum(w * w for w in weights)


@frozen
class Spread:
    """The fitted scatter of published depths about the centre, and the conformal factor."""

    c0: float  # ln sigma at ln N = x0
    c1: float  # change of ln sigma per e-fold of N
    x0: float  # mean ln N of the fitted models
    q: float  # conformal quantile of |r|/s at ``cover``
    gap: float  # 1/3 - beta: how fast a model carried at its own d/L drifts from practice, per e-fold
    cover: float
    n: int  # models fitted

    def sigma(self, budget: float) -> float:
        return math.exp(self.c0 + self.c1 * (math.log(budget) - self.x0))

    def scale(self, budget: float, n_eff: float, distance: float) -> float:
        """s: the standard error of a new published depth at ``budget`` about the centre."""
        return math.sqrt(self.sigma(budget) ** 2 * (1 + 1 / n_eff) + (self.gap * distance) ** 2)

    def half_width(self, budget: float, n_eff: float, distance: float) -> float:
        """Half the band's width in ln depth: q·s."""
        return self.q * self.scale(budget, n_eff, distance)


def fit_spread(points: list[tuple[float, float, float, float]], beta: float, cover: float) -> Spread:
    """The Spread of leave-one-out points (ln N, residual, n_eff, distance), one per published model.

    sigma by maximum likelihood of r ~ Normal(0, sigma(N)²·(1 + 1/n_eff)); then q, the
    ceil((n+1)·cover)-th smallest score |r|/s (the largest when n is too small for that rank)."""
    from scipy.optimize import minimize

    x0 = sum(p[0] for p in points) / len(points)

    def nll(c):
        total = 0.0
        for x, r, n_eff, _ in points:
            log_s = c[0] + c[1] * (x - x0) + 0.5 * math.log(1 + 1 / n_eff)
            total += log_s + 0.5 * r * r * math.exp(-2 * log_s)
        return total

    rms = math.sqrt(sum(p[1] ** 2 for p in points) / len(points))
    c0, c1 = minimize(nll, [math.log(rms), 0.0], method="Nelder-Mead", options={"xatol": 1e-8, "fatol": 1e-10}).x
    spread = Spread(float(c0), float(c1), x0, 1.0, 1 / 3 - beta, cover, len(points))
    scores = sorted(abs(r) / spread.scale(math.exp(x), n_eff, d) for x, r, n_eff, d in points)
    rank = min(len(scores), math.ceil((len(scores) + 1) * cover))
    return Spread(spread.c0, spread.c1, x0, scores[rank - 1], spread.gap, cover, len(points))
