"""What a shape costs in loss: the penalty against the best shape of its size, and the extra training
that penalty is worth.

Pure: numbers in, numbers out (scalars or NumPy arrays); no I/O. The constants of ``SHIPPED`` come
from ``lossfit.shipped_fit`` on the committed ablations (``cost/ablations.json``; docs/loss.md), and
``tests/test_loss.py`` refits them from that file, so they cannot drift from the data.

The penalty (relative excess loss over the best shape of the same size and tokens):

    loss_vs_best = k · [ln(L / L*(N))² + q · ln(φ / φ*)²],    L*(N) = exp(a + b · ln(N / 1e9)),  φ = ffn / width

k: how steep the bowl is (a shape e times too shallow or too deep loses k, relative; the geometric mean
of the studies' bowls); L*(N): the optimal depth at N parameters, a power law in N with exponent b (L*
at 1e9 is e^a); at a fixed count and φ, depth fixes the width, so the depth term is the aspect-ratio
term too. φ*: the feed-forward ratio that costs nothing (4, held), q: its term's weight (Petty et al.
2023 shrink the feed-forward as layers are added). A parabola in ln depth is the form the reference
card's "Fitting your own rule" uses for one size; Kaplan et al. 2020 (Figure 5) show such a shallow
bowl in the aspect ratio and the feed-forward ratio. The interval holds the spread between studies
(leave one study out) and widens beyond the fitted sizes (docs/loss.md).

The currency (Hoffmann et al. 2022, eq. 10): L(N, D) = E + A/N^alpha + B/D^beta. A shape of N
parameters trained on D' tokens, with loss ``penalty`` relative to the best shape, reaches the best
shape's loss L(N_target, D) when B/D'^beta = B/D^beta + A/N_target^alpha - A/N^alpha - penalty ·
L(N_target, D): the extra tokens it needs, so its time to that target is its own time per token x D'.
"""
from __future__ import annotations


import math

from ..core.num import Scalars as _Scalars, lib as _lib
from ..core.frozen import frozen

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
DEFAULT_LAW = HOFFMANN_2022


MIN_DEPTH = 3  # the fitted domain: Gemstones' shallowest shape; Petty's 1- and 2-layer rows lie outside (docs/loss.md)
FFN_RATIO = 4.0  # phi*, the feed-forward ratio f/d at which the ffn term vanishes: Vaswani et al. 2017's d_ff = 4 d_model
PRIOR_Q = 1.0  # the ffn term's weight where the data cannot identify it (no group varies f/d): the depth term's curvature
PRIOR_LN_Q_SD = 1.0  # that prior's spread in ln q (95%: q within a factor 7 of 1; the two-study fit finds 0.48)


