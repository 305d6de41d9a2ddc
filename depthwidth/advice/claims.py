"""The seed paper's quantitative claims, each recomputed by this tool (`depthwidth reproduce`).

A "quoted" value is always a quote from a public text of the authors, named with its section:
the paper (arXiv 2006.12467v1, "Limits to Depth Efficiencies of Self-Attention"), the abstract
of its NeurIPS version (arXiv 2006.12467v3, "The Depth-to-Width Interplay in Self-Attention"),
or the authors' blog post on v1 ("Is depth useful for self-attention?"). Never a number this
project computed itself: where the source states a rule but no number, the row is "derived"
(it shows what the rule gives) and has no quoted value.
"""
from __future__ import annotations

import math
from ..core.frozen import frozen

REPRODUCED = "reproduced"
DIFFERS = "differs"
DERIVED = "derived"  # the source states a rule, not a number: computed from it, nothing to compare

PAPER = "Levine et al. 2020, 'Limits to Depth Efficiencies of Self-Attention' (arXiv 2006.12467v1)"
NEURIPS = "Levine et al. 2020, 'The Depth-to-Width Interplay in Self-Attention' (arXiv 2006.12467v3, NeurIPS 2020)"
POST = "Levine, Wies, Sharir, Bata, Shashua, blog post 'Is depth useful for self-attention?' (on arXiv 2006.12467v1)"


@frozen
class Claim:
    """One claim: what the source says (``quoted``, None for a derived row), what the formulas
    give, and whether they agree within ``tolerance``. ``source`` names the text and its section."""

    claim: str
    statement: str
    source: str
    quoted: str | None
    computed: str
    quoted_value: float | None
    computed_value: float | None
    tolerance: str | None
    status: str
    reason: str


def _compared(claim, statement, source, quoted: str, quoted_value, computed: str, computed_value, agree: bool, tolerance, reason) -> Claim:
    return Claim(claim, statement, source, quoted, computed, None if quoted_value is None else float(quoted_value),
                 None if computed_value is None else float(computed_value), tolerance, REPRODUCED if agree else DIFFERS, reason)


def _derived(claim, statement, source, computed: str, computed_value, reason) -> Claim:
    return Claim(claim, statement, source, None, computed, None, float(computed_value), None, DERIVED, reason)


def _width_text(log10_width: float) -> str:
    return f"{10 ** (log10_width % 1):.2f}e{int(log10_width)}"


def _levine_fit() -> tuple[float, float]:
    """The NeurIPS fit's constants from their one home (rules.py)."""
    from .rules.builtin import REGISTRY

    constants = REGISTRY["levine-fit"].constants
    return constants["a"].value, constants["b"].value


def claims() -> list[Claim]:
    """Every claim, recomputed now."""
    return _threshold_claims() + _replication_claims() + _min_depth_claims() + _fit_claims()


def _threshold_claims() -> list[Claim]:
    """The threshold L = log3 d: at width 1000, the worked examples of Corollary 1, Kaplan et al.'s depth 6."""
    from ..theory.separation import EFFICIENT, bounds, min_depth, regime, threshold_depth
    from ..theory.solver import replicate_width

    out = [_compared(
        "threshold-width-1000", "depth-efficiency ends near depth 6.3 for widths around 1000",
        f"{POST}, section 'Our finding: Network width caps the benefits of depth in self-attention'",
        "L_th(d_x) ≃ 6.3", 6.3, f"log3(1000) = {threshold_depth(1000):.3f}", threshold_depth(1000),
        abs(threshold_depth(1000) - 6.3) <= 0.05, "±0.05", "L_th = log3 d at d = 1000 (the paper itself gives the formula, not 6.3)")]

    deep_lower = bounds(6, 1000, 16).log3_sep_lower
    for depth, quoted, text in ((2, 2e17, "d_x^shallow ≃ 2·10^17"), (3, 2e5, "d_x^shallow ≃ 2·10^5")):
        solved = replicate_width(6, 1000, 16, depth)
        implied_lower = (3**depth - 1) / 2 * math.log(quoted + 16, 3)
        agree = abs(solved.log10_width - math.log10(quoted)) <= math.log10(1.5)
        out.append(_compared(
            f"worked-example-depth-{depth}", f"a depth-{depth} network needs width ~{quoted:.0e} to replicate 6x1000 (H=16)",
            f"{PAPER}, Sec. 4.1, worked example after Corollary 1", text, quoted,
            f"{solved.width:,}" if solved.width else _width_text(solved.log10_width), 10**solved.log10_width, agree, "factor 1.5",
            f"eq. (7) gives LB(6,1000,16) = {deep_lower:.2f}; the quoted width needs LB = {implied_lower:.1f}: "
            "the paper's example disagrees with its own formula"))

    efficient_depths = [L for L in range(1, 12) if regime(L, 1000) == EFFICIENT]
    out.append(_compared(
        "kaplan-depth-6", "Kaplan et al.'s depth-efficiency shows only for L <= 6 at widths around 1000",
        f"{PAPER}, Sec. 1 and Fig. 1 caption ('For L ≤ 6, depth-efficiency is clearly demonstrated')",
        "L ≤ 6", 6, f"largest L with 3^L < 1000: {max(efficient_depths)}", max(efficient_depths),
        max(efficient_depths) == 6, "exact", "the threshold rule L < log3 d at d = 1000"))

    budget = 12 * 6 * 9**6  # 12·L·d² at L = 6, d = 3^6 = 729
    at, above = min_depth(budget), min_depth(budget + 1)
    out.append(_compared(
        "kaplan-depth-6-budget", "depth 6 stops being enough above 12·6·(3^6)² = 12·6·9^6 ≈ 3.83·10^7 parameters",
        f"{PAPER}, Fig. 1 caption (Kaplan et al. 2020: 'For L ≤ 6, depth-efficiency is clearly demonstrated')",
        "L ≤ 6", 6, f"minimal depth {at} at {budget:,} parameters, {above} above", at,
        at == 6 and above == 7, "exact",
        f"at depth 6 the threshold width is 3^6 = 729, so N = 12·6·729² = {budget:,}; a larger budget at depth 6 "
        "puts its width above 3^6, below the threshold"))
    return out


