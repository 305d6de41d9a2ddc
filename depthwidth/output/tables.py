"""Rich tables, one builder per record kind, and the number formats they use. Every builder
yields renderables; ``writers.emit`` prints them. Nothing here computes a result."""
from __future__ import annotations

from typing import Iterable


from .formats import fmt_bytes, fmt_count, fmt_days, fmt_log3, fmt_log10_count, fmt_width  # noqa: F401 (re-exported)


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


SHAPE_COLUMNS = ["shape", "params 12Ld²", "log3 d", "regime", "log3 sep lower", "log3 sep upper"]


def _shape_row(r) -> list[str]:
    return [f"{r.depth}x{r.width}x{r.heads}", fmt_count(r.params_12Ld2), f"{r.threshold_depth:.3f}", r.regime,
            fmt_log3(r.log3_sep_lower, r.lower_vacuous), fmt_log3(r.log3_sep_upper)]


def _said(text: str) -> str:
    """A plain verdict, wrapped to the table width, said once above the table (issue 32)."""
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


def bounds_tables(records):
    yield bounds_verdict(records)
    yield _table("Separation-rank bounds (Levine et al. 2020, Theorems 1-2)", SHAPE_COLUMNS,
                 map(_shape_row, records), right={"params 12Ld²", "log3 d", "log3 sep lower", "log3 sep upper"})
    yield _notes(f"{r.depth}x{r.width}x{r.heads}: {n}" for r in records for n in r.notes)


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


def _cost_text(r, prefix: str = "") -> str:
    """Training FLOPs, time, memory per GPU and KV cache of a shape (plan record fields ``prefix`` + name)."""
    get = lambda name: getattr(r, prefix + name)
    flops = "n/a (no --tokens)" if get("train_flops") is None else f"{get('train_flops'):.3g}"
    text = (f"train FLOPs {flops}; time {fmt_days(get('train_days'), get('train_gpu_hours'))}; memory/GPU "
            f"{fmt_bytes(get('train_memory_per_gpu_bytes'))} (fits: {'yes' if get('fits_on_gpu') else 'NO'}); "
            f"KV cache/sequence {fmt_bytes(get('kv_cache_bytes_per_sequence'))}")
    step = getattr(r, prefix + "step_seconds", None)
    if step is not None:  # timed by the performance model (compare, inspect): its step in its layout
        from .screen import layout_text

        text += f"; step {step:.3g} s at MFU {get('mfu'):.0%} in {layout_text(get('layout'))}"
    return text


COST_COLUMNS = ["tokens", "train FLOPs", "GPU-hours", "days", "memory/GPU", "fits", "KV/seq"]


def _cost_cells(r) -> list:
    """The cost fields of a shape record as table cells (COST_COLUMNS)."""
    get = lambda name: getattr(r, name, None)
    return [fmt_count(get("tokens")), "n/a" if get("train_flops") is None else f"{get('train_flops'):.3g}",
            "n/a" if get("train_gpu_hours") is None else f"{get('train_gpu_hours'):,.0f}",
            "n/a" if get("train_days") is None else f"{get('train_days'):,.1f}",
            fmt_bytes(get("train_memory_per_gpu_bytes")), _fits(get("fits_on_gpu")), fmt_bytes(get("kv_cache_bytes_per_sequence"))]


def _hours(value) -> str:
    return "n/a" if value is None else f"{value:,.0f}" if value >= 100 else f"{value:.3g}"


