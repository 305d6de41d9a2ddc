"""The seed paper's quantitative claims, each recomputed by this tool (`depthwidth reproduce`).

Quoted values come from Levine et al. 2020 ("Limits to Depth Efficiencies of Self-Attention",
NeurIPS; later "The Depth-to-Width Interplay in Self-Attention", arXiv:2006.12467), the
authors' blog post, or, where marked, the project's reference card.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

REPRODUCED = "reproduced"
DIFFERS = "differs"


@dataclass(frozen=True)
class Claim:
    """One claim: what was quoted, what the formulas give, and whether they agree within tolerance."""

    claim: str
    statement: str
    source: str
    quoted: str
    computed: str
    quoted_value: float
    computed_value: float
    tolerance: str
    status: str
    reason: str


def _claim(claim, statement, source, quoted_value, computed_value, agree: bool, tolerance, reason, quoted=None, computed=None):
    return Claim(claim, statement, source, quoted if quoted is not None else f"{quoted_value:g}",
                 computed if computed is not None else f"{computed_value:.4g}", float(quoted_value), float(computed_value),
                 tolerance, REPRODUCED if agree else DIFFERS, reason)


def _width_text(log10_width: float) -> str:
    return f"{10 ** (log10_width % 1):.2f}e{int(log10_width)}"


def claims() -> list[Claim]:
    """Every claim, recomputed now."""
    from .planner import empirical_optimum, min_depth, min_depth_exact
    from .solver import replicate_width
    from .theory import EFFICIENT, bounds, regime, threshold_depth

    out = [_claim("threshold-width-1000", "depth-efficiency ends near depth 6.3 for width ~1000",
                  "Levine et al. 2020, Sec. 1 and Fig. 1 (L_th = log3 d)", 6.3, threshold_depth(1000),
                  abs(threshold_depth(1000) - 6.3) <= 0.05, "±0.05", "log3(1000)")]

    deep_lower = bounds(6, 1000, 16).log3_sep_lower
    for depth, quoted in ((2, 2e17), (3, 2e5)):
        solved = replicate_width(6, 1000, 16, depth)
        implied_lower = (3**depth - 1) / 2 * math.log(quoted + 16, 3)
        agree = abs(solved.log10_width - math.log10(quoted)) <= math.log10(1.5)
        out.append(_claim(
            f"worked-example-depth-{depth}", f"a depth-{depth} network needs width ~{quoted:.0e} to replicate 6x1000 (H=16)",
            "Levine et al. 2020, worked example after Corollary 1", quoted, 10**solved.log10_width, agree, "factor 1.5",
            f"the formulas give LB(6,1000,16) = {deep_lower:.2f}; the quoted width needs LB = {implied_lower:.1f}",
            quoted=f"{quoted:.0e}", computed=f"{solved.width:,}" if solved.width else _width_text(solved.log10_width)))

    efficient_depths = [L for L in range(1, 12) if regime(L, 1000) == EFFICIENT]
    out.append(_claim("kaplan-depth-6", "Kaplan et al.'s depth-efficiency shows only for L <= 6 at widths around 1000",
                      "Levine et al. 2020, Sec. 1, on Kaplan et al. 2020", 6, max(efficient_depths), max(efficient_depths) == 6,
                      "exact", "largest L with 3^L < 1000"))

    for budget, quoted_exact, quoted_depth in ((10**7, 5.434, 6), (10**9, 7.390, 8), (10**12, 10.380, 11)):
        exact, depth = min_depth_exact(budget), min_depth(budget)
        out.append(_claim(f"min-depth-{budget:.0e}", f"minimal depth for {budget:.0e} parameters is {quoted_depth} (L* = {quoted_exact})",
                          "reference card, from the paper's L >= log3 d rule with N = 12·L·d²", quoted_depth, depth,
                          depth == quoted_depth and abs(exact - quoted_exact) <= 5e-4, "exact depth, L* ±0.0005",
                          f"L* = W(ln3·N/6)/(2 ln3) = {exact:.3f}"))

    depth_1t, width_1t = empirical_optimum(10**12)
    out.append(_claim("1t-width-30k", "the optimal width of a 1-trillion-parameter network is about 30K",
                      "Levine et al. 2020 (NeurIPS version), abstract", 30000, width_1t, abs(width_1t / 30000 - 1) <= 0.05,
                      "±5%", "empirical fit ln d = 5.039 + 0.0555·L with N = 12·L·d²", quoted="30K"))
    out.append(_claim("1t-depth-92", "the optimal depth of a 1-trillion-parameter network is about 92",
                      "the authors' blog post on the NeurIPS paper", 92, depth_1t, abs(depth_1t / 92 - 1) <= 0.05, "±5%",
                      f"empirical fit ln d = 5.039 + 0.0555·L as recalled gives {depth_1t:.1f}; the post quotes 92"))

    gpt3_depth, gpt3_width = 96, 12288
    optimum, _ = empirical_optimum(12 * gpt3_depth * gpt3_width**2)
    out.append(_claim("gpt3-too-deep", "GPT-3 175B (96 layers) is too deep for its size",
                      "Levine et al. 2020 (NeurIPS version), abstract", gpt3_depth, optimum, optimum < gpt3_depth,
                      "optimal depth < 96", f"empirical optimum for 12·96·12288² parameters: depth {optimum:.1f}",
                      quoted="96 layers > optimum", computed=f"optimum {optimum:.1f}"))
    return out
