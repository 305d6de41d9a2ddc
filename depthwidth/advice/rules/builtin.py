"""Empirical depth/width rules side by side, each with its constants, source, range and provenance.

This module is the one place every empirical constant lives. A rule is data (a frozen ``Rule``,
defined with ``Constant`` in ``rules/record.py`` and importable from here) plus the behaviour its
``relation`` names:

- ``threshold``  theory: the smallest depth with L >= log3 d (Levine et al. 2020, Theorems 1-2);
- ``levine``     fit: ln d = a + b·L (the Levine et al. NeurIPS fit, or a user's fit);
- ``power``      fit or practice: L = depth_k·N^beta at budget N (a user's fit; Chinchilla, DeepSeek shapes);
- ``aspect``     practice: d = ratio·L, optionally rounded up to a multiple (nanochat: 128);
- ``critical``   guard: the maximum depth for a width, L_max = kappa·ln d (Depth Delusion);
- ``band``       guard: an aspect-ratio band low <= d/L <= high (maximum depth d/low).

Budgets are non-embedding parameter counts. ``Rule.recommend`` takes the iso-budget width the
planner supplies (the width spending the budget at depth L with the real block, decreasing in L)
and solves the rule's relation against it by bisection on L, in log space; guards recommend
nothing. Each constant has a status (verified, second-hand, unverified; see ``Constant``), and
``Rule.verification`` says where it was read; the published shapes and source texts live in
``published.py``. Pure: no I/O (user rule files are read by ``rules.user.rule_from_file``).
"""
from __future__ import annotations

import math

from .. import published as P
from ...core.errors import not_one_of
from ...core.messages import Message
from .record import FIT, GUARD, PRACTICE, SECOND_HAND, THEORY, VERIFIED, Constant, Rule

FAR_OUTSIDE = 10.0  # shape notes skip a non-guard rule whose size range misses the budget by more than this factor


def _params_12(depth: float, width: float) -> float:
    return 12 * depth * width * width


_LLAMA3_RATIOS = [d / L for L, d in P.LLAMA3_SHAPES]
_MOBILELLM_RATIOS = [d / L for L, d in P.MOBILELLM_SHAPES]
_MINICPM_RATIOS = [d / L for L, d in P.MINICPM_SHAPES]


def _aspect_band(ratios: list[float], middle: str, low: str, high: str) -> dict:
    """The constants of a practice band of d/L: the rule's ratio, the geometric middle of the published
    ratios (``middle`` says which), and the band's two ends (``low``, ``high`` say whose)."""
    return {"ratio": Constant(round(math.sqrt(min(ratios) * max(ratios)), 1), middle, True),
            "band_low": Constant(min(ratios), low, True), "band_high": Constant(max(ratios), high, True)}


def _nanochat_params(depth: int) -> float:
    return _params_12(depth, math.ceil(64 * depth / 128) * 128)


def loglog_fit(shapes) -> tuple[float, float]:
    """Least squares of ln L on ln N over (L, d) shapes with N = 12·L·d²: (k, beta) of L = k·N^beta."""
    xs = [math.log(_params_12(L, d)) for L, d in shapes]
    ys = [math.log(L) for L, _ in shapes]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    beta = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    return math.exp(my - beta * mx), beta


_CHINCHILLA_K, _CHINCHILLA_BETA = loglog_fit(P.CHINCHILLA_A9)
_CHINCHILLA_SIZES = [_params_12(L, d) for L, d in P.CHINCHILLA_A9]
_DS7, _DS67 = ((L, _params_12(L, d)) for L, d in P.DEEPSEEK_SHAPES)
_DEEPSEEK_BETA = math.log(_DS67[0] / _DS7[0]) / math.log(_DS67[1] / _DS7[1])  # the power law through both shapes
_DEEPSEEK_K = _DS7[0] / _DS7[1] ** _DEEPSEEK_BETA
_KAPLAN_RATIOS = [d / L for L, d in P.KAPLAN_SHAPES]
_LEVINE_SECOND_HAND = f"quoted by {P.LEVINE_BLOOMBERG}; and by {P.LEVINE_BIGSCIENCE}"


