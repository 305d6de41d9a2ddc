"""The plan's tables (`depthwidth plan`): the answer, its --explain analysis with every candidate
and its costs, --rules side by side and --brief. Built on ``tables``' pieces; Rich is imported
only when a table is printed.
"""
from __future__ import annotations

from .formats import assumed_gpus_text, fmt_bytes, fmt_count, fmt_log3
from .tables import COUNT_WORDS, _block_text, _cost_text, _fits, _notes, _table, _tp_text, styled


def _run_text(p) -> str:
    """The training run a plan's costs assume, in one cell."""
    r = p.setup
    gpus = f"{r.gpus:,} GPUs" + assumed_gpus_text(r) if r.gpus else "no --gpus"
    fixed = ", ".join(f"{k} {v}" for k, v in (r.fixed_layout or {}).items())
    if r.mfu is None:  # the performance model: each shape in its own best layout
        parts = [r.gpu, gpus, "performance model, each shape in its best layout" + (f" (fixed: {fixed})" if fixed else ""),
                 f"context {r.context:,}"]
    else:
        parts = [r.gpu, gpus, f"MFU {r.mfu:g}" + (f" (fixed: {fixed})" if fixed else ""), f"context {r.context:,}"]
    tokens = f"{fmt_count(r.tokens)} tokens" + (" (no --tokens: 20/param, Hoffmann et al. 2022)" if r.tokens_assumed else "")
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
    lo, hi = p.band.low, p.band.high
    t, u, rec, count = p.threshold, p.rule, p.recommended, p.budget.count
    rule = "" if u.empirical_depth is None else f" (rule {u.name}: depth {u.empirical_depth:.1f}, width {u.empirical_width:,.0f} before snapping)"
    if u.depth_low is not None:
        rule += (f"; fitted depth {u.empirical_depth:.1f}, 95% interval {u.depth_low:.1f}-{u.depth_high:.1f}"
                 + ("" if u.in_range else ", budget outside the fitted range") + (", CLAMPED" if u.clamped else ""))
    floor = next((c for c in p.candidates if (c.depth, c.width) == (t.min_depth, t.width)), None)
    summary = [
        ["budget", f"{p.budget.spelling} parameters ({COUNT_WORDS[count]}: {count}), {p.budget.arch} block"
         + ("" if p.budget.source == "params" else f" (from {p.budget.source})")],
        ["rule", f"{u.name}" + (f", prefer {u.prefer}" if u.name == "consensus" else "") + rule],
        ["recommended tp", _tp_text(rec.tp_sizes)],
        ["costed under", _run_text(p)],
        ["minimal depth", f"{t.min_depth} (L* = {t.min_depth_exact:.3f}, where L = log3 d)"],
        ["planned shape", f"{t.min_depth}x{t.width}x{t.heads}, width exact {t.width_exact:,.1f} ({t.regime} regime); "
         + _block_text(t)],
        ["params", f"{COUNT_WORDS[count]} {fmt_count(getattr(t, count))} ({t.budget_deviation:+.1%} from budget); "
         f"non-embedding {fmt_count(t.params_nonembedding)}, active {fmt_count(t.params_active)}"
         + ("" if t.params_embedding is None else f", embeddings {fmt_count(t.params_embedding)}")
         + f"; 12·L·d² {fmt_count(t.params_12Ld2)}"],
        ["its run", _cost_text(floor.run, floor.serve) if floor is not None else "not among the candidates (not costed)"],
        ["tensor parallel", _tp_text(t.tp_sizes)],
    ]
    yield _table("Threshold analysis and the run", ["", ""], summary, show_header=False)
    yield _table(f"Evidence at {p.budget.spelling} (band [{lo}, {hi}])", ["evidence", "kind", "depth", "width", "in range", "status", "used", "in band"],
                 ([e["name"], e["kind"], f"{e['depth']:.1f}", f"{e['width']:,.0f}", "yes" if e["in_range"] else "no", e["status"],
                   "yes" if e["used"] else "no", "yes" if e["in_band"] else "no"] for e in p.evidence),
                 right={"depth", "width"})
    yield _candidates_table(p)
    yield _notes(p.notes)


def _candidates_table(p):
    """--explain's table of every candidate and what it costs."""
    runs = [c.run for c in p.candidates if c.run is not None]
    days = any(r.train_days is not None for r in runs)
    model = any(r.mfu is not None for r in runs) and p.setup.mfu is None  # the performance model's columns
    pick = (p.recommended.depth, p.recommended.width)
    na = lambda v, f: "n/a" if v is None else f(v)
    rows = []
    for c in p.candidates:
        run, serve, loss = c.run, c.serve, c.loss
        rows.append([str(c.depth), f"{c.width:,}", f"{c.heads} ({c.kv_heads})", f"{c.ffn:,}",
                     f"{fmt_count(getattr(c, p.budget.count))} ({c.budget_deviation:+.1%})", f"{c.aspect_ratio:.1f}", _tp_text(c.tp_sizes),
                     ("pick" if (c.depth, c.width) == pick else "in" if c.in_band else ""), c.regime,
                     fmt_log3(c.log3_sep_lower, c.lower_vacuous), na(loss and loss.vs_best, lambda v: f"{v:+.2%}"),
                     na(run and run.train_flops, lambda v: f"{v:.3g}"),
                     na(run and run.train_days, lambda v: f"{v:,.1f}") if days else na(run and run.train_gpu_hours, lambda v: f"{v:,.0f}"),
                     fmt_bytes(run and run.memory_per_gpu_bytes), _fits(run and run.fits),
                     fmt_bytes(serve and serve.kv_cache_bytes_per_sequence)]
                    + ([na(run and run.mfu, lambda v: f"{v:.2f}"), na(serve and serve.decode_seconds_per_token, lambda v: f"{v * 1e3:.2f}")]
                       if model else []))
    return _table("Candidate shapes and what each costs", ["depth", "width", "heads (KV)", "ffn", "params", "d/L", "tp", "band", "regime",
                                                           "log3 sep lower", "loss vs best", "train FLOPs", "days" if days else "GPU-hours",
                                                           "memory/GPU", "fits", "KV/seq"] + (["MFU", "ms/token"] if model else []),
                  rows, right={"depth", "width", "ffn", "params", "d/L", "log3 sep lower", "loss vs best", "train FLOPs", "days", "GPU-hours",
                               "memory/GPU", "KV/seq", "MFU", "ms/token"})


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