def sweep_tables(rows):
    """`sweep`: the iso-budget shapes, one row each (the loss column is for the user's runs); with
    --tokens, the costs of each run; a row off the budget is marked."""
    costs = bool(rows) and hasattr(rows[0], "train_flops")
    columns = ["id", "depth", "width", "heads", "KV", "ffn", "params", "vs budget", "d/L", "tp"] + \
        (["GPU-hours", "days", "memory/GPU", "fits"] if costs else ["FLOPs/token", "KV bytes/token", "regime"])
    counted = lambda r: fmt_count(getattr(r, r.budget_count))
    body = []
    for r in rows:
        line = [r.id, str(r.depth), f"{r.width:,}", str(r.heads), str(r.kv_heads), f"{r.ffn:,}", counted(r),
                styled(f"{r.budget_deviation:+.1%}" + ("" if r.within_tolerance else " !"), None if r.within_tolerance else "yellow"),
                f"{r.aspect_ratio:.1f}", _tp_text(r.tp_sizes)]
        if costs:  # the per-token columns give way to the run's (JSON and CSV keep both)
            line += [_hours(r.train_gpu_hours), _hours(r.train_days), f"{r.train_memory_per_gpu_bytes / 1e9:,.1f} GB",
                     "yes" if r.fits_on_gpu else styled("no", "yellow")]
        else:
            line += [fmt_count(r.flops_per_token), "n/a" if r.kv_bytes_per_token is None else f"{r.kv_bytes_per_token:,}", r.regime]
        body.append(line)
    title = "Iso-budget sweep" + (f" ({COUNT_WORDS.get(rows[0].budget_count, rows[0].budget_count)} parameters)" if rows else "")
    yield _table(title, columns, body, right={"depth", "width", "heads", "KV", "ffn", "params", "vs budget", "d/L", "FLOPs/token",
                                               "KV bytes/token", "GPU-hours", "days", "memory/GPU"})
    layout = getattr(rows, "layout", "")
    yield _notes(([f"attention layout: {layout}"] if layout else [])
                 + [f"{r.id}: {r.note}" for r in rows if r.note]
                 + ([("costs: each row in its best layout on --gpus (one node without) of --gpu, timed by the performance "
                      "model (docs/performance.md; JSON: mfu, tokens_per_second, layout)") if any(getattr(r, "mfu", None) for r in rows)
                     else "costs: costs.run_costs with the --tokens, --gpu, --gpus, --tp, --pp, --zero, --recompute, --mfu and "
                     "--context given (days need --gpus)"] if costs else [])
                 + ["train each row, fill in the loss column (CSV or JSON), then: depthwidth fit RESULTS --save rule.json"])


COMPARE_WORDS = {
    "deep-more-expressive": "Proven: the deep shape can express functions the shallow one cannot (its separation-rank lower "
                            "bound clears the other's upper bound by {gap} in log3)",
    "shallow-more-expressive": "Proven: the shallow shape can express functions the deep one cannot (its separation-rank lower "
                               "bound clears the other's upper bound by {gap} in log3)",
    "no-provable-separation": "Nothing is proven either way: the bounds of the two shapes overlap (by {gap} in log3), so "
                              "the theory says neither can express more, nor that they are equal",
}


def compare_verdict(c) -> str:
    gap = "an unknown margin" if c.log3_gap is None else f"{abs(c.log3_gap):,.1f}"
    return _said(COMPARE_WORDS[c.verdict].format(gap=gap) + "; the replicate width below is necessary, not sufficient "
                 "(narrower cannot match the deep shape, that wide need not).")


def compare_tables(c):
    yield compare_verdict(c)
    rows = [[label] + _shape_row(r) for label, r in (("deep", c.deep), ("shallow", c.shallow))]
    yield _table("Compare", ["", *SHAPE_COLUMNS], rows, right={"params 12Ld²", "log3 d", "log3 sep lower", "log3 sep upper"})
    gap = "n/a" if c.log3_gap is None else f"{c.log3_gap:,.3f}"
    at = f"at depth {c.shallow.depth}, heads {c.shallow.heads}"
    yield _table("Verdict", ["", ""], [
        ["verdict", c.verdict],
        ["log3 gap", gap],
        ["params ratio (deep/shallow)", f"{c.params_ratio:.4g}"],
        [f"replicate width {at} ({c.replicate_basis})", fmt_width(c.replicate_width, c.replicate_log10_width)],
        [f"surpass width {at} ({c.surpass_basis})", fmt_width(c.surpass_width, c.surpass_log10_width)],
        ["empirical depth for size", f"deep {c.deep_empirical_depth:.1f}, shallow {c.shallow_empirical_depth:.1f}"],
    ], show_header=False)
    if getattr(c.deep, "train_memory_per_gpu_bytes", None) is not None or getattr(c.shallow, "train_memory_per_gpu_bytes", None) is not None:
        yield _table("What each costs", ["", *COST_COLUMNS], [[label, *_cost_cells(r)] for label, r in (("deep", c.deep), ("shallow", c.shallow))],
                     right=set(COST_COLUMNS) - {"fits"})
    yield _notes(c.notes)


EQUIV_VERDICT = ("Proven (Levine et al. 2020): a shallower network narrower than the replicate width cannot match the "
                 "deep network's separation rank and one at the surpass width exceeds it; the replicate width is necessary, "
                 "not sufficient (a network that size need not perform like the deep one).")


