"""Whole NumPy columns spelled as ASCII bytes, with no Python object per value (issue 16).

Each column becomes a ``uint8`` matrix, one row per value, the text left- or right-aligned and
the rest NUL; a row of the output is the concatenation of its columns' rows with the NULs
dropped. Floats are spelled exactly as Python's ``repr`` spells them (shortest round-trip
digits, fixed notation for decimal exponents -4 < e <= 16, else ``1e-05`` style): the digits
come from extended-precision products checked against each value's rounding interval, and any
value whose check is too close to call (ties, powers of two, subnormals) is spelled by ``repr``
itself. ``tests/test_spell.py`` compares millions of values with ``repr``.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

FLOAT_WIDTH = 24  # '-' + 17 digits + '.' + 'e-308' is the longest repr of a double
INT_WIDTH = 20  # -9223372036854775808


@lru_cache(maxsize=1)
def _powers_of_ten():
    """10^k for k in -400..400 in long double (each correctly rounded by strtold)."""
    return np.array([np.longdouble(f"1e{k}") for k in range(-400, 401)], dtype=np.longdouble)


def int_matrix(values) -> np.ndarray:
    """Decimal text of int64 values, right-aligned in INT_WIDTH bytes (NUL in front)."""
    values = np.asarray(values, dtype=np.int64)
    negative = values < 0
    magnitude = np.abs(values).astype(np.uint64)  # |int64 min| fits in uint64
    out = np.zeros((values.size, INT_WIDTH), dtype=np.uint8)
    rest = magnitude.copy()
    for column in range(INT_WIDTH - 1, 0, -1):
        digit = (rest % 10).astype(np.uint8)
        live = (rest > 0) | (column == INT_WIDTH - 1)
        out[:, column] = np.where(live, digit + 48, 0)
        rest //= 10
        if not rest.any():
            break
    if negative.any():
        lengths = (out != 0).sum(axis=1)
        rows = np.flatnonzero(negative)
        out[rows, INT_WIDTH - 1 - lengths[rows]] = ord("-")
    return out


def text_matrix(texts: list[str]) -> np.ndarray:
    """Python strings (ASCII) as a left-aligned matrix: the slow path, for few values."""
    encoded = [t.encode("ascii", "backslashreplace") for t in texts]
    width = max((len(t) for t in encoded), default=1) or 1
    return np.array(encoded, dtype=f"S{width}").view(np.uint8).reshape(len(encoded), width)


def float_matrix(values, null: str = "") -> np.ndarray:
    """``repr`` of every float64, left-aligned in FLOAT_WIDTH bytes; ``null`` for NaN and infinities."""
    x = np.asarray(values, dtype=np.float64).reshape(-1)
    n = x.size
    out = np.zeros((n, FLOAT_WIDTH), dtype=np.uint8)
    finite = np.isfinite(x)
    if null and not finite.all():
        out[~finite, : len(null)] = np.frombuffer(null.encode("ascii"), dtype=np.uint8)
    a = np.abs(x)
    mantissa, _ = np.frexp(a)
    easy = finite & (a >= 2.2250738585072014e-308) & (mantissa != 0.5)  # normal, not a power of two
    rows = np.flatnonzero(easy)
    digits, ndigits, decpt, decided = _shortest_digits(a[rows])
    fallback = np.concatenate([np.flatnonzero(finite & ~easy), rows[~decided]])
    rows, digits, ndigits, decpt = rows[decided], digits[decided], ndigits[decided], decpt[decided]
    out[rows] = _layout(digits, ndigits, decpt, np.signbit(x[rows]))
    if fallback.size:
        out[fallback] = _pad(text_matrix([repr(v) for v in x[fallback].tolist()]), FLOAT_WIDTH)
    return out


def _pad(matrix: np.ndarray, width: int) -> np.ndarray:
    padded = np.zeros((matrix.shape[0], width), dtype=np.uint8)
    padded[:, : matrix.shape[1]] = matrix
    return padded


def _shortest_digits(a):
    """For positive normal doubles: the shortest digits that round-trip (as int64, with their
    count and the decimal point position ``decpt``: value = 0.DIGITS x 10^decpt), and whether
    each was decided with certainty (else the caller uses repr)."""
    count = a.size
    powers = _powers_of_ten()
    wide = a.astype(np.longdouble)
    e10 = np.floor(np.log10(a)).astype(np.int64)
    scaled = wide * powers[400 - e10]  # in [1, 10) when e10 is right
    e10 += (scaled >= 10).astype(np.int64) - (scaled < 1).astype(np.int64)
    up = (np.nextafter(a, np.inf) - a) / 2  # exact: half the gap to each neighbour
    down = (a - np.nextafter(a, 0)) / 2
    digits = np.zeros(count, dtype=np.int64)
    ndigits = np.zeros(count, dtype=np.int64)
    done = np.zeros(count, dtype=bool)
    doubtful = np.zeros(count, dtype=bool)
    slack = np.longdouble(2.0) ** -58  # a few long-double roundings, with room to spare
    for precision in (15, 16, 17):
        todo = np.flatnonzero(~done & ~doubtful)
        if not todo.size:
            break
        k = precision - 1 - e10[todo]
        power = powers[400 + k]
        product = wide[todo] * power
        rounded = np.rint(product)
        diff = rounded - product  # exact (Sterbenz): both within 1 of each other
        tolerance = product * slack
        tie = np.abs(np.abs(diff) - 0.5) <= tolerance
        half = np.where(diff >= 0, up[todo].astype(np.longdouble) * power, down[todo].astype(np.longdouble) * power)
        margin = half - np.abs(diff)
        unsure = tie | (np.abs(margin) <= tolerance + half * slack)
        inside = ~unsure & (margin > 0)
        doubtful[todo[unsure]] = True
        chosen = todo[inside]
        done[chosen] = True
        digits[chosen] = rounded[inside].astype(np.int64)
        ndigits[chosen] = precision
    decided = done & ~doubtful
    top = np.zeros(count, dtype=bool)
    top[decided] = digits[decided] >= 10 ** ndigits[decided]  # rounded up to 10^p: one digit more in front
    digits = np.where(top, digits // 10, digits)
    e10 = e10 + top
    low = decided & (digits < 10 ** np.maximum(ndigits - 1, 0))
    decided &= ~low  # a wrong exponent guess: leave it to repr
    for _ in range(16):  # strip trailing zeros
        zero = decided & (ndigits > 1) & (digits % 10 == 0)
        if not zero.any():
            break
        digits = np.where(zero, digits // 10, digits)
        ndigits -= zero
    return digits, ndigits, e10 + 1, decided


def _layout(digits, ndigits, decpt, negative) -> np.ndarray:
    """Place digits, point, zeros and exponent the way float.__repr__ does."""
    n = digits.size
    # per-row alphabet: 17 digits (left to right), then '0', '.', 'e', exponent sign, 3 exponent digits, NUL
    alphabet = np.zeros((n, 25), dtype=np.uint8)
    for i in range(17):
        shift = ndigits - 1 - i
        alphabet[:, i] = np.where(shift >= 0, (digits // (10 ** np.maximum(shift, 0))) % 10 + 48, 0)
    ZERO, POINT, E, SIGN, EXP, NUL = 17, 18, 19, 20, 21, 24
    alphabet[:, ZERO], alphabet[:, POINT], alphabet[:, E] = ord("0"), ord("."), ord("e")
    exponent = decpt - 1
    alphabet[:, SIGN] = np.where(exponent < 0, ord("-"), ord("+"))
    magnitude = np.abs(exponent)
    three = magnitude >= 100
    alphabet[:, EXP] = np.where(three, magnitude // 100 + 48, magnitude // 10 % 10 + 48)
    alphabet[:, EXP + 1] = np.where(three, magnitude // 10 % 10 + 48, magnitude % 10 + 48)
    alphabet[:, EXP + 2] = np.where(three, magnitude % 10 + 48, 0)

    c = np.arange(FLOAT_WIDTH - 1, dtype=np.int64)[None, :]  # position after the sign
    nd, dp = ndigits[:, None], decpt[:, None]
    fixed = (dp > -4) & (dp <= 16)
    source = np.full((n, FLOAT_WIDTH - 1), NUL, dtype=np.int64)
    # fixed, 0.000ddd
    small = fixed & (dp <= 0)
    lead = 2 - dp
    pick = np.where(c == 0, ZERO, np.where(c == 1, POINT, np.where(c < lead, ZERO,
                    np.where(c - lead < nd, c - lead, NUL))))
    source = np.where(small, pick, source)
    # fixed, ddd000.0
    whole = fixed & (dp > 0) & (dp >= nd)
    pick = np.where(c < nd, c, np.where(c < dp, ZERO, np.where(c == dp, POINT, np.where(c == dp + 1, ZERO, NUL))))
    source = np.where(whole, pick, source)
    # fixed, ddd.ddd
    middle = fixed & (dp > 0) & (dp < nd)
    pick = np.where(c < dp, c, np.where(c == dp, POINT, np.where(c <= nd, c - 1, NUL)))
    source = np.where(middle, pick, source)
    # scientific, d.ddde+XX
    point = np.where(nd > 1, nd + 1, 1)  # where the 'e' goes
    pick = np.where(c == 0, 0, np.where((c == 1) & (nd > 1), POINT, np.where((c >= 2) & (c <= nd), c - 1,
                    np.where(c == point, E, np.where(c == point + 1, SIGN,
                                                     np.where((c >= point + 2) & (c <= point + 4), EXP + c - point - 2, NUL))))))
    source = np.where(fixed, source, pick)
    body = np.take_along_axis(alphabet, np.minimum(source, NUL), axis=1)
    out = np.zeros((n, FLOAT_WIDTH), dtype=np.uint8)
    out[:, 1:] = body
    out[:, 0] = np.where(negative, ord("-"), 0)
    return out


def join_rows(matrices: list[np.ndarray]) -> bytes:
    """Rows made of the given column matrices side by side, NULs dropped, as one bytes object."""
    whole = np.concatenate(matrices, axis=1) if len(matrices) > 1 else matrices[0]
    flat = whole.reshape(-1)
    return flat[flat != 0].tobytes()


def constant(text: str, rows: int) -> np.ndarray:
    """A column holding the same ASCII text on every row."""
    encoded = np.frombuffer(text.encode("ascii"), dtype=np.uint8)
    return np.broadcast_to(encoded, (rows, encoded.size))
