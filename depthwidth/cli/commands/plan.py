"""`depthwidth plan`: minimal and recommended depth and width for a budget, with the costs of the run."""
from typing import Optional

from ...arch.blocks import DEFAULT_CONTEXT
from ...arch.hardware import DEFAULT_MULTIPLE
from ...core.errors import InputError
from ..inputs import as_typed, plan_options
from ..notices import WARN_EACH, warn
from ..options import (BLOCK, LAYOUT, PlotTo, Arch, Batch, BlockOptions, Brief, C2Reading, Context, Count, CountOf, Days, Explain,
                       FfnMultiple, Field, Fmt, Format, KvHeads, LayoutOptions, LossTolerance, Multiple, Params, PlanFlops, Prefer,
                       Reading, Rule, RuleFile, RuleTable, ShowAll, Tokens, Tp)

BRIEF_HINT = 1000  # more budgets than this without --brief: a warning points to it


def command(
    params: Params = None,
    flops: PlanFlops = None,
    tokens: Tokens = None,
    arch: Arch = "vanilla",
    kv_heads: KvHeads = None,
    block: BlockOptions = BLOCK,
    count: CountOf = Count.total,
    multiple: Multiple = DEFAULT_MULTIPLE,
    ffn_multiple: FfnMultiple = None,
    tp: Tp = 1,
    rule: Rule = "consensus",
    prefer: Prefer = "balanced",
    loss_tolerance: LossTolerance = None,
    rules: RuleTable = False,
    brief: Brief = False,
    rule_file: RuleFile = None,
    explain: Explain = False,
    all_: ShowAll = False,
    plot: PlotTo = None,
    layout: LayoutOptions = LAYOUT,
    days: Days = None,
    context: Context = DEFAULT_CONTEXT,
    batch: Batch = 1,
    c2_reading: Reading = C2Reading.consistent,
    format: Fmt = Format.table,
    field: Field = None,
) -> None:
    """Minimal and recommended depth and width for a parameter budget, as shapes you can shard, with what each costs to train and serve.

    Example: depthwidth plan --params 7e9 --tokens 2e12 --arch llama --tp 8 --gpus 512
    """
    from ...output import emit
    from ..training import budgets_with_tokens

    _check_modes(brief, rules, rule, rule_file, prefer, tokens if (params or flops) else None, layout)
    fixed = _fixed(layout, tp)
    _check_days(days, params, flops, tokens, brief, rules)
    given = None if days is not None and not params else budgets_with_tokens(params, flops, tokens)
    options = plan_options(arch, kv_heads, block, count, multiple, ffn_multiple, tp, rule, rule_file, context, c2_reading.value)
    options = _with_run(options, prefer, loss_tolerance, layout, tp, context, batch, fixed)
    if (days is not None and not params) or (flops and not tokens):
        given = _sized(days, flops, tokens, options)
    if plot is not None:  # checked before any work: a bad path or no matplotlib fails at once
        _check_plot(plot)
    if brief:
        with as_typed(given.values):
            return _brief(given.values, options, given.source, format.value, field)
    if len(given.values) > BRIEF_HINT:
        warn(f"{len(given.values):,} budgets planned one at a time (tens of ms each: every candidate's layouts are searched; docs/speed.md); "
             "--brief gives the threshold rule's answer for all of them at once")
    if rules:
        return _rule_shapes(given, options, format.value, field)
    plans = _plans(given, options, days, params)
    _warn_plans(plans, multiple, field)
    if plot is not None:
        _draw(plans, plot)
    emit(plans, format.value, field, lambda records: _tables(records, all_, explain))


def _check_modes(brief: bool, rules: bool, rule: str, rule_file, prefer: str, tokens, layout) -> None:
    """--rules and --brief exclude each other; a warning names what either leaves unused."""
    if rules and brief:
        raise InputError("options", "--rules --brief", "expected one of them: --rules shows every rule's shape, "
                                                       "--brief only the threshold rule's")
    _ignored(brief, rules, rule, rule_file, prefer, tokens, layout)


def _fixed(layout, tp: int) -> tuple:
    """The layout fields the command line fixes; the degree every shape must shard by is the one it
    trains at (as sweep fixes it)."""
    from ..training import fixed_layout

    fixed = fixed_layout(layout)
    return (("tp", tp), *fixed) if tp > 1 else fixed


def _check_days(days, params, flops, tokens, brief: bool, rules: bool) -> None:
    """--days sizes the model alone, or with --params answers the tokens that fit (a full plan)."""
    if days is not None and (flops or (params and tokens)):
        raise InputError("--days", days, "with --params answers the tokens that fit (give no --tokens); alone it sizes the "
                                         "model (with --gpus, --gpu and optionally --tokens); never with --flops")
    if days is not None and params and (brief or rules):
        raise InputError("--days", days, "with --params needs the full plan (its step time); --brief and --rules give "
                                         "shapes without a run")


