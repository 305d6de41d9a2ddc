"""Serving calibration: one measured decode figure fixes an engine's serving efficiency.

Pure: text in, numbers out; no I/O. A measurement is what a serving benchmark prints, read by
``parse_serving_log`` from one of these scripts' output (formats read in each project's source):

- vLLM ``benchmarks/benchmark_serving.py`` (vllm-project/vllm @8668d7c0, ``benchmark()``): lines
  ``Output token throughput (tok/s):  X``, ``Mean TPOT (ms):  X`` / ``Median TPOT (ms):  X`` and
  ``Mean TTFT (ms):  X`` / ``Median TTFT (ms):  X``, each a label padded to 40 columns and a value;
- vLLM ``benchmarks/benchmark_latency.py`` (@e43d46b6, ``main()``): ``Avg latency: X seconds`` (one batch of
  ``--batch-size`` prompts of ``--input-len`` tokens generating ``--output-len``, to completion), after the
  ``Namespace(...)`` line it prints first, which gives those three (defaults 8, 32, 128);
- TensorRT-LLM ``benchmarks/cpp/gptSessionBenchmark.cpp`` (NVIDIA/TensorRT-LLM @3c44cb97): ``[BENCHMARK]
  batch_size B input_length I output_length O latency(ms) X tokensPerSec R`` (R = B x O / latency; later
  versions append ``generation_time(ms)``, ``generationTokensPerSec`` and ``gpu_peak_mem(gb)``).

``efficiency`` is the modelled decode step over the measured one (``serve.decode_terms``); the model's
decode figures divided by it reproduce the measurement, and predict the engine's other shapes, batches
and tensor-parallel degrees from the physics (tests/test_serving_table.py: calibrated on one row of an
engine, its other rows within a median 4.5%).
"""
from __future__ import annotations

import re

from ..core.errors import InputError
from ..core.frozen import frozen

FORMATS = "vLLM benchmark_serving.py / benchmark_latency.py output or TensorRT-LLM gptSessionBenchmark's [BENCHMARK] line"


@frozen
class ServingMeasurement:
    """One measured serving figure and the run it came from; None where the log does not say.

    ``time_per_output_token`` in seconds (a decode step at ``batch``); ``output_tokens_per_second``: batch x
    output over the whole run, prefill included (what the batch benchmarks report); ``latency_seconds``: one
    batch start to end; ``time_to_first_token`` in seconds."""

    source: str
    batch: int | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    time_per_output_token: float | None = None
    output_tokens_per_second: float | None = None
    latency_seconds: float | None = None
    time_to_first_token: float | None = None


_NUMBER = r"([0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?)"
_TRT = re.compile(r"\[BENCHMARK\] batch_size (\d+) input_length (\d+) output_length (\d+) latency\(ms\) "
                  + _NUMBER + r"(?: tokensPerSec " + _NUMBER + ")?")
_VLLM_LINE = re.compile(r"^\s*(Output token throughput \(tok/s\)|Median TPOT \(ms\)|Mean TPOT \(ms\)|"
                        r"Median TTFT \(ms\)|Mean TTFT \(ms\)):\s+" + _NUMBER, re.M)
_LATENCY = re.compile(r"Avg latency: " + _NUMBER + " seconds")


def _namespace_int(text: str, *names: str) -> int | None:
    """The first of ``names`` given an integer in a printed argparse ``Namespace(...)``."""
    for name in names:
        found = re.search(r"\b" + name + r"=(\d+)\b", text)
        if found:
            return int(found.group(1))
    return None


def parse_serving_log(text: str) -> ServingMeasurement:
    """The measurement in a benchmark script's output (module docstring); InputError naming the formats
    when none is found. The last matching line wins (a log of several runs: give the run's own lines)."""
    trt = _TRT.findall(text)
    if trt:
        b, i, o, latency, _ = trt[-1]
        latency = float(latency) / 1000
        return ServingMeasurement("TensorRT-LLM gptSessionBenchmark", int(b), int(i), int(o),
                                  output_tokens_per_second=int(b) * int(o) / latency, latency_seconds=latency)
    lines = dict(_VLLM_LINE.findall(text))
    if lines:
        tpot = lines.get("Median TPOT (ms)") or lines.get("Mean TPOT (ms)")
        ttft = lines.get("Median TTFT (ms)") or lines.get("Mean TTFT (ms)")
        rate = lines.get("Output token throughput (tok/s)")
        return ServingMeasurement(
            "vLLM benchmark_serving", _namespace_int(text, "max_concurrency"),
            _namespace_int(text, "random_input_len", "input_len"), _namespace_int(text, "random_output_len", "output_len"),
            time_per_output_token=None if tpot is None else float(tpot) / 1000,
            output_tokens_per_second=None if rate is None else float(rate),
            time_to_first_token=None if ttft is None else float(ttft) / 1000)
    latency = _LATENCY.findall(text)
    if latency:
        b = _namespace_int(text, "batch_size") or 8
        i, o = _namespace_int(text, "input_len") or 32, _namespace_int(text, "output_len") or 128
        seconds = float(latency[-1])
        return ServingMeasurement("vLLM benchmark_latency", b, i, o, output_tokens_per_second=b * o / seconds,
                                  latency_seconds=seconds)
    raise InputError("--serving-log", (text.strip().splitlines() or [""])[0][:60], f"a line of {FORMATS}")


