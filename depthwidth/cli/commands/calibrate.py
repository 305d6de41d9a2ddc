"""`depthwidth calibrate`: the stack's efficiency from one measured run, written as a profile for --profile."""
from typing import Annotated, List, Optional

import typer

from ..options import BLOCK, TRAIN, Arch, Batch, BlockOptions, Field, Fmt, Format, KvHeads, TrainOptions

TRAINING = ("--step-seconds", "--tokens-per-second", "--log")
SERVING = ("--decode-tokens-per-second", "--time-per-output-token", "--serving-log")


def command(
    shapes: Annotated[Optional[List[str]], typer.Argument(help="The shape that ran: LxD[xH] or a model name (or --config).")] = None,
    config: Annotated[Optional[str], typer.Option("--config", help="The Hugging Face config.json (or model folder) that ran.")] = None,
    arch: Arch = "vanilla",
    kv_heads: KvHeads = None,
    block: BlockOptions = BLOCK,
    train: TrainOptions = TRAIN,
    step_seconds: Annotated[Optional[str], typer.Option("--step-seconds", help="Measured: seconds per optimizer step of the global batch.")] = None,
    tokens_per_second: Annotated[Optional[str], typer.Option("--tokens-per-second", help="Measured: training tokens per second of the "
                                                             "whole cluster.")] = None,
    log: Annotated[Optional[str], typer.Option("--log", help="Measured: a training log (Megatron-LM, torchtitan, nanoGPT, Composer/"
                                               "llm-foundry) or a Hugging Face trainer_state.json; '-' reads standard input.")] = None,
    warmup: Annotated[Optional[int], typer.Option("--warmup", help="Log readings to skip at the start. Default: the format's own "
                                                  "warm-up (docs/performance.md, \"Calibration\").", min=0, max=1 << 20)] = None,
    decode_tokens_per_second: Annotated[Optional[str], typer.Option(
        "--decode-tokens-per-second", help="Measured (serving): decode tokens per second of the whole batch (--batch sequences at a "
        "cache of --context tokens, at --tp or the serving degree).")] = None,
    time_per_output_token: Annotated[Optional[str], typer.Option(
        "--time-per-output-token", help="Measured (serving): seconds per output token of one sequence (a decode step).")] = None,
    serving_log: Annotated[Optional[str], typer.Option(
        "--serving-log", help="Measured (serving): the output of vLLM's benchmark_serving.py or benchmark_latency.py, or "
        "TensorRT-LLM's gptSessionBenchmark; '-' reads standard input.")] = None,
    batch: Batch = 1,
    out: Annotated[Optional[str], typer.Option("--out", "-o", help="Write the profile to this JSON file (for --profile).")] = None,
    format: Fmt = Format.table,
    field: Field = None,
) -> None:
    """Fit the performance model's efficiency to a step time you measured, with its interval; --out writes the profile that --profile applies.

    Example: depthwidth calibrate 32x4096 --arch llama --gpus 64 --tp 2 --global-batch 512 --context 4096 --step-seconds 2.0 --out h100.json
    """
    from ...core.errors import InputError
    from ..inputs import expand_stdin
    from ..training import train_run
    from .cost import architectures

    measured = _one_measurement(train, warmup, step_seconds, tokens_per_second, log, decode_tokens_per_second,
                                time_per_output_token, serving_log)
    spec, fixed, _ = train_run(train)
    named = architectures(expand_stdin(shapes) if shapes else [], [config] if config else [], arch, train.context,
                          dict(kv_heads=kv_heads, **block._asdict()))
    if len(named) != 1:
        raise InputError("shapes", " ".join(n for n, _ in named) or "(none)", "expected the one shape that ran (a shape, a model name or --config)")
    if measured[0] in SERVING:
        record, profile = _serving_calibrated(named[0], spec, train.tp, batch, measured)
    else:
        record, profile = _calibrated(named[0], spec, fixed, measured, warmup)
    if out is not None:
        from ...loop.profiles import write_profile

        write_profile(profile, out)
        record["profile"] = out
    from ...output import emit
    from ...output.costtable import calibrate_tables

    emit([record], format.value, field, calibrate_tables)