@frozen
class PenaltyModel:
    """loss_vs_best = k · [ln(L/L*(N))² + q·ln(φ/φ*)²], L*(N) = exp(a + b·ln(N/1e9)), φ = ffn/width, with the fit's
    covariance of (ln k, a, b, ln q) (``cov``, row-major 4x4), its residual scatter (relative loss), the spread
    between studies (``tau_k`` in ln k, ``tau_a`` in ln L*; leave one study out), the extrapolation rule
    (``tau_ext``: the sd of ln L* gained per e-fold of N outside ``params_range``) and the data it saw."""

    ln_k: float
    a: float
    b: float
    q: float
    cov: tuple[float, ...]
    scatter: float
    points: int
    groups: int
    shapes: int
    params_range: tuple[float, float]
    depth_range: tuple[int, int]
    source: str
    ffn_ratio: float = FFN_RATIO
    tau_k: float = 0.0
    tau_a: float = 0.0
    tau_ext: float = 0.0
    studies: tuple[tuple[str, float], ...] = ()  # (study, ln of its bowl's scale against k), the fit's study term

    @property
    def k(self) -> float:
        return math.exp(self.ln_k)

    def outside(self, params):
        """How far ``params`` lies outside the fitted sizes, in e-folds of N (0 inside)."""
        np = _lib(params)
        x = np.log(np.asarray(params, dtype=float))
        lo, hi = math.log(self.params_range[0]), math.log(self.params_range[1])
        return np.maximum(np.maximum(x - hi, lo - x), 0.0)

    def _sd_ln_depth(self, x, params):
        """Standard error of ln L*(N) at x = ln(N/1e9): var(a) + x²·var(b) + 2x·cov(a, b) from the fit, the
        between-study spread tau_a², and (tau_ext · e-folds outside the fitted sizes)²."""
        c, np = self.cov, _lib(x)
        fit = np.maximum(c[5] + x * x * c[10] + 2 * x * c[6], 0.0)
        return np.sqrt(fit + self.tau_a ** 2 + (self.tau_ext * self.outside(params)) ** 2)

    def optimal_depth(self, params):
        """(L*, low, high) at ``params``: the optimal depth (at the feed-forward ratio φ*) and its ~95% interval,
        which holds the spread between studies and widens outside the fitted sizes."""
        np = _lib(params)
        params = np.asarray(params, dtype=float)
        x = np.log(params / REFERENCE_PARAMS)
        center, sd = self.a + self.b * x, self._sd_ln_depth(x, params)
        return np.exp(center), np.exp(center - Z_95 * sd), np.exp(center + Z_95 * sd)

    def penalty(self, depth, params, width=None, ffn=None):
        """(loss_vs_best, low, high) of a shape of ``depth`` layers (feed-forward ``ffn`` wide on a ``width``
        residual stream; None: at φ*) at ``params`` parameters. ~95% interval: the optimum's uncertainty, k's
        (fit and between studies), q's, and the fit's residual scatter; low is 0 where nothing rules it out."""
        np = _lib(depth, params)
        params = np.asarray(params, dtype=float)
        x = np.log(params / REFERENCE_PARAMS)
        u = np.abs(np.log(np.asarray(depth, dtype=float)) - (self.a + self.b * x))
        phi = 0.0 if width is None or ffn is None else np.log(np.asarray(ffn, dtype=float) / np.asarray(width, dtype=float) / self.ffn_ratio)
        spread = Z_95 * self._sd_ln_depth(x, params)
        k_sd = Z_95 * math.sqrt(max(self.cov[0], 0.0) + self.tau_k ** 2)
        q_sd = Z_95 * math.sqrt(max(self.cov[15], 0.0))
        ffn_term = self.q * phi * phi
        value = self.k * (u * u + ffn_term)
        high = self.k * math.exp(k_sd) * ((u + spread) ** 2 + ffn_term * math.exp(q_sd)) + Z_95 * self.scatter
        low = self.k * math.exp(-k_sd) * (np.maximum(u - spread, 0.0) ** 2 + ffn_term * math.exp(-q_sd)) - Z_95 * self.scatter
        return value, np.maximum(low, 0.0), high

    def as_dict(self) -> dict:
        """The model as plain numbers (a rule file's ``loss_model``; JSON-safe)."""
        return dict(ln_k=self.ln_k, a=self.a, b=self.b, q=self.q, cov=list(self.cov), scatter=self.scatter,
                    points=self.points, groups=self.groups, shapes=self.shapes, params_range=list(self.params_range),
                    depth_range=list(self.depth_range), source=self.source, ffn_ratio=self.ffn_ratio, tau_k=self.tau_k,
                    tau_a=self.tau_a, tau_ext=self.tau_ext, studies=[list(s) for s in self.studies])

    @classmethod
    def from_dict(cls, d: dict) -> "PenaltyModel":
        """The model from ``as_dict``; a rule file of the depth-only form (3x3 cov, no q) reads with q = 0."""
        cov = [float(v) for v in d["cov"]]
        if len(cov) == 9:
            cov = [*cov[0:3], 0.0, *cov[3:6], 0.0, *cov[6:9], 0.0, 0.0, 0.0, 0.0, 0.0]
        return cls(float(d["ln_k"]), float(d["a"]), float(d["b"]), float(d.get("q", 0.0)), tuple(cov), float(d["scatter"]),
                   int(d["points"]), int(d["groups"]), int(d["shapes"]), tuple(d["params_range"]),
                   tuple(d["depth_range"]), str(d["source"]), float(d.get("ffn_ratio", FFN_RATIO)), float(d.get("tau_k", 0.0)),
                   float(d.get("tau_a", 0.0)), float(d.get("tau_ext", 0.0)), tuple((str(n), float(v)) for n, v in d.get("studies", ())))


