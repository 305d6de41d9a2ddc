"""The number formats of every table: counts (983M, 1.3B), widths, log3 values, bytes in GB
(10^9 bytes, as accelerator datasheets count HBM), days. Pure text from numbers."""
from __future__ import annotations


def fmt_log3(value: float | None, vacuous: bool = False) -> str:
    if value is None:
        return "n/a"
    return f"{value:,.3f}" + (" (vacuous)" if vacuous else "")


def fmt_count(value: float | int | None) -> str:
    """Human parameter counts: 983M, 1.3B, 3.2e+30 (``budgets.spell``)."""
    from ..core.budgets import spell

    return spell(value)


def fmt_width(width: int | None, log10_width: float | None) -> str:
    """An exact width, or 10^x when only its log10 is known."""
    if width is not None:
        return f"{width:,}"
    if log10_width is None:
        return "n/a"
    return f"10^{log10_width:.3f}" if log10_width < 1e6 else f"10^{log10_width:.6g}"


def fmt_log10_count(log10_value: float | None) -> str:
    if log10_value is None:
        return "n/a"
    return fmt_count(10**log10_value) if log10_value < 15 else f"10^{log10_value:.3f}" if log10_value < 1e6 else f"10^{log10_value:.6g}"


def fmt_bytes(value) -> str:
    """Bytes in decimal units (GB = 10^9 bytes, as accelerator datasheets count HBM)."""
    if value is None:
        return "n/a"
    for scale, suffix in ((1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "kB")):
        if abs(value) >= scale:
            return f"{value / scale:.3g} {suffix}"
    return f"{value:g} B"


def fmt_days(days, hours) -> str:
    if days is not None:
        return f"{days:,.1f} d" if days >= 1 else f"{days * 24:,.1f} h"
    return "n/a" if hours is None else f"{hours:,.0f} GPU-h"


def assumed_gpus_text(run: dict, short: bool = False) -> str:
    """What a plan's run without --gpus was costed on: one node, or the smallest cluster that holds the
    model when one node does not; empty when --gpus was given. ``run``: a dict or a record (a plan's setup)."""
    get = run.get if isinstance(run, dict) else lambda key: getattr(run, key, None)
    if not get("gpus_assumed"):
        return ""
    from ..arch.hardware import node_gpus

    nodes = get("gpus") // node_gpus(get("gpu"))
    if nodes <= 1:
        return " (one node)" if short else " (one node: no --gpus)"
    return f" ({nodes} nodes)" if short else f" (the smallest cluster that fits, {nodes} nodes: no --gpus)"
