"""The plan's tables (`depthwidth plan`): the answer, its --explain analysis with every candidate
and its costs, --rules side by side and --brief. Built on ``tables``' pieces; Rich is imported
only when a table is printed.
"""
from __future__ import annotations

from .formats import assumed_gpus_text, fmt_bytes, fmt_count, fmt_log3
from .tables import COUNT_WORDS, _block_text, _cost_text, _fits, _notes, _table, _tp_text, styled


def _run_text(p) -> str:
    """The training run a plan's costs assume, in one cell."""
    r = p.run
    gpus = f"{r['gpus']:,} GPUs" + assumed_gpus_text(r) if r["gpus"] else "no --gpus"
    if r.get("mfu") is None:  # the performance model: each shape in its own best layout
        fixed = ", ".join(f"{k} {v}" for k, v in (r.get("fixed_layout") or {}).items())
        parts = [f"{r['gpu']}", gpus, "performance model, each shape in its best layout"
                 + (f" (fixed: {fixed})" if fixed else ""), f"context {r['context']:,}", f"batch {r['batch']}"]
    else:
        parts = [f"{r['gpu']}", gpus, f"tp {r['tp']}", f"pp {r['pp']}", f"ZeRO {r['zero']}", f"recompute {r['recompute']}",
                 f"MFU {r['mfu']:g}", f"context {r['context']:,}", f"batch {r['batch']}"]
    tokens = (f"{fmt_count(p.tokens)} tokens" + (" (no --tokens: 20/param, Hoffmann et al. 2022)" if r.get("tokens_assumed") else "")
              if p.tokens is not None else f"no --tokens (ranked at {fmt_count(r['ranking_tokens'])})")
    return tokens + "; " + ", ".join(parts)


def plan_tables(plans, show_all: bool = False, explain: bool = False):
    """`plan`: one screen per budget (``screen.plan_screen``: the answer, why, the floor, the ranked
    candidates in the band); with ``explain`` also the threshold analysis, the evidence, every
    candidate with its theory and costs, and the notes."""
    from .screen import plan_screen, screen_width

    width = screen_width()
    for p in plans:
        yield plan_screen(p, width, show_all, explain)
        if explain:
            yield from plan_explained(p)


