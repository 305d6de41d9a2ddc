"""`plan`'s first screen: the answer, one sentence of why, the minimal depth as one line,
and the ranked candidates inside the evidence band, as plain text fitted to the terminal.

Every figure printed is a field of the plan's JSON record (``plan_record.Plan`` and its candidates),
only formatted here; a column is shown when the records carry its field and left out (never
"n/a") when they do not, so fields other modules add (``loss.vs_best``, ``run.mfu``,
``serve.decode_seconds_per_token``, ``run.time_to_target_days``) appear as columns once they exist.
No Rich: the default table starts about as fast as JSON (benchmarks/run.py).
Memory is in GB (10^9 bytes, as accelerator datasheets count HBM) everywhere.
"""
from __future__ import annotations

import textwrap

from .formats import fmt_count

LABEL = 8  # the width of the left-hand labels ("answer", "run", "why", "floor")


def _days(value) -> str:
    if value is not None and value >= 1e5:  # past the evidence: millions of days, in the table's width
        return fmt_count(value)
    return "-" if value is None else f"{value:,.1f}" if value >= 1 else f"{value:.2g}"


def _hours(value) -> str:
    return "-" if value is None else f"{value:,.0f}" if value >= 100 else f"{value:.3g}"


def _gb(value) -> str:
    return "-" if value is None else f"{value / 1e9:,.1f}"


# (header, field, formatter); a column shows when some row carries the field with a value.
# Listed in the order printed; "days" gives way to "GPU-h" when days are unknown.
COLUMNS = (
    ("depth", "depth", str),
    ("width", "width", lambda v: f"{v:,}"),
    ("heads (KV)", "heads", None),  # heads and kv_heads in one cell
    ("params", None, None),  # the count the budget limits (plan.budget.count)
    ("loss vs best", "loss.vs_best", lambda v: f"{v:+.1%}"),
    ("MFU", "run.mfu", lambda v: f"{v:.2f}"),
    ("tok/s/GPU", "run.tokens_per_second", lambda v: fmt_count(v)),
    ("target days", "run.time_to_target_days", _days),
    ("days", "run.train_days", _days),
    ("GPU-h", "run.train_gpu_hours", _hours),
    ("GB/GPU", "run.memory_per_gpu_bytes", _gb),
    ("micro-batch", "run.layout", lambda v: "-" if v.get("micro_batch") is None else str(v["micro_batch"])),  # per GPU: what moves GB/GPU between neighbouring rows
    ("ms/token", "serve.decode_seconds_per_token", lambda v: f"{v * 1e3:.2f}"),
)
# the count a budget limits (plan.budget.count, --count), as the answer line names it
COUNT_WORDS = {"params_nonembedding": "non-embedding", "params_active": "active", "params_with_embeddings": "with-embeddings"}
SHORT_HEADERS = {"loss vs best": "loss", "target days": "to target"}  # when still too wide (the run line says "vs best", "days to target")
RANK_BY = ("run.time_to_target_days", "run.train_days", "run.train_gpu_hours")  # the first one the rows carry


def get(record, path: str):
    """The value at a dotted ``path`` of a record (None where a part is missing or null)."""
    for part in path.split("."):
        record = getattr(record, part, None)
        if record is None:
            return None
    return record
DROP_FIRST = ("tok/s/GPU", "GPU-h", "ms/token", "MFU")  # dropped in this order when the table is too wide


def _has(rows, name) -> bool:
    return any(get(r, name) is not None for r in rows)


def screen_columns(plan, rows) -> list[tuple[str, object]]:
    """(header, cell function) of each column the rows carry."""
    count = plan.budget.count
    out = []
    for header, name, fmt in COLUMNS:
        if header == "heads (KV)":
            out.append((header, lambda r: f"{r.heads} ({r.kv_heads})"))
        elif header == "params":
            out.append((header, lambda r: fmt_count(getattr(r, count))))
        elif header == "GPU-h" and _has(rows, "run.train_days"):
            continue
        elif header == "target days" and plan.setup.tokens_assumed:
            continue  # at an assumed length the run line and the why give it for the pick; the table keeps its days
        elif _has(rows, name):
            out.append((header, lambda r, name=name, fmt=fmt: "-" if get(r, name) is None else fmt(get(r, name))))
    if _has(rows, "run.tokens_per_second") and _has(rows, "run.mfu"):
        out = [c for c in out if c[0] != "tok/s/GPU"]
    return out


