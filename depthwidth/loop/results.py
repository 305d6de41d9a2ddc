"""Training results in, runs out: what ``depthwidth fit`` reads.

Sources (every file through the one bounded reader, ``userfile``):
- a CSV with columns depth, width, loss and a size (``params``; or the sweep's own columns: the
  count its ``budget_count`` names, ``params_nonembedding``, ``budget``; or flops / flops_per_token
  and tokens with ``group_by="flops"``); ``loss_column`` renames the loss column;
- JSON (a list of records, the sweep's ``--format json`` output with ``loss`` filled in, or an
  object with a ``rows``/``runs`` list) and JSONL (one record a line), validated by
  ``rules.filemodels.ResultRecord``;
- a results file without shapes (a W&B CSV export: one run a row, its name in ``id_column``, its
  loss in ``loss_column``) joined by id to the sweep (``sweep``: the sweep's JSON/CSV/JSONL or an
  export's manifest.json);
- a directory of runs (``runs_dir``): one folder per sweep row, named by its id, each holding the
  Hugging Face Trainer's ``trainer_state.json`` (in the folder or its newest ``checkpoint-*``
  folder); the loss is the last (``metric="last"``) or lowest (``"best"``) ``eval_loss`` of its
  ``log_history``. The sweep comes from ``sweep`` or the directory's ``manifest.json``.
A run whose log is missing or bad is one line naming the run and the file.

Runs of a sweep carry their budget, which becomes their size group (a row flagged off the budget
still belongs to its budget's group).
"""
from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import os

from ..core.errors import InputError
from ..advice.rules.file import Source
from ..core.frozen import frozen

ACCEPTED = ("a CSV, JSON or JSONL results file with depth, width, loss and a size (params, the sweep's "
            "params_nonembedding or budget; flops with --group-by flops), or a sweep joined by id")
TRAINER_STATE = "trainer_state.json"
MANIFEST = "manifest.json"
METRICS = ("last", "best")


@frozen
class Run:
    """One training run (``row``: 1 = the first run of the file)."""

    row: int
    depth: float
    width: float
    size: float
    loss: float
    group: str | None = None
    id: str | None = None
    heads: int | None = None  # the sweep's attention layout, when the file carries it (heads, kv_heads, head_dim)
    kv_heads: int | None = None
    head_dim: int | None = None


def size_keys(group_by: str, record: dict) -> tuple[tuple[str, ...], ...]:
    """The key sets that give a run's size, in order of preference."""
    if group_by == "params":
        counted = record.get("budget_count")
        named = ((counted,),) if isinstance(counted, str) and counted.startswith("params") else ()
        return (("params",), *named, ("params_nonembedding",), ("budget",))
    if group_by == "flops":
        return (("flops",), ("flops_per_token", "tokens"))
    raise InputError("--group-by", group_by, "expected params or flops")


# ---- reading files -----------------------------------------------------------------------------------

def read(path: str, what: str = "results file", stdin=None) -> tuple[str, str]:
    from ..core.userfile import read_text

    text, digest = read_text(path, what, ACCEPTED if what == "results file" else "a sweep's JSON, JSONL or CSV", stdin=stdin)
    if "\x00" in text:
        raise InputError(what, path, "binary data; expected " + ACCEPTED)
    return text, digest


def records_of(text: str, source: str, what: str = "results file") -> list[dict]:
    """The records of a results or sweep file: JSON list / object with rows or runs, JSONL, or CSV."""
    stripped = text.lstrip()
    if not stripped:
        raise InputError(what, source, "empty; expected " + ACCEPTED)
    if stripped[0] in "[{":
        try:
            data = json.loads(text, parse_constant=_reject)
            records = data if isinstance(data, list) else _listed(data, source, what)
        except (ValueError, RecursionError):  # RecursionError: absurd nesting ('[' x 10^5)
            try:  # JSONL: one object a line
                records = [json.loads(line, parse_constant=_reject) for line in text.splitlines() if line.strip()]
            except RecursionError:
                raise InputError(what, source, "not valid JSON or JSONL (nested too deeply)") from None
            except ValueError as err:
                raise InputError(what, source, f"not valid JSON or JSONL ({err})") from None
        if not all(isinstance(r, dict) for r in records):
            raise InputError(what, source, "expected JSON objects, one per run")
        return records
    try:  # newline=None: CR-only (old Mac) and CRLF line endings read as LF
        rows = list(csv.reader(io.StringIO(text, newline=None)))
    except csv.Error as err:  # a cell over csv's field_size_limit (131,072 characters), a stray quote
        raise InputError(what, source, f"not valid CSV ({err}); expected {ACCEPTED}") from None
    header = next((r for r in rows if any(c.strip() for c in r)), None)
    if header is None:
        raise InputError(what, source, "empty; expected " + ACCEPTED)
    names = [h.strip() for h in header]
    body = rows[rows.index(header) + 1:]
    return [{n: (cells[i].strip() if i < len(cells) else "") for i, n in enumerate(names) if n}
            for cells in body if any(c.strip() for c in cells)]