def plan_explained(p):
    """`plan --explain`: the detail behind the first screen."""
    lo, hi = p.depth_band
    rule = "" if p.empirical_depth is None else f" (rule {p.rule}: depth {p.empirical_depth:.1f}, width {p.empirical_width:,.0f} before snapping)"
    if p.rule_depth_low is not None:
        rule += (f"; fitted depth {p.empirical_depth:.1f}, 95% interval {p.rule_depth_low:.1f}-{p.rule_depth_high:.1f}"
                 + ("" if p.rule_in_range else ", budget outside the fitted range") + (", CLAMPED" if p.rule_clamped else ""))
    summary = [
        ["budget", f"{fmt_count(p.budget)} parameters ({COUNT_WORDS[p.budget_count]}: {p.budget_count}), {p.arch} block"
         + ("" if p.budget_source == "params" else f" (from {p.budget_source})")],
        ["rule", f"{p.rule}" + (f", prefer {p.prefer}" if p.rule == "consensus" else "") + rule],
        ["recommended tp", _tp_text(p.recommended_tp_sizes)],
        ["costed under", _run_text(p)],
        ["minimal depth", f"{p.min_depth} (L* = {p.min_depth_exact:.3f}, where L = log3 d)"],
        ["planned shape", f"{p.min_depth}x{p.width}x{p.heads}, width exact {p.width_exact:,.1f} ({p.regime} regime); "
         + _block_text(p)],
        ["params", f"{COUNT_WORDS[p.budget_count]} {fmt_count(getattr(p, p.budget_count))} ({p.budget_deviation:+.1%} from budget); "
         f"non-embedding {fmt_count(p.params_nonembedding)}, active {fmt_count(p.params_active)}"
         + ("" if p.params_embedding is None else f", embeddings {fmt_count(p.params_embedding)}")
         + f"; 12·L·d² {fmt_count(p.params_12Ld2)}"],
        ["its run", _cost_text(p)],
        ["tensor parallel", _tp_text(p.tp_sizes)],
    ]
    yield _table("Threshold analysis and the run", ["", ""], summary, show_header=False)
    yield _table(f"Evidence at {fmt_count(p.budget)} (band [{lo}, {hi}])", ["evidence", "kind", "depth", "width", "in range", "status", "used", "in band"],
                 ([e["name"], e["kind"], f"{e['depth']:.1f}", f"{e['width']:,.0f}", "yes" if e["in_range"] else "no", e["status"],
                   "yes" if e["used"] else "no", "yes" if e["in_band"] else "no"] for e in p.evidence),
                 right={"depth", "width"})
    days = any(c.train_days is not None for c in p.candidates)
    model = any(getattr(c, "mfu", None) is not None for c in p.candidates)  # the performance model's columns
    yield _table("Candidate shapes and what each costs", ["depth", "width", "heads (KV)", "ffn", "params", "d/L", "tp", "band", "regime",
                                                          "log3 sep lower", "loss vs best", "train FLOPs", "days" if days else "GPU-hours",
                                                          "memory/GPU", "fits", "KV/seq"] + (["MFU", "ms/token"] if model else []),
                 ([str(c.depth), f"{c.width:,}", f"{c.heads} ({c.kv_heads})", f"{c.ffn:,}",
                   f"{fmt_count(getattr(c, p.budget_count))} ({c.budget_deviation:+.1%})", f"{c.aspect_ratio:.1f}", _tp_text(c.tp_sizes),
                   ("pick" if (c.depth, c.width) == (p.recommended_depth, p.recommended_width) else "in" if c.in_band else ""),
                   c.regime, fmt_log3(c.log3_sep_lower, c.lower_vacuous),
                   "n/a" if c.loss_vs_best is None else f"{c.loss_vs_best:+.2%}",
                   "n/a" if c.train_flops is None else f"{c.train_flops:.3g}",
                   ("n/a" if c.train_days is None else f"{c.train_days:,.1f}") if days else
                   ("n/a" if c.train_gpu_hours is None else f"{c.train_gpu_hours:,.0f}"),
                   fmt_bytes(c.train_memory_per_gpu_bytes), _fits(c.fits_on_gpu), fmt_bytes(c.kv_cache_bytes_per_sequence)]
                  + ([f"{c.mfu:.2f}", f"{c.decode_seconds_per_token * 1e3:.2f}"] if model else [])
                  for c in p.candidates),
                 right={"depth", "width", "ffn", "params", "d/L", "log3 sep lower", "loss vs best", "train FLOPs", "days", "GPU-hours", "memory/GPU",
                        "KV/seq", "MFU", "ms/token"})
    yield _notes(p.notes)


def plan_rules_tables(records):
    """`plan --rules`: every rule's shape for a budget side by side; guards give a maximum depth."""
    for budget in dict.fromkeys(r.budget for r in records):
        rows = [r for r in records if r.budget == budget]
        yield _table(f"Rules side by side for {fmt_count(budget)} parameters",
                     ["rule", "kind", "depth", "width", "heads", "d/L", "params", "rule's L, d", "range", "verified", "extrapolated"],
                     ([r.rule, r.kind, (f"<= {r.depth}" if r.kind == "guard" else str(r.depth)), f"{r.width:,}", str(r.heads),
                       f"{r.width / r.depth:.0f}", f"{fmt_count(getattr(r, r.budget_count))} ({r.budget_deviation:+.1%})",
                       f"{r.rule_depth:.1f}, {r.rule_width:,.0f}", r.fit_range,
                       "yes" if r.verified else styled("NO", "yellow"), styled("yes", "yellow") if r.extrapolated else "no"] for r in rows),
                     right={"depth", "width", "heads", "d/L", "params", "rule's L, d"})
        yield _notes(f"{r.rule}: {n}" for r in rows for n in (*r.notes, r.source))


def plan_brief_tables(records):
    """`plan --brief`: one row per budget, the threshold rule's answer."""
    yield _table("Minimal depth per budget (threshold rule)",
                 ["budget", "min depth", "L*", "width", "heads", "KV", "ffn", "params", "vs budget", "regime"],
                 ([fmt_count(r.budget), str(r.min_depth), f"{r.min_depth_exact:.3f}", f"{r.width:,}", str(r.heads), str(r.kv_heads),
                   f"{r.ffn:,}", fmt_count(getattr(r, r.budget_count)), f"{r.budget_deviation:+.1%}", r.regime] for r in records),
                 right={"budget", "min depth", "L*", "width", "heads", "KV", "ffn", "params", "vs budget"})
