"""depthwidth: how deep and how wide a Transformer should be, from Levine et al. 2020,
"Limits to Depth Efficiencies of Self-Attention" (NeurIPS 2020, arXiv:2006.12467).

The public Python API (pure functions returning frozen dataclasses):

    >>> from depthwidth import bounds, replicate_width, surpass_width, plan
    >>> bounds(12, 768, 12).log3_sep_lower
    1681.565374950574
"""
__version__ = "0.5.0"

__all__ = ["bounds", "bounds_grid", "regime", "threshold_depth", "replicate_width", "surpass_width",
           "equivalence", "compare_shapes", "plan", "min_depth", "min_depth_exact", "empirical_optimum",
           "PlanOptions", "Spending", "plan_architecture", "rule_shapes", "Architecture", "preset",
           "params_nonembedding", "params_active", "params_embedding", "flops_per_token", "kv_bytes_per_token",
           "Constraints", "tp_sizes", "violations", "get_rule", "rule_from_file", "REGISTRY",
           "parse_shape", "Shape", "InputError", "__version__"]

_HOMES = {
    "bounds": "theory.separation", "bounds_grid": "theory.separation", "regime": "theory.separation", "threshold_depth": "theory.separation",
    "replicate_width": "theory.solver", "surpass_width": "theory.solver", "equivalence": "theory.comparison", "compare_shapes": "theory.comparison",
    "plan": "advice.planner", "min_depth": "theory.separation", "min_depth_exact": "theory.separation", "empirical_optimum": "advice.rules.builtin",
    "PlanOptions": "advice.planner", "Spending": "arch.spending", "plan_architecture": "advice.planner", "rule_shapes": "advice.rules.table",
    "Architecture": "arch.blocks", "preset": "arch.presets", "params_nonembedding": "arch.blocks",
    "params_active": "arch.blocks", "params_embedding": "arch.blocks", "flops_per_token": "arch.blocks", "kv_bytes_per_token": "arch.blocks",
    "Constraints": "arch.hardware", "tp_sizes": "arch.hardware", "violations": "arch.hardware",
    "get_rule": "advice.rules.builtin", "rule_from_file": "advice.rules.user", "REGISTRY": "advice.rules.builtin",
    "parse_shape": "theory.shapes", "Shape": "theory.shapes", "InputError": "core.errors",
}


def __getattr__(name):  # PEP 562: the API loads its modules on first use, keeping `depthwidth --help` fast
    if name in _HOMES:
        from importlib import import_module

        return getattr(import_module(f"{__name__}.{_HOMES[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