def ranked(plan, show_all: bool = False) -> list:
    """The candidates inside the band, the pick first, then by the first of RANK_BY they carry;
    with ``show_all`` the ones outside the band follow, by depth."""
    pick = (plan.recommended.depth, plan.recommended.width)
    inside = [c for c in plan.candidates if c.in_band or (c.depth, c.width) == pick]
    key = next((name for name in RANK_BY if _has(inside, name)), None)
    measure = (lambda c: get(c, key) if get(c, key) is not None else float("inf")) if key else (lambda c: 0)
    inside.sort(key=lambda c: ((c.depth, c.width) != pick, measure(c), c.depth))
    outside = [c for c in plan.candidates if c not in inside] if show_all else []
    return inside + outside


def _layout(headers: list[str], body: list[list[str]], gap: str = "  ") -> list[str]:
    widths = [max(len(h), *(len(row[i]) for row in body)) for i, h in enumerate(headers)]
    line = lambda cells: gap.join(c.rjust(w) for c, w in zip(cells, widths)).rstrip()
    return [line(headers), *map(line, body)]


def candidate_table(plan, width: int, show_all: bool = False) -> list[str]:
    """The compact ranked table: '#' (1 is the pick), the decision columns, and with ``show_all`` a
    'band' column; columns in DROP_FIRST give way when the table is wider than ``width``, then
    long headers shorten (SHORT_HEADERS), then the columns close up to one space."""
    rows = ranked(plan, show_all)
    columns = screen_columns(plan, rows)
    lo, hi = plan.band.low, plan.band.high
    inside = [c for c in rows if c.in_band or (c.depth, c.width) == (plan.recommended.depth, plan.recommended.width)]
    while True:
        headers = ["#", *(h for h, _ in columns)] + (["band"] if show_all else [])
        body = [[str(i + 1) if c in inside else "", *(cell(c) for _, cell in columns)]
                + ([("in" if lo <= c.depth <= hi else "below" if c.depth < lo else "above")] if show_all else [])
                for i, c in enumerate(rows)]
        lines = _layout(headers, body)
        droppable = [h for h in DROP_FIRST if any(h == name for name, _ in columns)]
        if max(map(len, lines)) <= width:
            return lines
        if not droppable:  # every optional column gone: shorter headers, then one space between columns
            short = [SHORT_HEADERS.get(h, h) for h in headers]
            lines = _layout(short, body)
            return lines if max(map(len, lines)) <= width else _layout(short, body, " ")
        columns = [c for c in columns if c[0] != droppable[0]]


def _wrap(label: str, text: str, width: int) -> list[str]:
    return textwrap.wrap(text, width=max(width, 40), initial_indent=label.ljust(LABEL), subsequent_indent=" " * LABEL,
                         break_on_hyphens=False) or [label]


def tokens_text(plan) -> str:
    """The training length every cost is at, with its assumption."""
    if plan.setup.tokens_assumed:
        return f"at {fmt_count(plan.setup.tokens)} tokens (20/param, Hoffmann et al. 2022)"
    days = plan.setup.tokens_from_days
    if days is not None:  # plan --params --days: the tokens that fit, by the pick's step time
        count = getattr(plan.recommended, plan.budget.count)
        return (f"at {fmt_count(plan.setup.tokens)} tokens ({plan.setup.tokens / count:.3g}/param: what {days:g} days fit "
                "at this step time)")
    return f"at {fmt_count(plan.setup.tokens)} tokens"


def gpus_text(plan) -> str:
    setup = plan.setup
    where = f"{setup.gpus:,} x {setup.gpu}"
    from .formats import assumed_gpus_text

    return where + assumed_gpus_text(setup)


