"""`depthwidth sweep`: iso-budget shapes to train side by side."""
from typing import Annotated, List, Optional

import typer

from ...arch.blocks import DEFAULT_CONTEXT
from ...core.budgets import TOKENS_PER_PARAM
from ...core.errors import InputError
from ...arch.hardware import DEFAULT_MULTIPLE
from ..inputs import as_typed, budgets, distinct, parse_int_list, plan_options
from ..notices import warn
from ..options import (BLOCK, LAYOUT, PlotTo, Batch, BlockOptions, C2Reading, Context, Count, FfnMultiple, Field, Fmt, Format,
                       LayoutOptions, Multiple, Reading, RuleFile, Tokens)

DEFAULT_COUNT = 8  # rows of a sweep without --depths
EXPORT_HELP = "Also write one config per row under --out DIR/ID/: hf-llama, hf-mistral, hf-qwen2, hf-gpt2, hf-mixtral, nanogpt, litgpt or megatron."


def command(
    params: Annotated[Optional[List[str]], typer.Option("--params", "-p", help="Parameter budget: 1e9, 350M, 1.3B, 1T; '-' reads budgets from stdin. Repeatable.")] = None,
    flops: Annotated[Optional[List[str]], typer.Option("--flops", help="Compute budget C in FLOPs: N = sqrt(C/120).")] = None,
    tokens: Tokens = None,
    depths: Annotated[Optional[str], typer.Option("--depths", help="Depths to sweep, each kept exactly: 8:48:4 or 8,12,16 (default: --count depths from the minimal depth).")] = None,
    count_rows: Annotated[Optional[int], typer.Option("--count", "-n", help="How many rows at distinct depths, from the minimal depth to 10% past the deepest rule's recommendation (further when widths run out). Default 8.", min=1, max=1000)] = None,
    arch: Annotated[Optional[str], typer.Option("--arch", help="Block preset (as for plan). Default: vanilla, or the --export format's family.")] = None,
    kv_heads: Annotated[Optional[int], typer.Option("--kv-heads", help="Key/value heads G held in every row (default: the preset's ratio held, see --kv-ratio).", min=1, max=1 << 20)] = None,
    kv_ratio: Annotated[Optional[int], typer.Option("--kv-ratio", help="Query heads per key/value head held in every row (1 = multi-head). Default: the preset's (llama 4, qwen2 7).", min=1, max=1 << 20)] = None,
    block: BlockOptions = BLOCK,
    budget_count: Annotated[Count, typer.Option("--budget-count", help="What the budget limits: total (non-embedding), active or with-embeddings.", case_sensitive=False)] = Count.total,
    multiple: Multiple = DEFAULT_MULTIPLE,
    ffn_multiple: FfnMultiple = None,
    tp: Annotated[int, typer.Option("--tp", help="Tensor-parallel degree every row must shard by (and the run's, for its costs).", min=1, max=1 << 12)] = 1,
    rule_file: RuleFile = None,
    context: Context = DEFAULT_CONTEXT,
    layout: LayoutOptions = LAYOUT,
    batch: Batch = 1,
    export: Annotated[Optional[str], typer.Option("--export", help=EXPORT_HELP)] = None,
    out: Annotated[Optional[str], typer.Option("--out", "-o", help="With --export: the directory to create (one folder per row, named by its id, plus manifest.json).")] = None,
    force: Annotated[bool, typer.Option("--force", help="With --export: replace an earlier export in --out (a directory holding manifest.json).")] = False,
    c2_reading: Reading = C2Reading.consistent,
    format: Fmt = Format.table,
    field: Field = None,
    plot: PlotTo = None,
) -> None:
    """Iso-budget shapes to train side by side, with an empty loss column for `depthwidth fit`.

    Every row keeps one attention layout and spends the budget within ±5% (or is flagged);
    with --tokens each row also gets the costs of its training run.

    Example: depthwidth sweep --params 1e9 --arch llama --count 6 --format csv > sweep.csv
    """
    from ...output import emit
    from ...output.tables import sweep_tables

    fmt = _checked_outputs(depths, count_rows, plot, export, out)
    training = training_tokens(tokens) if tokens and (params or flops) else None  # --tokens with a budget: how long every row trains
    tokens = None if training else tokens
    source, values = budgets(params, flops, tokens)
    values = distinct(values, f"--{source}", "the budgets")  # a repeat would repeat every id (and break fit --sweep joins)
    if arch is None:
        from ...loop.export import target

        arch = "vanilla" if fmt is None else target(fmt).preset
    options = plan_options(arch, None, block, budget_count, multiple, ffn_multiple, tp, "levine-fit", rule_file, context,
                           c2_reading.value)
    if source == "tokens":  # each budget N came from its token count D = 20·N: that is also its training length
        training = [float(TOKENS_PER_PARAM * v) for v in values]
    rows = _rows(values, options, _depths(depths), DEFAULT_COUNT if count_rows is None else count_rows,
                 dict(kv_heads=kv_heads, kv_ratio=kv_ratio), (layout, tp, context, batch), training)
    for line in rows.skipped:
        warn(line)
    if fmt is not None:
        field = _export(rows, fmt, out, force, format.value, field, context, tp)
    if plot is not None:
        _plot(rows, values, options, plot)
    emit(rows, format.value, field, sweep_tables, command="sweep")


