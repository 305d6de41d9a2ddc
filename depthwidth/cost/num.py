"""One formula for plain numbers and NumPy arrays: the cost models are written once against the few
NumPy functions they use, and ``lib(*values)`` hands them NumPy when any value is an array (a layout
search over hundreds of layouts, a sweep) or ``Scalars``, the same functions on Python floats, when
all are plain numbers (one shape: ``cost``, a plan's candidates), so that path never imports NumPy
(startup: docs/performance.md, "Cold start"). Python floats and NumPy float64 round alike, so both
give the same numbers (tests/test_layout_search.py compares them).
"""
from __future__ import annotations

import math

_NUMBERS = frozenset((int, float, bool))


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
    def select(conditions, choices):
        return next((c for k, c in zip(conditions, choices) if k), 0.0)


def lib(*values):
    """NumPy when any value is an array (or a list), else ``Scalars``."""
    for v in values:
        if v.__class__ not in _NUMBERS:
            import numpy

            return numpy
    return Scalars
