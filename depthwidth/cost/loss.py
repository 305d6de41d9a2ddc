"""What a shape costs in loss: the penalty against the best shape of its size, and the extra training
that penalty is worth (issue 31).

Pure: numbers in, numbers out (scalars or NumPy arrays); no I/O. The constants of ``SHIPPED`` come
from ``lossfit.fit_penalty`` on the committed ablations (``cost/ablations.json``; docs/loss.md), and
``tests/test_loss.py`` refits them from that file, so they cannot drift from the data.

The penalty (relative excess loss over the best shape of the same size and tokens):

    loss_vs_best = k · ln(L / L*(N))²,    L*(N) = exp(a + b · ln(N / 1e9))

k: how steep the bowl is (a shape e times too shallow or too deep loses k, relative); L*(N): the
optimal depth at N parameters, a power law in N with exponent b (L* at 1e9 is e^a). A parabola in
ln depth is the form the reference card's "Fitting your own rule" uses for one size; Kaplan et al.
2020 (Figure 5) show such a shallow bowl in the aspect ratio.

The currency (Hoffmann et al. 2022, eq. 10): L(N, D) = E + A/N^alpha + B/D^beta. A shape of N
parameters trained on D' tokens, with loss ``penalty`` relative to the best shape, reaches the best
shape's loss L(N_target, D) when B/D'^beta = B/D^beta + A/N_target^alpha - A/N^alpha - penalty ·
L(N_target, D): the extra tokens it needs, so its time to that target is its own time per token x D'.
"""
from __future__ import annotations


import math

from ..theory.num import Scalars as _Scalars, lib as _lib
from ..theory.frozen import frozen

Z_95 = 1.959963984540054  # two-sided 95% normal quantile: the intervals below are about 95%
REFERENCE_PARAMS = 1e9  # L*(N) is written around N = 1e9, so a is ln L* at 1e9


@frozen
class LossLaw:
    """L(N, D) = E + A/N^alpha + B/D^beta (nats per token; N parameters, D training tokens)."""

    name: str
    E: float
    A: float
    B: float
    alpha: float
    beta: float
    source: str
    status: str  # verified | second-hand

    def loss(self, params, tokens):
        """The law's loss at ``params`` and ``tokens`` (arrays broadcast)."""
        return self.E + self.model_term(params) + self.data_term(tokens)

    def model_term(self, params):
        """A / N^alpha: the part of the loss that more parameters remove."""
        return self.A / _lib(params).power(params, self.alpha)

    def data_term(self, tokens):
        """B / D^beta: the part of the loss that more tokens remove."""
        return self.B / _lib(tokens).power(tokens, self.beta)


HOFFMANN_2022 = LossLaw(
    "hoffmann2022", 1.69, 406.4, 410.7, 0.34, 0.28,
    "Hoffmann et al. 2022, 'Training Compute-Optimal Large Language Models', arXiv 2203.15556, eq. 10 (Approach 3); "
    "N counts all parameters, embeddings included",
    "second-hand: the paper's text was not in the stored corpora; the values are as transcribed in "
    "epoch-research/analyzing-chinchilla@92258837425e1b5f2851d624287f0120583a3d0e data_analysis.ipynb "
    "('true_params_rounded = log(406.4), log(410.7), log(1.69), 0.34, 0.28') and in independent notes")
BESIROGLU_2024 = LossLaw(
    "besiroglu2024", 1.8172, 482.01, 2085.43, 0.3478, 0.3658,
    "Besiroglu et al. 2024, 'Chinchilla Scaling: A replication attempt', arXiv 2404.10102 (refit of Hoffmann's Approach 3)",
    "verified in the authors' repository epoch-research/analyzing-chinchilla@92258837425e1b5f2851d624287f0120583a3d0e "
    "data_analysis.ipynb (printed estimates A 482.00572, B 2085.43420, E 1.81686 (fitted e^0.59711 = 1.8172), "
    "alpha 0.34781, beta 0.36585)")
# Training tokens per parameter the shipped model's data span (Gemstones: 2B at 100B tokens to 48M at 350B)
SHIPPED_TOKENS_PER_PARAM = (49.3, 7237.2)
LAWS = {law.name: law for law in (HOFFMANN_2022, BESIROGLU_2024)}
DEFAULT_LAW = HOFFMANN_2022


