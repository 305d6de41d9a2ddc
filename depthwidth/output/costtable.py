"""The table of `depthwidth cost` records (issue 30): one line per shape, then the notes once."""
from __future__ import annotations


def _days(value) -> str:
    return "n/a" if value is None else (f"{value:,.1f}" if value >= 1 else f"{value * 24:,.1f} h")


def _loss(r) -> str:
    """The loss penalty with its ~95% interval (docs/loss.md)."""
    value, low, high = r.get("loss_vs_best"), r.get("loss_vs_best_low"), r.get("loss_vs_best_high")
    if value is None:
        return "n/a"
    return f"+{value:.2%} [{low:.1%}, {high:.1%}]"


def cost_tables(records):
    """The layout, step time, throughput, MFU/HFU, memory and (with --tokens) days per shape; serving
    columns with --serve; the predicted-vs-billed note with every time figure."""
    from .fitting import FittedTable
    from .tables import _notes

    serve = any(r.get("decode_seconds_per_token") is not None for r in records)
    timed = any(r.get("train_days") is not None for r in records)
    target = any(r.get("time_to_target_days") is not None for r in records)
    columns = ["shape", "layout tp/pp/dp/cp mb x accum rc zero", "step s", "tokens/s", "MFU", "HFU", "GB/GPU", "loss vs best"]
    columns += ["days", "GPU-hours"] if timed else []
    columns += ["days to target"] if target else []
    if serve:
        columns += ["prefill s", "decode ms/token", "decode tokens/s"]
    rows = []
    for r in records:
        lay = r["layout"]
        row = [r["shape"], f"{lay['tp']}/{lay['pp']}/{lay['dp']}/{lay['cp']} mb{lay['micro_batch']}x{lay['accumulation']} "
                                 f"{lay['recompute']} z{lay['zero']}",
               f"{r['step_seconds']:.3g}", f"{r['tokens_per_second']:,.0f}", f"{r['mfu']:.1%}", f"{r['hfu']:.1%}",
               f"{r['train_memory_per_gpu_bytes'] / 1e9:.1f}", _loss(r)]
        if timed:
            row += [_days(r["train_days"]), "n/a" if r["train_gpu_hours"] is None else f"{r['train_gpu_hours']:,.0f}"]
        if target:
            row += [_days(r.get("time_to_target_days"))]
        if serve:
            row += [f"{r['prefill_seconds']:.3g}", f"{r['decode_seconds_per_token'] * 1e3:.2f}", f"{r['decode_tokens_per_second']:,.0f}"]
        rows.append(row)
    first = records[0] if records else {}
    title = (f"cost on {first.get('gpus', '?')} x {first.get('gpu', '?')}, context {first.get('context', '?'):,}, global batch "
             f"{first.get('global_batch', '?'):,} = dp x micro-batch x accumulation" if records else "cost")
    yield FittedTable(title, columns, rows, frozenset(columns[2:]), True)
    yield _notes([n for r in records for n in r["notes"]] + [
        "model error on 56 published runs: median 5.7%, 53 of 56 within 25% (docs/performance.md); "
        "times are a healthy cluster's steady state"])


def calibrate_tables(records):
    """`calibrate`: the measurement, the fitted efficiency with its interval, the model before and
    after, and where the profile went."""
    from .screen import layout_text
    from .tables import _table

    for r in records:
        m = r["measurement"]
        interval = ("n/a (one measurement)" if r["efficiency_low"] is None else
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
            ["calibrated model", f"{r['step_seconds']:.4g} s/step, MFU {r['mfu']:.1%}, {r['tokens_per_second']:,.0f} tokens/s"
                                 + ("" if r["train_days"] is None else f", {r['train_days']:,.1f} days for {r['tokens']:.3g} tokens")],
            ["profile", r["profile"] or "not written (--out FILE writes it, for --profile)"],
        ], show_header=False)
