"""Rich tables, one builder per record kind, and the number formats they use. Every builder
yields renderables; ``writers.emit`` prints them. Nothing here computes a result."""
from __future__ import annotations

from typing import Iterable


from .formats import fmt_bytes, fmt_count, fmt_days, fmt_log3, fmt_log10_count, fmt_width


# ---- tables, one per record kind ---------------------------------------------------------------

def _table(title: str, columns: list[str], rows: Iterable[list[str]], right=(), show_header: bool = True):
    """A table that fits the console (``fitting.FittedTable``). Every string (title, headers, cells) is
    shown as it is, never read as Rich markup: data such as a config's model_type "[/]" neither
    crashes nor vanishes. Style a cell by passing a ``rich.text.Text`` (see ``claims_tables``);
    the columns named in ``right`` hold numbers (right-justified, never folded)."""
    from .fitting import FittedTable

    return FittedTable(title, columns, [list(row) for row in rows], frozenset(right), show_header)


def styled(text: str, style: str | None):
    """A table cell in a colour (a Rich style such as "green"), shown as it is: tables never read
    markup from strings (see ``_table``), so colour goes through this."""
    from rich.text import Text

    return Text(text, style=style or "")


def _notes(notes: Iterable[str], title: str = "Notes"):
    from rich.text import Text

    lines = list(dict.fromkeys(notes))
    return Text(title + ":\n" + "\n".join(f"  - {n}" for n in lines) + "\n") if lines else Text("")


def _said(text: str) -> str:
    """A plain verdict, wrapped to the table width, said once above the table."""
    import textwrap

    from .screen import screen_width

    return "\n".join(textwrap.wrap(text, width=max(40, min(screen_width(), 100)), break_on_hyphens=False)) + "\n"


REGIME_WORDS = {"depth-efficient": "below the threshold (depth < log3 width): adding a layer provably buys more than widening",
                "depth-inefficient": "above the threshold (depth > log3 width), the paper's depth-inefficient regime where depth "
                                     "and width trade evenly, as in most trained models (a regime, not a flaw)",
                "threshold": "exactly on the threshold (width = 3^depth), where neither theorem applies"}


def bounds_verdict(records) -> str:
    regimes = list(dict.fromkeys(r.regime for r in records))
    if len(records) == 1:
        r = records[0]
        lead = f"{r.depth}x{r.width} is {REGIME_WORDS[r.regime]}"
    else:
        lead = "; ".join(f"{sum(r.regime == g for r in records)} shape(s) {REGIME_WORDS[g]}" for g in regimes)
    return _said(lead + "; the bounds are proven limits on what a network can express (its separation rank, "
                 "Levine et al. 2020), not predictions of loss.")


def bound_columns(records, labels: list[str] | None = None) -> list:
    """The theory's columns of shape records (``compact.Column``), ``labels`` first when given; a
    bound the theorems do not give is "-" (each record's notes say why)."""
    from . import compact

    C = compact.Column
    log3 = lambda value, vacuous=False: "-" if value is None else fmt_log3(value, vacuous)
    return ([C("", labels, right=False)] if labels else []) + [
        C("shape", [f"{r.depth}x{r.width}x{r.heads}" for r in records], right=False),
        C("12Ld²", [fmt_count(r.params_12Ld2) for r in records], drop=2),
        C("log3 d", [f"{r.threshold_depth:.3f}" for r in records], drop=1),
        C("regime", [r.regime for r in records], right=False),
        C("log3 lower", [log3(r.log3_sep_lower, r.lower_vacuous) for r in records]),
        C("log3 upper", [log3(r.log3_sep_upper) for r in records])]


BOUND_WORDS = ("12Ld²: the paper's parameter count 12·L·d²; log3 d: the threshold depth (depth-efficient below it); "
               "log3 lower/upper: log3 of the separation-rank bounds")