def _checked_outputs(depths, count_rows, plot, export, out) -> str | None:
    """The --export format (None without), every output option checked before the sweep is computed:
    --count beside --depths is said, --plot's path and matplotlib, --export with --out and a known format."""
    if depths is not None and count_rows is not None:
        warn(f"--depths {depths} gives the rows: --count {count_rows} is ignored")
    if plot is not None:  # checked before any work: a bad path or no matplotlib fails at once
        from ...output.plot import check_output_path, require_matplotlib

        require_matplotlib()
        check_output_path(plot)
    if (export is None) != (out is None):
        raise InputError("--export/--out", export or out, "give --export FORMAT and --out DIR together")
    if export is None:
        return None
    from ...loop.export import target

    fmt = export.strip().lower()
    target(fmt)  # an unknown format fails before the sweep is computed
    return fmt


def _depths(depths: str | None) -> list[int] | None:
    """--depths as distinct whole depths (None: the default list)."""
    from ...theory.shapes import MAX_DEPTH

    return None if depths is None else distinct(parse_int_list(depths, "--depths", 1, MAX_DEPTH), "--depths", "the depths")


def _rows(values, options, chosen, count_rows, attention: dict, run: tuple, training):
    """The sweep's rows (``loop.sweep.sweep_many``), each costed under the run (``run``: the layout options,
    --tp, --context, --batch) when a training length is known (``training``: one for all rows, or one per budget)."""
    from ..training import fixed_layout, pipeline_stages, searched_run
    from ...loop.sweep import sweep_many

    layout, tp, context, batch = run
    fixed = fixed_layout(layout)  # given: fixed; the rest searched by the performance model
    if tp > 1:
        fixed = (("tp", tp), *fixed)
    spec = searched_run(layout, tp, context, batch)  # every run option checked, with or without --tokens (as plan does)
    with as_typed(values):
        rows = sweep_many(values, options, chosen, count_rows, **attention)
    # a row shallower than --pp stages is refused, as a given shape is
    pipeline_stages(layout.pp, [(f"row {r.depth}x{r.width} (give --depths from {layout.pp})", a)
                                for r, a in zip(rows, rows.architectures)], uneven=False)
    if training is None:
        _uncosted(layout)
        return rows
    from dataclasses import replace

    from ...loop.sweep_costs import costed

    per_budget = dict(zip(values, training if len(training) == len(values) else training * len(values)))  # one D, or one each
    return costed(rows, [replace(spec, tokens=per_budget[r.budget]) for r in rows], None if layout.mfu is not None else fixed)


def _uncosted(layout) -> None:
    """Without a training length no row is costed: one warning naming the run options given, which then go unused
    (--pp still refuses rows shallower than its stages, so it is not among them)."""
    from ..training import run_options_given

    unused = run_options_given(layout, skip=("pp",))
    if unused:
        warn(f"no --tokens: the rows are not costed (--tokens D with a budget costs each row's run), so {', '.join(unused)} "
             f"{'is' if len(unused) == 1 else 'are'} ignored")


def _export(rows, fmt: str, out, force: bool, format: str, field, context: int, tp: int):
    """--export: one config per row under --out, every output option checked before the directory is written
    (--field bogus wrote it, then exit 2); the --field names, old ones (0.4) as their new paths."""
    from ...loop.export import write_configs
    from ...output import check_field, plain
    from ...output.records import field_list, field_names
    from ...output.renames import renamed
    from ...output.writers import check_table_rows

    if rows and field is not None:
        field = renamed(field_list(field), field_names(rows[0]), "sweep")
        check_field(rows[0], field)
    check_table_rows(len(rows), format, field)
    write_configs(list(zip([r.id for r in rows], rows.architectures)), fmt, out, force, [plain(r) for r in rows],
                  context=context, tp=tp)
    return field


def _plot(rows, values, options, path) -> None:
    """sweep --plot: the rows, with the plan of the same budget for its band, floor and published models."""
    from dataclasses import replace

    from ...advice.planner import plan
    from ...output.plot import save_figure
    from ...output.plot_plan import sweep_figure

    if len(values) != 1:
        raise InputError("--plot", path, f"draws one budget's sweep; {len(values)} budgets were given")
    save_figure(sweep_figure(rows, plan(values[0], replace(options, rule="consensus"))), path)


def training_tokens(texts: list[str]) -> list[float]:
    """--tokens given with --params/--flops: one training length (tokens) for every row, in plan's
    range (training._token_count: 1 to 1e50)."""
    from ..training import _token_count

    if len(texts) != 1 or texts[0] == "-":
        raise InputError("--tokens", " ".join(texts), "with --params or --flops, give one training length (tokens) for every row")
    return [_token_count(texts[0])]