def equiv_tables(records):
    yield _said(EQUIV_VERDICT)
    yield _table("Widths a shallower network needs (Levine et al. 2020, Corollaries 1-2)",
                 ["deep", "shallow depth", "heads", "replicate width", "params there", "replicate basis", "surpass width",
                  "params at it", "surpass basis"],
                 ([r.deep, str(r.shallow_depth), str(r.shallow_heads),
                   fmt_width(r.replicate_width, r.replicate_log10_width), fmt_log10_count(r.replicate_log10_params),
                   r.replicate_basis or "n/a", fmt_width(r.surpass_width, r.surpass_log10_width),
                   fmt_log10_count(r.surpass_log10_params), r.surpass_basis or "n/a"] for r in records),
                 right={"shallow depth", "heads", "replicate width", "params there", "surpass width", "params at it"})
    yield _notes(f"{r.deep} at depth {r.shallow_depth}: {n}" for r in records for n in r.notes)


# ---- grids: whole NumPy chunks formatted at once, written as they come ---------------------------


def models_tables(records):
    yield _table("Published architectures", ["model", "shape", "params 12Ld²", "non-emb.", "active", "KV B/token", "d/L",
                                              "log3 d", "regime", "log3 sep lower", "log3 sep upper", "min depth", "empirical depth"],
                 ([r.name, f"{r.depth}x{r.width}x{r.heads}", fmt_count(r.params_12Ld2), fmt_count(r.params_nonembedding),
                   fmt_count(r.params_active), fmt_count(r.kv_bytes_per_token), f"{r.aspect_ratio:.0f}",
                   f"{r.threshold_depth:.3f}", r.regime, fmt_log3(r.log3_sep_lower, r.lower_vacuous), fmt_log3(r.log3_sep_upper),
                   str(r.min_depth), f"{r.empirical_depth:.1f}"] for r in records),
                 right={"params 12Ld²", "non-emb.", "active", "KV B/token", "d/L", "log3 d", "log3 sep lower", "log3 sep upper",
                        "min depth", "empirical depth"})


def _count_rows(r) -> list:
    """The parameter counts of a shape record, one table row each ("n/a" where null)."""
    def row(label, value):
        return [label, "n/a" if value is None else f"{value:,} ({fmt_count(value)})"]

    return [row("params_nonembedding", r.params_nonembedding), row("params_active (per token)", r.params_active),
            row("params_embedding", r.params_embedding), row("params_with_embeddings", r.params_with_embeddings),
            row("params_12Ld2 (the paper's 12·L·d²)", r.params_12Ld2)]


def _flops_row(r, context: int) -> list[str]:
    """One training FLOPs per token: with a run, the one its total is made of (logits included,
    ``train_flops_per_token``), else the stack's own (``flops_per_token``); issue 32."""
    per_token = getattr(r, "train_flops_per_token", None)
    if per_token is not None:
        return [f"training FLOPs per token (T={context}, with logits)", fmt_count(per_token)]
    return [f"training FLOPs per token (T={context}, stack)", "n/a" if r.flops_per_token is None else fmt_count(r.flops_per_token)]


def inspect_tables(records):
    from ..arch.blocks import DEFAULT_CONTEXT

    for r in records:
        yield _table(f"{r.source}" + (f" ({r.model_type})" if r.model_type else ""), ["", ""], [
            ["shape", f"{r.depth}x{r.width}x{r.heads}" + (f", {r.kv_heads} KV heads" if r.kv_heads != r.heads else "")],
            ["feed-forward", f"{r.ffn:,}" + (" (gated)" if r.gated else "")
             + (f"; {r.experts} experts, top-{r.top_k}" if r.experts else "")],
            ["decoder layers", str(r.decoder_depth) if r.decoder_depth else "none (not an encoder-decoder)"],
            *_count_rows(r),
            _flops_row(r, DEFAULT_CONTEXT),
            ["KV cache per token (16-bit)", "n/a" if r.kv_bytes_per_token is None else f"{r.kv_bytes_per_token:,} bytes"],
            ["tensor-parallel degrees", "n/a" if r.tp_sizes is None else ", ".join(map(str, r.tp_sizes))],
            ["regime", f"{r.regime} (log3 d = {r.threshold_depth:.3f})"],
            ["log3 sep bounds", f"{fmt_log3(r.log3_sep_lower, r.lower_vacuous)} .. {fmt_log3(r.log3_sep_upper)}"],
            ["minimal depth for its size", str(r.min_depth)],
            ["empirical optimum for its size", f"depth {r.empirical_depth:.1f}, width {r.empirical_width:,.0f}"],
            ["vocabulary", "n/a" if r.vocab is None else f"{r.vocab:,}" + (" (below the width)" if r.vocab_bottleneck else "")],
            *([["training run", _cost_text(r)]] if getattr(r, "train_memory_per_gpu_bytes", None) is not None else []),
        ], show_header=False)
        yield _notes(r.notes)


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
                      *[n for n in r.notes if not n.startswith("no law across sizes")]])
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