def _with_run(options, prefer: str, loss_tolerance, layout, tp: int, context: int, batch: int, fixed: tuple):
    """The plan options with the pick's preference and tolerance and the run the performance model searches."""
    from dataclasses import replace

    from ...advice.evidence import PREFERENCES
    from ..training import searched_run

    choice = prefer.strip().lower()
    if choice not in PREFERENCES:
        raise InputError("--prefer", prefer, "expected one of " + ", ".join(PREFERENCES))
    spec = searched_run(layout, tp, context, batch)
    return replace(options, prefer=choice, loss_tolerance=_tolerance(loss_tolerance), run=spec, perf=layout.mfu is None, fixed=fixed)


def _check_plot(plot: str) -> None:
    """matplotlib importable and --plot a writable .png or .svg path."""
    from ...output.plot import check_output_path, require_matplotlib

    require_matplotlib()
    check_output_path(plot)


def _rule_shapes(given, options, fmt: str, field) -> None:
    """`plan --rules`: every rule's shape for each budget, side by side."""
    from ...advice.rules.table import rule_shapes
    from ...output import emit
    from ...output.plan_tables import plan_rules_tables

    left_out: list[str] = []
    with as_typed(given.values):
        rows = [row for b in given.values for row in rule_shapes(b, options, left_out)]
    for line in left_out[:WARN_EACH]:
        warn(line)
    return emit(rows, fmt, field, plan_rules_tables)


def _plans(given, options, days, params) -> list:
    """One plan per budget; with --days and --params, at the tokens that fit in that time on the
    cluster, by the plan's own step time."""
    from ...advice.planner import plan as make_plan
    from ..progress import counted

    with as_typed(given.values):
        if days is not None and params:
            return [_fitted(b, _days_value(days), options) for b in counted(given.values, "plan: budgets")]
        return [make_plan(b, options, given.source, t) for b, t in counted(list(zip(given.values, given.tokens)), "plan: budgets")]


def _warn_plans(plans, multiple: int, field) -> None:
    """The plans' warnings on stderr, those --field asks about, at most WARN_EACH (every one stays in
    its record's warnings); a multiple above the ideal width is not ignored: the width jumps to it,
    far off budget."""
    from ...core.messages import Message

    lines = []
    for p in plans:
        t = p.threshold
        if multiple > t.width_exact:
            lines.append(Message("multiple-above-width", f"--multiple {multiple:,} is larger than the ideal width "
                                 f"{t.width_exact:,.0f} for {p.budget.value:.3g} parameters: the width is rounded up to "
                                 f"{t.width:,}, {t.budget_deviation + 1:.3g}x the budget", shape="threshold", multiple=multiple))
        lines += p.warnings
    lines = [line for line in lines if _asked(line, field)]
    for line in lines[:WARN_EACH]:  # many budgets must not flood stderr: the rest are in each record's warnings
        warn(line)
    if len(lines) > WARN_EACH:
        warn(f"... and {len(lines) - WARN_EACH:,} more warnings (each plan's JSON record lists its own under 'warnings')")


def _draw(plans, plot: str) -> None:
    """--plot: one budget's candidates drawn to a file."""
    from ...output.plot import save_figure
    from ...output.plot_plan import plan_figure

    if len(plans) != 1:
        raise InputError("--plot", plot, f"draws one budget's plan; {len(plans)} budgets were given")
    save_figure(plan_figure(plans[0]), plot)


def _tables(records, show_all: bool, explain: bool):
    """The plan's table (imported only when a table is printed: JSON, CSV and --field never load it)."""
    from ...output.plan_tables import plan_tables

    return plan_tables(records, show_all, explain)




def _asked(line, field) -> bool:
    """Whether a warning concerns what --field selects, by the plan shape it concerns
    (``messages.concerns``): the minimal-depth shape only when a field of that shape is asked
    for, the recommended shape only when a ``recommended`` field (or why, band, candidates) is;
    without --field, or for the plan as a whole, every warning. Old flat names
    (``recommended_depth``) count as their new paths."""
    from ...core.messages import concerns
    from ...output.records import field_list
    from ...output.renames import PLAN_RENAMES

    names = field_list(field)
    if names is None:
        return True
    names = [PLAN_RENAMES.get(n, n) for n in names]
    shape = concerns(line)
    if shape == "threshold":
        return any(n.startswith("threshold") or n == "warnings" for n in names)
    if shape == "recommended":
        return any(n.split(".")[0] in ("recommended", "why", "band", "candidates", "warnings") for n in names)
    return True