@frozen
class PenaltyModel:
    """loss_vs_best = k · ln(L / L*(N))², L*(N) = exp(a + b·ln(N/1e9)), with the fit's covariance of
    (ln k, a, b) (``cov``, row-major 3x3), its residual scatter (relative loss) and the data it saw."""

    ln_k: float
    a: float
    b: float
    cov: tuple[float, ...]
    scatter: float
    points: int
    groups: int
    shapes: int
    params_range: tuple[float, float]
    depth_range: tuple[int, int]
    source: str

    @property
    def k(self) -> float:
        return math.exp(self.ln_k)

    def _sd_ln_depth(self, x):
        """Standard error of ln L*(N) at x = ln(N/1e9): var(a) + x²·var(b) + 2x·cov(a, b)."""
        c, np = self.cov, _lib(x)
        return np.sqrt(np.maximum(c[4] + x * x * c[8] + 2 * x * c[5], 0.0))

    def optimal_depth(self, params):
        """(L*, low, high) at ``params``: the optimal depth and its ~95% interval, which widens away
        from the sizes the fit saw (through the uncertainty of b)."""
        np = _lib(params)
        x = np.log(np.asarray(params, dtype=float) / REFERENCE_PARAMS)
        center, sd = self.a + self.b * x, self._sd_ln_depth(x)
        return np.exp(center), np.exp(center - Z_95 * sd), np.exp(center + Z_95 * sd)

    def penalty(self, depth, params):
        """(loss_vs_best, low, high) of depth ``depth`` at ``params`` parameters (~95% interval: the
        optimum's uncertainty, k's, and the fit's residual scatter)."""
        np = _lib(depth, params)
        x = np.log(np.asarray(params, dtype=float) / REFERENCE_PARAMS)
        u = np.abs(np.log(np.asarray(depth, dtype=float)) - (self.a + self.b * x))
        spread, k_sd = Z_95 * self._sd_ln_depth(x), Z_95 * math.sqrt(max(self.cov[0], 0.0))
        value = self.k * u * u
        high = self.k * math.exp(k_sd) * (u + spread) ** 2 + Z_95 * self.scatter
        low = np.maximum(self.k * math.exp(-k_sd) * np.maximum(u - spread, 0.0) ** 2 - Z_95 * self.scatter, 0.0)
        return value, low, high

    def as_dict(self) -> dict:
        """The model as plain numbers (a rule file's ``loss_model``; JSON-safe)."""
        return dict(ln_k=self.ln_k, a=self.a, b=self.b, cov=list(self.cov), scatter=self.scatter, points=self.points,
                    groups=self.groups, shapes=self.shapes, params_range=list(self.params_range),
                    depth_range=list(self.depth_range), source=self.source)

    @classmethod
    def from_dict(cls, d: dict) -> "PenaltyModel":
        return cls(float(d["ln_k"]), float(d["a"]), float(d["b"]), tuple(float(v) for v in d["cov"]), float(d["scatter"]),
                   int(d["points"]), int(d["groups"]), int(d["shapes"]), tuple(d["params_range"]),
                   tuple(d["depth_range"]), str(d["source"]))


# Fitted by lossfit.fit_penalty on cost/ablations.json (Gemstones, 4 training conditions x 5 size classes);
# tests/test_loss.py::test_shipped_constants_are_the_fit_of_the_committed_data refits them.
SHIPPED = PenaltyModel(
    ln_k=-4.436639257445388, a=3.5928080223424046, b=0.03146561129247179,
    cov=(0.0032546061154656337, -0.0020399064797358007, -3.070263212390711e-06, -0.002039906479735801, 0.0036744746228401215, 0.0010477681709583249, -3.0702632123907173e-06, 0.0010477681709583249, 0.0006669947051471511),
    scatter=0.0022831628991834443, points=84, groups=20, shapes=22,
    params_range=(48377600.0, 2007837696.0), depth_range=(3, 80),
    source="fit of depthwidth/cost/ablations.json (Gemstones, McLeish et al. 2025, mcleish7/gemstone-scaling-laws@5f42047)")


def loss_penalty(depth, params, model: PenaltyModel | None = None):
    """(loss_vs_best, low, high): the predicted relative excess loss of a shape of ``depth`` layers
    and ``params`` parameters over the best shape of the same size and tokens (0.004 = 0.4%)."""
    return (model or SHIPPED).penalty(depth, params)


def optimal_depth(params, model: PenaltyModel | None = None):
    """(L*, low, high): the loss model's optimal depth at ``params`` parameters."""
    return (model or SHIPPED).optimal_depth(params)


def tokens_to_match(penalty, params, tokens, target_params=None, law: LossLaw = DEFAULT_LAW):
    """The tokens D' a shape of ``params`` parameters with relative loss ``penalty`` needs to reach
    the loss the best shape of ``target_params`` (default: the same) reaches on ``tokens``, by the
    law: B/D'^beta = B/D^beta + A/N_t^alpha - A/N^alpha - penalty·L(N_t, D). inf where no length
    reaches it (the shape's excess is more than its whole data term)."""
    np = _lib(penalty, params, tokens, params if target_params is None else target_params)
    params = np.asarray(params, dtype=float)
    target = params if target_params is None else np.asarray(target_params, dtype=float)
    tokens = np.asarray(tokens, dtype=float)
    room = (law.data_term(tokens) + law.model_term(target) - law.model_term(params)
            - np.asarray(penalty, dtype=float) * law.loss(target, tokens))
    if np is _Scalars:
        return (law.B / room) ** (1.0 / law.beta) if room > 0 else math.inf
    with np.errstate(divide="ignore", invalid="ignore"):
        needed = np.power(law.B / room, 1.0 / law.beta)
    return np.where(room > 0, needed, np.inf)


def time_to_target(time, penalty, params, tokens, target_params=None, law: LossLaw = DEFAULT_LAW):
    """The time a shape needs to reach the best shape's loss: ``time`` (its time for ``tokens``,
    in any unit) x D'/D (``tokens_to_match``); inf where no length reaches it."""
    np = _lib(time, tokens)
    return np.asarray(time, dtype=float) * tokens_to_match(penalty, params, tokens, target_params, law) / np.asarray(tokens, dtype=float)


def shape_loss_fields(depth, params, tokens=None, train_days=None, train_gpu_hours=None,
                      model: PenaltyModel | None = None, law: LossLaw = DEFAULT_LAW) -> dict:
    """The loss fields of one shape against the best shape of its own size (for ``cost`` and sweep rows):
    loss_vs_best and its interval, and the time to the best shape's loss from its training time
    (null without a length or a time, or when no length reaches it). JSON-safe floats or None."""
    value, low, high = (float(v) for v in loss_penalty(depth, params, model))
    out = dict(loss_vs_best=value, loss_vs_best_low=low, loss_vs_best_high=high,
               time_to_target_days=None, time_to_target_gpu_hours=None)
    if tokens:
        for name, time in (("time_to_target_days", train_days), ("time_to_target_gpu_hours", train_gpu_hours)):
            if time is not None:
                t = float(time_to_target(time, value, params, tokens, None, law))
                out[name] = t if math.isfinite(t) else None
    return out
