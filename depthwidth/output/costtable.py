"""The table of `depthwidth cost` records: one line per shape with its layout on a
second line, fitted to the screen (``compact``: the columns ranked last give way, ``--wide`` shows
them), then the notes once."""
from __future__ import annotations

from . import compact

MODEL_ERROR_NOTE = ("model error on 60 published runs: median 4.3%, 59 of 60 within 25% (docs/performance.md); "
                    "times are a healthy cluster's steady state")


def _days(value) -> str:
    return "-" if value is None else (_figure(value, ",.1f") if value >= 1 else f"{value * 24:,.1f} h")


def _figure(value, spec: str = ",.0f") -> str:
    """A number as the JSON has it, readably: - for null, ``spec`` from 0.1 to 10^9 (digits that mean
    something), three significant digits outside (never 0 for a figure that is not 0)."""
    if value is None:
        return "-"
    return format(value, spec) if 0.1 <= abs(value) < 1e9 else f"{value:.3g}"


def _at(r: dict, path: str):
    """The value of a dotted field of a plain `cost` row (None where a record on the way is null)."""
    from .records import pick

    return pick(r, path)


def _loss(r) -> str:
    """The loss penalty with its ~95% interval (docs/loss.md)."""
    value, low, high = (_at(r, f"loss.{name}") for name in ("vs_best", "low", "high"))
    if value is None:
        return "-"
    return f"+{value:.2%} [{low:.1%}, {high:.1%}]"


NAME_CELL = 16  # a longer name (a config's path) is shown as LxD, the name in full on the row's second line


def _name(r) -> str:
    return r["shape"] if len(r["shape"]) <= NAME_CELL else f"{r['depth']}x{r['width']}"


def _layout(r, batch: bool = False) -> str:
    """The row's layout beneath it; with ``batch`` its global batch too (the title cannot give one for all rows)."""
    from .screen import layout_text

    named = "" if len(r["shape"]) <= NAME_CELL else f"{r['shape']}: "
    run = r["run"]
    text = f"{named}layout {layout_text(run['layout'])}"
    if batch and run.get("global_batch"):
        text += f", batch {run['global_batch']:,}" + ("" if _divides(r) else " (the last micro-batch partly filled)")
    return text


def _divides(r) -> bool:
    """Whether the row's dp x micro-batch x accumulation is its global batch (else the last micro-batch is partly filled)."""
    run, lay = r["run"], r["run"]["layout"]
    return lay["dp"] * lay["micro_batch"] * (lay.get("accumulation") or 1) == run.get("global_batch")


def _columns(records) -> list:
    """The columns the records carry, each with the order it gives way in (0: never)."""
    C = compact.Column
    get = lambda path, fmt: [fmt(_at(r, path)) for r in records]
    columns = [C("shape", [_name(r) for r in records], right=False),
               C("step s", get("run.step_seconds", lambda v: _figure(v, ".3g")), drop=6),
               C("tokens/s", get("run.tokens_per_second", _figure), drop=3),
               C("MFU", get("run.mfu", lambda v: f"{v:.1%}")),
               C("HFU", get("run.hfu", lambda v: f"{v:.1%}"), drop=1),
               C("GB/GPU", get("run.memory_per_gpu_bytes", compact.gb)),
               C("loss vs best", [_loss(r) for r in records])]
    if any(_at(r, "run.train_days") is not None for r in records):
        columns += [C("days", get("run.train_days", _days)), C("GPU-hours", get("run.train_gpu_hours", _figure), drop=4)]
    if any(_at(r, "run.time_to_target_days") is not None for r in records):
        columns += [C("target days", get("run.time_to_target_days", _days))]
    if any(_at(r, "serve.decode_seconds_per_token") is not None for r in records):
        columns += [C("prefill s", get("serve.prefill_seconds", lambda v: _figure(v, ".3g")), drop=5),
                    C("ms/token", get("serve.decode_seconds_per_token", lambda v: _figure(None if v is None else v * 1e3, ".2f"))),
                    C("decode tokens/s", get("serve.decode_tokens_per_second", _figure), drop=2)]
    return columns


