"""What a depth/width rule is: the ``Rule`` record (its kind, formula, constants, sources and
ranges, and the depth or width its ``relation`` gives against the planner's iso-budget width) and
the ``Constant`` with its verification status. The rules themselves, every empirical constant with
its source, are rows in ``rules.py``. Pure: no I/O.
"""
from __future__ import annotations

import math
from dataclasses import field
from typing import Callable
from ...core.frozen import frozen


THEORY, FIT, PRACTICE, GUARD = "theory", "fit", "practice", "guard"


KINDS = (THEORY, FIT, PRACTICE, GUARD)


VERIFIED, SECOND_HAND, UNVERIFIED = "verified", "second-hand", "unverified"


STATUSES = (VERIFIED, SECOND_HAND, UNVERIFIED)  # strongest first


@frozen
class Constant:
    """One constant of a rule with where it comes from and how it was checked.

    ``status``: "verified" (read in the primary source: the paper, the repository, the config, at the
    location the provenance names), "second-hand" (not read in the primary source, but quoted by named
    independent stored sources), "unverified" (found in no stored source). ``verified`` is True for
    the first two: the value was found in a stored public text. Left out, the status follows ``verified``."""

    value: float
    provenance: str
    verified: bool
    status: str = ""

    def __post_init__(self):
        if not self.status:
            object.__setattr__(self, "status", VERIFIED if self.verified else UNVERIFIED)
        if self.status not in STATUSES or self.verified != (self.status != UNVERIFIED):
            raise ValueError(f"constant status {self.status!r} does not match verified={self.verified}")


