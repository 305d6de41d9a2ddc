"""Fitting the loss-penalty model (``loss.PenaltyModel``) on same-size ablations, and testing it on
groups and studies it has not seen (docs/loss.md).

A group is one study's shapes of one size class, trained on the same tokens under one condition.
Within a group the parameter counts are not equal (Gemstones: +38% at 50M, +23% at 100M, 3-14%
above), so each loss is first carried to the group's geometric-mean count N_ref with the loss law in
N (``loss.LossLaw``, Hoffmann et al. 2022 by default): L_adj = L - (A/N^alpha - A/N_ref^alpha). The
law counts all parameters (embeddings included), as the Gemstones counts do. Then, per group g of study s,

    ln L_adj = c_g + ln(1 + s_s · k · [(ln depth - a - b·ln(N_ref/1e9))² + q · ln(φ/φ*)²])

is fitted by least squares (SciPy), c_g profiled out (the best shape's loss, unknown), the study
scales s_s centred in log. The covariance of (ln k, a, b, ln q) is the Gauss-Newton one, scaled by
points / distinct shapes: the training conditions retrain the same shapes, so their residuals are not
independent. The spread between studies comes from leaving each study out (``leave_one_study_out``,
``study_spread``); ``shipped_fit`` is the shipped model. Reads the packaged data only in
``load_ablations`` (and ``shipped_fit``, through it); the rest is pure.
"""
from __future__ import annotations

import json
import math
from collections import defaultdict
from pathlib import Path

import numpy as np

from .loss import DEFAULT_LAW, FFN_RATIO, MIN_DEPTH, PRIOR_LN_Q_SD, PRIOR_Q, REFERENCE_PARAMS, Z_95, LossLaw, PenaltyModel
from ..core.frozen import frozen

DATA = Path(__file__).with_name("ablations.json")
# Gemstones' four training conditions and Petty et al.'s one (C4, ~131B tokens); the 350B Gemstones models evaluated
# on other corpora (constLR_350B_eval_*) are the same runs, not further measurements
TRAINING_CONDITIONS = ("constLR_100B", "constLR_350B", "cooldown_99B", "halfLR_100B", "C4_131B")
MEASURED_NOISE = 0.005  # a held-out best within 0.5% of the measured best counts (no seed spread is stated)


def load_ablations(path: str | Path | None = None) -> dict:
    """The committed data set (``cost/ablations.json``): notes, studies and rows."""
    return json.loads(Path(path or DATA).read_text())


def loss_rows(data: dict, conditions=TRAINING_CONDITIONS, min_depth: int = MIN_DEPTH) -> list[dict]:
    """The rows with a measured loss (a perplexity becomes its loss, ln ppl) and a shape of at least
    ``min_depth`` layers (the fitted domain), under the given training conditions."""
    out = []
    for r in data["rows"]:
        if r["metric"] in ("loss", "ppl") and r["depth"] and r["params"] and r["depth"] >= min_depth \
                and (conditions is None or r.get("condition") in conditions):
            out.append(dict(r, metric="loss", value=math.log(r["value"])) if r["metric"] == "ppl" else r)
    return out


def groups_of(rows) -> dict[str, list[dict]]:
    """Rows by their ``group``, each group sorted by depth."""
    out = defaultdict(list)
    for r in rows:
        out[r["group"]].append(r)
    return {g: sorted(rs, key=lambda r: r["depth"]) for g, rs in out.items()}


def adjusted(rows, law: LossLaw | None = DEFAULT_LAW) -> tuple[np.ndarray, float]:
    """(losses carried to the group's geometric-mean count by the law, that count); ``law`` None:
    the losses as they are."""
    params = np.array([r["params"] for r in rows], dtype=float)
    ref = float(np.exp(np.log(params).mean()))
    loss = np.array([r["value"] for r in rows], dtype=float)
    return (loss if law is None else loss - (law.model_term(params) - law.model_term(ref))), ref


def ln_ffn_ratio(rows, ratio: float = FFN_RATIO) -> np.ndarray:
    """ln(φ/φ*) per row, φ = ffn/width (0 for a row without a feed-forward width: taken at φ*)."""
    return np.array([math.log(r["ffn"] / r["width"] / ratio) if r.get("ffn") and r.get("width") else 0.0 for r in rows])