def cost_tables(records):
    """Step time, MFU, memory, the loss penalty and (with --tokens) days per shape, its layout beneath;
    serving columns with --serve; the predicted-vs-billed note with every time figure."""
    from .records import plain
    from .screen import screen_width

    width = screen_width()
    records = [plain(r) for r in records]
    first = records[0]["run"] if records else {}
    batches = {r["run"].get("global_batch") for r in records}
    one = len(batches) == 1 and all(_divides(r) for r in records)  # one batch, exactly dp x micro-batch x accumulation
    title = (f"cost on {first.get('gpus', '?')} x {first.get('gpu', '?')}, context {first.get('context', 0):,}"
             + (f", batch {first.get('global_batch', 0):,} = dp x micro-batch x accumulation" if one else "")
             if records else "cost")
    lines = compact.table(title, _columns(records), width, under=[_layout(r, not one) for r in records])
    modeled = any(_at(r, "run.layouts_searched") is not None for r in records)  # --mfu: the layout given, none searched
    notes = [n for r in records for n in r["notes"]] + ([MODEL_ERROR_NOTE] if modeled else [])
    if not any(_at(r, "run.train_days") is not None for r in records):
        notes.append("no --tokens: no days or GPU-hours (a training length gives them)")
    yield compact.text(lines + compact.notes(notes, width))


def calibrate_tables(records):
    """`calibrate`: the measurement, the fitted efficiency with its interval, the model before and
    after, and where the profile went."""
    from .screen import layout_text
    from .tables import _table

    for r in records:
        m = r["measurement"]
        if "serving_efficiency" in r:
            yield _serving_calibration(r)
            continue
        interval = ("none (one measurement has no spread)" if r["efficiency_low"] is None else
                    f"{r['efficiency_low']:.3f} .. {r['efficiency_high']:.3f} (10th-90th percentile steps)")
        measured = f"{r['measured_step_seconds']:.4g} s/step" + (
            "" if r["measured_step_seconds_low"] is None else
            f" (10th-90th percentile {r['measured_step_seconds_low']:.4g} .. {r['measured_step_seconds_high']:.4g} s)")
        yield _table(f"Calibration of {r['shape']} ({r['arch']}) on {r['gpus']} {r['gpu']}", ["", ""], [
            ["measured", measured],
            ["from", m["source"] + (f": {m['steps_read']:,} steps read, {m['warmup_skipped']} warm-up reading(s) skipped"
                                    if m["kind"] == "log" else "")],
            ["run", f"{layout_text(r['layout'])}; global batch {r['global_batch']:,} x {r['context']:,} tokens; "
                    f"{r['attention']} attention"],
            ["model out of the box", f"{r['step_seconds_before']:.4g} s/step, MFU {r['mfu_before']:.1%} (efficiency "
                                     f"{r['default_efficiency']:g})"],
            ["fitted efficiency", f"{r['efficiency']:.4f}; interval {interval}"],
            ["compute share", _share_text(r["compute_share_before"])],
            ["calibrated model", f"{r['step_seconds']:.4g} s/step, MFU {r['mfu']:.1%}, {r['tokens_per_second']:,.0f} tokens/s"
                                 + ("" if r["train_days"] is None else f", {r['train_days']:,.1f} days for {r['tokens']:.3g} tokens")],
            ["profile", r["profile"] or "not written (--out FILE writes it, for --profile)"],
        ], show_header=False)


def _share_text(share: float) -> str:
    """The calibrate screen's line on how much of the step the fitted efficiency scales."""
    from ..cost.perf.calibration import COMPUTE_BOUND

    text = f"{share:.0%} of the modelled step (out of the box) scales with the efficiency"
    if share < COMPUTE_BOUND:
        text += ("; the rest is communication, so the fitted efficiency also absorbs the communication's error and "
                 "predicts runs bound by compute poorly (calibrate on a run bound by compute)")
    return text


def _serving_calibration(r):
    """`calibrate` of a serving measurement: what was measured, the fitted efficiency, decode before and after."""
    from .tables import _table

    return _table(f"Serving calibration of {r['shape']} ({r['arch']}) on {r['serving_tp']} {r['gpu']}", ["", ""], [
        ["measured", r["measurement"]["source"]],
        ["run", f"batch {r['batch']:,}, cache {r['context']:,} tokens, tensor-parallel {r['serving_tp']}"],
        ["model out of the box", f"{r['decode_seconds_per_token_before'] * 1e3:.4g} ms per output token"],
        ["fitted efficiency", f"{r['serving_efficiency']:.4f} (modelled over measured decode step; one measurement: no interval)"],
        ["calibrated model", f"{r['decode_seconds_per_token'] * 1e3:.4g} ms per output token"],
        ["profile", r["profile"] or "not written (--out FILE writes it, for --profile)"],
    ], show_header=False)
