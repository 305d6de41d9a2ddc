"""Parameter budgets: "1e9", "1_000_000_000", "350M", "1.3B", "1T", and FLOP/token conversions."""
from __future__ import annotations

import math
import re
from decimal import Context, Decimal, InvalidOperation

from .errors import InputError

TOKENS_PER_PARAM = 20  # Hoffmann et al. 2022, compute-optimal training
FLOPS_PER_PARAM_TOKEN = 6  # C ≈ 6·N·D
MIN_PARAMS = 100
MAX_PARAMS = 10**50
MAX_TOKENS = 10**50  # training tokens, as a budget or a run's length: the same cap as parameters
BUDGET_SYNTAX = ("expected a positive number like 1e9, +1e9, 1_000_000_000, 350M, 1.3B or 1T "
                 "(suffixes K, M, B or G, T; an exponent or a suffix, not both)")
# An optional leading +, digits (with _ between them), an optional fraction, then an exponent OR
# a suffix: "1e9k" is refused rather than guessed (1e12? 1e9 thousand?).
_NUMBER = re.compile(r"\+?(?:[0-9](?:_?[0-9])*(?:\.(?:[0-9](?:_?[0-9])*)?)?|\.[0-9]+)(?:[eE][-+]?[0-9]{1,4}|([kKmMbBgGtT]?))", re.ASCII)
_WIDE = Context(prec=28, Emax=10**9, Emin=-10**9)  # exponents of any text the 50 MiB input limit admits
_SUFFIX = {"": 0, "k": 3, "m": 6, "b": 9, "g": 9, "t": 12}


def parse_quantity(text: str, what: str = "budget") -> Decimal:
    """A positive finite number with an optional K/M/B/G/T suffix, exactly (as a Decimal)."""
    stripped = text.strip() if isinstance(text, str) else None
    match = _NUMBER.fullmatch(stripped) if stripped is not None else None
    if match is None:
        raise InputError(what, text, BUDGET_SYNTAX)
    suffix = match[1] or ""
    digits = stripped[: len(stripped) - len(suffix)].replace("_", "").lstrip("+")
    try:  # Decimal(digits) is exact; in _WIDE a million digits (or zeros after the point) neither overflows nor rounds to 0
        value = Decimal(digits).scaleb(_SUFFIX[suffix.lower()], _WIDE)
    except InvalidOperation:  # pragma: no cover - the pattern admits only valid decimals
        raise InputError(what, text, BUDGET_SYNTAX) from None
    if value <= 0:
        raise InputError(what, text, "must be positive; " + BUDGET_SYNTAX)
    return value


def check_params(value, text: str, what: str = "budget", accepted: str | None = None) -> int:
    """Round a parameter count to a whole number and check it lies in [MIN_PARAMS, MAX_PARAMS];
    ``accepted`` says the range in the unit the user typed (tokens, FLOPs)."""
    if not MIN_PARAMS <= value <= MAX_PARAMS:
        raise InputError(what, text, accepted or f"expected a parameter count from {MIN_PARAMS} to 1e50")
    return int(Decimal(value).to_integral_value())


def parse_params(text: str) -> int:
    """--params: a parameter count."""
    return check_params(parse_quantity(text, "budget"), text)


def parse_tokens(text: str) -> int:
    """--tokens D: the compute-optimal parameter count D/20 (Hoffmann et al. 2022)."""
    accepted = f"expected from {20 * MIN_PARAMS:,} to 1e50 tokens (D/20 = {MIN_PARAMS} to 5e48 parameters)"
    value = parse_quantity(text, "token count")
    if value > MAX_TOKENS:
        raise InputError("token count", text, accepted)
    return check_params(params_from_tokens(value), text, "token count", accepted)


def parse_flops(text: str) -> int:
    """--flops C: the compute-optimal parameter count sqrt(C/120) (C = 6·N·D, D = 20·N)."""
    accepted = f"expected from 1.2e6 to 1.2e102 FLOPs (sqrt(C/120) = {MIN_PARAMS} to 1e50 parameters)"
    value = parse_quantity(text, "FLOP budget")
    if value > Decimal(10) ** 120:
        raise InputError("FLOP budget", text, accepted)
    return check_params(Decimal(params_from_flops(float(value))), text, "FLOP budget", accepted)


def params_from_tokens(tokens: float) -> float:
    """Compute-optimal N for D training tokens: N = D/20 (Hoffmann et al. 2022)."""
    return tokens / TOKENS_PER_PARAM


def params_from_flops(flops: float) -> float:
    """Compute-optimal N for C FLOPs: C = 6·N·D and D = 20·N, so N = sqrt(C/120)."""
    return math.sqrt(flops / (FLOPS_PER_PARAM_TOKEN * TOKENS_PER_PARAM))


def spell(value: float | int | None) -> str:
    """Human parameter counts: 983M, 1.3B, 3.2e+30 (n/a for None)."""
    if value is None:
        return "n/a"
    if abs(value) >= 1e15:
        return f"{value:.3g}"
    for scale, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K")):
        if abs(value) >= scale:
            return f"{value / scale:.3g}{suffix}"
    return f"{value:g}"
