"""The table of `depthwidth cost` records (issue 30): one line per shape, then the notes once."""
from __future__ import annotations


def _days(value) -> str:
    return "n/a" if value is None else (_figure(value, ",.1f") if value >= 1 else f"{value * 24:,.1f} h")


def _figure(value, spec: str = ",.0f") -> str:
    """A number as the JSON has it, readably: n/a for null, ``spec`` from 0.1 to 10^9 (digits that
    mean something), three significant digits outside (never 0 for a figure that is not 0)."""
    if value is None:
        return "n/a"
    return format(value, spec) if 0.1 <= abs(value) < 1e9 else f"{value:.3g}"


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
    columns = ["shape", "layout tp/pp/dp/cp mb rc zero", "step s", "tokens/s", "MFU", "HFU", "GB/GPU", "loss vs best"]
    columns += ["days", "GPU-hours"] if timed else []
    columns += ["days to target"] if target else []
    if serve:
        columns += ["prefill s", "decode ms/token", "decode tokens/s"]
    rows = []
    for r in records:
        lay = r["layout"]
        row = [r["shape"], f"{lay['tp']}/{lay['pp']}/{lay['dp']}/{lay['cp']} mb{lay['micro_batch']} {lay['recompute']} z{lay['zero']}",
               _figure(r["step_seconds"], ".3g"), _figure(r["tokens_per_second"]), f"{r['mfu']:.1%}", f"{r['hfu']:.1%}",
               _figure(r["train_memory_per_gpu_bytes"] / 1e9, ",.1f"), _loss(r)]
        if timed:
            row += [_days(r["train_days"]), _figure(r["train_gpu_hours"])]
        if target:
            row += [_days(r.get("time_to_target_days"))]
        if serve:
            decode = r["decode_seconds_per_token"]
            row += [_figure(r["prefill_seconds"], ".3g"), _figure(None if decode is None else decode * 1e3, ".2f"),
                    _figure(r["decode_tokens_per_second"])]
        rows.append(row)
    first = records[0] if records else {}
    title = f"cost on {first.get('gpus', '?')} x {first.get('gpu', '?')}, context {first.get('context', '?'):,}" if records else "cost"
    yield FittedTable(title, columns, rows, frozenset(columns[2:]), True)
    yield _notes([n for r in records for n in r["notes"]] + [
        "model error on 56 published runs: median 5.7%, 53 of 56 within 25% (docs/performance.md); "
        "times are a healthy cluster's steady state"])
