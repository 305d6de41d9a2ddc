"""`certify`: certified separation ranks of small eq.-(3) networks against Theorems 1 and 2.

Expected values come from outside the module: C(d+4, 4) and d+1 written here, the theorems'
bounds written here again, a forward pass of eq. (3) in exact Python integers and a Gaussian
elimination mod p written here, checked against the module's NumPy pass and python-flint.
"""
from __future__ import annotations

import math

import pytest

from depthwidth.theory.certify import DEFAULT_PRIME, certify
from depthwidth.theory.gridrank import draw, grid_matrix, matmul_mod, rank_mod
from depthwidth.core.errors import InputError
from tests.test_cli import parse_json, run

P = DEFAULT_PRIME
K = math.sqrt(2 * math.sqrt(2 * math.e))


def log3(x: float) -> float:
    return math.log(x) / math.log(3)


def upper_consistent(L: int, d: int, H: int) -> float:
    """Theorem 1 upper bound below the threshold, Theorem 2 (consistent c2) above it."""
    if 3**L < d:
        return (3**L - 1) / 2 * log3(d + H)
    return 2 * d * L + L - 2 * d * log3(d / (2 * K)) + log3(d)


def lower_bound(L: int, d: int, H: int) -> float:
    if 3**L < d:
        return 3 ** (L - 2) * (log3(d - H) - L + 2 - log3(2))
    return d * L / 2 - L * (H / 2 + 1) - d * (1 + log3((d - H) / 2) / 2)


# ---- independent references ------------------------------------------------------------------

def reference_output(net, xs: list[list[int]], coord: int) -> int:
    """y_coord at position 0 of eq. (3) stacked L times, in exact integers (no reduction), from the
    documented layout: x @ qkv = [q | k | v], head h in columns h·d_a..(h+1)·d_a; y = z @ out."""
    H, da = net.heads, net.head_dim
    for qkv, out in zip(net.qkv, net.out):
        qkv, out = qkv.tolist(), out.tolist()
        d = len(qkv)
        proj = [[sum(x[r] * qkv[r][c] for r in range(d)) for c in range(3 * H * da)] for x in xs]
        ys = []
        for i in range(len(xs)):
            z = [0] * (H * da)
            for j in range(len(xs)):
                for h in range(H):
                    q = proj[i][h * da:(h + 1) * da]
                    k = proj[j][H * da + h * da:H * da + (h + 1) * da]
                    v = proj[j][2 * H * da + h * da:2 * H * da + (h + 1) * da]
                    score = sum(a * b for a, b in zip(q, k))
                    for a in range(da):
                        z[h * da + a] += score * v[a]
            ys.append([sum(z[r] * out[r][c] for r in range(H * da)) for c in range(len(out[0]))])
        xs = ys
    return xs[0][coord]


def reference_rank(rows: list[list[int]], p: int) -> int:
    """Gaussian elimination over Z/pZ."""
    rows = [[v % p for v in row] for row in rows]
    rank, columns = 0, len(rows[0]) if rows else 0
    for c in range(columns):
        pivot = next((r for r in range(rank, len(rows)) if rows[r][c]), None)
        if pivot is None:
            continue
        rows[rank], rows[pivot] = rows[pivot], rows[rank]
        inverse = pow(rows[rank][c], p - 2, p)
        rows[rank] = [v * inverse % p for v in rows[rank]]
        for r in range(len(rows)):
            if r != rank and rows[r][c]:
                f = rows[r][c]
                rows[r] = [(a - f * b) % p for a, b in zip(rows[r], rows[rank])]
        rank += 1
    return rank


@pytest.mark.parametrize("L,d,H,N,M", [(1, 6, 2, 2, 9), (2, 3, 1, 2, 8), (2, 4, 3, 4, 5), (3, 2, 1, 2, 4)])
def test_grid_matches_an_exact_integer_forward_pass(L, d, H, N, M):
    net, points = draw(L, d, H, N, M, P, seed=7)
    grid = grid_matrix(net, points, P, output_coord=1)
    half = N // 2
    for r in range(M):
        for c in range(M):
            xs = [points[r, n].tolist() if n < half else points[c, n].tolist() for n in range(N)]
            assert grid[r, c] == reference_output(net, xs, 1) % P


