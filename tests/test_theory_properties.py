"""Facts every upper bound must respect, over every depth up to 15 and every width up to 10^6
(and up to 1.2·3^L where that is larger), for several head counts (docs/theory.md, "Reading of c2"):

1. sep >= 1, so UB >= 0;
2. UB >= LB at the same shape;
3. zero-padding monotonicity: a width-d network computes everything a width-d' < d one of the
   same depth and heads computes, so UB(L, d, H) >= max over d' < d of LB(L, d', H).

The consistent reading of Theorem 2's c2 respects all three; the literal one breaks 1 and 3 in
about (0.906·3^L, 3^L), which the last tests pin down, with the reference card's example.
"""
import math

import numpy as np
import pytest

from depthwidth.theory.separation import CONSISTENT, LITERAL, bounds, bounds_grid

DEPTHS = range(1, 16)
HEADS = (1, 16, 128)
CHUNK = 1 << 17  # 128K widths: the arrays of a chunk stay in cache (a third less CPU than 1M; the running max spans chunks)


def _sweep(depth: int, heads: int, reading: str, least_top: int = 10**6):
    """Yield (widths, bounds_grid, running max of LB over all smaller widths) chunk by chunk,
    over every width from heads + 1 to max(least_top, 1.2·3^L), carrying the running max across chunks."""
    top = max(least_top, int(1.2 * 3**depth))
    best = -np.inf
    for start in range(heads + 1, top + 1, CHUNK):
        widths = np.arange(start, min(top, start + CHUNK - 1) + 1, dtype=np.int64)
        grid = bounds_grid(depth, widths, heads, reading)
        lower = np.where(np.isnan(grid["log3_sep_lower"]), -np.inf, grid["log3_sep_lower"])
        running = np.maximum.accumulate(lower)
        before = np.concatenate([[best], np.maximum(running[:-1], best)])  # max over d' < d
        best = max(best, running[-1])
        yield widths, grid, before


@pytest.mark.parametrize("heads", HEADS)
@pytest.mark.parametrize("depth", DEPTHS)
def test_consistent_reading_respects_all_three(depth, heads):
    checked = 0
    for widths, grid, before in _sweep(depth, heads, CONSISTENT):
        bounded = grid["regime_code"] != 1  # the threshold d = 3^L has no bounds at all
        upper = grid["upper_formula"][bounded]
        assert not np.isnan(upper).any()
        assert (upper >= 0).all(), widths[bounded][upper < 0][:5]
        assert (upper >= grid["lower_formula"][bounded]).all()
        assert not np.isnan(grid["log3_sep_upper"][bounded]).any()  # never reported as unavailable
        padded = upper >= before[bounded]
        assert padded.all(), (depth, heads, widths[bounded][~padded][:5])
        checked += int(bounded.sum())
    assert checked >= 10**6 - heads - 1


def _literal_failures(depth: int, heads: int) -> tuple[np.ndarray, np.ndarray]:
    """Widths where the literal reading breaks zero-padding, and where its upper bound is negative."""
    broken, negative = [], []
    for widths, grid, before in _sweep(depth, heads, LITERAL, least_top=0):
        upper = grid["upper_formula"]
        broken.append(widths[upper < before])  # NaN (threshold) compares False
        negative.append(widths[upper < 0])
    return np.concatenate(broken), np.concatenate(negative)


@pytest.mark.parametrize("heads", (1, 16))
@pytest.mark.parametrize("depth", range(4, 16))
def test_literal_reading_breaks_zero_padding_just_below_3_to_the_L(depth, heads):
    broken, negative = _literal_failures(depth, heads)
    power = 3**depth
    assert broken.size > 0 and negative.size > 0
    assert broken.max() < power and negative.max() < power  # only in the Theorem-2 stretch below 3^L
    if depth >= 9:  # the stretch settles at about (0.906·3^L, 3^L) and (0.926·3^L, 3^L)
        assert 0.904 < broken.min() / power < 0.91
        assert 0.925 < negative.min() / power < 0.928
        assert broken.size > 0.09 * power * 0.95


def _ub2(L, d, argument):
    """Theorem 2 upper bound written out here: 2dL + L - 2d·log3(d·argument) + log3 d."""
    log3 = lambda v: math.log(v) / math.log(3)
    return 2 * d * L + L - 2 * d * log3(d * argument) + log3(d)


def _lb2(L, d, H):
    log3 = lambda v: math.log(v) / math.log(3)
    return 0.5 * d * L - L * (H / 2 + 1) - d * (1 + 0.5 * log3((d - H) / 2))


K = math.sqrt(2 * math.sqrt(2 * math.e))


def test_reference_card_example_10x53600_against_10x4827():
    """UB(10x53600x16) = 1981.7 < LB(10x4827x16) = 2114.3 under the literal reading."""
    literal_upper, lower = _ub2(10, 53600, K / 2), _lb2(10, 4827, 16)
    assert literal_upper == pytest.approx(1981.7, abs=0.05) and lower == pytest.approx(2114.3, abs=0.05)
    assert bounds(10, 53600, 16, LITERAL).log3_sep_upper == pytest.approx(literal_upper)
    assert bounds(10, 53600, 16, LITERAL).log3_sep_lower == 0  # vacuous there
    consistent = bounds(10, 53600, 16).log3_sep_upper
    assert consistent == pytest.approx(_ub2(10, 53600, 1 / (2 * K))) and consistent > lower
    assert bounds(10, 4827, 16).log3_sep_lower == pytest.approx(lower)


@pytest.mark.parametrize("shape", [(6, 704, 11), (7, 2186, 34)])
def test_literal_reading_goes_negative_where_the_consistent_one_does_not(shape):
    L, d, H = shape
    assert _ub2(L, d, K / 2) < 0 < _ub2(L, d, 1 / (2 * K))
    assert bounds(L, d, H, LITERAL).log3_sep_upper is None
    assert bounds(L, d, H).log3_sep_upper == pytest.approx(_ub2(L, d, 1 / (2 * K)))