def _ignored(brief: bool, rules: bool, rule: str, rule_file, prefer: str, tokens, layout) -> None:
    """One warning naming the options a mode leaves unused (they were dropped silently): neither --brief nor --rules
    ranks or costs a run, so --prefer and every run option given (``layout``: the cluster, the layout fields, --mfu,
    --profile) go unused; --rules lists a --rule-file's rule beside the others, --brief does not."""
    from ..training import run_options_given

    unused = []
    if brief or rules:
        unused += [f"--rule {rule}"] if rule.strip().lower() != "consensus" else []
        unused += [f"--rule-file {rule_file}"] if rule_file and brief else []
        unused += [f"--prefer {prefer}"] if prefer.strip().lower() != "balanced" else []
        unused += [f"--tokens {' '.join(tokens)}"] if tokens else []
        unused += run_options_given(layout)
    if unused:
        mode = "--brief gives only the threshold rule's shape and counts" if brief else "--rules shows every rule's shape"
        warn(f"{mode}: {', '.join(unused)} {'is' if len(unused) == 1 else 'are'} ignored")


def _brief(values: list[int], options, source: str, fmt: str, field) -> None:
    """`plan --brief`: every budget's threshold-rule answer as columns (``brief.py``), one write."""
    import sys

    from ...advice.brief import brief_columns
    from ...advice.plan_record import PlanBrief
    from ...output import emit
    from ...output.columns import write_columns
    from ...output.plan_tables import plan_brief_tables

    columns = brief_columns(values, options, source)
    if fmt == "table" and field is None:
        return emit([PlanBrief(*row) for row in zip(*columns.values())], fmt, field, plan_brief_tables)
    write_columns(columns, fmt, field, sys.stdout)


def _days_value(days) -> float:
    """--days as a number of days, range-checked (0.0001 to 100,000)."""
    from ...core.budgets import parse_quantity

    value = float(parse_quantity(days, "--days"))
    if not 1e-4 <= value <= 1e5:
        raise InputError("--days", days, "expected a training time in days from 0.0001 to 100,000, such as 30")
    return value


def _fitted(budget, days: float, options):
    """`plan --params N --days D`: the plan at the tokens its pick trains on in D days (``sizing.tokens_for_days``),
    its ``setup`` saying so (``tokens_from_days``) and a note giving tokens per parameter."""
    from dataclasses import replace

    from ...advice.sizing import tokens_for_days
    from ...core.messages import Message

    p = tokens_for_days(budget, days, options)
    count, tokens = getattr(p.recommended, p.budget.count), p.setup.tokens
    note = Message("days", f"--days {days:g}: {tokens:.4g} tokens ({tokens / count:.3g} per parameter of the recommended "
                   f"shape) fit in {days:g} days on {p.setup.gpus:,} x {p.setup.gpu}, at the recommended shape's step time by "
                   "the performance model (tokens = days x 86,400 / step_seconds x global_batch x context)", days=days, tokens=tokens)
    return replace(p, setup=replace(p.setup, tokens_from_days=days), notes=(note, *p.notes))


def _sized(days, flops, tokens, options):
    """The budgets of --days (a time on the cluster) or of --flops alone (the FLOPs the costed run spends),
    sized through the planner and the performance model (advice/sizing.py)."""
    from ...advice.sizing import flops_within, size_for_days
    from ...core.budgets import parse_quantity
    from ..inputs import expand_stdin
    from ..training import Budgets, budgets_with_tokens, one_token_count

    if days is None:
        texts = expand_stdin(flops)
        pairs = [flops_within(float(parse_quantity(t, "FLOP budget")), options) for t in texts]
        budgets_with_tokens(None, flops, None)  # the FLOP budgets' own checks (range, syntax)
        return Budgets("flops", [n for n, _ in pairs], [d for _, d in pairs])
    n, length, _ = size_for_days(_days_value(days), options, one_token_count(tokens))
    return Budgets("days", [n], [length])


def _tolerance(text: Optional[str]) -> Optional[float]:
    """--loss-tolerance as a fraction: "0.5%" or "0.005"; None when not given."""
    if text is None:
        return None
    raw = text.strip()
    try:
        value = float(raw[:-1]) / 100 if raw.endswith("%") else float(raw)
    except ValueError:
        value = float("nan")
    if not (0 <= value < 1):
        raise InputError("--loss-tolerance", text, "expected a penalty such as 0.5% or 0.005 (from 0 up to 100%)")
    return value