def _one_measurement(train, warmup, *values) -> tuple[str, str]:
    """(option, value) of the one measurement given (in the order of TRAINING + SERVING); InputError for a
    profile or an MFU (calibrate fits them), none or two measurements, or --warmup without a --log."""
    from ...core.errors import InputError

    if train.profile is not None or train.mfu is not None:
        given = "--profile" if train.profile is not None else "--mfu"
        raise InputError(given, train.profile or train.mfu, "calibrate fits the efficiency itself: give the run, not a profile or an MFU")
    measured = [(name, value) for name, value in zip(TRAINING + SERVING, values) if value is not None]
    if len(measured) != 1:
        raise InputError("measurement", " ".join(n for n, _ in measured) or "(none)",
                         "expected one of " + ", ".join(TRAINING) + " (training) or " + ", ".join(SERVING) + " (serving)")
    if warmup is not None and measured[0][0] != "--log":
        raise InputError("--warmup", warmup, "skips readings of a --log; a single measurement has none")
    return measured[0]


def _calibrated(named, spec, fixed, measured, warmup) -> tuple[dict, dict]:
    """(the command's record, the profile) of one shape's run and its measurement."""
    from dataclasses import replace

    from ...cost.perf.calibration import compute_share, fit_efficiency, step_summary
    from ...cost.perf.modeled import cluster
    from ...cost.perf.step import STEP_EFFICIENCY, attention_kernel, Layout
    from ...cost.perf.predict import predict

    name, arch = named
    before = predict(arch, cluster(spec, fixed, count_layouts=False))
    batch, context, gpus = before["global_batch"], before["context"], before["gpus"]
    measurement = _measurement(measured, warmup, batch * context, gpus)
    middle, low, high = step_summary(measurement.pop("steps"))
    what = measured[0]
    efficiency = fit_efficiency(arch, spec, fixed, middle, what)
    bounds = [None, None] if low is None else [fit_efficiency(arch, spec, fixed, s, what) for s in (high, low)]
    after = predict(arch, cluster(replace(spec, efficiency=efficiency), fixed, count_layouts=False))
    share = compute_share(arch, spec, fixed, spec.efficiency or STEP_EFFICIENCY, before["step_seconds"])
    kernel = attention_kernel(arch, Layout(attention=spec.attention))
    label = (f"{name} ({arch.family}) on {gpus} {before['gpu']}, {_layout_text(after['layout'])}, global batch {batch} x {context}: "
             f"{middle:.4g} s/step from {measurement['source']}")
    interval = ("the efficiencies of the 10th and 90th percentile step times" if low is not None else
                "one measurement: no spread to give an interval (a log gives one)")
    run = {"shape": name, "arch": arch.family, "params_nonembedding": before["params_nonembedding"], "gpus": gpus, "context": context,
           "global_batch": batch, "attention": kernel, "layout": after["layout"], "fixed_layout": dict(fixed)}
    training = {"efficiency": efficiency, "efficiency_low": bounds[0], "efficiency_high": bounds[1], "interval_note": interval,
                "compute_share_before": share, "default_efficiency": STEP_EFFICIENCY, "step_seconds_before": before["step_seconds"],
                "measurement": {**measurement, "step_seconds": middle, "step_seconds_low": low, "step_seconds_high": high}, "run": run}
    profile = {"format": "depthwidth-profile/1", "accelerator": before["gpu"], "calibrated_on": label, "training": training}
    record = {"shape": name, "arch": arch.family, "gpu": before["gpu"], **{k: v for k, v in run.items() if k not in ("shape", "arch")},
              "measured_step_seconds": middle, "measured_step_seconds_low": low, "measured_step_seconds_high": high,
              "measurement": measurement, "efficiency": efficiency, "efficiency_low": bounds[0], "efficiency_high": bounds[1],
              "interval_note": interval, "compute_share_before": share, "default_efficiency": STEP_EFFICIENCY,
              "step_seconds_before": before["step_seconds"], "mfu_before": before["mfu"], "step_seconds": after["step_seconds"], "mfu": after["mfu"],
              "tokens_per_second": after["tokens_per_second"], "tokens": spec.tokens, "train_days": after["train_days"],
              "calibrated_on": label, "profile": None}
    return record, profile


