"""Certified lower bounds on the separation rank of small self-attention networks.

Levine et al. 2020, "Limits to Depth Efficiencies of Self-Attention", prove their lower bounds
with grid tensors: evaluate the network on templates, one set for the positions in A and one for
the positions in B, and take the rank of the matrix of outputs; that rank is at most sep(y_p).
This module does that computation exactly, on the analyzed network of their eq. (3):

    y^{l,i} = sum_j sum_h <W^{Q,l,h} x^{l,i}, W^{K,l,h} x^{l,j}> · W^{O,l,h} W^{V,l,h} x^{l,j}

stacked L times, with no softmax, normalization, activation or residual. Weights and templates
are random integers, every sum and product is reduced modulo a prime p, and the rank is taken
over Z/pZ by python-flint. An integer matrix's rank mod p is at most its rank over the
rationals, which is at most sep (the grid-tensor argument), so the result is a certified lower
bound on log3(sep) for that draw of weights; since the grid rank is lowest only on a measure-zero
set of weights, it also bounds sep for almost all weights, as in the paper's proofs.

Conventions (one place, documented in README "depthwidth certify"):
- head dimension d_a = d // H; when H does not divide d the heads span H·d_a < d dimensions;
- N positions (even), A = the first N/2, B = the rest; the output is coordinate ``output_coord``
  at position 0 (in A; by Proposition 1 the partition's identity does not matter);
- row r of the matrix sets every position of A to its r-th template, column c every position of
  B to its c-th template: an M x M matrix for M templates per position;
- draw order from ``numpy.random.default_rng(seed)``: weights layer by layer, then the templates
  as an (M, N, d) array, so the first M' templates are the same for every M >= M'.

The exact computation lives in ``gridrank``; this module checks a request's limits and makes
the record. NumPy and python-flint are imported inside the functions that need them.
"""
from __future__ import annotations

import math
from typing import Callable, Optional

from ..core.errors import InputError
from .primes import is_prime
from .gridrank import DEFAULT_POSITIONS, DEFAULT_PRIME, DEFAULT_TEMPLATES, certified_rank, head_dim, rows_per_batch
from .separation import CONSISTENT, LN3, bounds, check_reading, log3_sep_upper_efficient, log3_sep_upper_inefficient
from ..core.frozen import frozen

PRIME_LIMIT = 2**31  # residues below 2^31: products fit int64, 16-bit halves keep float64 sums exact
MAX_POSITIONS = 16
MAX_TEMPLATES = 2000  # rows (= columns) of the matrix; M^2 <= 4e6 entries, ~250 MB while handed to flint
MAX_WEIGHTS = 16_000_000  # integers in all weight matrices together (4·L·H·d_a·d): ~128 MB
MAX_TRIALS = 100
MAX_WORK = 5 * 10**9  # estimated multiply-adds (``work``): about a minute at most on a loaded two-core laptop
# The fixed cost of one layer on one batch of pairs (about 20 NumPy calls, whatever their size),
# in multiply-add equivalents at the rate MAX_WORK assumes (5e9 in about a minute, ~83 M/s):
# measured 80-200 us per layer-batch on this project's 2-core machine (benchmarks/certify.py,
# "fixed cost per layer"), 216 us in the outside stress test (1000000x2x1 -m 10 ran 216 s);
# 20,000 x 12 ns = 240 us covers both.
LAYER_OVERHEAD = 20_000
TOLERANCE = 1e-9  # relative slack when log3(rank) meets a bound (log3(27) vs log3(d + H) for d + H = 27)

CONSISTENT_VERDICT = "consistent"
UPPER_VIOLATED = "upper bound violated"
LOWER_NOT_REACHED = "lower bound not reached"
NO_BOUNDS = "no bounds"