_REGISTRY_RULES = (
    Rule(
        name="threshold", kind=THEORY, formula="L >= log3(d): smallest depth with 3^L >= d(L)",
        constants={"base": Constant(3.0, "Levine et al. 2020, Theorems 1-2: the depth threshold L = log3(d)", True)},
        source="arXiv 2006.12467 (Levine et al. 2020, 'Limits to Depth Efficiencies of Self-Attention', Theorems 1-2)",
        fit_range="theory: any size (separation-rank bounds, not a fit)", params_range=None, depth_range=None,
        verified=True,
        verification=P.THRESHOLD_SOURCE,
        notes=("the minimal depth, not an optimum: below it depth is double-exponentially more efficient than width",),
        relation="threshold",
    ),
    Rule(
        name="levine-fit", kind=FIT, formula="ln d = 5.039 + 0.0555·L",
        constants={
            "a": Constant(P.LEVINE_A, f"intercept of the NeurIPS version's fit, {_LEVINE_SECOND_HAND}", True, SECOND_HAND),
            "b": Constant(P.LEVINE_B, f"slope of the NeurIPS version's fit, {_LEVINE_SECOND_HAND}", True, SECOND_HAND),
        },
        source="arXiv 2006.12467 v3 (Levine et al., 'The Depth-to-Width Interplay in Self-Attention', NeurIPS 2020); "
               "constants as quoted in arXiv 2303.17564 §3.2 and github.com/bigscience-workshop/bigscience math/README.md",
        fit_range="depths 6-48 (the paper's ablations; small vocabulary, English web text)", params_range=None,
        depth_range=(6.0, 48.0), verified=True,
        verification=f"second-hand (two independent users, the paper's own text is not stored): {P.LEVINE_BLOOMBERG}; "
                     f"{P.LEVINE_BIGSCIENCE}. The stored summary of v3 (sources/004) confirms 'depths 6 to 48' and "
                     "'width of 30K as optimal for a 1-Trillion parameter network'",
        notes=("reproduces 1T -> width ~29.7K (depth ~95) and 'GPT-3 175B is too deep' (fit depth ~80 vs 96)",
               "does not pass through the authors' post's pair (depth 92, width 30K): at L = 92 it gives d = 25,463",
               "an empirical fit on the authors' setup, never theory"),
        relation="levine",
    ),
    Rule(
        name="nanochat", kind=PRACTICE, formula="d = 64·L rounded up to a multiple of 128; heads = d/128",
        constants={
            "ratio": Constant(64.0, "nanochat scripts/base_train.py (master) --aspect-ratio default 64", True),
            "multiple": Constant(128.0, "nanochat scripts/base_train.py (master): model_dim rounded up to a multiple of --head-dim", True),
            "head_dim": Constant(128.0, "nanochat scripts/base_train.py (master) --head-dim default 128", True),
        },
        source="github.com/karpathy/nanochat scripts/base_train.py (master, build_model_meta) and dev/LOG.md (2026-01-17)",
        fit_range="depths 12-28 (the d12-d28 ladder in dev/LOG.md); aspect 64 vs 128 compared at 1e18 FLOPs only",
        params_range=(_nanochat_params(12), _nanochat_params(28)), depth_range=(12.0, 28.0), verified=True,
        verification=f"verified: {P.NANOCHAT_TRAIN}; {P.NANOCHAT_LOG}",
        notes=("an integer-depth rule: the width is rounded up to a multiple of 128 as part of the rule",
               "nanochat's default attention is not full: --window-pattern 'SSSL' tiles three sliding-window layers "
               "(half the context) per full-attention layer; its MLP is relu^2 of 4d, so 12·L·d² counts its transformer matrices"),
        relation="aspect",
    ),
    Rule(
        name="llama3-practice", kind=PRACTICE, formula="d = 128·L (LLaMA-3 flavors: d/L 102-130)",
        constants={
            "ratio": Constant(128.0, "d/L of the 1B (16x2048) and 8B (32x4096) flavors", True),
            "band_low": Constant(min(_LLAMA3_RATIOS), "d/L of the 70B flavor (80x8192)", True),
            "band_high": Constant(max(_LLAMA3_RATIOS), "d/L of the 405B flavor (126x16384)", True),
        },
        source="github.com/pytorch/torchtitan torchtitan/models/llama3/flavors.py (flavors 1B, 3B, 8B, 70B, 405B)",
        fit_range="nominal sizes 1B-405B, depths 16-126 (a description of practice, not a fit)",
        params_range=(1e9, 4.05e11), depth_range=(16.0, 126.0), verified=True, verification=f"verified: {P.TORCHTITAN_SOURCE}",
        notes=("a description of what Meta trained, not a fit of an optimum",
               "sizes are the flavor names (totals with embeddings): the 1B and 3B have about 0.97B and 2.8B in their layers"),
        relation="aspect",
    ),
    Rule(
        name="mobilellm", kind=PRACTICE, formula="d = 24·L (MobileLLM: d/L 19-30, deep and thin)",
        constants=_aspect_band(_MOBILELLM_RATIOS, "geometric middle of the published band 19.2 (125M: 30x576) to 30 (350M: 32x960)",
                               "d/L of MobileLLM-125M (30 layers, width 576)", "d/L of MobileLLM-350M (32 layers, width 960)"),
        source="arXiv 2402.14905 (Liu et al., 'MobileLLM', ICML 2024); shapes in huggingface.co/facebook/MobileLLM-125M (model card table)",
        fit_range="nominal sizes 125M-1.5B, depths 30-54; only below ~1.5B",
        params_range=(1.25e8, 1.5e9), depth_range=(30.0, 54.0), verified=True,
        verification=P.MOBILELLM_SOURCE,
        notes=("sub-billion models only: the paper argues depth beats width at this scale, not beyond it",
               "sizes are nominal totals with (shared) embeddings"),
        relation="aspect",
    ),
    Rule(
        name="chinchilla", kind=PRACTICE, formula=f"L = {_CHINCHILLA_K:.4f}·N^{_CHINCHILLA_BETA:.4f} (log-log fit over Table A9's 50 shapes)",
        constants={
            "depth_k": Constant(_CHINCHILLA_K, "least-squares fit of ln L on ln(12·L·d²) over the 50 shapes of Table A9 "
                                               "(computed here from the rows in published.py)", True),
            "depth_beta": Constant(_CHINCHILLA_BETA, "the same fit's slope", True),
        },
        source="arXiv 2203.15556 (Hoffmann et al. 2022, 'Training Compute-Optimal Large Language Models'), Table A9 "
               "'All models' and Table 4",
        fit_range=f"the trained shapes of Table A9: 12·L·d² from {min(_CHINCHILLA_SIZES):.3g} to {max(_CHINCHILLA_SIZES):.3g} "
                  "(44M-16B as the table counts them), depths 8-49, d/L 40-109",
        params_range=(min(_CHINCHILLA_SIZES), max(_CHINCHILLA_SIZES)), depth_range=(8.0, 49.0), verified=True,
        verification=f"verified: {P.CHINCHILLA_A9_SOURCE}",
        notes=("a practice band, not an optimum: the table lists every shape trained for the scaling study, several "
               "depths per width; the fit is their central line, residuals within about ±20% in depth",
               f"check beyond the table: {P.CHINCHILLA_T4_SOURCE}; the fit gives "
               f"{_CHINCHILLA_K * _params_12(*P.CHINCHILLA_T4) ** _CHINCHILLA_BETA:.1f} layers at its size"),
        relation="power",
    ),
    Rule(
        name="deepseek-llm", kind=PRACTICE,
        formula=f"L = {_DEEPSEEK_K:.4g}·N^{_DEEPSEEK_BETA:.4f} (through 7B = 30x4096 and 67B = 95x8192)",
        constants={
            "depth_k": Constant(_DEEPSEEK_K, "the power law through the two trained shapes (computed here)", True),
            "depth_beta": Constant(_DEEPSEEK_BETA, "its exponent ln(95/30) / ln(N_67B / N_7B), N = 12·L·d²", True),
            "m_opt_base": Constant(P.DEEPSEEK_LAW["m_base"], P.DEEPSEEK_LAW_SOURCE, True, SECOND_HAND),
            "m_opt_exponent": Constant(P.DEEPSEEK_LAW["m_exponent"], P.DEEPSEEK_LAW_SOURCE, True, SECOND_HAND),
            "d_opt_base": Constant(P.DEEPSEEK_LAW["d_base"], P.DEEPSEEK_LAW_SOURCE, True, SECOND_HAND),
            "d_opt_exponent": Constant(P.DEEPSEEK_LAW["d_exponent"], P.DEEPSEEK_LAW_SOURCE, True, SECOND_HAND),
        },
        source="arXiv 2401.02954 (DeepSeek-AI 2024, 'DeepSeek LLM: Scaling Open-Source Language Models with Longtermism')",
        fit_range=f"two trained shapes: 12·L·d² {_DS7[1]:.3g} (7B) to {_DS67[1]:.3g} (67B), depths 30-95",
        params_range=(_DS7[1], _DS67[1]), depth_range=(30.0, 95.0), verified=True,
        verification=f"verified shapes: {P.DEEPSEEK_SOURCE}. Law: {P.DEEPSEEK_LAW_SOURCE}",
        notes=("the depth relation only joins the two models DeepSeek trained; the compute-optimal law sizes the model "
               "(M, non-embedding FLOPs per token) and the data, not the depth",),
        relation="power",
    ),
    Rule(
        name="minicpm", kind=PRACTICE, formula="d = 41·L (MiniCPM: d/L 30-58, deep and thin)",
        constants=_aspect_band(_MINICPM_RATIOS, "geometric middle of 1536/52 (MiniCPM 1.2B) and 2304/40 (MiniCPM 2.4B)",
                               "d/L of MiniCPM 1.2B (52 layers, width 1536)", "d/L of MiniCPM 2.4B (40 layers, width 2304)"),
        source="arXiv 2404.06395 (Hu et al. 2024, 'MiniCPM'); released configs openbmb/MiniCPM-2B and MiniCPM-1B",
        fit_range=f"two trained shapes: 12·L·d² {_params_12(52, 1536):.3g} (1.2B) to {_params_12(40, 2304):.3g} (2.4B), depths 40-52",
        params_range=(_params_12(52, 1536), _params_12(40, 2304)), depth_range=(40.0, 52.0), verified=True,
        verification=f"verified: {P.MINICPM_SOURCE}",
        notes=("the smaller model is the deeper one: a practice band, not a trend",),
        relation="aspect",
    ),
    Rule(
        name="depth-delusion", kind=GUARD, formula="L_max = 2.43·ln(d) (critical depth D_crit for width W = d)",
        constants={
            "kappa": Constant(2.43, P.DEPTH_DELUSION_KAPPA_SOURCE, True, SECOND_HAND),
            "exponent": Constant(0.44, "abstract of arXiv 2601.20994: D_crit ∝ W^0.44", True),
        },
        source="arXiv 2601.20994 (Fahim and Karim 2026, 'The Depth Delusion'), abstract and Figure 1",
        fit_range="17M-7B parameters (30 architectures), fixed LR, pre-LN, one seed",
        params_range=(1.7e7, 7e9), depth_range=None, verified=True,
        verification=f"second-hand constant kappa: {P.DEPTH_DELUSION_KAPPA_SOURCE}. Verified: {P.DEPTH_DELUSION_SOURCE}",
        notes=("a note, never a warning on its own: the 2.43·ln W form is second-hand, and extrapolated it caps Llama 3 8B "
               "at about 20 layers",
               "the paper's own law, D_crit ∝ W^0.44 through Figure 1's W = 512 -> 16, gives 16·(W/512)^0.44 "
               "(about 40 at W = 4096)"),
        relation="critical",
    ),
    Rule(
        name="kaplan-band", kind=GUARD,
        formula=f"{_KAPLAN_RATIOS[0]:.0f} <= d/L <= {_KAPLAN_RATIOS[1]:.0f} (Figure 5: loss within a few percent); L_max = d/{_KAPLAN_RATIOS[0]:.0f}",
        constants={
            "low": Constant(_KAPLAN_RATIOS[0], "d/L of (48, 1600), one end of Figure 5's caption pair", True, SECOND_HAND),
            "high": Constant(_KAPLAN_RATIOS[1], "d/L of (6, 4288), within 3% of (48, 1600) in Figure 5's caption", True, SECOND_HAND),
            "factor": Constant(40.0, "Figure 5 / Section 3.1: the aspect ratio can vary by a factor of 40 with loss "
                                     "changing only a few percent", True, SECOND_HAND),
        },
        source="arXiv 2001.08361 (Kaplan et al. 2020, 'Scaling Laws for Neural Language Models'), Section 3.1, Figure 5",
        fit_range="50M, 274M and 1.5B parameter models (Figure 5)", params_range=(5e7, 1.5e9), depth_range=None,
        verified=True, verification=f"second-hand: {P.KAPLAN_SOURCE}",
        notes=("a flat bowl, not an optimum: at fixed size many aspect ratios cost only a few percent of loss, which is "
               "why a depth band (and a pick inside it by cost) is an honest answer",),
        relation="band",
    ),
)

