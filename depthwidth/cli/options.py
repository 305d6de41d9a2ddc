"""Options shared by several commands, as ``Annotated`` aliases: one spelling of each flag,
its help and its bounds. A command writes ``arch: Arch = "vanilla"``.

Options that travel together (the block beyond its heads, a training run, a searched layout, the
shape checks) are a ``Group``, defined once here: a command names the group as one parameter
(``block: BlockOptions = BLOCK``); ``grouped`` (applied to every command by cli/app.py) lists its
options in that place in --help and hands the command their values as one named tuple."""
import functools
import inspect
from collections import namedtuple
from enum import Enum
from typing import Annotated, List, Optional

import typer

from ..arch.blocks import DEFAULT_CONTEXT
from ..arch.hardware import DEFAULT_GPU, MIN_MFU, gpu_help


def choices(name: str, *values: str, doc: Optional[str] = None) -> type:
    """A choice option's Enum, one member per value (a member's name is its value with '-' as '_')."""
    kind = Enum(name, [(value.replace("-", "_"), value) for value in values], type=str, module=__name__)
    kind.__doc__ = doc or f"The values of a {name} option."
    return kind


Format = choices("Format", "table", "json", "jsonl", "csv")
C2Reading = choices("C2Reading", "consistent", "literal",
                    doc="Theorem 2's constant c2 (docs/theory.md, \"Reading of c2\"); the values are theory.C2_READINGS.")
Count = choices("Count", "total", "active", "with-embeddings")
GroupBy = choices("GroupBy", "params", "flops")


Fmt = Annotated[Format, typer.Option("--format", "-f", case_sensitive=False, help="table for people; json, jsonl or csv for pipelines.")]
Field = Annotated[Optional[List[str]], typer.Option("--field", help="Print only this field's value(s), one line per record (dotted for "
                                                                       "nested: deep.regime). Repeatable: the fields of a record "
                                                                       "tab-separated, in the order given.")]
Reading = Annotated[C2Reading, typer.Option("--c2-reading", case_sensitive=False,
                                            help="Theorem 2's constant c2: consistent (default) or literal (the paper's print read "
                                                 "literally; negative and non-monotone just below d = 3^L). See docs/theory.md.")]

Params = Annotated[Optional[List[str]], typer.Option("--params", "-p", help="Parameter budget: 1e9, 350M, 1.3B, 1T; '-' reads budgets from stdin. Repeatable.")]
Arch = Annotated[str, typer.Option("--arch", help="Block preset: vanilla (the paper's 12·L·d²), gpt2, llama, mistral, qwen2, gemma, mixtral, deepseek.")]
KvHeads = Annotated[Optional[int], typer.Option("--kv-heads", help="Key/value heads G (grouped-query attention; 1 = multi-query). Default: the preset's.", min=1, max=1 << 20)]
HeadDim = Annotated[Optional[int], typer.Option("--head-dim", help="Head dimension (heads = width / head-dim). Default: the preset's (64 or 128).", min=2, max=1 << 20)]
FfnMult = Annotated[Optional[str], typer.Option("--ffn-mult", help="Feed-forward size multiplier over the preset's (e.g. 1.3 as LLaMA-3 70B).")]
Gated = Annotated[Optional[bool], typer.Option("--gated/--plain", help="Gated (SwiGLU: 3·d·f) or plain (2·d·f) feed-forward. Default: the preset's.")]
Experts = Annotated[Optional[int], typer.Option("--experts", help="Routed experts E (mixture of experts). Default: the preset's.", min=1, max=1 << 16)]
TopK = Annotated[Optional[int], typer.Option("--top-k", help="Experts active per token. Default: the preset's.", min=1, max=1 << 16)]
Vocab = Annotated[Optional[int], typer.Option("--vocab", help="Vocabulary size (embeddings are reported apart). Default: the preset's.", min=1, max=1 << 30)]
Tied = Annotated[Optional[bool], typer.Option("--tied/--untied", help="Tie the output head to the input embedding. Default: the preset's.")]
CountOf = Annotated[Count, typer.Option("--count", help="What the budget limits: total (non-embedding, default), active (per token) or with-embeddings.", case_sensitive=False)]
Multiple = Annotated[int, typer.Option("--multiple", "--align", help="Width multiple (tensor-core tiles); widths are also multiples of the head dimension.", min=1, max=1 << 20)]
FfnMultiple = Annotated[Optional[int], typer.Option("--ffn-multiple", help="Feed-forward size multiple. Default: the preset's (LLaMA: 256).", min=1, max=1 << 20)]
Tp = Annotated[int, typer.Option("--tp", help="Tensor-parallel degree every shape must shard by (t | heads, t | ffn, KV heads compatible); "
                                                 "memory per GPU is split by it. Default 1.", min=1, max=1 << 12)]
