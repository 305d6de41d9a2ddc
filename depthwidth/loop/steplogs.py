"""Step times from a training log, as five projects print them (``depthwidth calibrate --log``). Pure:
text in, readings out; ``calibrate`` reads the file through ``userfile``.

Each format was read in its project's own source (search tool, stored copies; the commits named):

- Megatron-LM (NVIDIA/Megatron-LM, megatron/training/training.py, ``training_log``, at commit
  d98e8a64ddf34856e74b24714e3bedb2f5a39553): every ``--log-interval`` iterations one line
  `` [date time] iteration      N/  TOTAL | consumed samples: ... | elapsed time per iteration (ms): X | ...``,
  X the mean over the interval. It also logs the first iteration, "to document initialization
  overhead" (the source's comment): that line is the warm-up skipped.
- torchtitan (pytorch/torchtitan, torchtitan/components/metrics.py, ``MetricsProcessor.log``, at
  commit b5bcd76c66d0acb1a08b176d9639425bc55e0b2a): ``step: N  loss: ...  tps: T  tflops: ...  mfu: M%``
  with ANSI colour codes (torchtitan/tools/utils.py ``Color``: ESC[31m ... ESC[39m) around each
  field; T = tokens since the last log / (seconds x the non-data-parallel degree): tokens per second
  per GPU, a mean over ``log_freq`` steps. ``validate step:`` lines are evaluation, not read. The
  first logged step (step 1: compilation and warm-up) is skipped.
- nanoGPT (karpathy/nanoGPT, train.py at commit e2221318e607eb5ee0669d6b7641af25a2111545):
  ``iter N: loss L, time T ms, mfu M%``, T one iteration's wall time; the first 5 iterations print
  mfu -100.00% ("let the training loop settle a bit"): those are the warm-up skipped.
- Hugging Face Trainer (huggingface/transformers, src/transformers/trainer_utils.py ``speed_metrics``,
  read at commit c599e989ac5fdb9c641254bde826c04f2fc8ebcf): ``trainer_state.json``'s last
  ``log_history`` entry holds ``train_runtime`` (seconds) and ``train_steps_per_second`` (steps /
  runtime, rounded to 3 decimals), with the file's ``global_step``. Runtime / global_step is the
  step time; it averages the whole run, warm-up included (nothing to skip: a note says so).
- Composer / llm-foundry (mosaicml/composer, composer/callbacks/speed_monitor.py ``SpeedMonitor`` and
  composer/loggers/console_logger.py ``log_to_console``, at commit 6405188805a0054b4551ec49e4919c54c971d0e8):
  a ``[batch=N/TOTAL]:`` line, then one line per metric, ``\\t Train throughput/batches_per_sec: X``
  (floats as ``{:.4f}``, composer/loggers/logger.py ``format_log_data_value``), a rolling mean over
  ``window_size`` (100) batches; also ``throughput/tokens_per_sec`` (whole cluster). A batch is one
  optimizer step. The first reading (its window holds the first batches) is skipped.
"""
from __future__ import annotations

import json
import re

from ..core.errors import InputError
from ..core.frozen import frozen

ANSI = re.compile(r"\x1b\[[0-9;]*m")
MEGATRON = re.compile(r"iteration\s+(\d+)/\s*\d+\s*\|.*?elapsed time per iteration \(ms\):\s*([0-9.]+)")
TORCHTITAN = re.compile(r"(?<!validate )step:\s*(\d+)\s.*?tps:\s*([0-9,]+)")
NANOGPT = re.compile(r"iter (\d+): loss [-0-9.naninf]+, time ([0-9.]+)ms, mfu (-?[0-9.]+)%")
COMPOSER_BATCH = re.compile(r"\[batch=(\d+)(?:/\d+)?\]")
COMPOSER_RATE = re.compile(r"Train throughput/(batches_per_sec|tokens_per_sec):\s*([0-9.eE+-]+)")
FORMATS = ("megatron", "torchtitan", "nanogpt", "hf-trainer", "composer")


@frozen
class Readings:
    """What a log says: its format, each kept reading (``unit``: seconds per step, or tokens per
    second per GPU or for the cluster), how many readings were skipped as warm-up, the steps they
    cover, and a note on what was read."""

    format: str
    unit: str
    values: tuple
    skipped: int
    steps: int
    note: str