def bounds_tables(records):
    """`bounds`: the verdict in words, the bounds fitted to the screen, the notes once."""
    from . import compact
    from .screen import screen_width

    width = screen_width()
    lines = compact.table("Separation-rank bounds (Levine et al. 2020, Theorems 1-2)", bound_columns(records), width)
    notes = [f"{r.depth}x{r.width}x{r.heads}: {n}" for r in records for n in r.notes] + [BOUND_WORDS]
    yield bounds_verdict(records)
    yield compact.text(lines + compact.notes(notes, width))


def _block_text(r, prefix: str = "") -> str:
    """Heads, KV heads, head size and feed-forward of a shape, in one cell."""
    kv = getattr(r, prefix + "kv_heads")
    ffn = getattr(r, prefix + "ffn")
    gated = getattr(r, "gated", False)
    return f"{getattr(r, prefix + 'heads')} heads" + (f" ({kv} KV)" if kv != getattr(r, prefix + "heads") else "") + \
        f", ffn {ffn:,}" + (" gated" if gated else "")


def _tp_text(sizes) -> str:
    return ", ".join(map(str, sizes)) if sizes else "none"


COUNT_WORDS = {"params_nonembedding": "non-embedding", "params_active": "active", "params_with_embeddings": "with embeddings"}


def _fits(value) -> str:
    return "n/a" if value is None else "yes" if value else styled("NO", "yellow")


def _cost_text(run, serve=None) -> str:
    """Training FLOPs, time, memory per GPU and KV cache of a shape's ``run`` (and ``serve``: cost.fields records)."""
    if run is None:
        return "not costed"
    flops = "n/a (no --tokens)" if run.train_flops is None else f"{run.train_flops:.3g}"
    kv = None if serve is None else serve.kv_cache_bytes_per_sequence
    text = (f"train FLOPs {flops}; time {fmt_days(run.train_days, run.train_gpu_hours)}; memory/GPU "
            f"{fmt_bytes(run.memory_per_gpu_bytes)} (fits: {'yes' if run.fits else 'NO'}); "
            f"KV cache/sequence {fmt_bytes(kv)}")
    if run.step_seconds is not None:  # timed: the performance model's step in its layout, or the flat --mfu's in the given
        from .screen import layout_text

        text += f"; step {run.step_seconds:.3g} s at MFU {run.mfu:.0%} in {layout_text(run.layout)}"
    return text