REGISTRY: dict[str, Rule] = {rule.name: rule for rule in _REGISTRY_RULES}


def get_rule(name: str) -> Rule:
    """The registered rule called ``name``; InputError listing the names otherwise."""
    try:
        return REGISTRY[name]
    except (KeyError, TypeError):
        raise not_one_of("rule", name, REGISTRY) from None


def empirical_optimum(budget: float) -> tuple[float, float]:
    """(depth, width) of the Levine et al. NeurIPS fit ('levine-fit') for the paper's block N = 12·L·d²."""
    from ...theory.separation import width_for

    return REGISTRY["levine-fit"].recommend(budget, lambda depth: width_for(budget, depth))


def shape_positions(depth: float, width: float, budget: float, skip: tuple[str, ...] = ()) -> tuple[str, ...]:
    """Notes on where a shape sits against each registered rule (compare, inspect, models).

    Guards always speak; a rule that recommends is left out when the budget is more than
    FAR_OUTSIDE times outside its size range (MobileLLM says nothing about a 175B model)."""
    notes = []
    for rule in _REGISTRY_RULES:
        if rule.name in skip:
            continue
        if rule.kind != GUARD and rule.params_range is not None:
            low, high = rule.params_range
            if not low / FAR_OUTSIDE <= budget <= high * FAR_OUTSIDE:
                continue
        note = rule.position(depth, width, budget)
        if note is not None:
            marks = [m for m, on in ((f"{rule.status} constants", rule.status != VERIFIED),
                                     ("outside its range", rule.extrapolated(budget))) if on]
            notes.append(note + (f" [{', '.join(marks)}]" if marks else ""))
    return tuple(notes)


