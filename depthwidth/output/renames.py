"""Old field names (0.4) and their paths in 0.5's nested records, for one minor version:
`--field` given an old name prints the new path's value with one deprecation line on stderr. The
CHANGELOG's table is this map. An old name that is still a field of the record is its new meaning
(no rename: the plan's top-level ``kv_heads`` ... are now the answer's, the minimal-depth shape's are
under ``threshold``)."""
from __future__ import annotations

from ..cost.fields import COST_NESTED, NESTED

_THRESHOLD = ("min_depth_exact", "min_depth", "width_exact", "width", "heads", "kv_heads", "head_dim", "ffn", "gated", "experts",
              "top_k", "params_12Ld2", "params_nonembedding", "params_active", "params_embedding", "params_with_embeddings",
              "budget_deviation", "flops_per_token", "kv_bytes_per_token", "tp_sizes", "regime")
_RECOMMENDED = ("depth", "width", "heads", "kv_heads", "ffn", "params_nonembedding", "params_active", "params_with_embeddings",
                "budget_deviation", "tp_sizes")
_RECOMMENDED_RUN = ("train_flops", "train_gpu_hours", "train_days", "train_memory_per_gpu_bytes", "fits_on_gpu",
                    "kv_cache_bytes_per_sequence", "loss_vs_best", "loss_vs_best_low", "loss_vs_best_high", "time_to_target_days",
                    "mfu", "tokens_per_second", "step_seconds", "layout", "decode_seconds_per_token")
_RUN_SETUP = ("gpu", "gpus", "gpus_assumed", "time_model", "fixed_layout", "mfu", "context", "tokens_assumed", "calibrated_on")
_RUN_LAYOUT = {"tp": "tp", "pp": "pp", "zero": "zero", "recompute": "recompute", "micro_batch": "micro_batch", "data_parallel": "dp"}

# the plan record: old top-level name -> new path (None: removed, with where its figure went)
PLAN_RENAMES: dict[str, str | None] = {
    "budget": "budget.value", "budget_source": "budget.source", "arch": "budget.arch", "budget_count": "budget.count",
    **{name: f"threshold.{name}" for name in _THRESHOLD},
    "rule": "rule.name", "prefer": "rule.prefer", "empirical_depth": "rule.empirical_depth",
    "empirical_width": "rule.empirical_width", "rule_depth_low": "rule.depth_low", "rule_depth_high": "rule.depth_high",
    "rule_in_range": "rule.in_range", "rule_clamped": "rule.clamped",
    **{f"recommended_{name}": f"recommended.{name}" for name in _RECOMMENDED},
    **{f"recommended_{name}": f"recommended.{NESTED[name]}" for name in _RECOMMENDED_RUN},
    "depth_band": "band", "run": "setup", "tokens": "setup.tokens", "run.ranking_tokens": "setup.tokens",
    **{f"run.{name}": f"setup.{name}" for name in _RUN_SETUP},
    **{f"run.{old}": f"recommended.run.layout.{new}" for old, new in _RUN_LAYOUT.items()},
    "run.global_batch": "recommended.run.global_batch", "run.attention": "recommended.run.attention",
    "run.sequence_parallel": None, "run.batch": None,
    "billed_ratio": "setup.billed_ratio", "billed_note": "setup.billed_note",
    "optimal_depth": "loss_model.optimal_depth", "optimal_depth_low": "loss_model.optimal_depth_low",
    "optimal_depth_high": "loss_model.optimal_depth_high", "loss_fitted_params_low": "loss_model.fitted_params_low",
    "loss_fitted_params_high": "loss_model.fitted_params_high", "loss_in_fitted_range": "loss_model.in_fitted_range",
    "loss_decides": "loss_model.decides",
    # the minimal-depth shape's run costs: its candidate's run (candidates[], where the plan costs it)
    **dict.fromkeys(("train_flops_per_token", "train_flops", "train_gpu_hours", "train_days", "weights_bytes_per_gpu",
                     "gradients_bytes_per_gpu", "optimizer_bytes_per_gpu", "activations_bytes_per_gpu",
                     "train_memory_per_gpu_bytes", "fits_on_gpu", "kv_cache_bytes_per_sequence", "inference_memory_bytes")),
}
# every record: the old flat name, then the new path (a shape's run, loss and serve; the plan's own)
RENAMES: dict[str, str | None] = {**NESTED, **PLAN_RENAMES}
# sweep: ``loss`` is the measured loss to fill in (what `fit` reads), so the predicted penalty is ``predicted_loss``
SWEEP_RENAMES = {**NESTED, "loss_vs_best": "predicted_loss.vs_best", "loss_vs_best_low": "predicted_loss.low",
                 "loss_vs_best_high": "predicted_loss.high"}
# compare: each side's cost fields, under its name
COMPARE_RENAMES = {f"{side}.{old}": f"{side}.{new}" for side in ("deep", "shallow") for old, new in NESTED.items()
                   if not new.startswith("loss.")}  # compare's sides had no loss penalty
# per command (``emit``'s ``command``); a command not named here: the plan's and a shape's
BY_COMMAND: dict[str, dict[str, str | None]] = {"plan": RENAMES, "cost": COST_NESTED, "sweep": SWEEP_RENAMES,
                                                "compare": COMPARE_RENAMES, "inspect": NESTED,
                                                "models": {old: new for old, new in NESTED.items() if new.startswith("loss.")}}


def renamed(names: list[str], fields: list[str], command: str = "plan") -> list[str]:
    """``names`` (the --field names) with every old name that is not a field of these records replaced
    by its new path in ``command``'s map (``BY_COMMAND``), one deprecation line on stderr for each; an old
    plan name whose figure has no path is an input error naming where it went."""
    from ..core.errors import InputError

    renames = BY_COMMAND.get(command, RENAMES)
    out = []
    for name in names:
        new = renames.get(name, name) if name not in fields and name in renames else name
        if new is None or (new != name and new not in fields):
            if new is None and name in PLAN_RENAMES:
                raise InputError("--field", name, "removed in 0.5.0: the minimal-depth shape's run is its candidate's "
                                                  "(candidates[], --format json); see CHANGELOG 0.5.0 for every new path")
            new = name  # not a field here either: the "did you mean" error follows
        if new != name:
            _deprecated(name, new)
        out.append(new)
    return out


def _deprecated(old: str, new: str) -> None:
    import sys

    print(f"depthwidth: warning: --field {old} is deprecated (0.5.0) and will be removed in 0.6.0; use --field {new}",
          file=sys.stderr)
