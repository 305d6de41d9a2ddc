"""One formula for plain numbers and NumPy arrays: the threshold rule and the cost models are written
once against the few NumPy functions they use, and ``lib(*values)`` hands them NumPy when any value
is an array (many budgets, a layout search over hundreds of layouts, a sweep) or ``Scalars``, the
same functions on Python numbers, when all are plain numbers (one budget, one shape: ``plan``,
``cost``), so that path never imports NumPy (startup: docs/performance.md, "Cold start"). Python
floats and NumPy float64 round alike, so both give the same numbers (tests/test_layout_search.py
and tests/test_plan_columns.py compare them).

``Scalars.where`` and ``select`` evaluate every branch, as NumPy's do: a formula written against
them must not divide by zero or take the root of a negative number in a branch it does not take.
"""
from __future__ import annotations

import contextlib
import math

_NUMBERS = frozenset((int, float, bool))
_QUIET = contextlib.nullcontext()  # reusable: it holds no state
EXACT_FLOAT = 2**53  # ints below this convert to float64 exactly: int/int division then rounds once, as Python's does


class Scalars:
    """NumPy's functions used by the cost models, for Python numbers (floats out)."""

    float64 = float
    log, exp, sqrt, isfinite = staticmethod(math.log), staticmethod(math.exp), staticmethod(math.sqrt), staticmethod(math.isfinite)

    @staticmethod
    def asarray(x, dtype=float):
        return float(x)

    @staticmethod
    def maximum(x, y):
        return x if x >= y else y  # NumPy's maximum, NaN aside

    @staticmethod
    def minimum(x, y):
        return x if x <= y else y  # NumPy's minimum, NaN aside

    @staticmethod
    def logical_not(x):
        return not x

    @staticmethod
    def any(x):
        return bool(x)

    all = any

    @staticmethod
    def errstate(**_):
        return _QUIET  # plain numbers set no floating-point flags: nothing to silence

    @staticmethod
    def abs(x):
        return abs(x)

    @staticmethod
    def power(x, y):
        return x ** y

    @staticmethod
    def ceil(x):
        return float(math.ceil(x))

    @staticmethod
    def where(condition, x, y):
        return x if condition else y

    @staticmethod
    def select(conditions, choices, default=0.0):
        return next((c for k, c in zip(conditions, choices) if k), default)


def lib(*values):
    """NumPy when any value is an array (or a list), else ``Scalars``."""
    if _NUMBERS.issuperset(map(type, values)):
        return Scalars
    import numpy

    return numpy


def libm_log(x):
    """The natural log of a number or of each element, by libm's ``math.log`` as the scalar path
    takes it: NumPy's own log may differ by an ulp, and where a log decides an integer (the
    threshold rule's depth, a snapped width) one ulp is a different answer."""
    if x.__class__ in _NUMBERS:
        return math.log(x)
    import numpy as np

    return np.fromiter(map(math.log, x.tolist()), np.float64, x.size).reshape(x.shape)


def exact_ratio(a, b):
    """a / b as Python divides two ints (the exact quotient, rounded once), for whole numbers or
    arrays of them: int64 arrays (callers keep their values below 2^53, where float64 holds them
    exactly (EXACT_FLOAT) and its division rounds the same) divide as floats; object arrays (Python ints past
    2^53) divide element by element."""
    if a.__class__ is int and b.__class__ is int or (a.dtype != object and b.dtype != object):
        return a / b
    import numpy as np

    return np.array([x / y for x, y in zip(a.tolist(), b.tolist())], dtype=np.float64)
