"""`compare` on one screen: which of the two shapes to train and why (``advice.which``:
the plan's loss and performance models), the theory's verdict in one sentence, the figures of both
shapes side by side; with ``--explain`` the bounds, the replicate and surpass widths and the notes.
Plain text, no Rich (as `plan`'s screen)."""
from __future__ import annotations

from . import compact
from .formats import fmt_count, fmt_width

MODEL_ERROR = ("times from the performance model, each shape in its best layout (as `cost` and `plan`; median error "
               "4.3% on 60 published runs, docs/performance.md); loss vs the best shape of the size from the loss "
               "model (docs/loss.md)")
FLAT_TIMES = ("times at the --mfu given, in the layout given (--tp, --pp, --zero, --recompute, --micro-batch; none searched), "
              "as every command times --mfu; loss vs the best shape of the size from the loss model (docs/loss.md)")


def _shape(r) -> str:
    return f"{r.depth}x{r.width}"


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.2g}x" if b else "-"


def _days_text(t, unit: str) -> str:
    if t is None:
        return "never"
    return (f"{t:,.1f}" if t >= 1 else f"{t:.3g}") + " days" if unit == "days" else f"{compact.hours(t)} GPU-hours"


def verdict_sentence(c) -> str:
    """What the theory proves about the two shapes, and what it does not, in one sentence."""
    deep, shallow = _shape(c.deep), _shape(c.shallow)
    if c.verdict == "no-provable-separation":
        return ("nothing is proven either way: the separation-rank bounds of the two shapes overlap (Levine et al. "
                "2020), so neither provably expresses more; the bounds say nothing of loss or speed.")
    more, less = (deep, shallow) if c.verdict == "deep-more-expressive" else (shallow, deep)
    return (f"proven: {more} can express functions {less} cannot (its separation-rank lower bound clears the "
            f"other's upper bound, Levine et al. 2020); not proven: that it trains to a lower loss.")


NEAR = 0.05  # within 5% (inside the models' errors): "about as fast", "a near tie"


def _speed(ratio: float) -> str:
    """The pick's training speed against the other's (their times for the same tokens)."""
    if 1 - NEAR <= ratio <= 1 + NEAR:
        return "about as fast to train"
    return f"{ratio:.2g}x as fast to train" if ratio > 1 else f"{1 / ratio:.2g}x slower to train"


def _why(w, names: dict) -> str:
    """Why the pick reaches the target first: its speed, its loss, or both."""
    pick, other = w.sides
    a, b = pick.targeted, other.targeted
    if b.to_target is None:
        return (f"{names[other.label]} never reaches it: its loss penalty is more than extra tokens can recover "
                "(docs/loss.md)")
    if getattr(b.costs, "fits_on_gpu", True) is False and getattr(a.costs, "fits_on_gpu", True) is not False:
        return f"{names[other.label]} does not fit in the GPU's memory in any layout searched"
    ratio = b.time / a.time if a.time else 1.0
    speed = _speed(ratio)
    tie = ("a near tie (within 5%, inside the models' errors): " if a.to_target and b.to_target / a.to_target < 1 + NEAR else "")
    if a.penalty[0] <= b.penalty[0] and ratio < 1 - NEAR:  # slower (``_speed``)
        return f"{tie}it is {speed}, but predicted closer to the best shape's loss, so it needs fewer extra tokens to reach it"
    if a.penalty[0] <= b.penalty[0]:
        return f"{tie}it is predicted closer to the best shape's loss, and {speed}"
    return (f"{tie}its predicted loss is higher, but it is {speed}, so the extra tokens that make up its penalty still "
            "finish first")


def _decision(c, w, width: int) -> list[str]:
    names = {"deep": _shape(c.deep), "shallow": _shape(c.shallow)}
    pick, other = w.sides
    a, b = pick.targeted, other.targeted
    from .formats import assumed_gpus_text

    where = f"{w.gpus:,} x {w.gpu}" + assumed_gpus_text({"gpus_assumed": w.gpus_assumed, "gpus": w.gpus, "gpu": w.gpu})
    tokens = f"{fmt_count(w.tokens)} tokens" + (" (no --tokens: 20/param of the larger, Hoffmann et al. 2022)"
                                                if w.tokens_assumed else "")
    train = (f"{names[pick.label]} ({pick.label}): it reaches the best {fmt_count(w.target_params)}-parameter shape's "
             f"loss first, in {_days_text(a.to_target, a.unit)} against {_days_text(b.to_target, b.unit)} for "
             f"{names[other.label]}, on {where} at {tokens}")
    if getattr(a.costs, "fits_on_gpu", True) is False:  # a shape that fits ranks first: neither does
        train += f"; NEITHER fits in the GPU's memory in any layout on {w.gpus:,} GPUs (more --gpus)"
    return [*compact.labelled("train", train, width), *compact.labelled("why", _why(w, names), width),
            *compact.labelled("theory", verdict_sentence(c), width),
            *(line for r in (c.deep, c.shallow) if r.width % r.heads for line in compact.labelled("note", _uneven(r), width))]


