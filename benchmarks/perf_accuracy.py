"""The performance model's error on the published-runs table (issue 41), by source, three ways.

    python benchmarks/perf_accuracy.py            # the tables docs/performance.md prints
    python benchmarks/perf_accuracy.py --rows     # and every row's error
    python benchmarks/perf_accuracy.py --profiles # the named stack profiles (depthwidth/loop/stack_profiles.py)
    python benchmarks/perf_accuracy.py --split    # each group's runs by recomputation setting

tests/data/published_runs.json holds measured training throughputs, each with its paper, table and
quote. A source here is one publication's software stack (``SOURCES``: the row's paper and its
``framework``), since the stack is what a calibration captures. Errors are predicted/measured - 1 of
tokens/s per GPU. Three tables:

- in sample: the model as shipped (``perf.STEP_EFFICIENCY``, the one constant set on this table);
- leave one source out: STEP_EFFICIENCY refitted on the other sources (their median error zero, as
  it was set) and that source predicted: the out-of-sample error;
- calibrated: one run of a source calibrated (the efficiency that reproduces its step, what
  ``depthwidth calibrate`` fits), every other run of that source predicted; every run in turn, so
  each source with n runs gives n (n - 1) predictions. And a stack profile: the median efficiency
  of a source's other runs, predicting the one left out (leave one run out, never fitted per row).

The efficiency divides the modelled compute; communication is not scaled, so a run's step is
a + b / efficiency in the layout held (``step_line``: the layout the search picks at the shipped
efficiency, timed at two efficiencies). tests/test_perf_accuracy.py holds the issue's bounds.
"""
from __future__ import annotations

import json
import math
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TABLE = ROOT / "tests" / "data" / "published_runs.json"
FIXED = ("tp", "pp", "cp", "micro_batch", "interleave", "recompute", "zero")
# a source: (the paper's first author as the row names it, the start of its framework), and its label
SOURCES = (
    (("Narayanan", "Megatron-LM 2021"), "Narayanan et al. 2021, Megatron-LM (Tables 1-2)"),
    (("Korthikanti", "Megatron-LM 2021"), "Korthikanti et al. 2022, Megatron-LM (Table 5)"),
    (("Narayanan", "DeepSpeed ZeRO-3"), "Narayanan et al. 2021, DeepSpeed ZeRO-3 (Table 2)"),
    (("Jiang", "Megatron-LM commit"), "Jiang et al. 2024 (MegaScale), Megatron-LM (Table 2)"),
    (("Llama Team", "Meta"), "Llama Team 2024, Meta 4D parallelism (Table 4)"),
    (("BigScience", "Megatron-DeepSpeed"), "BigScience 2022, Megatron-DeepSpeed (BLOOM)"),
    (("MosaicML", "llm-foundry"), "MosaicML 2023, llm-foundry FSDP (benchmark README)"),
    (("PyTorch team, torchtitan", "torchtitan"), "torchtitan 2024, FSDP2 (docs/performance.md)"),
)

# the named profiles `--profile NAME` ships (depthwidth/loop/stack_profiles.py): a software stack, the
# start of the rows' ``framework``; fitted per accelerator on the stack's runs (two or more, to be tested)
STACKS = {
    "megatron-lm-2021": "Megatron-LM 2021-2022",
    "megascale-megatron-2023": "Megatron-LM commit 285068c8",
    "deepspeed-zero3-2021": "DeepSpeed ZeRO-3",
    "llm-foundry-2023": "llm-foundry",
    "meta-4d-2024": "Meta's 4D",
    "torchtitan-2024": "torchtitan",
}

def source(row) -> str:
    """The label of a row's source (``SOURCES``)."""
    for (author, framework), label in SOURCES:
        if row["source"].startswith(author) and row["framework"].startswith(framework):
            return label
    raise ValueError(f"{row['id']}: no source in SOURCES")


def measured_step(row) -> float:
    """The measured seconds of one step of the row's global batch."""
    return row["global_batch"] * row["seq_len"] / (row["tokens_per_second_per_gpu"] * row["gpus"])


def _arch(row):
    from depthwidth.arch.blocks import Architecture

    return Architecture(row["layers"], row["hidden"], row["heads"], row["kv_heads"], row["hidden"] // row["heads"],
                        row["ffn"], row["gated"], vocab=row["vocab"], tied=row["tied"],
                        family="vanilla" if row["dropout"] else "published")


def _step(row, fixed, efficiency):
    """(step seconds, layout) of the row's run with these layout fields fixed (the rest searched)."""
    from depthwidth.arch.hardware import accelerator
    from depthwidth.cost.perf.layout import search
    from depthwidth.cost.perf.step import recompute_options

    layout, rates, _, _, _ = search(_arch(row), accelerator(row["gpu"]), row["gpus"], row["seq_len"], row["global_batch"],
                                    fixed, row["attention"], row["overlap"], math.inf, count=False,
                                    sequence_parallel=row["sequence_parallel"], dropout=row["dropout"], efficiency=efficiency,
                                    **recompute_options(row["recompute"]))
    return rates["step_seconds"], layout