def read_log(text: str, source: str, warmup: int | None = None) -> Readings:
    """The readings of a log's text (the format found from its lines); ``warmup``: readings to skip
    at the start (None: the format's own warm-up). InputError when it holds no timing."""
    stripped = text.lstrip()
    if stripped.startswith("{"):
        return _trainer_state(stripped, source)
    plain = ANSI.sub("", text)
    for parse in (_megatron, _torchtitan, _nanogpt, _composer):
        found = parse(plain)
        if found:
            return _kept(*found, source, warmup)
    raise InputError("--log", source, "no step timing found: expected a Megatron-LM, torchtitan, nanoGPT or Composer log "
                                      "or a Hugging Face trainer_state.json (docs/performance.md, \"Calibration\")")


def _kept(fmt, unit, rows, own_warmup, note, source, warmup):
    """Readings after the warm-up: ``rows`` are (step counter, value), in order."""
    skip = own_warmup if warmup is None else warmup
    if len(rows) <= skip:
        raise InputError("--log", source, f"{len(rows)} {fmt} timing line(s), all warm-up (the first {skip} are skipped); "
                                          "log more steps or pass a smaller --warmup")
    kept = rows[skip:]
    start = rows[skip - 1][0] if skip else 0
    steps = kept[-1][0] - start if kept[-1][0] > start else len(kept)
    return Readings(fmt, unit, tuple(v for _, v in kept), skip, steps, note)


def _megatron(text):
    rows = [(int(m[1]), float(m[2]) / 1e3) for m in MEGATRON.finditer(text)]
    return rows and ("megatron", "seconds", rows, 1, "elapsed time per iteration, the mean over each --log-interval")


def _torchtitan(text):
    rows = [(int(m[1]), float(m[2].replace(",", ""))) for m in TORCHTITAN.finditer(text)]
    return rows and ("torchtitan", "tokens/s per GPU", rows, 1, "tps: tokens per second per GPU, the mean over each log_freq")


def _nanogpt(text):
    found = list(NANOGPT.finditer(text))
    rows = [(int(m[1]), float(m[2]) / 1e3) for m in found]
    settling = sum(1 for m in found[:5] if float(m[3]) == -100.0)  # train.py prints mfu -100% until it settles
    return rows and ("nanogpt", "seconds", rows, max(1, settling), "time per iteration")


def _composer(text):
    readings, batch, rates = [], 0, {}
    for line in text.splitlines() + ["[batch=0]"]:  # the sentinel closes the last reading
        marker = COMPOSER_BATCH.search(line)
        if marker:
            if rates.get("batches_per_sec", 0) > 0:
                readings.append((batch, "seconds", 1.0 / rates["batches_per_sec"]))
            elif rates.get("tokens_per_sec", 0) > 0:
                readings.append((batch, "tokens/s", rates["tokens_per_sec"]))
            batch, rates = int(marker[1]), {}
        rate = COMPOSER_RATE.search(line)
        if rate:
            rates[rate[1]] = float(rate[2])
    if not readings:
        return None
    unit = "seconds" if any(u == "seconds" for _, u, _ in readings) else "tokens/s"
    rows = [(b, v) for b, u, v in readings if u == unit]
    return ("composer", unit, rows, 1, "throughput/batches_per_sec (or tokens_per_sec), a rolling mean over its window")


def _trainer_state(text, source) -> Readings:
    """A Hugging Face trainer_state.json: the run's mean step time (module docstring)."""
    try:
        state = json.loads(text, parse_constant=_no_constant)
    except (ValueError, RecursionError) as err:
        raise InputError("--log", source, f"not valid JSON ({err}); expected a Hugging Face trainer_state.json") from None
    history = state.get("log_history") if isinstance(state, dict) else None
    summary = next((e for e in reversed(history or []) if isinstance(e, dict) and ("train_runtime" in e or "train_steps_per_second" in e)),
                   None)
    steps = state.get("global_step") if isinstance(state, dict) else None
    if summary is None:
        raise InputError("--log", source, "no step timing found: its log_history has no train_runtime or train_steps_per_second "
                                          "(the Trainer writes them when training ends)")
    runtime, rate = summary.get("train_runtime"), summary.get("train_steps_per_second")
    if _positive(runtime) and isinstance(steps, int) and steps > 0:
        seconds, note = runtime / steps, "train_runtime / global_step: the whole run's mean, warm-up included"
    elif _positive(rate):
        seconds, note = 1.0 / rate, "1 / train_steps_per_second (3 decimals): the whole run's mean, warm-up included"
    else:
        raise InputError("--log", source, "train_runtime and train_steps_per_second are missing or not positive numbers")
    return Readings("hf-trainer", "seconds", (seconds,), 0, steps if isinstance(steps, int) and steps > 0 else 1, note)


def _positive(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value < float("inf")


def _no_constant(token: str):
    raise ValueError(f"{token} is not allowed")