def _listed(data: dict, source: str, what: str) -> list:
    for key in ("rows", "runs"):
        if isinstance(data.get(key), list):
            return data[key]
    raise InputError(what, source, "a JSON object without a 'rows' or 'runs' list; expected one record per run")


def _reject(token: str):
    raise ValueError(f"{token} is not allowed")


def _lower(record: dict) -> dict:
    return {str(k).strip().lower(): v for k, v in record.items()}


def _number(value, key: str, where: str, positive: bool = True) -> float:
    if isinstance(value, bool) or value is None or value == "":
        raise InputError(key, "" if value is None else value, f"{where}: expected a number")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise InputError("cell", value, f"{where}, column '{key}': expected a number") from None
    if not math.isfinite(number):
        raise InputError(key, value, f"{where}: expected a finite number"
                         + (" (a diverged run has no usable loss: delete its row)" if key == "loss" else ""))
    if positive and number <= 0:
        raise InputError(key, value, f"{where}: expected a positive number")
    if key == "depth" and number < 1:
        raise InputError(key, value, f"{where}: expected a depth of at least 1 layer")
    return number


def _whole_or_none(value) -> int | None:
    """An optional layout column (heads, kv_heads, head_dim): a whole number >= 1, else None (not held)."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return int(number) if math.isfinite(number) and number >= 1 and number.is_integer() else None


def to_runs(records: list[dict], source: str, group_by: str = "params", loss_column: str = "loss") -> tuple[Run, ...]:
    """Runs from records (validated by ``rules.filemodels.ResultRecord`` after the number checks here)."""
    from pydantic import ValidationError

    from ..advice.rules.filemodels import ResultRecord

    if not records:
        raise InputError("results file", source, "has no runs; expected one record per training run")
    records = [_lower(r) for r in records]
    loss_key = loss_column.strip().lower()
    first = records[0]
    missing = [k for k in ("depth", "width", loss_key) if k not in first]
    choices = size_keys(group_by, first)
    size_names = next((names for names in choices if all(n in first for n in names)), None)
    if size_names is None:
        missing.append(" or ".join(" and ".join(names) for names in choices))
    if missing:
        raise InputError("results file", source, f"missing columns: {', '.join(missing)}; expected {ACCEPTED}")
    if not any(r.get(loss_key) not in (None, "") for r in records):
        raise InputError(f"{loss_column} column", source, "every loss is empty: fill in each run's final loss "
                         "(validation loss, one number per run), then run fit again")
    has_group = "group" in first
    runs = []
    for number, record in enumerate(records, start=1):
        where = f"run {number} ({record.get('id') or 'no id'}) of {source}"
        if record.get(loss_key) in (None, ""):
            raise InputError("loss", "", f"{where} has no loss: fill in every run's loss, or delete the runs that were "
                             "not trained")
        values = {k: _number(record.get(k), k, where) for k in ("depth", "width", *size_names)}
        loss = _number(record.get(loss_key), "loss", where, positive=False)
        if loss < 0:  # never passed silently
            raise InputError("loss", record.get(loss_key), f"{where}: a cross-entropy loss is never negative")
        if group_by == "params" and values[size_names[0]] < values["depth"] * values["width"] ** 2:
            raise InputError(size_names[0], record.get(size_names[0]), f"{where}: a {values['depth']:g}x{values['width']:g} "
                             f"network has more than L·d² = {values['depth'] * values['width'] ** 2:.3g} weights (its "
                             "attention's query and output projections alone are 2·L·d²); give whole parameter counts, "
                             "not millions or billions")
        try:
            ResultRecord.model_validate({"id": None if record.get("id") is None else str(record["id"]),
                                         "depth": values["depth"], "width": values["width"], "loss": loss})
        except ValidationError as err:
            raise InputError("results file", source, f"{where}: {err.errors()[0]['msg']}") from None
        group = None
        if has_group:
            group = str(record.get("group") or "").strip()
            if not group:
                raise InputError("group", "", f"{where}: the file has a group column, so every run needs a group label")
        elif "budget" in record and record["budget"] not in (None, ""):
            group = f"{_number(record['budget'], 'budget', where):.6g}"
        runs.append(Run(number, values["depth"], values["width"], math.prod(values[n] for n in size_names), loss, group,
                        None if record.get("id") in (None, "") else str(record["id"]),
                        *(_whole_or_none(record.get(k)) for k in ("heads", "kv_heads", "head_dim"))))
    _one_scale([r.loss for r in runs], source)
    if len({r.group is None for r in runs}) > 1:
        raise InputError("results file", source, "some runs carry a budget or group and others do not; give every run one")
    return tuple(runs)


PERPLEXITY_LOW = 5.0  # a loss of 5 nats is perplexity 148: values above a 1.5x jump past this read as perplexities


def _one_scale(losses: list[float], source: str) -> None:
    """Refuse losses on two scales (perplexities mixed with losses passed silently). A
    perplexity is exp(loss), so a mix has a jump of at least 1.5x between neighbouring values, with
    every value above it at or above exp(the smallest) and PERPLEXITY_LOW; one sweep's losses rise
    smoothly. A heuristic: perplexities alone, or below PERPLEXITY_LOW, are not caught."""
    ordered = sorted(losses)
    if len(ordered) < 2 or ordered[0] <= 0 or ordered[-1] < math.exp(ordered[0]):
        return
    jump, at = max((b / a, i) for i, (a, b) in enumerate(zip(ordered, ordered[1:])))
    if jump >= 1.5 and ordered[at + 1] >= max(PERPLEXITY_LOW, math.exp(ordered[0])):
        raise InputError("results file", source, f"its losses jump from {ordered[at]:.4g} to {ordered[at + 1]:.4g} "
                         f"and reach {ordered[-1]:.4g} >= exp({ordered[0]:.4g}): perplexities mixed with losses? "
                         "give every run's loss (the cross-entropy, ln of the perplexity)")


# ---- the three ways in -------------------------------------------------------------------------------

def load_runs(path: str | None = None, *, runs_dir: str | None = None, sweep: str | None = None,
              group_by: str = "params", loss_column: str = "loss", id_column: str = "id", metric: str = "last",
              stdin=None) -> tuple[tuple[Run, ...], Source, tuple[Source, ...]]:
    """(runs, the main source, every source read) from a results file, a results file joined to a
    sweep, or a directory of Trainer runs (see the module docstring)."""
    if (path is None) == (runs_dir is None):
        raise InputError("results", path or runs_dir or "(none)", "give a results file or a runs directory, not both")
    if metric not in METRICS:
        raise InputError("--metric", metric, "expected last (the final eval_loss) or best (the lowest)")
    if runs_dir is not None:
        return from_runs_dir(runs_dir, sweep, group_by, metric)
    text, digest = read(path, stdin=stdin)
    shown = "standard input" if path == "-" else path
    main = Source("stdin" if path == "-" else os.path.basename(path), digest)
    records = records_of(text, shown)
    if sweep is None:
        return to_runs(records, shown, group_by, loss_column), main, (main,)
    rows, sweep_source = sweep_rows(sweep)
    losses = losses_by_id(records, shown, id_column, loss_column)
    joined = []
    for row in rows:
        if row["id"] not in losses:
            raise InputError("run", row["id"], f"has no loss in {shown} (column {id_column!r}); train it, or delete its "
                             f"row from the sweep {sweep}")
        joined.append({**row, "loss": losses[row["id"]]})
    extra = sorted(set(losses) - {r["id"] for r in rows})
    if extra:
        raise InputError("run", extra[0], f"in {shown} is not a row of the sweep {sweep}; check --id-column")
    return to_runs(joined, shown, group_by), main, (main, sweep_source)


def losses_by_id(records: list[dict], source: str, id_column: str, loss_column: str) -> dict[str, object]:
    """{run id: loss cell} of a results file without shapes (a W&B export: Name, a loss column)."""
    id_key, loss_key = id_column.strip(), loss_column.strip()
    if records and (id_key not in records[0] or loss_key not in records[0]):
        have = ", ".join(map(str, list(records[0])[:12]))
        raise InputError("results file", source, f"needs columns {id_column!r} (run ids) and {loss_column!r} (losses) "
                         f"to join it to the sweep; it has {have}")
    out: dict[str, object] = {}
    for record in records:
        run_id = str(record[id_key]).strip()
        if run_id in out:
            raise InputError("run", run_id, f"appears twice in {source}")
        out[run_id] = record[loss_key]
    return out


def sweep_rows(path: str) -> tuple[list[dict], Source]:
    """The rows of a sweep (its JSON/JSONL/CSV output, or an export's manifest.json), each with an id."""
    text, digest = read(path, "sweep file")
    rows = [_lower(r) for r in records_of(text, path, "sweep file")]
    if not rows or any(not str(r.get("id") or "").strip() for r in rows):
        raise InputError("sweep file", path, "expected the rows of `depthwidth sweep` (JSON, JSONL or CSV), each with an id")
    for row in rows:
        row["id"] = str(row["id"]).strip()
    return rows, Source(os.path.basename(path), digest)


def trainer_state_path(run_folder: str) -> str | None:
    """The run's trainer_state.json: in the folder, else in its newest checkpoint-N folder."""
    direct = os.path.join(run_folder, TRAINER_STATE)
    if os.path.isfile(direct):
        return direct
    steps = []
    if os.path.isdir(run_folder):
        for name in os.listdir(run_folder):
            step = name.removeprefix("checkpoint-")
            if name.startswith("checkpoint-") and step.isdigit() and os.path.isfile(os.path.join(run_folder, name, TRAINER_STATE)):
                steps.append((int(step), name))
    return os.path.join(run_folder, max(steps)[1], TRAINER_STATE) if steps else None


def eval_loss(state_text: str, run_id: str, path: str, metric: str = "last") -> float:
    """The last or lowest ``eval_loss`` of a trainer_state.json's log_history (validated by
    ``hf.files.TrainerState``: a NaN is refused where fit reads a number, kept elsewhere, e.g. a
    ``grad_norm`` of an overflowing fp16 step)."""
    from ..hf.files import check_trainer_state

    try:
        state = json.loads(state_text)
    except (ValueError, RecursionError) as err:
        raise InputError("run", run_id, f"{path} is not valid JSON ({err})") from None
    values = [entry.eval_loss for entry in check_trainer_state(state, run_id, path).log_history if entry.eval_loss is not None]
    if not values:
        raise InputError("run", run_id, f"{path} has no finite eval_loss in log_history (was evaluation switched on?)")
    return values[-1] if metric == "last" else min(values)


def from_runs_dir(runs_dir: str, sweep: str | None, group_by: str, metric: str):
    """Runs from a directory of Trainer runs joined to the sweep (``sweep`` or DIR/manifest.json)."""
    from ..core.userfile import read_text

    if not os.path.isdir(runs_dir):
        raise InputError("--runs", runs_dir, "expected a directory with one folder per run (named by the sweep's ids)")
    sweep = sweep or os.path.join(runs_dir, MANIFEST)
    if not os.path.isfile(sweep):
        raise InputError("--runs", runs_dir, f"no {MANIFEST} in it: give the sweep file (--sweep SWEEP.json) to join the "
                                             "runs to their shapes")
    rows, sweep_source = sweep_rows(sweep)
    sources, joined = [sweep_source], []
    for row in rows:
        folder = os.path.join(runs_dir, row["id"])
        path = trainer_state_path(folder)
        if path is None:
            raise InputError("run", row["id"], f"no {TRAINER_STATE} in {folder} (nor in a checkpoint-* folder inside it)")
        text, digest = read_text(path, "trainer state", "a Hugging Face Trainer's trainer_state.json")
        joined.append({**row, "loss": eval_loss(text, row["id"], path, metric)})
        sources.append(Source(os.path.relpath(path, runs_dir), digest))
    combined = hashlib.sha256("".join(s.sha256 for s in sources).encode()).hexdigest()
    main = Source(os.path.basename(os.path.normpath(runs_dir)), combined)
    return to_runs(joined, runs_dir, group_by), main, tuple(sources)