def sweep_tables(rows):
    """`sweep`: the iso-budget shapes, one row each (the loss column is for the user's runs); with
    --tokens, the loss penalty and costs of each run; a row off the budget is marked. Fitted to the
    screen (``compact``): the columns ranked last give way, ``--wide`` shows them all."""
    from . import compact
    from .screen import screen_width

    width = screen_width()
    C = compact.Column
    costs = bool(rows) and getattr(rows[0], "run", None) is not None
    counted = lambda r: fmt_count(getattr(r, r.budget_count))
    columns = [C("id", [r.id for r in rows], right=False), C("depth", [str(r.depth) for r in rows], drop=8),
               C("width", [f"{r.width:,}" for r in rows], drop=7), C("heads", [str(r.heads) for r in rows], drop=5),
               C("KV", [str(r.kv_heads) for r in rows], drop=4), C("ffn", [f"{r.ffn:,}" for r in rows], drop=6),
               C("params", [counted(r) for r in rows]),
               C("vs budget", [f"{r.budget_deviation:+.1%}" + ("" if r.within_tolerance else " !") for r in rows]),
               C("d/L", [f"{r.aspect_ratio:.1f}" for r in rows], drop=9),
               C("tp", [_tp_text(r.tp_sizes) for r in rows], right=False, drop=1)]
    if costs:  # the per-token columns give way to the run's (JSON and CSV keep both)
        loss = lambda r: "-" if r.predicted_loss is None else f"{r.predicted_loss.vs_best:+.1%}"
        columns += [C("loss vs best", [loss(r) for r in rows]),
                    C("MFU", ["-" if r.run.mfu is None else f"{r.run.mfu:.2f}" for r in rows], drop=3),
                    C("GPU-hours", [compact.hours(r.run.train_gpu_hours) for r in rows], drop=2),
                    C("days", [compact.days(r.run.train_days) for r in rows]),
                    C("GB/GPU", [compact.gb(r.run.memory_per_gpu_bytes) + ("" if r.run.fits else " NO") for r in rows])]
    else:
        columns += [C("FLOPs/token", [fmt_count(r.flops_per_token) for r in rows], drop=3),
                    C("KV bytes/token", ["-" if r.kv_bytes_per_token is None else f"{r.kv_bytes_per_token:,}" for r in rows], drop=2),
                    C("regime", [r.regime for r in rows], right=False)]
    from ..loop.sweep import unsharded_line

    title = "Iso-budget sweep" + (f" ({COUNT_WORDS.get(rows[0].budget_count, rows[0].budget_count)} parameters)" if rows else "")
    layout = getattr(rows, "layout", "")
    notes = (([f"attention layout: {layout}"] if layout else [])
             + [f"{r.id}: {r.note}" for r in rows if r.note] + unsharded_line(rows)
             + (["vs budget: ' !' marks a row outside the budget's tolerance"] if any(not r.within_tolerance for r in rows) else [])
             + (["GB/GPU: 'NO' marks a run that does not fit in the GPU's memory"] if costs and any(not r.run.fits for r in rows) else [])
             + ([("costs: each row in its best layout on --gpus (one node without) of --gpu, timed by the performance "
                  "model (docs/performance.md; JSON: run.mfu, run.tokens_per_second, run.layout)") if getattr(rows, "mfu", None) is None
                 else "costs: at the flat --mfu given, in the layout given (--tp, --pp, --zero, --recompute, --micro-batch; "
                 "none searched), with the --tokens, --gpu, --gpus and --context given (days and step times need --gpus; "
                 "docs/costs.md)"] if costs else [])
             + ["train each row, fill in the loss column (CSV or JSON), then: depthwidth fit RESULTS --save rule.json"])
    yield compact.text(compact.table(title, columns, width) + compact.notes(notes, width))


EQUIV_VERDICT = ("Proven (Levine et al. 2020): a shallower network narrower than the replicate width cannot match the "
                 "deep network's separation rank and one at the surpass width exceeds it; the replicate width is necessary, "
                 "not sufficient (a network that size need not perform like the deep one).")


def equiv_tables(records):
    """`equiv`: the verdict in words, then each deep shape's widths at each shallower depth fitted to
    the screen (the bases give way first: the notes say where a width is not the corollary's)."""
    from . import compact
    from .screen import screen_width

    width = screen_width()
    C = compact.Column
    dash = lambda text: "-" if text == "n/a" else text
    columns = [C("deep", [r.deep for r in records], right=False), C("depth", [str(r.shallow_depth) for r in records]),
               C("heads", [str(r.shallow_heads) for r in records], drop=3),
               C("replicate width", [dash(fmt_width(r.replicate_width, r.replicate_log10_width)) for r in records]),
               C("params there", [dash(fmt_log10_count(r.replicate_log10_params)) for r in records], drop=4),
               C("replicate basis", [r.replicate_basis or "-" for r in records], right=False, drop=1),
               C("surpass width", [dash(fmt_width(r.surpass_width, r.surpass_log10_width)) for r in records]),
               C("params at it", [dash(fmt_log10_count(r.surpass_log10_params)) for r in records], drop=5),
               C("surpass basis", [r.surpass_basis or "-" for r in records], right=False, drop=2)]
    lines = compact.table("Widths a shallower network needs (Levine et al. 2020, Corollaries 1-2)", columns, width)
    yield _said(EQUIV_VERDICT)
    yield compact.text(lines + compact.notes([f"{r.deep} at depth {r.shallow_depth}: {n}" for r in records for n in r.notes], width))


# ---- grids: whole NumPy chunks formatted at once, written as they come ---------------------------