def _uneven(r) -> str:
    """A shape whose heads do not divide its width is counted, and so timed, as one head of the whole width."""
    near = -(-r.width // r.heads) * r.heads
    return (f"{_shape(r)}'s {r.heads} heads do not divide its width: it is timed as one head of {r.width:,} (as the "
            f"paper counts it), which understates its attention's time; {r.depth}x{near}x{r.heads} is timed as trained")


def _seconds(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"


def _layout(lay: dict) -> str:
    return f"tp{lay['tp']} pp{lay['pp']} dp{lay['dp']}" + (f" cp{lay['cp']}" if lay.get("cp", 1) > 1 else "") + \
        f" mb{lay['micro_batch']} z{lay['zero']}"


def _figures(c, w, width: int) -> list[str]:
    """The two shapes side by side, one figure a row."""
    sides = {s.label: s for s in w.sides}
    shown = [(label, r, sides[label]) for label, r in (("deep", c.deep), ("shallow", c.shallow))]
    rows = [
        ("loss vs best [95%]", lambda r, s: compact.pct_interval(*s.targeted.penalty)),
        (f"{'days' if w.sides[0].targeted.unit == 'days' else 'GPU-hours'} to target loss",
         lambda r, s: _days_text(s.targeted.to_target, s.targeted.unit).split(" ")[0]),
        (f"days at {fmt_count(w.tokens)} tokens", lambda r, s: f"{compact.days(s.record['train_days'])} "
         f"({compact.hours(s.record['train_gpu_hours'])} GPU-h)"),
        ("step time, MFU", lambda r, s: f"{_seconds(s.record['step_seconds'])} s, {s.record['mfu']:.2f}"),
        ("layout", lambda r, s: _layout(s.record["layout"])),
        ("memory per GPU", lambda r, s: f"{compact.gb(s.record['train_memory_per_gpu_bytes'])} GB"
         + ("" if getattr(s.targeted.costs, "fits_on_gpu", True) else " (NO fit)")),
        ("decode latency", lambda r, s: "-" if s.record["decode_seconds_per_token"] is None
         else f"{s.record['decode_seconds_per_token'] * 1e3:.2f} ms/token"),
        ("params, regime", lambda r, s: f"{fmt_count(s.params)}, {r.regime}"),
    ]
    columns = [compact.Column("", [label for label, _ in rows], right=False)]
    columns += [compact.Column(f"{_shape(r)} ({label})", [cell(r, s) for _, cell in rows], right=False)
                for label, r, s in shown]
    lines = compact.table(None, columns, width)
    if max(map(len, lines)) <= width:
        return lines
    stacked = []  # a terminal too narrow for the two side by side: one shape after the other
    for column in columns[1:]:
        stacked += [column.header, *compact.table(None, [compact.Column("", ["  " + c for c in columns[0].cells], right=False),
                                                        compact.Column("", column.cells, right=False)], width, show_header=False)]
    return stacked


def compare_screen(c, w, width: int, explain: bool = False) -> str:
    """The first screen of `compare` (``c`` its record, ``w`` its ``advice.which.Which``)."""
    title = f"Compare {_shape(c.deep)} (deep) with {_shape(c.shallow)} (shallow)"
    lines = [title, *_decision(c, w, width), "", *_figures(c, w, width)]
    if not w.modeled:
        lines += compact.wrapped("times at the --mfu given, in the layout given (not the performance model)", width)
    if not explain:
        lines += compact.wrapped("--explain: the bounds, the replicate and surpass widths and every rule's note", width)
    return compact.text(lines)


def compare_explained(c, w, width: int) -> str:
    """`compare --explain`: the theory's detail and every note."""
    from .tables import BOUND_WORDS, bound_columns

    cols = bound_columns([c.deep, c.shallow], ["deep", "shallow"])
    lines = ["", *compact.table("Separation-rank bounds (Levine et al. 2020, Theorems 1-2)", cols, width), ""]
    at = f"at depth {c.shallow.depth}, heads {c.shallow.heads}"
    gap = "" if c.log3_gap is None else f" (log3 gap {c.log3_gap:,.3f})"
    lines += compact.labelled("verdict", c.verdict + gap, width, 11)
    lines += compact.labelled("replicate", f"width {_width_text(c.replicate_width, c.replicate_log10_width)} {at} "
                              f"({c.replicate_basis}): necessary, not sufficient", width, 11)
    lines += compact.labelled("surpass", f"width {_width_text(c.surpass_width, c.surpass_log10_width)} {at} "
                              f"({c.surpass_basis})", width, 11)
    lines += compact.labelled("empirical", f"depth for the size by the Levine et al. fit: deep {c.deep_empirical_depth:.1f}, "
                              f"shallow {c.shallow_empirical_depth:.1f}; params ratio deep/shallow {c.params_ratio:.4g}",
                              width, 11)
    times = MODEL_ERROR if w.modeled else FLAT_TIMES
    extra = [BOUND_WORDS, times, *w.loss_notes]
    return compact.text([*lines, "", *compact.notes([*c.notes, *extra], width)])


def _width_text(width, log10_width) -> str:
    return "none found (see the notes)" if width is None and log10_width is None else fmt_width(width, log10_width)


def compare_tables(c, w, explain: bool = False):
    """`compare`'s table output: the screen, and with ``explain`` its detail."""
    from .screen import screen_width

    width = screen_width()
    yield compare_screen(c, w, width, explain)
    if explain:
        yield compare_explained(c, w, width)