def measured_cache(measurement: ServingMeasurement, context: float | None = None) -> float | None:
    """The cache length a measured decode step is compared at: ``context`` when given, else the run's
    input + output / 2 (the mean cache over its decode steps); None when neither is known."""
    m = measurement
    return context if context is not None else ((m.input_tokens or 0) + (m.output_tokens or 0) / 2 or None)


def fit_efficiency(arch, hw, tp: int, measurement: ServingMeasurement, context: int | None = None,
                   replicated_head: bool = False) -> float:
    """The serving efficiency that makes the model reproduce ``measurement``: modelled decode step over
    the measured one. A time per output token is compared with one step at ``context`` (default: the
    run's input + output / 2); an end-to-end rate (batch x output / run time) with ``serve.output_rate``:
    the measured run time less the modelled prefill, over output - 1 steps."""
    from .serve import decode_terms, prefill_seconds

    m = measurement
    batch = m.batch or 1
    if m.time_per_output_token is not None:
        context = measured_cache(m, context)
        if context is None:
            raise InputError("--context", None, "the cache length of the measured decode step (the log does not give it)")
        measured = m.time_per_output_token
    elif m.output_tokens_per_second is not None and m.output_tokens and m.input_tokens is not None:
        context = m.input_tokens + m.output_tokens / 2
        run = batch * m.output_tokens / m.output_tokens_per_second
        measured = (run - prefill_seconds(arch, hw, tp, batch, m.input_tokens)) / max(m.output_tokens - 1, 1)
    else:
        raise InputError("--serving-log", m.source, "a time per output token, or a rate with its input and output lengths")
    if not measured > 0:
        raise InputError("--serving-log", m.source, "a run longer than the modelled prefill (the measured decode time is not positive)")
    return decode_terms(arch, hw, tp, batch, context, replicated_head)["step"] / measured


def efficiency_from_options(arch, hw, tp: int, batch: int, context: int, decode_tokens_per_second: float | None = None,
                            time_per_output_token: float | None = None) -> float:
    """``fit_efficiency`` for calibrate's --decode-tokens-per-second (of the whole batch) or
    --time-per-output-token (seconds), measured at ``batch`` sequences and a cache of ``context`` tokens."""
    if (decode_tokens_per_second is None) == (time_per_output_token is None):
        raise InputError("--decode-tokens-per-second", decode_tokens_per_second, "exactly one of it and --time-per-output-token")
    value = time_per_output_token if decode_tokens_per_second is None else batch / decode_tokens_per_second
    if not value > 0:
        raise InputError("--time-per-output-token" if decode_tokens_per_second is None else "--decode-tokens-per-second",
                         time_per_output_token if decode_tokens_per_second is None else decode_tokens_per_second, "a positive number")
    return fit_efficiency(arch, hw, tp, ServingMeasurement("options", batch, time_per_output_token=value), context)


def serving_profile(efficiency: float, measurement: ServingMeasurement, gpu: str, tp: int, model: str) -> dict:
    """The ``serving`` section of a calibration profile: the efficiency and what it was fitted on."""
    fields = {k: getattr(measurement, k) for k in ("source", "batch", "input_tokens", "output_tokens",
                                                    "time_per_output_token", "output_tokens_per_second")}
    return {"efficiency": efficiency, "gpu": gpu, "tp": tp, "model": model, "measured": fields}


def row_prediction(row: dict, efficiency: float = 1.0) -> float:
    """The model's figure for one row of tests/data/published_serving.json (its metric, unit and run):
    output tokens/s of the batch (per GPU when the unit says so) or time to first token in seconds (plus
    one decode step where the engine streams its first token after it: ``ttft_includes_decode_step``)."""
    from ..arch.catalog import lookup
    from ..arch.hardware import accelerator
    from .serve import decode_terms, output_rate, prefill_seconds

    arch, hw = lookup(row["model"]).architecture, accelerator(row["accelerator"])
    tp, batch, prompt = row["tp"], row["batch"], row["input_tokens"]
    if row["metric"] == "time_to_first_token":  # LMDeploy streams its first token after one decode step (the row says)
        step = decode_terms(arch, hw, tp, batch, prompt)["step"] if row.get("ttft_includes_decode_step") else 0.0
        return prefill_seconds(arch, hw, tp, batch, prompt) + step
    rate = output_rate(arch, hw, tp, batch, prompt, row["output_tokens"], efficiency, bool(row.get("replicated_output_head")))
    return rate / tp if "per GPU" in row["unit"] else rate


def row_measurement(row: dict) -> ServingMeasurement:
    """A table row as the measurement calibration reads (the whole group's rate)."""
    rate = row["value"] * (row["tp"] if "per GPU" in row["unit"] else 1)
    return ServingMeasurement(row["engine"], row["batch"], row["input_tokens"], row["output_tokens"], output_tokens_per_second=rate)
