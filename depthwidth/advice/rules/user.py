"""Rules fitted on the user's own data (``depthwidth fit --save``, RULEFILE format depthwidth-rule/1),
read back as ``rules.record.Rule`` objects of kind fit. Reads through ``rulefile``; it imports ``rules``,
never the other way round (no import circle)."""
from __future__ import annotations

import math

from ...core.errors import InputError
from ...core.budgets import FLOPS_PER_PARAM_TOKEN, TOKENS_PER_PARAM
from .builtin import Constant, Rule
from .record import FIT


def _get(obj, key, default=None):
    """A field of a FittedRule part: attribute or mapping key."""
    if obj is None:
        return default
    if isinstance(obj, dict):
        return obj.get(key, default)
    return getattr(obj, key, default)


def _pair(value) -> tuple[float, float] | None:
    return None if value is None else (float(value[0]), float(value[1]))


def rule_from_file(path) -> Rule:
    """A rule file written by ``depthwidth fit --save`` (levine or power form) as a Rule of kind fit."""
    from .file import read_rule_file

    fitted = read_rule_file(path)
    form = _get(fitted, "form")
    source = _get(fitted, "source")
    file_name, digest = _get(source, "file", str(path)), _get(source, "sha256", "")
    ranges = _get(fitted, "fit_range")
    size_range, depth_range = _pair(_get(ranges, "size")), _pair(_get(ranges, "depth"))
    group_by = _get(fitted, "group_by", "params")
    provenance = f"fitted on your data: {file_name} sha256 {digest}"
    notes = [f"fitted by {_get(fitted, 'tool', 'depthwidth')} on {_get(fitted, 'created', 'an unknown date')} "
             f"from rule file {path}"]
    if form == "levine":
        fit = _get(fitted, "levine")
        a, b = float(_get(fit, "a")), float(_get(fit, "b"))
        constants = {"a": Constant(a, provenance, True), "b": Constant(b, provenance, True)}
        formula = f"ln d = {a:.4g} + {b:.4g}·L"
        params_range = size_range if group_by == "params" else None
    elif form == "power":
        fit = _get(fitted, "power")
        k, alpha = float(_get(fit, "k")), float(_get(fit, "alpha"))
        depth_k, beta = float(_get(fit, "depth_k")), float(_get(fit, "depth_beta"))
        constants = {"k": Constant(k, provenance, True), "alpha": Constant(alpha, provenance, True),
                     "depth_k": Constant(depth_k, provenance, True), "depth_beta": Constant(beta, provenance, True)}
        size = "N" if group_by == "params" else "C"
        formula = f"L = {depth_k:.4g}·{size}^{beta:.4g} (d = {k:.4g}·{size}^{alpha:.4g})"
        params_range = size_range
        if group_by == "flops":
            ratio = FLOPS_PER_PARAM_TOKEN * TOKENS_PER_PARAM
            constants["flops_per_param2"] = Constant(float(ratio), "compute-optimal C = 6·N·D with D = 20·N "
                                                     "(Hoffmann et al. 2022), to turn a parameter budget into FLOPs", True)
            params_range = None if size_range is None else tuple(math.sqrt(c / ratio) for c in size_range)
            notes.append("fitted against FLOPs: a parameter budget N is read as C = 120·N² (20 tokens per parameter)")
    else:
        raise InputError("rule file", path, f"expected form 'levine' or 'power', got {form!r}")
    return Rule(
        name=str(_get(fitted, "name", "my-fit")), kind=FIT, formula=formula, constants=constants,
        source=f"your rule file {path} (from {file_name})",
        fit_range=f"{group_by} {_span(size_range)}, depths {_span(depth_range)}",
        params_range=params_range, depth_range=depth_range, verified=True,
        verification=f"{provenance}", notes=tuple(notes), relation="levine" if form == "levine" else "power",
    )


def _span(pair) -> str:
    return "unknown" if pair is None else f"{pair[0]:.3g}-{pair[1]:.3g}"


def rule_layout(spending, path):
    """The block with the attention layout the rule file's sweep held (its head size, and its key/value heads
    or its query heads per key/value head), where the user gave none (--head-dim, --kv-heads stay final)."""
    from dataclasses import replace

    from ...arch.held_layout import LayoutSpending
    from .file import read_rule_file

    layout = read_rule_file(path).layout
    if layout is None or spending.block.mla:
        return spending
    overrides = dict(spending.overrides)
    if layout.head_dim and "head_dim" not in overrides:
        overrides["head_dim"] = layout.head_dim
    if "kv_heads" in overrides or not (layout.kv_heads or layout.kv_ratio):
        return replace(spending, overrides=tuple(sorted(overrides.items())))
    return LayoutSpending(spending.arch, tuple(sorted(overrides.items())), spending.count, spending.context, spending.size,
                          kv_fixed=layout.kv_heads, kv_ratio=None if layout.kv_heads else layout.kv_ratio)
