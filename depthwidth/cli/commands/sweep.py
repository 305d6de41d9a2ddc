"""`depthwidth sweep`: iso-budget shapes to train side by side."""
from typing import Annotated, List, Optional

import typer

from ...arch.blocks import DEFAULT_CONTEXT
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
    from ...theory.shapes import MAX_DEPTH
    from ...loop.sweep import sweep_many

    if depths is not None and count_rows is not None:
        warn(f"--depths {depths} gives the rows: --count {count_rows} is ignored")
    count_rows = DEFAULT_COUNT if count_rows is None else count_rows
    if plot is not None:  # checked before any work: a bad path or no matplotlib fails at once
        from ...output.plot import check_output_path, require_matplotlib

        require_matplotlib()
        check_output_path(plot)
    training = None
    if tokens and (params or flops):  # --tokens with a budget: how long every row trains
        training = training_tokens(tokens)
        tokens = None
    source, values = budgets(params, flops, tokens)
    values = distinct(values, f"--{source}", "the budgets")  # a repeat would repeat every id (and break fit --sweep joins)
    if arch is None:
        arch = "vanilla"
        if export is not None:
            from ...loop.export import target

            arch = target(export.strip().lower()).preset
    if (export is None) != (out is None):
        raise InputError("--export/--out", export or out, "give --export FORMAT and --out DIR together")
    fmt = None if export is None else export.strip().lower()
    if fmt is not None:
        from ...loop.export import target

        target(fmt)  # an unknown format fails before the sweep is computed
    options = plan_options(arch, None, block, budget_count, multiple, ffn_multiple, tp, "levine-fit", rule_file, context,
                           c2_reading.value)
    chosen = distinct(parse_int_list(depths, "--depths", 1, MAX_DEPTH), "--depths", "the depths") if depths is not None else None
    if source == "tokens":  # each budget N came from its token count D = 20·N: that is also its training length
        from ...core.budgets import TOKENS_PER_PARAM

        training = [float(TOKENS_PER_PARAM * v) for v in values]
    from ..training import fixed_layout, searched_run

    fixed = fixed_layout(layout)  # given: fixed; the rest searched by the performance model
    if tp > 1:
        fixed = (("tp", tp), *fixed)
    # every run option checked before the sweep is computed, with or without --tokens (as plan does)
    spec = searched_run(layout, tp, context, batch)
    if training is None:
        spec = None
    with as_typed(values):
        rows = sweep_many(values, options, chosen, count_rows, kv_heads=kv_heads, kv_ratio=kv_ratio)
    from ..training import pipeline_stages  # a row shallower than --pp stages is refused, as a given shape is

    pipeline_stages(layout.pp, [(f"row {r.depth}x{r.width} (give --depths from {layout.pp})", a)
                                for r, a in zip(rows, rows.architectures)], uneven=False)
    if spec is not None:
        from dataclasses import replace

        from ...loop.sweep_costs import costed

        per_budget = dict(zip(values, training if len(training) == len(values) else training * len(values)))  # one D, or one each
        rows = costed(rows, [replace(spec, tokens=per_budget[r.budget]) for r in rows], None if layout.mfu is not None else fixed)
    for line in rows.skipped:
        warn(line)
    if fmt is not None:
        from ...loop.export import write_configs
        from ...output import check_field, plain
        from ...output.writers import check_table_rows

        if rows:  # every output option checked before the directory is written (--field bogus wrote it, then exit 2)
            check_field(rows[0], field)
        check_table_rows(len(rows), format.value, field)

        write_configs(list(zip([r.id for r in rows], rows.architectures)), fmt, out, force, [plain(r) for r in rows],
                      context=context, tp=tp)
    if plot is not None:
        _plot(rows, values, options, plot)
    emit(rows, format.value, field, sweep_tables)


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