@frozen
class Certificate:
    """The certified rank of one network shape beside the theorem's bounds on log3(sep)."""

    depth: int
    width: int
    heads: int
    head_dim: int
    positions: int
    partition_a: tuple[int, ...]
    partition_b: tuple[int, ...]
    output_position: int
    output_coord: int
    templates: int
    prime: int
    seed: int
    trials: int
    ranks: tuple[int, ...]
    rank: int
    rank_min: int
    rank_max: int
    log3_rank: float | None
    saturated: bool
    regime: str
    theorem: int | None
    c2_reading: str
    log3_sep_lower: float | None
    lower_vacuous: bool
    lower_testable: bool
    log3_sep_upper: float | None
    verdict: str
    work: int
    notes: tuple[str, ...]


# ---- limits ----------------------------------------------------------------------------------

def estimate_work(depth: int, width: int, heads: int, positions: int, templates: int, trials: int = 1) -> int:
    """Multiply-adds of ``certify``: the forward pass over all M^2 pairs, a fixed cost per layer
    and batch, plus the rank (M^3).

    Per pair and layer: projections N·d·3Hd_a (layer 1 projects the M·N templates once instead),
    scores and value sums 2·N^2·Hd_a, output N·Hd_a·d; the last layer needs only position 0 and
    one output coordinate. Each layer of each batch of pairs also costs LAYER_OVERHEAD (NumPy's
    per-call cost, which dominates deep narrow shapes: 1000000x2x1 at M = 10 is 10^6 layers of
    ~20 tiny calls). The rank counts M^3/16 (flint's elimination is blocked and fast)."""
    d, n, m, k = width, positions, templates, heads * head_dim(width, heads)
    first = m * n * d * 3 * k
    inner = n * d * 3 * k + 2 * n * n * k + n * k * d
    last = n * d * 2 * k + d * k + 2 * n * k + k
    if depth == 1:
        per_pair = 2 * n * k + k
    else:
        per_pair = (2 * n * n * k + n * k * d) + (depth - 2) * inner + last
    batches = -(-m // rows_per_batch(m, n, heads, head_dim(width, heads), d))
    overhead = depth * batches * LAYER_OVERHEAD
    return trials * (first + m * m * per_pair + overhead + m**3 // 16)  # flint's blocked elimination: ~M^3/16


def check_request(depth: int, width: int, heads: int, positions: int = DEFAULT_POSITIONS, templates: int = DEFAULT_TEMPLATES,
                  seed: int = 0, prime: int = DEFAULT_PRIME, output_coord: int = 0, reading: str = CONSISTENT,
                  trials: int = 1) -> int:
    """Validate a request against the documented caps; the estimated work when it passes."""
    if not isinstance(positions, int) or positions < 2 or positions % 2 or positions > MAX_POSITIONS:
        raise InputError("--positions", positions, f"expected an even number of positions from 2 to {MAX_POSITIONS} "
                         "(a balanced partition puts half of them in A and half in B)")
    if not isinstance(templates, int) or not 1 <= templates <= MAX_TEMPLATES:
        raise InputError("--templates", templates, f"expected a whole number of templates from 1 to {MAX_TEMPLATES:,} "
                         f"(the matrix is templates x templates; its rank is at most that)")
    if not isinstance(trials, int) or not 1 <= trials <= MAX_TRIALS:
        raise InputError("--trials", trials, f"expected a whole number of trials from 1 to {MAX_TRIALS}")
    if not isinstance(seed, int) or not 0 <= seed <= 2**63 - trials:
        raise InputError("--seed", seed, "expected a whole number from 0 to 2^63 - trials (seeds S..S+K-1 are used)")
    if not isinstance(prime, int) or not 2 <= prime < PRIME_LIMIT or not is_prime(prime):
        raise InputError("--prime", prime, f"expected a prime below 2^31, such as {DEFAULT_PRIME} (the default, 2^31 - 1)")
    if not isinstance(output_coord, int) or not 0 <= output_coord < width:
        raise InputError("--output-coord", output_coord, f"expected an output coordinate from 0 to width - 1 = {width - 1}")
    if reading not in (readings := ("consistent", "literal")):
        raise InputError("--reading", reading, f"expected one of {', '.join(readings)}")
    shape = f"{depth}x{width}x{heads}"
    weights = 4 * depth * heads * head_dim(width, heads) * width
    if weights > MAX_WEIGHTS:
        raise InputError("shape", shape, f"the network's weights would hold {weights:,} integers, above the cap of "
                         f"{MAX_WEIGHTS:,} (4·L·d²): certify is for small networks, such as 2x8x1 or 3x26x1")
    work = estimate_work(depth, width, heads, positions, templates, trials)
    if work > MAX_WORK:
        fits = max_templates(depth, width, heads, positions, trials)
        deepest = max_depth(width, heads, positions, templates, trials)
        hint = (f"--templates {fits} fits" if fits >= 1 else "no template count fits; use a smaller shape or fewer positions"
                + (f" (at most {deepest:,} layers of width {width} with {templates} templates)" if deepest >= 1 else ""))
        raise InputError("size", f"{shape} with {templates} templates, {positions} positions, {trials} trial(s)",
                         f"about {work:.2g} multiply-adds, above the cap of {MAX_WORK:.0e} (about a minute); {hint}")
    return work


def max_depth(width: int, heads: int, positions: int, templates: int, trials: int = 1) -> int:
    """The largest depth (at most 10^9) whose estimated work stays within MAX_WORK; 0 if none."""
    return _largest(lambda depth: estimate_work(depth, width, heads, positions, templates, trials) <= MAX_WORK, 10**9)


def max_templates(depth: int, width: int, heads: int, positions: int, trials: int = 1) -> int:
    """The largest M (at most MAX_TEMPLATES) whose estimated work stays within MAX_WORK; 0 if none."""
    return _largest(lambda m: estimate_work(depth, width, heads, positions, m, trials) <= MAX_WORK, MAX_TEMPLATES)


def _largest(fits, highest: int) -> int:
    """The largest n in [0, highest] with ``fits(n)`` (true up to some n, false above), by bisection; 0 if none."""
    low, high = 0, highest
    while low < high:
        mid = (low + high + 1) // 2
        if fits(mid):
            low = mid
        else:
            high = mid - 1
    return low


# ---- the record --------------------------------------------------------------------------------

def log3(value: int) -> float | None:
    return math.log(value) / LN3 if value > 0 else None


def _exceeds(log3_value: float, bound: float) -> bool:
    return log3_value > bound + TOLERANCE * max(1.0, abs(bound))


def certify(depth: int, width: int, heads: int, positions: int = DEFAULT_POSITIONS, templates: int = DEFAULT_TEMPLATES,
            seed: int = 0, prime: int = DEFAULT_PRIME, output_coord: int = 0, reading: str = CONSISTENT,
            trials: int = 1, progress: Optional[Callable[[int, int], None]] = None) -> Certificate:
    """Certified ranks of ``trials`` draws (seeds seed .. seed+trials-1) beside the bounds.

    ``progress(done, total)`` counts matrix rows evaluated plus one step per rank. Raises
    InputError for requests beyond the documented caps (see ``check_request``)."""
    work = check_request(depth, width, heads, positions, templates, seed, prime, output_coord, reading, trials)
    total = trials * (templates + 1)
    ranks = []
    for trial in range(trials):
        done = trial * (templates + 1)
        step = None if progress is None else (lambda rows, done=done: progress(done + rows, total))
        ranks.append(certified_rank(depth, width, heads, positions, templates, seed + trial, prime, output_coord, step))
        if progress is not None:
            progress(done + templates + 1, total)
    return assess(depth, width, heads, positions, templates, seed, prime, output_coord, check_reading(reading),
                  tuple(ranks), work)


def assess(depth: int, width: int, heads: int, positions: int, templates: int, seed: int, prime: int,
           output_coord: int, reading: str, ranks: tuple[int, ...], work: int = 0) -> Certificate:
    """The verdict of certified ranks against Theorem 1/2 (``reading`` selects c2's reading).

    The upper bound is held against the largest rank, the lower bound (a statement about almost
    all weights, so about every draw) against the smallest, and only where it can be tested:
    not vacuous, and 3^lower <= M, so that M templates could reach it."""
    b = bounds(depth, width, heads, reading)
    d_a = head_dim(width, heads)
    low, high = min(ranks), max(ranks)
    log3_low, log3_high = log3(low), log3(high)
    notes = [f"rank mod {prime} <= rank over Q <= sep: log3(sep) >= {_show(log3_high)} for "
             + ("this draw of weights" if len(ranks) == 1 else "each of these draws (the largest shown)")
             + ", and for almost all weights (the grid rank is lowest only on a measure-zero set)"]
    if width % heads:
        notes.append(f"H = {heads} does not divide d = {width}: head dimension d_a = {d_a} (floored), "
                     f"so the heads span {heads * d_a} of the {width} dimensions")
    saturated = high >= templates
    if saturated:
        notes.append(f"rank = M = {templates}: saturated by the templates, so sep is at least this; "
                     "more --templates may certify more")
    notes += list(b.notes)
    upper, verdict = b.log3_sep_upper, CONSISTENT_VERDICT
    if b.theorem is None:
        verdict = NO_BOUNDS
    else:
        raw_upper = upper
        if raw_upper is None:  # the formula fell below the lower bound: still a claim on sep
            raw_upper = (log3_sep_upper_efficient(depth, width, heads) if b.theorem == 1
                         else log3_sep_upper_inefficient(depth, width, heads, reading=reading))
        if log3_high is not None and _exceeds(log3_high, raw_upper):
            verdict = UPPER_VIOLATED
            notes.append(f"rank {high} > 3^{raw_upper:.3f}{_power3(raw_upper)}: Theorem {b.theorem}'s upper bound"
                         + (f" in the {reading} reading of c2" if b.theorem == 2 else "") + " is violated")
    lower = b.log3_sep_lower
    testable = b.theorem is not None and not b.lower_vacuous and lower is not None and not _exceeds(lower, log3(templates) or 0.0)
    if b.theorem is not None and not b.lower_vacuous and lower is not None:
        if not testable:
            need = f"at least {math.ceil(3.0 ** lower):,}" if lower < 30 else f"about 3^{lower:.3f}"
            notes.append(f"lower bound 3^{lower:.3f}{_power3(lower)} exceeds M = {templates}: "
                         f"{templates} templates cannot test it (M would need to be {need})")
        elif log3_low is None or _exceeds(lower, log3_low):
            if verdict == CONSISTENT_VERDICT:
                verdict = LOWER_NOT_REACHED
            notes.append(f"rank {low} < 3^{lower:.3f}{_power3(lower)}: below Theorem {b.theorem}'s lower bound, "
                         "which holds for almost all weights (a draw mod p rarely loses rank; try another --seed)")
    return Certificate(depth=depth, width=width, heads=heads, head_dim=d_a, positions=positions,
                       partition_a=tuple(range(positions // 2)), partition_b=tuple(range(positions // 2, positions)),
                       output_position=0, output_coord=output_coord, templates=templates, prime=prime, seed=seed,
                       trials=len(ranks), ranks=ranks, rank=high, rank_min=low, rank_max=high, log3_rank=log3_high,
                       saturated=saturated, regime=b.regime, theorem=b.theorem, c2_reading=reading,
                       log3_sep_lower=lower, lower_vacuous=b.lower_vacuous, lower_testable=testable,
                       log3_sep_upper=upper, verdict=verdict, work=work, notes=tuple(notes))


def _power3(exponent: float) -> str:
    """" = 3^x written out" while that is a readable number (3^x overflows a float past x ~ 646)."""
    return f" = {3.0 ** exponent:,.1f}" if exponent < 30 else ""


def _show(value: float | None) -> str:
    return "n/a (rank 0)" if value is None else f"{value:.3f}"
