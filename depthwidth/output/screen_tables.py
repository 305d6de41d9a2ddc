"""The one-screen views of `models` and `inspect`: plain text fitted to the terminal
(``compact``), a figure that cannot be computed left out with one note saying why."""
from __future__ import annotations

from .formats import fmt_bytes, fmt_count, fmt_days, fmt_log3


MODELS_SHOWN = 50  # the compact view lists this many models when more match (each on one line)


def models_tables(records, full: bool = False):
    """`models`: one line per model (name, shape, size, regime; more columns as the width allows), at
    most MODELS_SHOWN + 5 lines of models, else the first MODELS_SHOWN and how to see the rest;
    ``full`` (--all, or --wide): every model with every column."""
    from . import compact
    from .fitting import WIDE
    from .screen import screen_width

    full = full or WIDE["on"]
    shown = records if full or len(records) <= MODELS_SHOWN + 5 else records[:MODELS_SHOWN]
    C = compact.Column
    cell = lambda value, fmt: "-" if value is None else fmt(value)
    columns = [C("model", [r.name for r in shown], right=False), C("shape", [f"{r.depth}x{r.width}x{r.heads}" for r in shown], right=False),
               C("params", [cell(r.params_nonembedding, fmt_count) for r in shown]),
               C("year", [cell(r.year, str) for r in shown], drop=3),
               C("d/L", [f"{r.aspect_ratio:.0f}" for r in shown], drop=2),
               C("regime", [r.regime for r in shown], right=False),
               C("loss vs best", [cell(r.loss and r.loss.vs_best, lambda v: f"{v:+.1%}") for r in shown], drop=4)]
    if full:
        columns += [C("12Ld²", [fmt_count(r.params_12Ld2) for r in shown]), C("active", [cell(r.params_active, fmt_count) for r in shown]),
                    C("KV B/token", [cell(r.kv_bytes_per_token, fmt_count) for r in shown]),
                    C("log3 d", [f"{r.threshold_depth:.3f}" for r in shown]),
                    C("log3 lower", [cell(r.log3_sep_lower, lambda v, r=r: fmt_log3(v, r.lower_vacuous)) for r in shown]),
                    C("log3 upper", [cell(r.log3_sep_upper, fmt_log3) for r in shown]),
                    C("min depth", [str(r.min_depth) for r in shown]), C("empirical depth", [f"{r.empirical_depth:.1f}" for r in shown])]
    width = 1_000_000 if full else screen_width()
    lines = compact.table(f"Published architectures ({len(records)})", columns, width, more="--all or --wide")
    if len(shown) < len(records):
        lines += compact.wrapped(f"... and {len(records) - len(shown)} more: --all lists every model with every column; "
                                 "--filter, --min-params or --max-params narrow the list", width)
    words = ("params: non-embedding, by each model's block; loss vs best: the loss model's penalty against the best "
             "shape of its size (fitted on 50M-2B, extrapolated beyond; docs/loss.md)")
    yield compact.text(lines + compact.wrapped(f"({words})", min(width, screen_width())))


def _inspect_lines(r) -> tuple[list[tuple[str, str]], list[str]]:
    """(label, text) of each figure a config report has, and the names of those it has not."""
    from ..arch.blocks import DEFAULT_CONTEXT

    missing = []

    def known(name, value, text):
        if value is None:
            missing.append(name)
            return None
        return text(value)

    counts = [known(name, getattr(r, field), lambda v, words=words: f"{fmt_count(v)} {words}" + (f" ({v:,})" if first else ""))
              for field, name, words in (("params_nonembedding", "non-embedding params", "non-embedding"),
                                         ("params_active", "active params", "active per token"),
                                         ("params_embedding", "embedding params", "embeddings"),
                                         ("params_with_embeddings", "params with embeddings", "in all"))
              for first in [field == "params_nonembedding"]]
    run = getattr(r, "run", None)
    per_token = None if run is None else run.train_flops_per_token
    flops = (f"{fmt_count(per_token)} training FLOPs per token (T={DEFAULT_CONTEXT}, with logits)" if per_token is not None else
             known("FLOPs per token", r.flops_per_token, lambda v: f"{fmt_count(v)} training FLOPs per token (T={DEFAULT_CONTEXT}, stack)"))
    block = (f"{r.depth}x{r.width}x{r.heads}" + (f", {r.kv_heads} KV heads" if r.kv_heads != r.heads else "")
             + f"; feed-forward {r.ffn:,}" + (" (gated)" if r.gated else "")
             + (f"; {r.experts} experts, top-{r.top_k}" if r.experts else "")
             + (f"; {r.decoder_depth} decoder layers" if r.decoder_depth else ""))
    lines = [("shape", block), ("params", ", ".join(c for c in counts if c) + f"; 12·L·d² {fmt_count(r.params_12Ld2)}"),
             ("FLOPs", flops),
             ("KV cache", known("KV cache per token", r.kv_bytes_per_token, lambda v: f"{v:,} bytes per token (16-bit)")),
             ("tp", known("tensor-parallel degrees", r.tp_sizes, lambda v: "tensor-parallel degrees " + ", ".join(map(str, v)))),
             ("regime", f"{r.regime} (log3 d = {r.threshold_depth:.3f}); log3 separation-rank bounds "
              f"{'-' if r.log3_sep_lower is None else fmt_log3(r.log3_sep_lower, r.lower_vacuous)} .. "
              f"{'-' if r.log3_sep_upper is None else fmt_log3(r.log3_sep_upper)}"),
             ("depth", f"minimal {r.min_depth} for its size; empirical optimum depth {r.empirical_depth:.1f}, "
              f"width {r.empirical_width:,.0f}"),
             ("vocab", known("vocabulary", r.vocab, lambda v: f"{v:,}" + (" (below the width)" if r.vocab_bottleneck else "")))]
    if run is not None and run.memory_per_gpu_bytes is not None:
        lines.append(("run", _run_line(run, r.serve)))
    return [(label, text) for label, text in lines if text], missing