def step_line(row) -> tuple[float, float]:
    """(a, b): the row's predicted step is a + b / efficiency, in the layout the search picks for it (the
    published fields fixed) at the shipped efficiency."""
    from depthwidth.cost.perf.step import STEP_EFFICIENCY

    fixed = {k: row[k] for k in FIXED if row.get(k) is not None}
    at_shipped, layout = _step(row, fixed, STEP_EFFICIENCY)
    held = {k: layout[k] for k in FIXED if k in layout}
    held["interleave"] = layout.get("interleave", fixed.get("interleave"))
    held = {k: v for k, v in held.items() if v is not None}
    at_half, _ = _step(row, dict(fixed, **held), STEP_EFFICIENCY / 2)
    b = (at_half - at_shipped) / (2 / STEP_EFFICIENCY - 1 / STEP_EFFICIENCY)
    return at_shipped - b / STEP_EFFICIENCY, b


def error(line, row, efficiency) -> float:
    """predicted/measured - 1 of tokens/s per GPU (the inverse of the steps' ratio)."""
    a, b = line
    return measured_step(row) / (a + b / efficiency) - 1


def summary(errors) -> dict:
    """n, median |error| and 90th percentile |error| (linear between order statistics), max |error|."""
    from depthwidth.cost.perf.calibration import percentile

    e = [abs(x) for x in errors]
    return {"n": len(e), "median": statistics.median(e), "p90": percentile(e, 0.9), "max": max(e)}


def fitted_efficiency(pairs) -> float:
    """The efficiency at which the median signed log error of ``pairs`` ((line, row), ...) is zero: how
    STEP_EFFICIENCY was set on the whole table. Bisection; the error grows with the efficiency."""
    lo, hi = 0.2, 3.0
    for _ in range(60):
        mid = math.sqrt(lo * hi)
        if statistics.median(math.log1p(error(line, row, mid)) for line, row in pairs) > 0:
            hi = mid
        else:
            lo = mid
    return math.sqrt(lo * hi)


def calibrated_efficiency(line, row) -> float:
    """The efficiency that reproduces the row's measured step (``depthwidth calibrate``'s fit)."""
    a, b = line
    return b / (measured_step(row) - a)


def one_run_errors(group) -> list[float]:
    """Each run of ``group`` ((line, row), ...) calibrated in turn and every other run predicted at its efficiency:
    n (n - 1) errors (what the calibrated table summarises)."""
    effs = [calibrated_efficiency(l, r) for l, r in group]
    return [error(l, r, e) for i, e in enumerate(effs) for j, (l, r) in enumerate(group) if i != j]


def recomputation_split(rows, lines=None) -> dict:
    """{(source, accelerator): {recompute: {"errors": out-of-box errors, "calibrated": summary of ``one_run_errors``
    within the runs of that setting, or None for one run}}} for the groups whose runs differ in recomputation: how
    much of a group's calibrated error lies between its settings (docs/performance.md, "Measured error on published
    runs"); runs whose setting the table does not give are left out."""
    from depthwidth.cost.perf.step import STEP_EFFICIENCY

    lines = lines or [step_line(r) for r in rows]
    groups = {}
    for line, row in zip(lines, rows):
        if row["recompute"] is not None:  # a setting the paper does not give is no setting to split by
            groups.setdefault((source(row), row["gpu"]), {}).setdefault(row["recompute"], []).append((line, row))
    return {key: {setting: {"errors": [error(l, r, STEP_EFFICIENCY) for l, r in runs],
                            "calibrated": summary(one_run_errors(runs)) if len(runs) > 1 else None}
                  for setting, runs in settings.items()}
            for key, settings in groups.items() if len(settings) > 1}