def export_tables(records):
    for r in records:
        yield _table(f"{r.path} ({r.format})", ["", ""], [
            ["shape", f"{r.depth}x{r.width}x{r.heads}" + (f", {r.kv_heads} KV heads" if r.kv_heads != r.heads else "")
             + f", head_dim {r.head_dim}"],
            ["feed-forward", f"{r.ffn:,}" + (" (gated)" if r.gated_ffn else "")
             + (f", {r.experts} experts, top-{r.top_k}" if r.experts else "")],
            ["params (non-embedding)", f"{r.params_nonembedding:,} ({fmt_count(r.params_nonembedding)})"],
            ["params (active per token)", f"{r.params_active:,} ({fmt_count(r.params_active)})"],
            ["params (embeddings)", "n/a" if r.params_embedding is None else f"{r.params_embedding:,} ({fmt_count(r.params_embedding)})"],
            ["params (with embeddings)", "n/a" if r.params_with_embeddings is None
             else f"{r.params_with_embeddings:,} ({fmt_count(r.params_with_embeddings)})"],
            ["vocabulary", f"{r.vocab:,}, " + ("tied" if r.tied else "untied")],
            ["context", f"{r.context:,}"],
        ], show_header=False)
        yield _notes(r.notes)


def claims_tables(records):
    yield _table("Levine et al. 2020: claims recomputed", ["claim", "quoted", "computed", "tolerance", "status", "why"],
                 ([c.statement, c.quoted or "(no number: derived)", c.computed, c.tolerance or "",
                   styled(c.status, {"reproduced": "green", "differs": "yellow"}.get(c.status)), c.reason]
                  for c in records))
    yield _notes(sorted({c.source for c in records}), "Sources")


STATUS_STYLES = {"verified": "green", "second-hand": "yellow", "unverified": "red"}


def rules_tables(records):
    """`depthwidth rules`: the registry, one row per rule, with its weakest constant's status
    (verified | second-hand | unverified, ``Rule.status``)."""
    yield _table("Depth/width rules (rules.py)", ["name", "kind", "formula", "source", "range", "status"],
                 ([r.name, r.kind, r.formula, r.source, r.fit_range, styled(r.status, STATUS_STYLES.get(r.status))]
                  for r in records))
    yield _notes((f"{r.name}: {r.verification}" for r in records), "Where each rule was verified")


def _span(interval) -> str:
    low, high = ("open" if v is None else f"{v:.4g}" for v in interval)
    return f"[{low}, {high}]"


def _rmse(value) -> str:
    return "n/a" if value is None else f"{value:.4f}"