VOCAB_FIGURES = {"embedding params", "params with embeddings", "vocabulary"}


def _run_line(run, serve) -> str:
    """Training FLOPs and time (with --tokens), memory per GPU and KV cache per sequence of a shape's ``run``
    and ``serve`` records (cost.fields: Run, Serve)."""
    parts = [] if run.train_flops is None else [f"train FLOPs {run.train_flops:.3g}"]
    if run.train_days is not None or run.train_gpu_hours is not None:
        parts.append(f"time {fmt_days(run.train_days, run.train_gpu_hours)}")
    parts.append(f"memory/GPU {fmt_bytes(run.memory_per_gpu_bytes)} (fits: {'yes' if run.fits else 'NO'})")
    if serve is not None and serve.kv_cache_bytes_per_sequence is not None:
        parts.append(f"KV cache/sequence {fmt_bytes(serve.kv_cache_bytes_per_sequence)}")
    return "; ".join(parts)


INSPECT_LINES = 25  # one config's screen, as `plan`'s: at most this many lines without --explain


def _fitted_notes(notes: list[str], kept: list[str], room: int, width: int) -> list[str]:
    """The note lines of a config's screen: ``notes`` in order while they fit in ``room`` lines with
    ``kept`` (what a left-out figure or a missing option means: always shown) and a last line saying
    how many were left out (--explain prints them all)."""
    from . import compact

    size = lambda items: len(compact.notes(items, width))
    if size(notes + kept) <= room:
        return compact.notes(notes + kept, width)
    shown = []
    for note in notes:
        if size(shown + [note] + kept) + 1 > room:
            break
        shown.append(note)
    left = len(dict.fromkeys(notes)) - len(dict.fromkeys(shown))
    return compact.notes(shown + kept, width) + [f"  ({left} more note{'s' * (left > 1)}: --explain)"]


def inspect_tables(records, explain: bool = False):
    """`inspect`: each config as labelled lines fitted to the screen (at most INSPECT_LINES lines each;
    ``explain``: every note); a figure the config does not give is left out, and one note names what and why."""
    from . import compact
    from .screen import screen_width

    width = screen_width()
    out = []
    for r in records:
        lines, missing = _inspect_lines(r)
        kept = []
        if missing:
            why = ("the config gives no vocabulary size" if r.vocab is None and set(missing) <= VOCAB_FIGURES
                   else "this config does not say enough to count them; the notes above say what was read")
            kept.append(f"not given: {', '.join(missing)} ({why})")
        run = getattr(r, "run", None)
        if run is not None and run.memory_per_gpu_bytes is not None and run.train_flops is None:
            kept.append("no --tokens: no training FLOPs or time (a training length gives them)")
        head = [f"{r.source}" + (f" ({r.model_type})" if r.model_type else "")]
        head += [line for label, text in lines for line in compact.labelled(label, text, width, 9)]
        notes = compact.notes(list(r.notes) + kept, width) if explain else \
            _fitted_notes(list(r.notes), kept, INSPECT_LINES - len(head), width)
        out += head + notes + [""]
    yield compact.text(out[:-1])