Rule = Annotated[str, typer.Option("--rule", help="The rule that gives the recommended shape: consensus (default: the evidence band, "
                                                  "then the valid shape in it that reaches the best shape's loss soonest) or any rule of `depthwidth rules`.")]
RuleFile = Annotated[Optional[str], typer.Option("--rule-file", help="A rule fitted on your own sweep by `depthwidth fit --save` (used instead of --rule).")]
Context = Annotated[int, typer.Option("--context", help="Context length T for FLOPs per token, activations and the KV cache per "
                                                         "sequence (and max_position_embeddings on export). Default 2048.", min=1, max=1 << 30)]

CheckTp = Annotated[Optional[int], typer.Option("--tp", help="Warn for every shape that cannot shard this many ways (tensor parallelism).", min=1, max=1 << 12)]
CheckMultiple = Annotated[Optional[int], typer.Option("--multiple", help="Warn for every shape whose width is not a multiple of this.", min=1, max=1 << 20)]

Out = Annotated[str, typer.Option("--out", "-o", help="Output file: .png (150 dpi) or .svg.")]
PlotTo = Annotated[Optional[str], typer.Option("--plot", help="Also draw the candidates to this .png or .svg file (depth against "
                                                              "loss penalty or days, the band shaded, the pick marked, published "
                                                              "models as points); needs the plot extra.")]
GroupByOf = Annotated[GroupBy, typer.Option("--group-by", help="Group runs by parameter count (the params column) or by "
                                                               "training FLOPs (a flops column, or flops_per_token x tokens).")]
Bootstrap = Annotated[int, typer.Option("--bootstrap", min=20, max=100_000, help="Bootstrap resamples per group for the intervals.")]
Seed = Annotated[int, typer.Option("--seed", min=0, max=2**63 - 1, help="Seed of the bootstrap (same seed, same output).")]

# ---- the costs of a training run (cost.run.RunSpec; README "Costs of a training run"), shared by
# plan, compare, inspect (advisor helper) and sweep (wire helper): one spelling, defaults stated in --help
Tokens = Annotated[Optional[List[str]], typer.Option("--tokens", help="Training tokens D. Alone: the budget is compute-optimal, N = D/20 "
                                                                      "(Hoffmann et al. 2022). With --params N: N trained on D tokens (sweep: "
                                                                      "every row). With --flops C: N = C/(6·D). Gives every shape its training "
                                                                      "FLOPs, GPU-hours and days.")]
Gpu = Annotated[str, typer.Option("--gpu", help=gpu_help())]
Gpus = Annotated[Optional[int], typer.Option("--gpus", help="GPUs training together (a multiple of tp x pp): gives wall-clock days and the "
                                                            "data-parallel degree ZeRO shards over. Default: none (no days; data parallel 1).",
                                             min=1, max=1 << 24)]
# --mfu: one range in every command (arch.hardware.MIN_MFU to 1), read as text (a float option loads Pydantic
# through Typer) and parsed by training.mfu_rate
MFU_RANGE = f"from {MIN_MFU:g} to 1"
# plan and sweep time every shape by the performance model in its best layout: what is given is fixed, the rest searched
SearchPp = Annotated[Optional[int], typer.Option("--pp", help="Pipeline-parallel degree (default: searched). Shapes with fewer "
                                                              "layers are left out of plan's pick and candidates (more than the "
                                                              "deepest is an error), refused as sweep rows and an error in cost, "
                                                              "compare and inspect; one that does not divide a depth is costed "
                                                              "with its most loaded stage of ceil(L/pp) layers and is warned about "
                                                              "by cost, compare and inspect.", min=1, max=1 << 12)]