def answer_lines(plan, width: int) -> list[str]:
    """The answer (shape, heads/KV, ffn, params), its run (where, how long, how much memory), why, the floor."""
    r = plan.recommended
    shape = (f"{r.depth}x{r.width}, {r.heads} heads ({r.kv_heads} KV), ffn {r.ffn:,}, "
             f"{fmt_count(getattr(r, plan.budget.count))} {COUNT_WORDS.get(plan.budget.count, plan.budget.count)} params "
             f"({r.budget_deviation:+.1%})")
    run, known = r.run, []
    if r.loss is not None and r.loss.vs_best is not None:
        known.append(f"loss {r.loss.vs_best:+.1%} vs best")
    if run.time_to_target_days is not None:
        known.append(f"{_days(run.time_to_target_days)} days to target")
    if run.train_days is not None:
        known.append(f"{_days(run.train_days)} days")
    elif run.train_gpu_hours is not None:
        known.append(f"{_hours(run.train_gpu_hours)} GPU-hours")
    known.append(f"{_gb(run.memory_per_gpu_bytes)} GB/GPU" + ("" if run.fits else " (does NOT fit)"))
    mfu = rate = ""
    if plan.setup.mfu is not None:  # the flat --mfu; an uneven pipeline achieves less (cost.perf.predict.flat_costs)
        mfu = f", MFU {plan.setup.mfu:g}" + ("" if run.mfu is None or abs(run.mfu - plan.setup.mfu) < 5e-4 * plan.setup.mfu
                                               else f" ({run.mfu:.2f} with the uneven pipeline)")
    elif run.mfu is not None:
        rate = f", MFU {run.mfu:.2f} (performance model)"
    line = (", ".join(known) + f" on {gpus_text(plan)}" + (f", layout {layout_text(run.layout)}" if run.layout else "") + mfu + rate
            + f", {tokens_text(plan)}")
    lo, hi = plan.band.low, plan.band.high
    floor = (f"minimal depth {plan.threshold.min_depth} (the paper's threshold: the smallest L with 3^L >= width, "
             f"L* = {plan.threshold.min_depth_exact:.2f}), the floor of the band [{lo}, {hi}]")
    billed = plan.setup.billed_note
    return [*_wrap("answer", shape, width), *_wrap("run", line, width),
            *(_wrap("billed", billed_text(plan), width) if billed else []), *_wrap("why", plan.why, width),
            *_wrap("floor", floor, width)]


def billed_text(plan) -> str:
    """The billed-vs-predicted line: the ratio, its range and where it comes from (``billed_note`` in full in JSON)."""
    return (f"expect 1.0-2.6x these predicted times ({plan.setup.billed_ratio:g}x on average: published GPU-hours of "
            "Llama 2 and 3 runs; docs/performance.md)")


def layout_text(layout: dict) -> str:
    """A layout object in one short phrase: tp 1 x pp 1 x dp 64, micro-batch 4 x 2 accumulated, recompute none, ZeRO 3."""
    degrees = " x ".join(f"{k} {layout[k]}" for k in ("tp", "cp", "pp", "dp") if k in layout and (k != "cp" or layout[k] > 1))
    accumulated = f" x {layout['accumulation']} accumulated" if (layout.get("accumulation") or 1) > 1 else ""
    return (f"{degrees}, micro-batch {layout.get('micro_batch')}{accumulated}, recompute {layout.get('recompute')}, "
            f"ZeRO {layout.get('zero')}")


def plan_screen(plan, width: int, show_all: bool = False, explain: bool = False) -> str:
    """One plan on one screen."""
    lo, hi = plan.band.low, plan.band.high
    title = f"Plan for {plan.budget.spelling} parameters ({plan.budget.arch} block"
    title += "" if plan.budget.source == "params" else f", from --{plan.budget.source}"
    lines = [title + ")", *answer_lines(plan, width), ""]
    outside = sum(1 for c in plan.candidates if not c.in_band and (c.depth, c.width) != (plan.recommended.depth, plan.recommended.width))
    heading = f"Candidates in the band [{lo}, {hi}], best first"
    if outside and not show_all:
        heading += f" (--all: {outside} more outside it)"
    lines += [heading, *candidate_table(plan, width, show_all)]
    if not explain:
        lines.append("--explain: the evidence, the rules, the threshold analysis and the notes")
    return "\n".join(lines) + "\n"


def screen_width() -> int:
    """The width to fit: unbounded with --wide, COLUMNS, else the terminal's, else 100 (a pipe or file)."""
    import shutil

    from .fitting import given_width

    width = given_width()
    return width if width is not None else shutil.get_terminal_size((100, 25)).columns