def fit_tables(report):
    """`depthwidth fit`: each group's optimum with its interval, then the laws across groups."""
    r = report
    unit = "parameters" if r.group_by == "params" else "FLOPs"
    yield _table(f"Optimal depth per size group ({r.source.file}; {r.confidence:.0%} bootstrap intervals, {r.bootstrap} resamples)",
                 ["group", f"size ({unit})", "runs", "depths", "lowest-loss depth", "optimal depth", "interval",
                  "optimal width", "interval", "min loss", "from"],
                 ([g.label, fmt_count(g.size), str(g.runs), f"{g.depths[0]:g}-{g.depths[-1]:g} ({len(g.depths)})",
                   f"{g.best_depth:g}", f"{g.optimal_depth:.1f}", _span(g.depth_interval), f"{g.optimal_width:,.0f}",
                   _span(g.width_interval), f"{g.min_loss:.4f}", g.method] for g in r.groups),
                 right={f"size ({unit})", "runs", "lowest-loss depth", "optimal depth", "optimal width", "min loss"})
    if r.law_note:
        yield _notes([f"no law across sizes: {r.law_note}; each size's optimum above stands on its own",
                      f"{r.fitted_on.runs} runs from {len(r.fitted_on.sources)} file{'s' * (len(r.fitted_on.sources) != 1)}",
                      *[n for n in r.notes if getattr(n, "kind", None) != "no-law"]])
        return
    rows = []
    if r.levine is not None:
        lv = r.levine
        rows.append(["levine: ln d = a + b·L", f"a = {lv.a:.4g} {_span(lv.a_interval)}", f"b = {lv.b:.4g} {_span(lv.b_interval)}",
                     "n/a" if lv.r2 is None else f"{lv.r2:.4f}", _rmse(lv.heldout_rmse), f"{lv.rmse:.4f}"])
    if r.power is not None:
        pw = r.power
        rows.append(["power: d = k·N^alpha", f"k = {pw.k:.4g} {_span(pw.k_interval)}",
                     f"alpha = {pw.alpha:.4g} {_span(pw.alpha_interval)}", "n/a" if pw.r2 is None else f"{pw.r2:.4f}",
                     _rmse(pw.heldout_rmse), f"{pw.rmse:.4f}"])
        rows.append(["power: L = depth_k·N^beta", f"depth_k = {pw.depth_k:.4g}", f"beta = {pw.depth_beta:.4g} {_span(pw.beta_interval)}",
                     "", "", ""])
    yield _table(f"Laws across {len(r.groups)} groups (N = {r.group_by})",
                 ["law", "constant", "constant", "held-out r2", "held-out rmse", "rmse (ln d)"],
                 rows, right={"held-out r2", "held-out rmse", "rmse (ln d)"})
    verdict = (f"{r.better_form} fits better (lower held-out rmse of ln(optimal width): each size predicted by the law "
               f"fitted on the others)"
               if r.better_form else f"{r.form} (chosen with --form)")
    fr = r.fit_range
    yield _notes([f"rule '{r.name}' uses the {r.form} form: {verdict}",
                  f"fitted on sizes {fmt_count(fr.size[0])}-{fmt_count(fr.size[1])} {unit}, depths {fr.depth[0]:g}-{fr.depth[1]:g}, "
                  f"widths {fr.width[0]:,.0f}-{fr.width[1]:,.0f}; {r.fitted_on.runs} runs from "
                  f"{len(r.fitted_on.sources)} file{'s' * (len(r.fitted_on.sources) != 1)}", *r.notes])


def certify_tables(records):
    """`certify`: the certified rank beside Theorem 1/2's bounds, one summary per shape."""
    for r in records:
        a, b = (",".join(map(str, part)) for part in (r.partition_a, r.partition_b))
        seeds = f"seed {r.seed}" if r.trials == 1 else f"seeds {r.seed}..{r.seed + r.trials - 1}"
        rank = f"{r.rank:,}" + (" (at least: saturated by M)" if r.saturated else "")
        if r.trials > 1:
            rank += f"; per trial {r.rank_min:,}..{r.rank_max:,}"
        theorem = "no theorem (d = 3^L)" if r.theorem is None else f"Theorem {r.theorem}" + (f", c2 {r.c2_reading}" if r.theorem == 2 else "")
        lower = fmt_log3(r.log3_sep_lower, r.lower_vacuous) + ("" if r.lower_testable or r.lower_vacuous or r.log3_sep_lower is None
                                                               else " (untestable with this M)")
        yield _table(f"Certified separation rank of {r.depth}x{r.width}x{r.heads} (eq. 3, exact mod p)", ["", ""], [
            ["network", f"L = {r.depth}, d = {r.width}, H = {r.heads}, head dim {r.head_dim}; no softmax, norm, activation or residual"],
            ["grid", f"{r.templates} x {r.templates} templates; N = {r.positions}, A = {{{a}}}, B = {{{b}}}; "
                     f"y_{r.output_coord} at position {r.output_position}"],
            ["arithmetic", f"mod {r.prime:,}; {seeds}"],
            ["certified rank", rank],
            ["log3 rank", fmt_log3(r.log3_rank)],
            ["regime", f"{r.regime} ({theorem})"],
            ["log3 sep lower", lower],
            ["log3 sep upper", fmt_log3(r.log3_sep_upper)],
            ["verdict", r.verdict],
        ], show_header=False)
        yield _notes(r.notes)