SearchZero = Annotated[Optional[int], typer.Option("--zero", help="ZeRO stage 0-3 (default: searched).", min=0, max=3)]
SearchRecompute = Annotated[Optional[str], typer.Option("--recompute", help="Activation recomputation: none, selective, full or "
                                                                            "op (torchtitan's op-level selective: every second matrix "
                                                                            "multiply recomputed) (default: searched).")]
MfuOverride = Annotated[Optional[str], typer.Option("--mfu", help="Override the performance model: time every shape at this model "
                                                                  f"FLOPs utilization ({MFU_RANGE}) in the layout given (--tp, --pp, "
                                                                  "--zero, --recompute, --micro-batch; none searched). Default: the "
                                                                  "performance model.")]
Batch = Annotated[int, typer.Option("--batch", help="Sequences served at once, for inference memory (KV cache x batch). Default 1.",
                                    min=1, max=1 << 24)]
Prefer = Annotated[str, typer.Option("--prefer", help="What the consensus pick inside the depth band minimizes, on the way to the best "
                                                      "shape's loss (docs/loss.md): balanced (wall-clock time to that loss; default), "
                                                      "train (GPU-hours to it) or serve (time to it, KV cache and decode latency together).")]
# cost's training run (cost, compare, inspect, calibrate: the TRAIN group); what is not given is searched
SearchTp = Annotated[Optional[int], typer.Option("--tp", help="Tensor-parallel degree (default: searched); compare and inspect also "
                                                              "warn for every shape that cannot shard this many ways.", min=1, max=1 << 12)]
SearchCp = Annotated[Optional[int], typer.Option("--cp", help="Context-parallel degree (default: searched from a 32,768 context).",
                                                 min=1, max=1 << 12)]
MicroBatch = Annotated[Optional[int], typer.Option("--micro-batch", help="Sequences per micro-batch (default: searched).", min=1, max=1 << 16)]
GlobalBatch = Annotated[Optional[int], typer.Option("--global-batch", help="Sequences per optimizer step. Default: GPT-3's batch for "
                                                                           "the size (Brown et al. 2020, Table 2.1) rounded to a power of "
                                                                           "two.", min=1, max=1 << 30)]
Attention = Annotated[Optional[str], typer.Option("--attention", help="Attention kernel: flash (default, every preset) or unfused "
                                                                      "(Megatron-LM 2021-22: the T x T scores through memory).")]
ClusterGpus = Annotated[Optional[int], typer.Option("--gpus", help="GPUs training together. Default: one node of --gpu, or the smallest "
                                                                   "cluster that holds the model (compare and "
                                                                   "inspect then give no wall-clock days).", min=1, max=1 << 24)]
ProfileFile = Annotated[Optional[str], typer.Option("--profile", help="A calibration profile written by `depthwidth calibrate --out`: "
                                                                      "time from the efficiency measured on your own run (same --gpu); or a named stack profile fitted on "
                                                                      "published runs: megatron-lm-2021, megascale-megatron-2023, deepspeed-zero3-2021, "
                                                                      "llm-foundry-2023, meta-4d-2024, torchtitan-2024.")]


# plan's own options
PlanFlops = Annotated[Optional[List[str]], typer.Option("--flops", help="Compute budget C in FLOPs. Alone: compute-optimal, about 20 "
                                                                          "tokens/param, N sized so the pick's costed FLOPs (attention and logits "
                                                                          "included) are C; with --tokens D: N = C/(6·D).")]
LossTolerance = Annotated[Optional[str], typer.Option("--loss-tolerance", help="Pick the fastest shape in the band whose predicted "
                                                      "loss penalty vs the best shape is within this (0.5% or 0.005); docs/loss.md.")]
RuleTable = Annotated[bool, typer.Option("--rules", help="Show every rule's shape for the budget side by side (one record per rule).")]
Brief = Annotated[bool, typer.Option("--brief", help="Only the threshold rule's answer (minimal depth, its shape and counts) for "
                                     "each budget, computed for all budgets at once: for pipelines over many budgets. "
                                     "No rule, candidates, costs or notes.")]
Explain = Annotated[bool, typer.Option("--explain", help="After the answer: the threshold analysis, the evidence, every "
                                       "candidate with its theory and costs, and the notes.")]