def test_flint_rank_matches_an_independent_elimination():
    net, points = draw(2, 3, 1, 2, 40, P, seed=3)
    grid = grid_matrix(net, points, P)
    expected = reference_rank(grid.tolist(), P)
    assert rank_mod(grid, P) == expected == math.comb(3 + 4, 4)
    # and a deliberately rank-deficient matrix: three rows of the first two combined
    rows = grid[:6].tolist()
    rows += [[(2 * a + 5 * b) % P for a, b in zip(rows[0], rows[1])]]
    import numpy as np
    assert rank_mod(np.array(rows, dtype=np.int64), P) == reference_rank(rows, P) == 6


def test_matmul_mod_is_exact_for_the_largest_residues():
    import numpy as np

    rng = np.random.default_rng(1)
    x = rng.integers(P - 1000, P, size=(5, 300), dtype=np.int64)
    w = rng.integers(P - 1000, P, size=(300, 4), dtype=np.int64)
    expected = [[sum(int(a) * int(b) for a, b in zip(row, col)) % P for col in w.T.tolist()] for row in x.tolist()]
    assert matmul_mod(x, w, P).tolist() == expected


# ---- the reference card's observed ranks -------------------------------------------------------

@pytest.mark.parametrize("d,H,M", [(26, 1, 40), (12, 3, 30), (9, 2, 20)])
def test_one_layer_rank_is_the_head_span_plus_one(d, H, M):
    c = certify(1, d, H, templates=M)
    assert c.rank == H * (d // H) + 1 and not c.saturated
    if H == 1:  # d + 1 = 3^UB1 exactly
        assert c.rank == d + 1 and math.isclose(c.log3_rank, upper_consistent(1, d, H), rel_tol=1e-12)
    assert c.verdict == "consistent"


@pytest.mark.parametrize("d", [4, 5])
def test_two_layers_rank_is_binomial(d):
    expected = math.comb(d + 4, 4)
    c = certify(2, d, 1, templates=expected + 25)
    assert c.rank == expected and not c.saturated


@pytest.fixture(scope="module")
def two_by_eight():
    """certify 2x8x1 under both readings of c2: the reading only changes the verdict (``assess``), not
    the certified rank, so the literal certificate assesses the consistent one's rank (what
    ``certify(2, 8, 1, reading="literal")`` does after computing the same rank again)."""
    from depthwidth.theory.certify import assess

    consistent = certify(2, 8, 1)
    c = consistent
    literal = assess(c.depth, c.width, c.heads, c.positions, c.templates, c.seed, c.prime, c.output_coord, "literal", c.ranks,
                     c.work)
    return consistent, literal


@pytest.mark.slow
def test_two_by_eight_is_495_and_refutes_the_literal_c2(two_by_eight):
    consistent, literal = two_by_eight
    assert consistent.rank == literal.rank == math.comb(12, 4) == 495
    assert consistent.templates == 700 and not consistent.saturated
    assert consistent.verdict == "consistent" and consistent.log3_rank <= upper_consistent(2, 8, 1)
    literal_upper = 2 * 8 * 2 + 2 - 2 * 8 * log3(8 / 2 * K) + log3(8)  # 4.49
    assert literal.log3_sep_upper == pytest.approx(literal_upper, rel=1e-12)
    assert 3**literal_upper < 140 and literal.verdict == "upper bound violated"


@pytest.mark.slow
def test_three_layers_saturates_300_templates():
    c = certify(3, 26, 1, templates=300)
    assert c.rank == 300 and c.saturated
    assert c.log3_rank <= upper_consistent(3, 26, 1)
    assert lower_bound(3, 26, 1) <= 0 and c.lower_vacuous and not c.lower_testable


@pytest.mark.parametrize("L,d,H,M", [(1, 26, 1, 40), (1, 12, 3, 20), (1, 40, 4, 50), (2, 10, 1, 60), (2, 12, 2, 40),
                                     (2, 4, 1, 80), (2, 8, 2, 60), (3, 28, 1, 100), (3, 5, 1, 60),
                                     (6, 8, 1, 60), (5, 10, 1, 30), (7, 8, 1, 100)])
def test_every_certified_rank_sits_between_the_bounds(L, d, H, M):
    c = certify(L, d, H, templates=M)
    assert log3(c.rank) <= upper_consistent(L, d, H) + 1e-9
    lower = lower_bound(L, d, H)
    testable = lower > 0 and 3**lower <= M
    assert c.lower_testable == testable
    if testable:
        assert log3(c.rank) >= lower
    assert c.verdict == "consistent"


def test_lower_bound_untestable_when_m_is_too_small():
    c = certify(3, 28, 1, templates=50)  # Theorem 1: 3^lower is about 90 > 50
    assert 3 ** lower_bound(3, 28, 1) > 50
    assert c.saturated and not c.lower_testable and c.verdict == "consistent"
    assert any("cannot test it" in n for n in c.notes)


def test_trials_report_min_and_max_and_are_deterministic():
    a = certify(2, 4, 1, templates=40, seed=5, trials=3)
    b = certify(2, 4, 1, templates=40, seed=5, trials=3)
    assert a == b
    assert a.ranks == tuple(certify(2, 4, 1, templates=40, seed=s).rank for s in (5, 6, 7))
    assert a.rank_min == min(a.ranks) and a.rank_max == max(a.ranks) == a.rank == 40


def test_seed_determines_the_grid():
    import numpy as np

    g1 = grid_matrix(*draw(2, 3, 1, 2, 10, P, seed=1), P)
    assert np.array_equal(g1, grid_matrix(*draw(2, 3, 1, 2, 10, P, seed=1), P))
    assert not np.array_equal(g1, grid_matrix(*draw(2, 3, 1, 2, 10, P, seed=2), P))
    # the first M' templates are the same for every M >= M'
    assert np.array_equal(g1[:6, :6], grid_matrix(*draw(2, 3, 1, 2, 6, P, seed=1), P))


def test_a_small_prime_still_certifies_at_most_the_rational_rank():
    small = certify(2, 4, 1, templates=80, prime=101)
    assert small.prime == 101 and 1 <= small.rank <= math.comb(8, 4)


# ---- command line --------------------------------------------------------------------------------

def test_cli_json_record():
    [r] = parse_json(run(["certify", "1x26x1", "--templates", "40", "--format", "json"]))
    assert (r["rank"], r["templates"], r["positions"], r["prime"], r["seed"]) == (27, 40, 2, P, 0)
    assert r["verdict"] == "consistent" and r["saturated"] is False and r["theorem"] == 1
    assert r["log3_sep_upper"] == pytest.approx(log3(27))


def test_cli_literal_reading_and_field():
    # 150 templates already beat the literal reading's 3^4.49 ~ 139 (the rank saturates at 150)
    out = run(["certify", "2x8x1", "-m", "150", "--reading", "literal", "--field", "verdict"])
    assert out.code == 0 and out.stdout.strip() == "upper bound violated"
    assert run(["certify", "2x8x1", "-m", "150", "--field", "verdict"]).stdout.strip() == "consistent"
    # 2x5x1 is not refuted: the literal bound there is 3^8.1, far above its rank C(9, 4) = 126
    assert 3 ** (2 * 5 * 2 + 2 - 10 * log3(5 / 2 * K) + log3(5)) > 126
    assert run(["certify", "2x5x1", "-m", "140", "--reading", "literal", "--field", "verdict"]).stdout.strip() == "consistent"


def test_cli_table_names_the_verdict():
    out = run(["certify", "2x4", "-m", "80"])
    assert out.code == 0 and "certified rank" in out.stdout and "consistent" in out.stdout and "70" in out.stdout


@pytest.mark.parametrize("args", [["2x8x1", "--positions", "3"], ["2x8x1", "--templates", "0"],
                                  ["2x8x1", "--templates", "2001"], ["2x8x1", "--prime", "100"],
                                  ["2x8x1", "--prime", str(2**31 + 11)], ["2x8x1", "--output-coord", "8"],
                                  ["2x8x1", "--trials", "0"], ["2x8x1", "--seed", "-1"], ["2x8x1", "--reading", "wrong"],
                                  ["6x200x1"], ["4x81x1"], ["1x3000x1"], ["2x8x9"], ["nonsense"]])
def test_bad_input_exits_2_with_one_line(args):
    out = run(["certify", *args])
    assert out.code == 2 and out.stdout == ""
    assert len(out.error_lines) == 1 and out.error_lines[0].startswith("depthwidth: error: bad ")


def test_caps_raise_input_error_in_the_core():
    with pytest.raises(InputError, match="multiply-adds"):
        certify(6, 200, 1)