@frozen
class Rule:
    """A depth/width rule: the field names are the ``depthwidth rules`` JSON contract."""

    name: str
    kind: str  # theory | fit | practice | guard
    formula: str
    constants: dict[str, Constant] = field(hash=False)
    source: str
    fit_range: str
    params_range: tuple[float, float] | None  # non-embedding parameters (or nominal sizes, see fit_range)
    depth_range: tuple[float, float] | None
    verified: bool
    verification: str
    notes: tuple[str, ...]
    relation: str  # threshold | levine | power | aspect | critical | band
    status: str = ""  # the weakest constant's status (derived): verified | second-hand | unverified

    def __post_init__(self):
        weakest = max((c.status for c in self.constants.values()), key=STATUSES.index, default=VERIFIED)
        object.__setattr__(self, "status", weakest)

    def _c(self, key: str) -> float:
        return self.constants[key].value

    # ---- the relation d = g(L) (log form), for the rules that have one

    def _log_width(self, depth: float) -> float | None:
        """ln g(L) for relation rules (unrounded); None for rules without an (L, d) relation."""
        if self.relation == "threshold":
            return depth * math.log(self._c("base"))
        if self.relation == "levine":
            return self._c("a") + self._c("b") * depth
        if self.relation == "aspect":
            return math.log(self._c("ratio") * depth)
        return None

    def width_for_depth(self, depth: float) -> float | None:
        """The rule's width at a depth (nanochat's rounding up included); None without a relation."""
        log_width = self._log_width(depth)
        if log_width is None:
            return None
        if self.relation == "aspect" and "multiple" in self.constants:
            step = self._c("multiple")
            return math.ceil(self._c("ratio") * depth / step) * step
        return math.exp(log_width)

    def heads(self, width: float) -> int | None:
        """Heads the rule itself prescribes (nanochat: width / head_dim 128); None when it leaves them open."""
        return int(width // self._c("head_dim")) if "head_dim" in self.constants else None

    # ---- the planner's interface

    def recommend(self, budget: float, width_at_depth: Callable[[float], float]) -> tuple[float, float] | None:
        """Real-valued (depth, width) the rule gives for ``budget`` before hardware snapping.

        None for guards, and for the theory row: its answer is the integer minimal depth, which the
        planner computes exactly (``threshold_crossing`` gives the real-valued crossing L*).

        ``width_at_depth(L)`` is the width spending the budget at depth L (decreasing in L). A rule
        d = g(L) is solved g(L) = width_at_depth(L) by bisection on L (never below one layer); a
        power-law rule takes L = depth_k·N^beta and the width that spends the budget there. A rule
        with integer depths and rounded widths (nanochat) returns the integer depth next to the
        crossing whose rounded width is nearest the budget's width, with that rounded width.
        """
        if self.kind in (GUARD, THEORY):
            return None
        if self.relation == "power":
            size = self._power_size(budget)
            depth = max(1.0, self._c("depth_k") * size ** self._c("depth_beta"))
            return depth, float(width_at_depth(depth))
        depth = _crossing(self._log_width, width_at_depth)
        if self.relation == "aspect" and "multiple" in self.constants:
            candidates = {max(1, math.floor(depth)), max(1, math.ceil(depth))}
            depth = min(candidates, key=lambda L: abs(math.log(self.width_for_depth(L) / width_at_depth(L))))
            return float(depth), float(self.width_for_depth(depth))
        return depth, math.exp(self._log_width(depth))

    def threshold_crossing(self, width_at_depth: Callable[[float], float]) -> tuple[float, float] | None:
        """The real L* with 3^L* = width_at_depth(L*) and that width (theory row only; else None)."""
        if self.relation != "threshold":
            return None
        depth = _crossing(self._log_width, width_at_depth)
        return depth, float(width_at_depth(depth))

    def guard_crossing(self, width_at_depth: Callable[[float], float]) -> tuple[float, float] | None:
        """Guards: the real depth L where L = max_depth(width_at_depth(L)), the deepest shape of the
        budget the guard allows, and its width; else None."""
        if self.kind != GUARD:
            return None
        depth = _root(lambda L: L - self.max_depth(width_at_depth(L)))
        return depth, float(width_at_depth(depth))

    def _power_size(self, budget: float) -> float:
        """The size N the power law was fitted on: the budget, or its compute-optimal FLOPs C = 120·N²."""
        if "flops_per_param2" in self.constants:
            return self._c("flops_per_param2") * budget * budget
        return budget

    def max_depth(self, width: float) -> float | None:
        """Guards: the maximum depth for a width (Depth Delusion: kappa·ln d; a band: d/low). Else None."""
        if self.relation == "critical":
            return self._c("kappa") * math.log(width)
        if self.relation == "band":
            return width / self._c("low")
        return None

    def extrapolated(self, budget: float, depth: float | None = None) -> bool:
        """True when the budget (or the depth, when given) lies outside the range the rule was fitted or observed on."""
        if self.params_range is not None and not self.params_range[0] <= budget <= self.params_range[1]:
            return True
        if depth is not None and self.depth_range is not None and not self.depth_range[0] <= depth <= self.depth_range[1]:
            return True
        return False

    def position(self, depth: float, width: float, budget: float) -> str | None:
        """One short note: where the shape (depth, width) of size ``budget`` sits against this rule.

        Theory gives None (every shape record already states the threshold). Relation rules compare
        with the rule's own depth for the budget, with widths from 12·L·d²."""
        ratio = width / depth
        if self.relation == "critical":
            limit = self.max_depth(width)
            side = f"deeper than the {self.label} critical depth" if depth > limit else f"within the {self.label} critical depth"
            return f"{side} for its width ({depth:g} {'>' if depth > limit else '<='} {limit:.1f})"
        if self.relation == "band":
            low, high = self._c("low"), self._c("high")
            where = ("within" if low <= ratio <= high else "deeper and thinner than" if ratio < low else "wider and shallower than")
            return f"{where} the {self.label} band (d/L {low:.0f}-{high:.0f}, here {ratio:.0f})"
        if self.relation == "aspect":
            if "band_low" in self.constants:
                low, high = self._c("band_low"), self._c("band_high")
                where = ("within" if low <= ratio <= high else "deeper and thinner than" if ratio < low else "wider and shallower than")
                return f"{where} the {self.label} band (d/L {low:.0f}-{high:.0f}, here {ratio:.0f})"
            own = self.width_for_depth(depth)
            where = "thinner than" if width < own else "wider than" if width > own else "exactly"
            return f"{where} {self.label}'s width for depth {depth:g} ({width:g} vs {own:g})"
        if self.relation in ("levine", "power"):
            own_depth, _ = self.recommend(budget, lambda L: math.sqrt(budget / (12 * L)))
            where = "deeper than" if depth > own_depth else "shallower than"
            return f"{where} the {self.label} optimum for its size ({depth:g} vs {own_depth:.1f})"
        return None

    @property
    def label(self) -> str:
        """How notes name the rule."""
        return RULE_LABELS.get(self.name, f"'{self.name}' rule")


def _crossing(log_rule_width: Callable[[float], float], width_at_depth: Callable[[float], float]) -> float:
    """The depth L >= 1 where ln g(L) = ln width_at_depth(L)."""
    return _root(lambda L: log_rule_width(L) - math.log(width_at_depth(L)))


def _root(gap: Callable[[float], float]) -> float:
    """The depth L >= 1 where an increasing ``gap`` of L crosses 0 (1 when it starts above): bisection."""
    low, high = 1.0, 2.0
    if gap(low) >= 0:
        return low  # the rule's width exceeds the budget's already at one layer
    while gap(high) < 0:
        low, high = high, 2 * high
        if high > 1e18:
            raise ValueError("no crossing below 1e18 layers: width_at_depth must decrease with depth")
    for _ in range(200):
        mid = 0.5 * (low + high)
        if gap(mid) < 0:
            low = mid
        else:
            high = mid
        if high - low <= 1e-12 * high:
            break
    return 0.5 * (low + high)


RULE_LABELS = {"threshold": "threshold rule", "levine-fit": "Levine et al. fit", "nanochat": "nanochat",
               "llama3-practice": "LLaMA-3 practice", "mobilellm": "MobileLLM", "depth-delusion": "Depth Delusion",
               "kaplan-band": "Kaplan et al. aspect-ratio", "chinchilla": "Chinchilla practice",
               "deepseek-llm": "DeepSeek LLM practice", "minicpm": "MiniCPM"}