ShowAll = Annotated[bool, typer.Option("--all", help="List the candidates outside the evidence band too.")]
Days = Annotated[Optional[str], typer.Option("--days", help="A time budget in days on --gpus of --gpu: the size (and, without "
                                             "--tokens, 20 tokens per parameter) that trains in that time by the performance "
                                             "model; with --params, the tokens that fit in that time at the plan's step time "
                                             "(docs/performance.md).")]


class Group:
    """Options that several commands take together, spelled once: ``options`` maps each parameter
    name to its (alias, default), in --help order; ``values`` is the named tuple a command receives."""

    def __init__(self, name: str, **options):
        self.name, self.options = name, options

    @functools.cached_property
    def values(self) -> type:
        """The named tuple class, made on first use: a command uses one or two of the groups."""
        return namedtuple(self.name, self.options)


def grouped(command):
    """``command`` with every ``Group`` parameter spread into its options, in its place (what
    Typer reads), and gathered back into the group's named tuple when the command is called."""
    signature = inspect.signature(command, eval_str=True)
    groups = {p.name: p.default for p in signature.parameters.values() if isinstance(p.default, Group)}
    if not groups:
        return command
    spread = []
    for p in signature.parameters.values():
        group = groups.get(p.name)
        spread += [p] if group is None else [inspect.Parameter(name, p.kind, default=default, annotation=alias)
                                             for name, (alias, default) in group.options.items()]

    @functools.wraps(command)
    def wrapper(**values):
        for name, group in groups.items():
            values[name] = group.values(*(values.pop(option) for option in group.options))
        return command(**values)

    wrapper.__signature__ = signature.replace(parameters=spread)
    wrapper.__annotations__ = {**{p.name: p.annotation for p in spread}, "return": signature.return_annotation}
    return wrapper


# the block beyond its attention heads (plan, sweep, cost, export; inputs.plan_options reads it)
BLOCK = Group("BlockOptions", head_dim=(HeadDim, None), ffn_mult=(FfnMult, None), gated=(Gated, None), experts=(Experts, None),
              top_k=(TopK, None), vocab=(Vocab, None), tied=(Tied, None))
# the training run, its cluster and the layout fields it fixes, the rest searched by the performance model
# (cost, compare, inspect, calibrate: one model, one answer; training.train_run reads it)
TRAIN = Group("TrainOptions", gpu=(Gpu, DEFAULT_GPU), gpus=(ClusterGpus, None), tp=(SearchTp, None), pp=(SearchPp, None),
              cp=(SearchCp, None), micro_batch=(MicroBatch, None), global_batch=(GlobalBatch, None), recompute=(SearchRecompute, None),
              zero=(SearchZero, None), attention=(Attention, None), context=(Context, DEFAULT_CONTEXT), tokens=(Tokens, None),
              mfu=(MfuOverride, None), profile=(ProfileFile, None))
# the checks and the training run of given shapes (compare, inspect): TRAIN, the width check and the serving batch
RUN = Group("RunOptions", multiple=(CheckMultiple, None), **TRAIN.options, batch=(Batch, 1))
# the cluster and the layout the performance model searches (plan, sweep; training.searched_run reads it)
LAYOUT = Group("LayoutOptions", gpu=(Gpu, DEFAULT_GPU), gpus=(Gpus, None), pp=(SearchPp, None), zero=(SearchZero, None),
               recompute=(SearchRecompute, None), micro_batch=(MicroBatch, None), global_batch=(GlobalBatch, None),
               attention=(Attention, None), mfu=(MfuOverride, None), profile=(ProfileFile, None))
# how a command on the theory's records shows them (bounds, models, compare, inspect, equiv)
SHOWN = Group("ShownOptions", format=(Fmt, Format.table), field=(Field, None), c2_reading=(Reading, C2Reading.consistent))
# what listed shapes are checked against (--tp, --multiple), then how they are shown (bounds, models)
LISTED = Group("ListedOptions", tp=(CheckTp, None), multiple=(CheckMultiple, None), **SHOWN.options)


_VALUES = {"BlockOptions": BLOCK, "TrainOptions": TRAIN, "RunOptions": RUN, "LayoutOptions": LAYOUT, "ShownOptions": SHOWN,
           "ListedOptions": LISTED}


def __getattr__(name: str):
    """``BlockOptions`` ...: each group's named tuple (``Group.values``), made when a command imports it."""
    if name in _VALUES:
        return _VALUES[name].values
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