def report(rows) -> dict:
    """Every table of the module docstring: {label: summary} per way, with "all" over every row. The
    calibrated ways group a source's runs by accelerator too: a profile holds for the accelerator it
    was measured on (``loop/profiles.py``)."""
    from depthwidth.cost.perf.step import STEP_EFFICIENCY

    lines = [step_line(r) for r in rows]
    labels = [source(r) for r in rows]
    out = {"in_sample": {}, "leave_source_out": {}, "calibrated_one_run": {}, "stack_profile": {}, "efficiency": {},
           "profiles": {}}
    loso_all, ins_all, one_all, prof_all = [], [], [], []
    for name in dict.fromkeys(labels):
        inside = [(l, r) for l, r, s in zip(lines, rows, labels) if s == name]
        others = [(l, r) for l, r, s in zip(lines, rows, labels) if s != name]
        ins = [error(l, r, STEP_EFFICIENCY) for l, r in inside]
        eff = fitted_efficiency(others)
        loso = [error(l, r, eff) for l, r in inside]
        out["in_sample"][name], out["leave_source_out"][name] = summary(ins), summary(loso)
        out["efficiency"][name] = eff
        ins_all += ins
        loso_all += loso
        for gpu in dict.fromkeys(r["gpu"] for _, r in inside):
            group = [(l, r) for l, r in inside if r["gpu"] == gpu]
            effs = [calibrated_efficiency(l, r) for l, r in group]
            out["profiles"][name, gpu] = {"efficiency": statistics.median(effs), "runs": len(group)}
            if len(group) > 1:
                one = one_run_errors(group)
                prof = [error(l, r, statistics.median(effs[:j] + effs[j + 1:])) for j, (l, r) in enumerate(group)]
                out["calibrated_one_run"][name, gpu], out["stack_profile"][name, gpu] = summary(one), summary(prof)
                out["profiles"][name, gpu]["leave_one_out"] = summary(prof)
                one_all += one
                prof_all += prof
    for key, errors in (("in_sample", ins_all), ("leave_source_out", loso_all), ("calibrated_one_run", one_all),
                        ("stack_profile", prof_all)):
        out[key]["all"] = summary(errors)
    out["efficiency"]["all"] = fitted_efficiency(list(zip(lines, rows)))
    out["rows"] = [(r["id"], name, error(l, r, STEP_EFFICIENCY)) for l, r, name in zip(lines, rows, labels)]
    return out


def stack_profiles(rows, lines=None) -> dict:
    """{(stack name, accelerator): {"efficiency", "runs", "ids", "leave_one_out": summary}}: a named
    profile's efficiency is the median of the efficiencies calibrated on each of its stack's runs on that
    accelerator; its error, each run predicted at the median of the others' (leave one run out)."""
    lines = lines or [step_line(r) for r in rows]
    out = {}
    for name, framework in STACKS.items():
        for gpu in dict.fromkeys(r["gpu"] for r in rows):
            group = [(l, r) for l, r in zip(lines, rows) if r["framework"].startswith(framework) and r["gpu"] == gpu]
            if len(group) < 2:
                continue
            effs = [calibrated_efficiency(l, r) for l, r in group]
            loo = [error(l, r, statistics.median(effs[:j] + effs[j + 1:])) for j, (l, r) in enumerate(group)]
            out[name, gpu] = {"efficiency": statistics.median(effs), "runs": len(group), "ids": [r["id"] for _, r in group],
                              "leave_one_out": summary(loo)}
    return out

def markdown(out) -> str:
    """The two error tables docs/performance.md shows: out of the box (in sample and leave one source out)
    and calibrated (by source and accelerator)."""
    pct = lambda x: f"{100 * x:.1f}%"  # noqa: E731
    lines = ["| source | runs | in sample: median | p90 | leave source out: median | p90 | efficiency fitted without it |",
             "| " + " | ".join(["---"] * 7) + " |"]
    for name, i in out["in_sample"].items():
        o = out["leave_source_out"][name]
        lines.append(f"| {name} | {i['n']} | {pct(i['median'])} | {pct(i['p90'])} | {pct(o['median'])} | {pct(o['p90'])} | "
                     f"{out['efficiency'][name]:.3f} |")
    lines += ["", "| source | accelerator | runs | one run calibrated: predictions | median | max | "
                  "stack profile, leave one run out: median | max |", "| " + " | ".join(["---"] * 8) + " |"]
    for key, c in out["calibrated_one_run"].items():
        p = out["stack_profile"][key]
        name, gpu = key if key != "all" else ("all", "")
        runs = p["n"]
        lines.append(f"| {name} | {gpu} | {runs} | {c['n']} | {pct(c['median'])} | {pct(c['max'])} | {pct(p['median'])} | "
                     f"{pct(p['max'])} |")
    return "\n".join(lines)


def main(argv) -> None:
    rows = json.loads(TABLE.read_text())
    out = report(rows)
    if "--profiles" in argv:
        for (name, gpu), p in stack_profiles(rows).items():
            loo = p["leave_one_out"]
            print(f"{name:26} {gpu:10} efficiency {p['efficiency']:.3f} runs {p['runs']:2} "
                  f"leave one out median {loo['median']:.1%} max {loo['max']:.1%}")
    if "--split" in argv:
        for (name, gpu), settings in recomputation_split(rows).items():
            for setting, part in settings.items():
                within = f"calibrated within: max {part['calibrated']['max']:.1%}" if part["calibrated"] else ""
                print(f"{name} {gpu} recompute {setting}: {' '.join(f'{e:+.1%}' for e in part['errors'])} {within}")
    if "--rows" in argv:
        for rid, name, e in out["rows"]:
            print(f"{rid:48} {e:+7.1%}  {name}")
    print(markdown(out))


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main(sys.argv[1:])