def guard_messages(depth: float, width: float, budget: float) -> tuple[list[str], list[str]]:
    """What each registered guard says about a shape of ``budget`` parameters: (warnings, notes).

    A guard warns only when the shape passes its maximum depth for the width, the budget lies inside
    the guard's evidence range, and every constant of the guard was read in its primary source
    (status "verified"); each warning names that status and the source in the same line. A guard
    with a second-hand or unverified constant, or outside its range, never warns on its own: it
    gives a note, with the reason it is only a note."""
    warnings, notes = [], []
    for rule in _REGISTRY_RULES:
        limit = rule.max_depth(width) if rule.kind == GUARD else None
        if limit is None or depth <= limit:
            continue
        text = (f"depth {depth:g} is above the '{rule.name}' guard's maximum {limit:.1f} for width {width:,.0f} "
                f"({rule.formula}; {rule.source})")
        in_range = not rule.extrapolated(budget)
        if in_range and rule.status == VERIFIED:
            warnings.append(Message("guard", f"{text} [verified; evidence range {rule.fit_range}]", rule=rule.name))
            continue
        why = [f"{rule.status} constants: a note, not a warning"] if rule.status != VERIFIED else []
        if not in_range:
            why.append(f"budget {budget:.3g} outside its evidence range ({rule.fit_range})")
        notes.append(Message("guard", f"{text} [{'; '.join(why)}]", rule=rule.name, in_range=in_range))
    return warnings, notes

