"""The grid-tensor rank of one random draw of the analyzed network (Levine et al. 2020, eq. (3)),
exactly, modulo a prime p: the computation behind ``certify`` (see its docstring for the
argument and the conventions: positions, templates, the draw order).

NumPy and python-flint are imported inside the functions that need them.
"""
from __future__ import annotations

from typing import Callable, Optional
from ..core.frozen import frozen

DEFAULT_PRIME = 2**31 - 1  # the Mersenne prime M31, the largest prime below 2^31
DEFAULT_POSITIONS = 2
DEFAULT_TEMPLATES = 700  # saturates 2x8x1 (rank 495); a 700 x 700 rank takes well under a second
BATCH_ELEMENTS = 1 << 21  # the largest intermediate array of one batch of pairs, in integers (16 MB)


def head_dim(width: int, heads: int) -> int:
    """d_a = d // H (the paper's d_x / H; floored when H does not divide d)."""
    return width // heads


def rows_per_batch(templates: int, positions: int, heads: int, head_dim_: int, width: int) -> int:
    """Rows of the grid evaluated together (all M columns each), so that the largest
    intermediate array holds about BATCH_ELEMENTS integers."""
    per_pair = positions * max(positions, 3) * heads * head_dim_ + positions * width
    return max(1, BATCH_ELEMENTS // (templates * per_pair))



# ---- exact arithmetic modulo p -----------------------------------------------------------------

def reduce_mod(y, prime: int):
    """y mod p, in place, for a float64 array of integers in [0, 2^53): the quotient from one
    multiplication by 1/p is off by at most one and then corrected; every step is exact
    (quotient·p < 2^53). Much faster than np.fmod, whose long division runs bit by bit."""
    import numpy as np

    quotient = y * (1.0 / prime)
    np.floor(quotient, out=quotient)
    quotient *= prime
    y -= quotient
    y[y < 0] += prime
    y[y >= prime] -= prime
    return y


def matmul_mod(x, w, prime: int):
    """(x @ w) mod p, exactly, for int64 entries in [0, p), p < 2^31.

    Each operand is split into 16-bit halves, so every product is below 2^32 and every sum over
    the inner dimension k (< 2^19) below 2^53: four float64 products are exact. Then
    x·w = high·2^32 + middle·2^16 + low is recombined with three reductions mod p."""
    import numpy as np

    if x.shape[-1] >= 1 << 19:
        raise ValueError("inner dimension too large for exact float64 sums")
    x_hi, x_lo = (x >> 16).astype(np.float64), (x & 0xFFFF).astype(np.float64)
    w_hi, w_lo = (w >> 16).astype(np.float64), (w & 0xFFFF).astype(np.float64)

    def product(a, b):  # einsum's own loop, not BLAS: these products are tall and thin (inner
        return np.einsum("nk,km->nm", a, b)  # dimension d), where BLAS threads cost more than they give

    out = reduce_mod(product(x_hi, w_hi), prime)  # < 2^31
    out *= 65536.0
    out += product(x_hi, w_lo)
    out += product(x_lo, w_hi)  # < 2^47 + k·2^33
    reduce_mod(out, prime)
    out *= 65536.0
    out += product(x_lo, w_lo)  # < 2^47 + k·2^32
    return reduce_mod(out, prime).astype(np.int64)


def _mul_mod(a, b, prime: int):
    """Element-wise a·b mod p for int64 residues: products stay below 2^62."""
    out = a * b
    out %= prime
    return out


@frozen
class _Network:
    """One draw of eq. (3)'s weights, arranged for x @ W: per layer W^{Q,K,V} stacked as
    (d, 3, H, d_a) and the W^O of all heads as (H·d_a, d)."""

    qkv: tuple
    out: tuple
    heads: int
    head_dim: int


def draw(depth: int, width: int, heads: int, positions: int, templates: int, prime: int, seed: int):
    """Weights (layer by layer) and then templates (M, N, d), integers uniform in [0, p)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    d_a = head_dim(width, heads)
    qkv, out = [], []
    for _ in range(depth):
        qkv.append(rng.integers(0, prime, size=(width, 3 * heads * d_a), dtype=np.int64))
        out.append(rng.integers(0, prime, size=(heads * d_a, width), dtype=np.int64))
    points = rng.integers(0, prime, size=(templates, positions, width), dtype=np.int64)
    return _Network(tuple(qkv), tuple(out), heads, d_a), points


def _attend(q, k, v, prime: int):
    """sum_j <q_i, k_j>_h v_j per head, mod p. q: (B, I, H, d_a); k, v: (B, N, H, d_a) -> (B, I, H, d_a)."""
    scores = _mul_mod(q[:, :, None], k[:, None, :], prime).sum(axis=-1) % prime  # (B, I, N, H)
    return _mul_mod(scores[..., None], v[:, None, :], prime).sum(axis=2) % prime


def _layer(proj, net: _Network, layer: int, last: bool, output_coord: int, prime: int):
    """One layer of eq. (3) from the projections (B, N, 3, H, d_a) of its inputs."""
    batch, n = proj.shape[:2]
    q, k, v = proj[:, :, 0], proj[:, :, 1], proj[:, :, 2]
    if last:  # only position 0 and one output coordinate
        z = _attend(q[:, :1], k, v, prime).reshape(batch, -1)
        return matmul_mod(z, net.out[layer][:, output_coord:output_coord + 1], prime).reshape(batch)
    z = _attend(q, k, v, prime).reshape(batch * n, -1)
    return matmul_mod(z, net.out[layer], prime).reshape(batch, n, -1)


def grid_matrix(net: _Network, points, prime: int, output_coord: int = 0,
                progress: Optional[Callable[[int], None]] = None):
    """The M x M matrix of y_p at position 0: row r puts template r on every position of A (the
    first N/2), column c template c on every position of B. Rows are evaluated in batches of
    all M columns; ``progress(rows_done)`` is called after each batch."""
    import numpy as np

    m, n, d = points.shape
    heads, d_a = net.heads, net.head_dim
    half, depth = n // 2, len(net.qkv)
    # Layer 1 sees only templates: project the M·N of them once, then assemble each pair.
    first = matmul_mod(points.reshape(m * n, d), net.qkv[0], prime).reshape(m, n, 3, heads, d_a)
    step = rows_per_batch(m, n, heads, d_a, d)
    grid = np.empty((m, m), dtype=np.int64)
    for start in range(0, m, step):
        stop = min(m, start + step)
        proj = np.empty((stop - start, m, n, 3, heads, d_a), dtype=np.int64)
        proj[:, :, :half] = first[start:stop, None, :half]
        proj[:, :, half:] = first[None, :, half:]
        proj = proj.reshape(-1, n, 3, heads, d_a)
        x = _layer(proj, net, 0, depth == 1, output_coord, prime)
        for layer in range(1, depth):  # deeper layers project the previous layer's output
            proj = matmul_mod(x.reshape(-1, d), net.qkv[layer], prime).reshape(-1, n, 3, heads, d_a)
            x = _layer(proj, net, layer, layer == depth - 1, output_coord, prime)
        grid[start:stop] = x.reshape(stop - start, m)
        if progress is not None:
            progress(stop)
    return grid


def rank_mod(matrix, prime: int) -> int:
    """Rank over Z/pZ of an integer matrix (entries in [0, p)), by python-flint's nmod_mat."""
    from flint import nmod_mat

    rows, columns = matrix.shape
    if rows == 0 or columns == 0:
        return 0
    return nmod_mat(rows, columns, matrix.ravel().tolist(), prime).rank()


def certified_rank(depth: int, width: int, heads: int, positions: int = DEFAULT_POSITIONS,
                   templates: int = DEFAULT_TEMPLATES, seed: int = 0, prime: int = DEFAULT_PRIME,
                   output_coord: int = 0, progress: Optional[Callable[[int], None]] = None) -> int:
    """The rank mod p of one draw's grid matrix (no limits checked: see ``certify``)."""
    net, points = draw(depth, width, heads, positions, templates, prime, seed)
    return rank_mod(grid_matrix(net, points, prime, output_coord, progress), prime)