def _serving_calibrated(named, spec, tp, batch: int, measured) -> tuple[dict, dict]:
    """(the command's record, the profile) of a measured serving figure: the serving efficiency, modelled
    over measured decode step (``cost.serve_calibrate``), at ``tp`` (None: the serving degree)."""
    from dataclasses import replace

    from ...arch.hardware import accelerator
    from ...cost.serve import serving, serving_tp
    from ...cost.serve_calibrate import ServingMeasurement, fit_efficiency, measured_cache, parse_serving_log, serving_profile
    from ..inputs import bounded_number

    name, arch = named
    hw, (option, text) = accelerator(spec.gpu), measured
    if option == "--serving-log":
        from ...core.userfile import read_text

        content, _ = read_text(text, option, "a serving benchmark's output, or - for standard input")
        m = parse_serving_log(content)
        m = replace(m, source=f"--serving-log {text} ({m.source})", batch=m.batch or batch)
        context = None if m.input_tokens is not None else spec.context  # the log's own lengths (input + output / 2), else --context
    else:
        value = bounded_number(text, option, 1e30, "expected a positive number, such as " + ("2500" if option == "--decode-tokens-per-second" else "0.012"))
        step = value if option == "--time-per-output-token" else batch / value
        m = ServingMeasurement(f"{option} {text} (batch {batch}, cache {spec.context:,} tokens)", batch, time_per_output_token=step)
        context = spec.context
    cache = measured_cache(m, context)
    degree = serving_tp(arch, hw, cache, m.batch or 1, tp)
    efficiency = fit_efficiency(arch, hw, degree, m, cache)
    before = serving(arch, hw, cache, m.batch or 1, degree)["decode_seconds_per_token"]
    after = before / efficiency  # serve.serving divides the modelled step by the efficiency
    label = f"{name} ({arch.family}) served on {degree} {hw.name}, batch {m.batch or 1}: {m.source}"
    profile = {"format": "depthwidth-profile/1", "accelerator": hw.name, "calibrated_on": label,
               "serving": serving_profile(efficiency, m, hw.name, degree, name)}
    record = {"shape": name, "arch": arch.family, "gpu": hw.name, "serving_tp": degree, "batch": m.batch or 1, "context": int(cache),
              "measurement": {"kind": option[2:], "source": m.source}, "serving_efficiency": efficiency,
              "decode_seconds_per_token_before": before, "decode_seconds_per_token": after, "calibrated_on": label, "profile": None}
    return record, profile


def _measurement(measured, warmup, batch_tokens: int, gpus: int) -> dict:
    """The measurement as step times (``steps``) with what was read: kind, source, format, counts, note."""
    from ...core.errors import InputError
    from ..inputs import bounded_number

    option, text = measured
    if option != "--log":
        value = bounded_number(text, option, 1e30, f"expected a positive number, such as {'2.0' if option == '--step-seconds' else '4e5'}")
        step = value if option == "--step-seconds" else batch_tokens / value
        return {"kind": option[2:], "source": f"{option} {text}", "log_format": None, "log_sha256": None, "steps": [step], "steps_read": 1,
                "warmup_skipped": 0, "note": "one measurement" if option == "--step-seconds" else
                "tokens per second of the whole cluster: global batch x context / it"}
    from ...loop.steplogs import read_log
    from ...core.userfile import read_text

    content, sha256 = read_text(text, "--log", "a training log file, or - for standard input")
    readings = read_log(content, text, warmup)
    if readings.unit == "seconds":
        steps = list(readings.values)
    else:  # tokens per second, per GPU (torchtitan) or of the cluster (Composer)
        per = gpus if readings.unit == "tokens/s per GPU" else 1
        steps = [batch_tokens / (v * per) for v in readings.values if v > 0]
    if not steps:
        raise InputError("--log", text, "its timing lines hold no positive rate")
    return {"kind": "log", "source": f"--log {text} ({readings.format})", "log_format": readings.format, "log_sha256": sha256,
            "steps": steps,
            "steps_read": readings.steps, "warmup_skipped": readings.skipped,
            "note": f"{readings.note}; {len(steps)} reading(s) after {readings.skipped} skipped as warm-up; the median is fitted"}


def _layout_text(layout: dict) -> str:
    from ...output.screen import layout_text

    return layout_text(layout)
