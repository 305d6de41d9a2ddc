"""`depthwidth export`: write a config file to train a shape with."""
from typing import Annotated, Optional

import typer

from ...arch.blocks import DEFAULT_CONTEXT
from ...core.errors import InputError
from ...arch.hardware import DEFAULT_MULTIPLE
from ..inputs import plan_options
from ..options import BLOCK, BlockOptions, Count, FfnMultiple, Field, Fmt, Format, KvHeads, Multiple, Rule, RuleFile, Tp

TO_HELP = ("hf-llama, hf-mistral, hf-qwen2, hf-gpt2, hf-mixtral (Hugging Face config.json), nanogpt (a Python config file "
           "for train.py), litgpt (model_config.yaml) or megatron (Megatron-LM arguments, megatron_args.sh).")


def command(
    shape: Annotated[Optional[str], typer.Argument(help="LxD[xH] or a catalogue model (its own block); H sets the heads (head_dim = D / H), else the preset's head size does.")] = None,
    to: Annotated[str, typer.Option("--to", help=TO_HELP)] = ...,
    out: Annotated[str, typer.Option("--out", "-o", help="A directory (DIR/<the format's file> is written) or a file path with the format's extension (.json, .py, .yaml, .sh).")] = ...,
    plan_budget: Annotated[Optional[str], typer.Option("--plan", help="Instead of SHAPE: export the recommended shape of `plan --params BUDGET` with all of the plan options given here.")] = None,
    arch: Annotated[Optional[str], typer.Option("--arch", help="Block preset (default: the format's: hf-llama, litgpt, megatron -> llama; hf-gpt2, nanogpt -> gpt2; ...).")] = None,
    kv_heads: KvHeads = None,
    asked_block: BlockOptions = BLOCK,
    tp: Tp = 1,
    budget_count: Annotated[Count, typer.Option("--budget-count", "--count", help="With --plan: what the budget limits: total (non-embedding), active or with-embeddings.", case_sensitive=False)] = Count.total,
    multiple: Multiple = DEFAULT_MULTIPLE,
    ffn_multiple: FfnMultiple = None,
    rule: Rule = "consensus",
    rule_file: RuleFile = None,
    context: Annotated[int, typer.Option("--context", help="Context length: max_position_embeddings (n_positions, block_size, --seq-length).", min=1, max=1 << 30)] = DEFAULT_CONTEXT,
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing file.")] = False,
    format: Fmt = Format.table,
    field: Field = None,
) -> None:
    """Write a config file to train a shape with: Hugging Face config.json, nanoGPT, LitGPT or Megatron-LM.

    Example: depthwidth export 24x2048x16 --to hf-llama --out ./my-model
    """
    from ...loop.export import config_for, export_record, target, write_config
    from ...output import check_field, emit
    from ...output.tables import export_tables

    spec = target(to.strip().lower())
    name = (arch or spec.preset).strip().lower()
    if (shape is None) == (plan_budget is None):
        raise InputError("arguments", shape or "(none)", "expected a SHAPE (LxD[xH] or a model name) or --plan BUDGET, not both")
    planned = {"--budget-count": None if budget_count == Count.total else budget_count.value,
               "--multiple": None if multiple == DEFAULT_MULTIPLE else multiple, "--ffn-multiple": ffn_multiple,
               "--rule": None if rule == "consensus" else rule, "--rule-file": rule_file}
    options = plan_options(name, kv_heads, asked_block, budget_count, multiple, ffn_multiple, tp, rule, rule_file, context)  # every value checked (--ffn-mult parsed) here
    block_options = dict(options.spending.overrides)
    if plan_budget is not None:
        block = _planned(plan_budget, spec.name, options)
    else:
        given = [(flag, value) for flag, value in planned.items() if value is not None]
        if given:
            raise InputError(given[0][0], given[0][1], "applies to --plan BUDGET only; a SHAPE or model is exported as it is")
        block = _given(shape, arch, name, spec.name, tp, context, block_options)
    record = export_record(block, spec.name, "", context)
    check_field(record, field)  # a bad --field fails before the file is written
    path = write_config(config_for(block, spec.name, context, tp), out, force, fmt=spec.name, block=block)
    emit([export_record(block, spec.name, path, context)], format.value, field, export_tables)


def _planned(plan_budget: str, fmt: str, options):
    """--plan BUDGET: the block of the plan's recommended shape."""
    from ...core.budgets import parse_params
    from ...loop.export_blocks import plan_architecture
    from ..inputs import as_typed

    budget = parse_params(plan_budget)
    with as_typed([budget], [plan_budget]):
        return plan_architecture(budget, fmt, options)


def _given(shape: str, arch, name: str, fmt: str, tp: int, context: int, block_options: dict):
    """SHAPE: a catalogue model's own block (only --vocab and --tied apply), or LxD[xH] in the preset's block."""
    from ...loop.export_blocks import export_architecture, model_architecture
    from ...theory.shapes import shape_like

    text = shape.strip()
    if text and not shape_like(text):  # a catalogue model: its own block
        if arch is not None:
            raise InputError("--arch", arch, f"{text} exports its own block; give LxDxH --arch {arch} to use a preset")
        fixed = [(f"--{k.replace('_', '-')}", v) for k, v in block_options.items() if k not in ("vocab", "tied")]
        if fixed:
            raise InputError(fixed[0][0], fixed[0][1], f"{text} exports its own block; only --vocab and --tied apply "
                                                       f"(give LxDxH --arch ... to change the block)")
        return model_architecture(text, fmt, **block_options)
    from ...arch.catalog import resolve_shape

    parsed = resolve_shape(shape)
    explicit = text.lower().count("x") == 2  # LxDxH: the heads are given
    return export_architecture(fmt, parsed.depth, parsed.width, parsed.heads if explicit else None, arch=name,
                               tp=tp, context=context, **block_options)