def _arrays(groups: dict, law: LossLaw, studies: list[str]):
    cols = defaultdict(list)
    for i, rows in enumerate(groups.values()):
        adj, ref = adjusted(rows, law)
        cols["ln_depth"] += [math.log(r["depth"]) for r in rows]
        cols["phi"] += list(ln_ffn_ratio(rows))
        cols["y"] += list(np.log(adj))
        cols["x"] += [math.log(ref / REFERENCE_PARAMS)] * len(rows)
        cols["index"] += [i] * len(rows)
        cols["study"] += [studies.index(r.get("study", "")) for r in rows]
    return {name: np.array(v) for name, v in cols.items()}


def _varies(groups: dict) -> bool:
    """Whether any group varies the feed-forward ratio (else q cannot be told from the depth term)."""
    return any(len(set(np.round(ln_ffn_ratio(rs), 6))) > 1 for rs in groups.values())


def fit_penalty(rows, law: LossLaw | None = DEFAULT_LAW, slope: float | None = None, source: str = "",
                q: float | None = None) -> PenaltyModel:
    """The PenaltyModel fitted on ``rows`` (dicts with group, depth, params, value; width, ffn and study
    where known). ``slope``: hold b fixed (one size cannot tell how the optimum moves with size). ``q``:
    hold the ffn term's weight (default: fitted where a group varies f/d, else PRIOR_Q). ``law`` None: no
    count correction (an iso-budget sweep within ±5%, whose losses are taken as they are). Each study but
    the first gets its own bowl scale, centred so that k is their geometric mean."""
    from scipy.optimize import least_squares

    groups = groups_of(rows)
    studies = sorted({r.get("study", "") for r in rows})
    cols = _arrays(groups, law, studies)
    count, free_b = len(groups), slope is None
    free_q = q is None and _varies(groups)
    held_q = PRIOR_Q if q is None else q
    n_scale = len(studies) - 1

    def unpack(theta):
        i = 2
        b = theta[i] if free_b else slope
        i += free_b
        ln_q = theta[i] if free_q else math.log(held_q) if held_q > 0 else -math.inf
        i += free_q
        scales = np.zeros(len(studies))
        if n_scale:
            scales[1:] = theta[i:i + n_scale]
            scales -= scales.mean()
        return theta[0], theta[1], b, ln_q, scales

    def residuals(theta):
        ln_k, a, b, ln_q, scales = unpack(theta)
        u = cols["ln_depth"] - a - b * cols["x"]
        shape = np.log1p(np.exp(ln_k + scales[cols["study"]]) * (u * u + math.exp(ln_q) * cols["phi"] ** 2))
        rest = cols["y"] - shape
        means = np.bincount(cols["index"], rest, count) / np.bincount(cols["index"], minlength=count)
        return rest - means[cols["index"]]

    start = [math.log(0.01), float(np.average(cols["ln_depth"]))] + [0.1] * free_b + [0.0] * free_q + [0.0] * n_scale
    result = least_squares(residuals, start, method="lm", x_scale="jac")
    ln_k, a, b, ln_q, scales = unpack(result.x)
    dof = max(len(cols["y"]) - len(start) - count, 1)
    scatter = math.sqrt(float(result.fun @ result.fun) / dof)
    shapes = len({(r.get("study"), r["depth"], r.get("width"), r.get("ffn"), r["params"] // 10 ** 6) for r in rows})
    cov = _covariance(result.jac, scatter ** 2 * len(cols["y"]) / max(shapes, 1), [True, True, free_b, free_q])
    if q is None and not free_q:  # q held at the prior where no group varies f/d: the prior's own spread
        cov = cov[:15] + (PRIOR_LN_Q_SD ** 2,)
    params = [r["params"] for r in rows]
    depths = [r["depth"] for r in rows]
    return PenaltyModel(float(ln_k), float(a), float(b), float(math.exp(ln_q)), cov, scatter, len(cols["y"]), count, shapes,
                        (float(min(params)), float(max(params))), (int(min(depths)), int(max(depths))), source,
                        studies=tuple((name, float(v)) for name, v in zip(studies, scales)) if n_scale else ())


def _covariance(jac, scale: float, free: list[bool]) -> tuple[float, ...]:
    """The Gauss-Newton covariance of (ln k, a, b, ln q) (zero rows for held terms), x ``scale`` (the residual
    variance x points / distinct shapes: conditions retrain the same shapes, so their residuals are not independent)."""
    try:
        full = np.linalg.inv(jac.T @ jac) * scale
    except np.linalg.LinAlgError:
        full = np.full((jac.shape[1],) * 2, np.inf)
    where = [i for i, f in enumerate(free) if f]
    cov = np.zeros((4, 4))
    cov[np.ix_(where, where)] = full[: len(where), : len(where)]
    return tuple(float(v) for v in cov.ravel())


@frozen
class HeldOut:
    """One held-out group: what the model (fitted without it) predicts and what was measured."""

    group: str
    depths: tuple[int, ...]
    predicted_best: int  # depth of the shape predicted best (its raw loss, the law's count effect added back)
    measured_best: int
    excess_of_predicted: float  # measured loss of the predicted best / measured best - 1
    spearman: float
    hit: bool  # the predicted best is the measured best or within the noise of it


def predict_group(model: PenaltyModel, rows, law: LossLaw = DEFAULT_LAW) -> np.ndarray:
    """Predicted relative losses of a group's shapes (up to a common factor): the penalty at the
    group's count plus each shape's count effect by the law."""
    params = np.array([r["params"] for r in rows], dtype=float)
    ref = float(np.exp(np.log(params).mean()))
    tokens = float(rows[0]["tokens"])
    width = np.array([r.get("width") or 1 for r in rows], dtype=float)
    ffn = np.array([r.get("ffn") or FFN_RATIO * (r.get("width") or 1) for r in rows], dtype=float)
    penalty, _, _ = model.penalty(np.array([r["depth"] for r in rows]), ref, width, ffn)
    base = law.loss(ref, tokens)
    return penalty + (law.model_term(params) - law.model_term(ref)) / base


def spearman(a, b) -> float:
    """Spearman's rank correlation (SciPy), 0 when either side is constant."""
    from scipy.stats import spearmanr

    if len(set(a)) < 2 or len(set(b)) < 2:
        return 0.0
    return float(spearmanr(a, b).statistic)


def held_out(model: PenaltyModel, rows, noise: float = MEASURED_NOISE, law: LossLaw = DEFAULT_LAW) -> HeldOut:
    """The held-out record of one group's rows under ``model``."""
    predicted = predict_group(model, rows, law)
    measured = np.array([r["value"] for r in rows], dtype=float)
    i, j = int(np.argmin(predicted)), int(np.argmin(measured))
    excess = float(measured[i] / measured[j] - 1)
    return HeldOut(rows[0]["group"], tuple(r["depth"] for r in rows), rows[i]["depth"], rows[j]["depth"], excess,
                   spearman(predicted, measured), excess <= noise)


def leave_one_out(rows, key=lambda g: g.split("|")[1], law: LossLaw = DEFAULT_LAW) -> list[HeldOut]:
    """Leave each ``key`` (default: the size class) out in turn, fit on the rest, score its groups."""
    groups = groups_of(rows)
    out = []
    for left in sorted({key(g) for g in groups}, key=str):
        train = [r for g, rs in groups.items() if key(g) != left for r in rs]
        model = fit_penalty(train, law)
        out += [held_out(model, rs, law=law) for g, rs in groups.items() if key(g) == left]
    return out


def table(results: list[HeldOut]) -> str:
    """The leave-one-out table as text (the test prints it)."""
    lines = [f"{'held-out group':<42} {'depths':<28} {'pred':>4} {'meas':>4} {'excess':>7} {'rho':>5} hit"]
    for h in results:
        lines.append(f"{h.group:<42} {','.join(map(str, h.depths)):<28} {h.predicted_best:>4} {h.measured_best:>4} "
                     f"{h.excess_of_predicted:>+7.2%} {h.spearman:>5.2f} {'yes' if h.hit else 'no'}")
    hits = sum(h.hit for h in results)
    lines.append(f"hits {hits}/{len(results)} ({hits / len(results):.0%}); median Spearman "
                 f"{float(np.median([h.spearman for h in results])):.2f}")
    return "\n".join(lines)


def study_scale(model: PenaltyModel, rows, law: LossLaw = DEFAULT_LAW) -> float:
    """ln of the bowl's scale that fits ``rows`` (one study) best with every other term of ``model`` held:
    how much steeper or shallower that study's bowl is than the model's k."""
    from scipy.optimize import least_squares

    groups = groups_of(rows)
    parts = []
    for rs in groups.values():
        adj, ref = adjusted(rs, law)
        width = np.array([r.get("width") or 1 for r in rs], dtype=float)
        ffn = np.array([r.get("ffn") or FFN_RATIO * (r.get("width") or 1) for r in rs], dtype=float)
        parts.append((np.log(adj), model.penalty(np.array([r["depth"] for r in rs]), ref, width, ffn)[0]))

    def residuals(t):
        out = [y - np.log1p(math.exp(t[0]) * p) for y, p in parts]
        return np.concatenate([r - r.mean() for r in out])

    return float(least_squares(residuals, [0.0], method="lm").x[0])


@frozen
class HeldOutStudy:
    """One study left out: the fit on the others, its groups' records, and its own bowl scale under that fit."""

    study: str
    model: PenaltyModel
    groups: tuple  # HeldOut records
    ln_scale: float  # study_scale of the held-out study under the others' fit
    optimum_errors: tuple[float, ...]  # ln(measured best depth / predicted best depth) per held-out group
    resolution: tuple[float, ...]  # per group, the variance of ln depth a hit leaves (uniform over half the gaps to the next depths tried)


def _resolution(depths, best: int) -> float:
    ln = np.log(sorted(depths))
    i = int(np.searchsorted(ln, math.log(best)))
    below = ln[i] - ln[i - 1] if i > 0 else 0.0
    above = ln[i + 1] - ln[i] if i + 1 < len(ln) else 0.0
    return float((below / 2 + above / 2) ** 2 / 12)


def leave_one_study_out(rows, law: LossLaw = DEFAULT_LAW) -> list[HeldOutStudy]:
    """Fit on every study but one, score the one left out (each in turn)."""
    out = []
    for study in sorted({r.get("study", "") for r in rows}):
        rest = [r for r in rows if r.get("study", "") != study]
        model = fit_penalty(rest, law)
        left = [r for r in rows if r.get("study", "") == study]
        records = tuple(held_out(model, rs, law=law) for rs in groups_of(left).values())
        errors = tuple(math.log(h.measured_best / h.predicted_best) for h in records)
        resolution = tuple(_resolution(h.depths, h.measured_best) for h in records)
        out.append(HeldOutStudy(study, model, records, study_scale(model, left, law), errors, resolution))
    return out


def study_spread(results: list[HeldOutStudy]) -> tuple[float, float]:
    """(tau_k, tau_a): the spread between studies, from leaving each out; each study counts once. tau_k: the RMS
    of the held-out studies' own bowl scales (ln k) under the others' fit. tau_a: the RMS error of the held-out
    groups' best depth (ln L*), each with the variance the grid of depths tried leaves (a hit is exact only to it)."""
    tau_k = math.sqrt(float(np.mean([h.ln_scale ** 2 for h in results])))
    per_study = [np.mean([e * e + v for e, v in zip(h.optimum_errors, h.resolution)]) for h in results]
    return tau_k, math.sqrt(float(np.mean(per_study)))


# How fast published practice's depth grows with size: the log-log slope of depth on parameters over the 48 dense
# decoder models of arch/catalog.json (0.2515 ± 0.017; tests/test_loss_studies.py recomputes it). Practice is
# evidence of what trains well, not of loss (theory card): it bounds how fast the optimum may move beyond the data.
PRACTICE_DEPTH_EXPONENT = 0.2515


def with_spread(model: PenaltyModel, tau_k: float, tau_a: float) -> PenaltyModel:
    """``model`` with the spread between studies and the extrapolation rule: outside the fitted sizes ln L* gains
    tau_ext per e-fold of N, tau_ext = |PRACTICE_DEPTH_EXPONENT - b| / 1.96 (its 95% interval reaches practice's
    slope), at least the fitted slope's own standard error."""
    from dataclasses import replace

    tau_ext = max(abs(PRACTICE_DEPTH_EXPONENT - model.b) / Z_95, math.sqrt(max(model.cov[10], 0.0)))
    return replace(model, tau_k=tau_k, tau_a=tau_a, tau_ext=tau_ext)


def shipped_fit(data: dict | None = None, law: LossLaw = DEFAULT_LAW) -> tuple[PenaltyModel, list[HeldOutStudy]]:
    """The shipped model: the fit of every study's loss rows, with the spread between studies estimated by
    leaving each study out (and those held-out records)."""
    rows = loss_rows(data or load_ablations())
    results = leave_one_study_out(rows, law)
    studies = ", ".join(sorted({r["study"] for r in rows}))
    model = fit_penalty(rows, law, source=f"fit of depthwidth/cost/ablations.json ({studies})")
    return with_spread(model, *study_spread(results)), results