def _replication_claims() -> list[Claim]:
    """How the width to replicate a deep network grows (Corollary 1), and the remark after eq. (7)."""
    from ..theory.separation import LOG3_2
    from ..theory.solver import replicate_width

    out = []
    log10_widths = [replicate_width(6, 1000, 16, Ls).log10_width for Ls in (1, 2, 3)]
    ratios = [log10_widths[i] / log10_widths[i + 1] for i in range(2)]
    out.append(_compared(
        "double-exponential-replicate", "the width a shallower network needs to replicate a deep one is double-exponential in the depth ratio",
        f"{PAPER}, Sec. 4.1, Corollary 1 ('w ∝ exp(exp(d))'); {POST}, section 'Our finding' (informal theorem)",
        "w ∝ exp(exp(d))", None,
        "6x1000x16 at Ls = 3, 2, 1: 10^" + ", 10^".join(f"{w:.2f}" for w in reversed(log10_widths)), log10_widths[0],
        all(r > 2.9 for r in ratios), "log10 width x >= 3 per layer removed",
        "log3 of the width is 2·LB/(3^Ls - 1): each layer removed multiplies it by (3^(Ls+1) - 1)/(3^Ls - 1) >= 3 "
        f"(here x{ratios[1]:.2f} and x{ratios[0]:.2f}), so log w grows like 3^(L_deep - Ls)"))

    aside = math.log(10 - 9, 3) - 2 + 2 - LOG3_2  # log3(d - H) + a at 2x10x9, a = -L + 2 - log3 2
    out.append(_compared(
        "theorem1-positivity-aside", "log3(d - H) + a > 0 throughout the Theorem 1 regime (L < log3 d)",
        f"{PAPER}, Sec. 4.1, remark after eq. (7) ('note that log3(d_x - H) + a > 0 in this regime')",
        "log3(d_x − H) + a > 0", None, f"{aside:.3f} at 2x10x9", aside, aside > 0, "sign",
        "false when H is close to d (2 < log3 10, yet log3(1) + a = -log3 2 < 0): the lower bound is then vacuous, "
        "reported as 0 with a note"))
    return out


def _min_depth_claims() -> list[Claim]:
    """Minimal depths by the rule "depth not below log3 d", derived (the post gives the rule only)."""
    from ..theory.separation import min_depth, min_depth_exact

    out = []
    rule = f"{POST}, section 'Practical derivatives' (rule only: the post's table of minimal depths is not in the stored text)"
    for budget in (10**7, 10**9, 10**12):
        exact, depth = min_depth_exact(budget), min_depth(budget)
        out.append(_derived(
            f"min-depth-{budget:.0e}", f"minimal depth for {budget:.0e} parameters by the rule 'depth not below log3 d'",
            rule, f"{depth} (L* = {exact:.3f})", depth,
            "derived from 'exploit any parameter budget of 12·L·d_x² such that depth does not fall below the "
            "threshold of log3(d_x)': the smallest L with 3^L >= sqrt(N/(12·L)); L* = W(ln3·N/6)/(2·ln3)"))
    return out


def _fit_claims() -> list[Claim]:
    """What the NeurIPS version's empirical fit says of 1T parameters and of GPT-3."""
    from .rules.builtin import empirical_optimum

    out = []
    a, b = _levine_fit()
    fit = f"empirical fit ln d = {a} + {b}·L with N = 12·L·d²; its constants are RECALLED, not verified in a stored source"
    depth_1t, width_1t = empirical_optimum(10**12)
    at_92 = math.exp(a + b * 92)
    out.append(_compared(
        "1t-width-30k", "the optimal width of a 1-trillion-parameter network is about 30K",
        f"{NEURIPS}, abstract ('marking an unprecedented width of 30K as optimal for a 1-Trillion parameter network')",
        "width 30K", 30000, f"width {width_1t:,.0f} at depth {depth_1t:.1f}", width_1t, abs(width_1t / 30000 - 1) <= 0.05, "±5%",
        f"{fit}. The authors' post pairs 30K with depth 92 (recalled; that post is not among the stored sources): "
        f"the fit does not pass through that pair, at depth 92 it gives width {at_92:,.0f}"))

    gpt3_depth, gpt3_width = 96, 12288
    optimum, _ = empirical_optimum(12 * gpt3_depth * gpt3_width**2)
    out.append(_compared(
        "gpt3-too-deep", "GPT-3 175B (96 layers) is too deep for its size",
        f"{NEURIPS}, abstract ('GPT3 (which we project to be too deep for its size)')",
        "too deep for its size", gpt3_depth, f"optimum depth {optimum:.1f} < 96", optimum, optimum < gpt3_depth,
        "optimal depth < 96", f"{fit}; size 12·96·12288²"))
    return out