# Fitted by lossfit.shipped_fit on cost/ablations.json (Gemstones 4 conditions x 5 sizes, Petty et al. 3 sizes; depth >= 3),
# its spread between studies by leaving each study out; tests/test_loss.py refits it and compares predictions.
SHIPPED = PenaltyModel(
    ln_k=-4.827280258494929, a=3.5875822446419394, b=0.031075772987523082, q=0.4845898038430187,
    cov=(0.004339511809885055, -0.0011796512452188054, -6.278344951358969e-06, -0.004747152317855762, -0.001179651245218805, 0.0023868238957264237, 0.0006841807371113207, 0.0008344967204709897, -6.278344951359439e-06, 0.0006841807371113208, 0.0004379086450261966, -0.00018390981533815312, -0.004747152317855761, 0.0008344967204709897, -0.0001839098153381535, 0.020174499583394737),
    scatter=0.002314264669303998, points=104, groups=23, shapes=42,
    params_range=(41282048.0, 2007837696.0), depth_range=(3, 80),
    source="fit of depthwidth/cost/ablations.json (Gemstones, McLeish et al. 2025, mcleish7/gemstone-scaling-laws@5f42047; "
           "Petty et al. 2023, arXiv 2310.19956 Tables 2-3)",
    ffn_ratio=4.0, tau_k=0.9728075914683367, tau_a=0.4069736175437859, tau_ext=0.11246340685398053,
    studies=(('gemstones2025', 0.39526802065594097), ('petty2023', -0.39526802065594097)))


def loss_penalty(depth, params, model: PenaltyModel | None = None, width=None, ffn=None):
    """(loss_vs_best, low, high): the predicted relative excess loss of a shape of ``depth`` layers, ``width``
    and ``ffn`` (None: at the best feed-forward ratio) and ``params`` parameters over the best shape of the same
    size and tokens (0.004 = 0.4%)."""
    return (model or SHIPPED).penalty(depth, params, width, ffn)


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
                      model: PenaltyModel | None = None, law: LossLaw = DEFAULT_LAW, width=None, ffn=None) -> dict:
    """The loss fields of one shape against the best shape of its own size (for ``cost`` and sweep rows):
    loss_vs_best and its interval, the time to the best shape's loss from its training time (null without
    a length or a time, or when no length reaches it), and the sizes the model was fitted on with whether
    ``params`` lies inside them. JSON-safe floats or None."""
    m = model or SHIPPED
    value, low, high = (float(v) for v in loss_penalty(depth, params, m, width, ffn))
    out = dict(loss_vs_best=value, loss_vs_best_low=low, loss_vs_best_high=high,
               time_to_target_days=None, time_to_target_gpu_hours=None, **fitted_range(params, m))
    if tokens:
        for name, time in (("time_to_target_days", train_days), ("time_to_target_gpu_hours", train_gpu_hours)):
            if time is not None:
                t = float(time_to_target(time, value, params, tokens, None, law))
                out[name] = t if math.isfinite(t) else None
    return out


def fitted_range(params, model: PenaltyModel | None = None) -> dict:
    """loss_fitted_params_low/high (the sizes the loss model's data span) and loss_in_fitted_range
    (whether ``params`` lies inside them; outside, the optimum's interval widens with the distance)."""
    m = model or SHIPPED
    low, high = (float(v) for v in m.params_range)
    return dict(loss_fitted_params_low=low, loss_fitted_params_high=high, loss_in_fitted_range=bool(low <= float(params) <= high))
