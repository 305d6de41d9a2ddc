"""Layout search: the fastest parallel layout of one shape on a cluster that fits in memory.

The layouts: tensor-parallel degrees the heads, KV heads and feed-forward allow (``hardware.tp_sizes``)
within one node; context-parallel degrees for long contexts; every pipeline degree that leaves a whole
data-parallel degree (one that does not divide the depth is costed with its most loaded stage);
interleaved stages 1, 2, 4, 8 (at least one layer per virtual stage); micro-batches of powers of two and
the divisors of a replica's share of the batch (up to 64); recomputation none/selective/full; ZeRO 0-3.
What the caller fixes stays fixed. Memory per GPU is ``cost.run``'s model (Korthikanti et al. 2022
activations, ZeRO model states), divided by cp for the activations; a layout fits when it is <= the HBM
bytes. The answer is the fitting layout of least step time (ties: ZeRO 0-2 before ZeRO 3, the simpler
stage, whose parameter gathers an overlapped step hides; then least memory, then the first in the
order above); when none fits, the least memory one.

Two searches give that same answer: ``perf.grid.search_grid`` evaluates every layout at once as NumPy arrays
(``perf.step.training_rates``), the reference; ``search`` (what the tool runs) evaluates the same formulas on
plain numbers and skips, exactly, the layouts that cannot win (docstring of ``search``), so one shape's
search needs no NumPy and a few hundred microseconds (cold start; tests/test_layout_search.py checks the
two agree).

Global batch default (sequences = tokens / context): GPT-3's batch sizes in tokens by model size,
Brown et al. 2020, Table 2.1: 0.5M up to 760M parameters, 1M to 2.7B, 2M to 13B, 3.2M above, in
sequences rounded to the nearest power of two. Only layouts whose data-parallel degree x micro-batch
divides the global batch are searched (the step is then exactly dp x micro-batch x accumulation
sequences, the accumulation reported in the layout), unless none does (a batch the user fixed):
then every layout, the last micro-batch partly filled, and a note says so.
"""
from __future__ import annotations

from functools import lru_cache

from ...arch import blocks
from ...arch.hardware import tp_sizes
from . import comm
from .. import run
from ...core.num import lib
from .step import (BYTES, RECOMPUTE_CODE, Layout, step_efficiency, attention_kernel, gemm_floor, head_seconds, layer_forward,
    optimizer_seconds, stage_params_per_gpu, train_step, training_rates)

RECOMPUTE_NAMES = ("none", "selective", "full")
BATCH_TOKENS = ((0.76e9, 0.5e6), (2.7e9, 1e6), (13e9, 2e6), (float("inf"), 3.2e6))  # Brown et al. 2020, Table 2.1
LONG_CONTEXT = 32768  # context parallelism is searched from this context up (Llama 3 used it at 131,072)
FIELDS = ("tp", "cp", "pp", "dp", "interleave", "micro_batch")


def default_global_batch(params: float, context: int) -> int:
    """GPT-3's batch in tokens for a model of ``params`` parameters, in sequences of ``context`` tokens,
    rounded to the nearest power of two (in log: 244 -> 256, 977 -> 1024, 1562 -> 2048), as engineers
    set batches that the data-parallel degree and the micro-batch divide."""
    import math

    tokens = next(t for limit, t in BATCH_TOKENS if params <= limit)
    return 1 << max(0, round(math.log2(tokens / context)))


@lru_cache(maxsize=1024)
def _divisors(n: int) -> tuple[int, ...]:
    small = [k for k in range(1, int(n ** 0.5) + 1) if n % k == 0]
    return tuple(sorted({*small, *(n // k for k in small)}))


@lru_cache(maxsize=1024)
def _micro_batches(share: int) -> tuple[int, ...]:
    """The micro-batches tried for ``share`` sequences per replica: powers of two and divisors, up to 64."""
    return tuple(sorted({b for b in (1, 2, 4, 8, 16, 32, 64) if b <= share} | {b for b in _divisors(share) if b <= 64}))


def combinations(arch, hw, gpus: int, context: int, global_batch: int, fixed: dict) -> list[tuple]:
    """The (tp, cp, pp, dp, interleave, micro_batch) of every layout to try, in search order; each is
    tried with every recomputation (``recomputations``) and ZeRO stage (``zero_stages``). Only those
    whose dp x micro-batch divides the batch (dp x micro-batch x accumulation == batch), unless none does."""
    return _layouts(arch, hw, gpus, context, global_batch, fixed, True) or _layouts(arch, hw, gpus, context, global_batch,
                                                                                    fixed, False)


def _layouts(arch, hw, gpus: int, context: int, global_batch: int, fixed: dict, exact: bool) -> list[tuple]:
    """``combinations``' rows, with ``exact`` only those whose dp x micro-batch divides the batch."""
    depth = arch.depth + arch.decoder_depth
    tps = [fixed["tp"]] if fixed.get("tp") else [t for t in tp_sizes(arch) if t <= hw.gpus_per_node and gpus % t == 0]
    cps = [fixed["cp"]] if fixed.get("cp") else ([1, 2, 4, 8, 16] if context >= LONG_CONTEXT else [1])
    rows = []
    for tp in tps or [1]:
        for cp in cps:
            if gpus % (tp * cp):
                continue
            rest = gpus // (tp * cp)
            pps = [fixed["pp"]] if fixed.get("pp") else [p for p in _divisors(rest) if p <= depth]
            for pp in pps:
                if rest % pp:
                    continue
                dp = rest // pp
                vs = [fixed["interleave"]] if fixed.get("interleave") else [v for v in (1, 2, 4, 8) if v == 1 or (pp > 1 and pp * v <= depth)]
                share = -(-global_batch // dp)  # sequences per replica per step
                mbs = [fixed["micro_batch"]] if fixed.get("micro_batch") else _micro_batches(share)
                if exact:
                    mbs = [mb for mb in mbs if global_batch % (dp * mb) == 0]
                for v in vs:
                    rows += [(tp, cp, pp, dp, v, mb) for mb in mbs]
    return rows


def recomputations(fixed: dict) -> list[int]:
    return [RECOMPUTE_CODE[fixed["recompute"]]] if fixed.get("recompute") else [0, 1, 2]


def zero_stages(fixed: dict) -> list[int]:
    return [fixed["zero"]] if fixed.get("zero") is not None else [0, 1, 2, 3]


def state_bytes(arch, tp, pp, dp, zero, nonembedding=None):
    """Weights, gradients and optimizer states per GPU (bytes): the most loaded stage's parameters
    (``run.stage_params``' rule) over tp, each part divided by dp from its ZeRO stage on;
    ``nonembedding``: ``blocks.params_nonembedding(arch)``, when the caller has it."""
    np = lib(tp, pp, dp, zero)
    depth = arch.depth + arch.decoder_depth
    embedding, head = run._embedding_matrices(arch)
    nonembedding = blocks.params_nonembedding(arch) if nonembedding is None else nonembedding
    layers = nonembedding * np.ceil(depth / pp) / depth
    stage = np.where(pp == 1, layers + embedding + (0 if arch.tied else head), layers + max(embedding, head))
    weights, gradients, optimizer = run.model_state_bytes(stage / tp, 0, 1)
    weights = np.where(zero >= 3, weights / dp, weights)
    gradients = np.where(zero >= 2, gradients / dp, gradients)
    optimizer = np.where(zero >= 1, optimizer / dp, optimizer)
    return weights + gradients + optimizer


def layer_activation_bytes(arch, tp, micro_batch, recompute, context: int, sequence_parallel: bool = True,
                           flash: bool = False):
    """One layer's activations per GPU (``run.activation_bytes_per_layer``) under recomputation code
    ``recompute``. A flash kernel keeps no T x T scores (Dao et al. 2022), so without recomputation it
    stores what selective recomputation stores."""
    np = lib(tp, micro_batch, recompute)
    ffn = run._ffn_per_token(arch)
    rc = np.where(flash & (recompute == 0), 1, recompute)
    return np.select([rc == 0, rc == 1, rc == 2], [
        run.activation_bytes_per_layer(context, micro_batch, arch.width, arch.heads, ffn, tp, sequence_parallel, name)
        for name in RECOMPUTE_NAMES])


def activation_bytes(arch, tp, pp, cp, micro_batch, recompute, context: int, sequence_parallel: bool = True,
                     flash: bool = False, per_layer=None):
    """Activations per GPU (bytes) on the first stage: ``layer_activation_bytes`` (or ``per_layer``,
    when the caller has it) for pp micro-batches in flight of ceil(L/p) layers, + the embedding's input
    and dropout (and with p = 1 the output layer and loss), over cp."""
    np = lib(tp, pp, cp, micro_batch)
    depth = arch.depth + arch.decoder_depth
    if per_layer is None:
        per_layer = layer_activation_bytes(arch, tp, micro_batch, recompute, context, sequence_parallel, flash)
    in_flight = np.ceil(depth / pp) * pp
    extra = (8 * context * micro_batch + context * micro_batch * arch.width) * pp
    extra = extra + np.where(pp == 1, 4 * context * micro_batch * (arch.width + (arch.vocab or 0)), 0.0)
    return (per_layer * in_flight + extra / (tp if sequence_parallel else 1)) / cp


def memory_per_gpu(arch, lay: dict, context: int, sequence_parallel: bool = True, flash: bool = False):
    """Training memory per GPU of each layout of ``lay`` (bytes): model states + activations."""
    return (state_bytes(arch, lay["tp"], lay["pp"], lay["dp"], lay["zero"])
            + activation_bytes(arch, lay["tp"], lay["pp"], lay["cp"], lay["micro_batch"], lay["recompute"], context,
                               sequence_parallel, flash))


def answer(arch, hw, chosen: dict, fits: bool, memory: float, tried: int, fitting: int, context: int,
            global_batch: int, gpus: int, base: Layout, forward: tuple | None = None, counts: tuple | None = None) -> tuple:
    """A search's answer (``search``'s docstring) for the ``chosen`` layout, timed again as one layout
    (``training_rates``): this search's and the brute force's (``perf.grid``) alike."""
    from dataclasses import replace

    layout = replace(base, **{k: chosen[k] for k in (*FIELDS, "recompute", "zero")})
    rates = {k: float(v) for k, v in training_rates(arch, hw, layout, context, global_batch, gpus, forward, counts).items()}
    chosen = {k: int(v) for k, v in chosen.items()}
    chosen["recompute"] = "op" if base.recompute_op and chosen["recompute"] == 1 else RECOMPUTE_NAMES[chosen["recompute"]]
    chosen["fits"] = fits
    return chosen, rates, float(memory), tried, fitting


def _floor(arch, hw, tp, cp, mb, context, forward, base, gemm=None) -> tuple:
    """(a layer's least time, the output head's) on one micro-batch of ``mb`` sequences: its forward
    (``forward``) at three passes, with tensor parallelism's four all-reduces; ``gemm`` as in
    ``perf.step.layer_forward`` (``gemm_floor``: a lower bound proportional to ``mb``)."""
    gemm_time, core, elementwise, _ = forward
    tokens = mb * context / cp
    efficiency = step_efficiency(base)
    layer = 3.0 * (gemm_time / efficiency + core / efficiency + elementwise / efficiency)
    return (layer + comm.tp_seconds(hw, tp, tokens * arch.width * BYTES, 4, base),
            head_seconds(arch, hw, tokens, tp, gemm, efficiency))


def _pipeline_bound(global_batch, dp, mb, pp, v, stage, optimizer):
    """A layout's step at least: ceil(B/(dp·mb)) micro-batches and the 1F1B bubble (pp - 1)/v, each
    taking ``stage`` seconds in the most loaded stage (or less), then the optimizer step (``train_step``)."""
    return (-(-global_batch // (dp * mb)) + (pp - 1) / v) * stage + optimizer


SAFETY = 1e-9  # a lower bound must beat the best step by this much (relative) to skip a layout: rounding
_SHARED: dict = {}  # what a layer costs does not depend on the depth: shared between the shapes of one width


def _shared(arch, hw, context, flash, attention, options) -> tuple[dict, dict, dict, dict]:
    """Memo dicts, per (tp, cp, micro-batch) or (tp, micro-batch), of one layer's forward, its step
    bound and its activations, and per (tp, cp) the lower bound of one sequence's layer and head, for
    every shape that differs from ``arch`` only in depth (a mixture of experts keeps its depth: its
    dense layers' share enters the layer). Bounded; pure."""
    from dataclasses import replace

    shape = arch if arch.moe else replace(arch, depth=1, decoder_depth=0)
    key = (shape, hw, context, flash, attention, options)
    if key not in _SHARED:
        if len(_SHARED) >= 64:
            _SHARED.clear()
        _SHARED[key] = ({}, {}, {}, {})
    return _SHARED[key]


_ORDERED: dict = {}  # the layouts in bound order ``step_floor`` found, for the search of the same shape that follows


def step_floor(arch, hw, gpus: int, context: int, global_batch: int, fixed: dict | None = None,
               attention: str | None = None, overlap: bool = True, **options) -> float | None:
    """A lower bound of the step seconds of whatever layout ``search`` returns for these arguments (any
    memory limit): the least of its layouts' bounds (``search``'s docstring), without timing any layout.
    None when no layout of the fixed degrees divides the GPUs."""
    return _search(arch, hw, gpus, context, global_batch, fixed, attention, overlap, None, False, True, options)


def search(arch, hw, gpus: int, context: int, global_batch: int, fixed: dict | None = None,
           attention: str | None = None, overlap: bool = True, memory_limit: float | None = None,
           count: bool = True, **options):
    """The fastest layout that fits: (layout dict of plain numbers, rates dict, memory bytes, layouts tried,
    layouts that fit, or None when ``count`` is False); None when no layout of the fixed degrees divides
    the GPUs. When nothing fits, the least memory layout is returned with ``fits`` False. ``options``:
    other Layout fields (sequence_parallel, dropout); ``memory_limit``: bytes per GPU (default the HBM;
    infinity: every layout fits, as a published run did).

    The same answer as ``perf.grid.search_grid`` on plain numbers, without evaluating every layout:
    - each (tp, cp, pp, dp, interleave, micro-batch) has a lower bound on its step: the pipeline's
      compute at three passes per micro-batch with tensor parallelism's four all-reduces, + the
      optimizer step at its least; they are visited in the order of a looser bound that needs no
      product timed for each micro-batch (the same with ``perf.step.gemm_floor``: one sequence's, times the
      micro-batch), the search stops at the first of those above the best step found, and a layout
      whose own bound is above it is skipped;
    - of the ZeRO stages 0-2 only the highest allowed is timed (with dp > 1 they take the same time
      but for the optimizer step, which stages 1-2 divide by dp, and 2 holds the least memory; with
      dp = 1 every stage is the same layout, and the first is kept); stage 3 is timed too;
    - of the recomputations only the first that fits is timed: later ones add time (a forward, the
      attention core) and save only memory; under a flash kernel none and selective are the same
      layout, and the first is kept;
    - ``count``: every layout's memory is added up from its model states and activations, to count
      the ones that fit (also done when nothing fits, to find the least memory one)."""
    key = (_key(arch, hw, gpus, context, global_batch, fixed or {}, attention, overlap, options), memory_limit, count)
    if key not in _ANSWERS:
        if len(_ANSWERS) >= 4096:
            _ANSWERS.clear()
        _ANSWERS[key] = _search(arch, hw, gpus, context, global_batch, fixed, attention, overlap, memory_limit, count,
                                False, options)
    found = _ANSWERS[key]
    return None if found is None else (dict(found[0]), dict(found[1]), *found[2:])  # callers may change their copies


_ANSWERS: dict = {}  # a search's answer by its arguments: plans and commands in one process ask for the same shapes again


def _key(arch, hw, gpus, context, global_batch, fixed: dict, attention, overlap, options: dict) -> tuple:
    """One search's shape, cluster, batch and layout settings, hashable: the memos' key."""
    return arch, hw, gpus, context, global_batch, tuple(sorted(fixed.items())), attention, overlap, tuple(sorted(options.items()))


def _search(arch, hw, gpus, context, global_batch, fixed, attention, overlap, memory_limit, count, floor_only, options):
    """``search`` (or, with ``floor_only``, the least bound ``step_floor`` returns): order the layouts by
    their bound, time the best of them, count those that fit."""
    fixed = fixed or {}
    key = _key(arch, hw, gpus, context, global_batch, fixed, attention, overlap, options)
    rows, ordered = _ORDERED.pop(key, None) or (combinations(arch, hw, gpus, context, global_batch, fixed), None)
    if not rows:
        return None
    tables = _tables(arch, hw, context, fixed, attention, overlap, options)
    base = tables.base
    if ordered is not None:  # step_floor ordered them already
        bounds, stages = ordered
    else:
        bounds, stages = _ordered(tables, rows, global_batch)
    if floor_only:
        if len(_ORDERED) >= 256:
            _ORDERED.clear()
        _ORDERED[key] = rows, (bounds, stages)
        return bounds[0][0]
    limit = hw.hbm_bytes if memory_limit is None else memory_limit
    counts = (tables.nonembedding, tables.embedding, blocks.flops_per_token(arch, context))
    best, row = _fastest(tables, rows, bounds, stages, global_batch, limit, counts)
    tried, fitting = len(rows) * len(tables.rcs) * len(tables.zeros), None
    if count or best is None:
        fitting, least = _fitting(tables, rows, limit)
    if best is None:
        memory_bytes, row = least
        return answer(arch, hw, dict(zip((*FIELDS, "recompute", "zero"), row)), False, memory_bytes, tried, fitting,
                       context, global_batch, gpus, base)
    return answer(arch, hw, dict(zip((*FIELDS, "recompute", "zero"), row)), True, best[2], tried, fitting,
                   context, global_batch, gpus, base, tables.forwards[row[0], row[1], row[5]], counts)


def fits(arch, hw, gpus: int, context: int, global_batch: int, fixed: dict | None = None, attention: str | None = None,
         overlap: bool = True, **options) -> bool | None:
    """Whether ``search`` with these arguments (and the HBM as the memory limit) finds a layout that fits,
    from the layouts' memory alone, none timed: a layout fits when one of the ZeRO stages ``_fastest`` tries
    (``_stages_tried``) holds its model states and the activations of one of its recomputations. None
    when no layout of the fixed degrees divides the GPUs."""
    fixed = fixed or {}
    rows = combinations(arch, hw, gpus, context, global_batch, fixed)
    if not rows:
        return None
    tables = _tables(arch, hw, context, fixed, attention, overlap, options)
    for tp, cp, pp, dp, v, mb in rows:
        state, acts = tables.memory(tp, cp, pp, dp, mb)
        if any(state[j] + a <= hw.hbm_bytes for j in tables.stages_tried(dp) for a in acts):
            return True
    return False


def _tables(arch, hw, context: int, fixed: dict, attention, overlap: bool, options: dict) -> "_Tables":
    """The ``_Tables`` of one search: its base layout, attention kernel and the terms shared by width."""
    base = Layout(attention=attention, overlap=overlap, **options)
    flash = attention_kernel(arch, base) == "flash"
    fields = {"attention": attention, "overlap": overlap, **options}
    return _Tables(arch, hw, context, fixed, flash, fields, base, options.get("sequence_parallel", True),
                   _shared(arch, hw, context, flash, attention, tuple(sorted(options.items()))))


def _stages_tried(zeros: list) -> list[int]:
    """The indices of the ZeRO stages ``_fastest`` times with dp > 1: the highest allowed of 0-2 (they take
    the same time but for the optimizer step, and it holds the least memory), and 3 (``_Tables.stages_tried``)."""
    low = [j for j, z in enumerate(zeros) if z <= 2]
    return low[-1:] + [j for j, z in enumerate(zeros) if z == 3]


class _Tables:
    """One search's shape, cluster and the terms its layouts share, each computed once: model states
    per ZeRO stage, activations per recomputation, and each (tp, cp, micro-batch)'s layer floor."""

    def __init__(self, arch, hw, context, fixed, flash, fields, base, sequence_parallel, shared):
        self.arch, self.hw, self.context, self.flash, self.fields, self.base = arch, hw, context, flash, fields, base
        self.sequence_parallel = sequence_parallel
        self.rcs, self.zeros = recomputations(fixed), zero_stages(fixed)
        self.kept = _stages_tried(self.zeros)
        self.forwards, self.floors, self.layers, self.per_sequence = shared
        self.states, self.activations = {}, {}
        self.nonembedding, self.embedding = blocks.params_nonembedding(arch), blocks.params_embedding(arch) or 0
        self.depth = arch.depth + arch.decoder_depth

    def stages_tried(self, dp: int) -> list[int]:
        """The indices of the ZeRO stages a layout of ``dp`` data-parallel ranks is timed (and fits) with:
        ``_stages_tried``'s with dp > 1; without data parallelism the stages are one, the first."""
        return self.kept if dp > 1 else [0]

    def memory(self, tp, cp, pp, dp, mb) -> tuple[list, list]:
        """(model states per ZeRO stage, activations per recomputation) of one layout key."""
        arch, context, states, activations, layers = self.arch, self.context, self.states, self.activations, self.layers
        if (tp, pp, dp) not in states:
            states[tp, pp, dp] = [state_bytes(arch, tp, pp, dp, z, self.nonembedding) for z in self.zeros]
        if (tp, pp, cp, mb) not in activations:
            if (tp, mb) not in layers:
                layers[tp, mb] = [layer_activation_bytes(arch, tp, mb, r, context, self.sequence_parallel, self.flash)
                                  for r in (0, 1, 2)]
            activations[tp, pp, cp, mb] = [activation_bytes(arch, tp, pp, cp, mb, r, context, self.sequence_parallel, self.flash,
                                                            layers[tp, mb][r]) for r in self.rcs]
        return states[tp, pp, dp], activations[tp, pp, cp, mb]

    def floor(self, tp, cp, mb) -> tuple:
        """(a layer's least time, the output head's) on one micro-batch: the bound's per-layer terms."""
        if (tp, cp, mb) not in self.floors:
            forward = layer_forward(self.arch, self.hw, Layout(tp=tp, cp=cp, micro_batch=mb, **self.fields), self.context)
            self.forwards[tp, cp, mb] = forward
            self.floors[tp, cp, mb] = _floor(self.arch, self.hw, tp, cp, mb, self.context, forward, self.base)
        return self.floors[tp, cp, mb]

    def sequence_floor(self, tp, cp) -> tuple:
        """The floor's lower bound for one sequence (with ``gemm_floor``): it grows as the micro-batch."""
        if (tp, cp) not in self.per_sequence:
            forward = layer_forward(self.arch, self.hw, Layout(tp=tp, cp=cp, micro_batch=1, **self.fields), self.context, gemm_floor)
            self.per_sequence[tp, cp] = _floor(self.arch, self.hw, tp, cp, 1, self.context, forward, self.base, gemm_floor)
        return self.per_sequence[tp, cp]


def _ordered(tables, rows, global_batch) -> tuple[list, dict]:
    """Every row's looser bound with its index, sorted; and per (tp, pp, dp) the most loaded stage's
    layers and its optimizer step at its least (divided by dp when a ZeRO stage allows it)."""
    divided = any(z >= 1 for z in tables.zeros)
    bounds, stages, last = [], {}, None
    for index, (tp, cp, pp, dp, v, mb) in enumerate(rows):
        if (tp, cp, pp, dp) != last:  # rows come grouped by these (``combinations``): their terms once per group
            last = tp, cp, pp, dp
            layer, head = tables.sequence_floor(tp, cp)
            if (tp, pp, dp) not in stages:
                stage_layers = -(-tables.depth // pp)
                params_gpu = stage_params_per_gpu(tables.arch, tables.nonembedding, tables.embedding, stage_layers, pp, tp)
                stages[tp, pp, dp] = stage_layers, optimizer_seconds(tables.hw, params_gpu, dp if divided else 1.0), params_gpu
            stage_layers, optimizer, _ = stages[tp, pp, dp]
            sequence = stage_layers * layer + head  # one sequence through the most loaded stage, at least
        bounds.append((_pipeline_bound(global_batch, dp, mb, pp, v, mb * sequence, optimizer), index))
    bounds.sort()
    return bounds, stages


def _fastest(tables, rows, bounds, stages, global_batch, limit, counts) -> tuple:
    """(the best key: step, ZeRO 3, memory, order; the row) of the layouts that fit, timed in bound
    order until a bound passes the best step; (None, None) when none fits. A row whose own bound
    (``_step_bound``) passes the best step is skipped, and so is a ZeRO stage and recomputation whose
    bound, with what they add at least, does."""
    rcs, zeros = tables.rcs, tables.zeros
    best = row = None
    for low_bound, index in bounds:
        if best is not None and low_bound * (1 - SAFETY) > best[0]:
            break
        tp, cp, pp, dp, v, mb = rows[index]
        terms = _row_terms(tables, stages, rows[index])
        if best is not None and _step_bound(tables.hw, global_batch, rows[index], terms) * (1 - SAFETY) > best[0]:
            continue
        state, acts = tables.memory(tp, cp, pp, dp, mb)
        for j in tables.stages_tried(dp):
            i = next((i for i, a in enumerate(acts) if state[j] + a <= limit), None)
            if i is None or (best is not None and (rcs[i] == 2 or zeros[j] >= 3) and _step_bound(
                    tables.hw, global_batch, rows[index], terms, rcs[i], zeros[j]) * (1 - SAFETY) > best[0]):
                continue
            lay = Layout(tp=tp, cp=cp, pp=pp, dp=dp, interleave=v, micro_batch=mb, recompute=rcs[i], zero=zeros[j], **tables.fields)
            step = train_step(tables.arch, tables.hw, lay, tables.context, global_batch, tables.forwards[tp, cp, mb], counts)["step_seconds"]
            key = (step, zeros[j] >= 3, state[j] + acts[i], index * len(rcs) * len(zeros) + i * len(zeros) + j)
            if best is None or key < best:
                best, row = key, (tp, cp, pp, dp, v, mb, rcs[i], zeros[j])
    return best, row


def _row_terms(tables, stages, row) -> tuple:
    """What a row's step bound is made of: (a layer's least time on its micro-batch, the output head's
    with the pipeline sends of a micro-batch as ``train_step`` has them, the most loaded stage's layers,
    the optimizer step at its least, that stage's parameters per GPU)."""
    tp, cp, pp, dp, v, mb = row
    layer, head = tables.floor(tp, cp, mb)
    if pp > 1:
        head += comm.p2p_seconds(tables.hw, tp, cp, dp, pp, mb * tables.context / cp * tables.arch.width * BYTES,
                                 tables.base, v)
    return (layer, head, *stages[tp, pp, dp])


def _step_bound(hw, global_batch, row, terms, recompute: int = 0, zero: int = 0) -> float:
    """A layout's step at least (``_pipeline_bound`` of ``_row_terms``), with what its recomputation and
    ZeRO stage add at least (``train_step``): full recomputation runs the forward again (a layer's three
    passes become four: its floor times 4/3; tensor parallelism's all-reduces go from four to six, more
    than 4/3); ZeRO-3 gathers the weights for every micro-batch, and the first layer's gather and the
    last one's reduce-scatter are never hidden (``comm.dp_seconds``: at least 2/3 of the three
    collectives over the stage's layers, per micro-batch)."""
    tp, cp, pp, dp, v, mb = row
    layer, head, stage_layers, optimizer, params_gpu = terms
    if recompute == 2:
        layer = layer * 4.0 / 3.0
    bound = _pipeline_bound(global_batch, dp, mb, pp, v, stage_layers * layer + head, optimizer)
    if zero >= 3 and dp > 1:
        micro = -(-global_batch // (dp * mb))
        bound += micro * 2.0 * comm.gather(hw, tp * cp, dp, params_gpu * BYTES) / stage_layers
    return bound


def _fitting(tables, rows, limit) -> tuple[int, tuple | None]:
    """How many layouts fit in ``limit`` bytes, and (memory, row) of the least-memory one that does not."""
    fitting, least, counted = 0, None, {}
    for tp, cp, pp, dp, v, mb in rows:
        if (tp, cp, pp, dp, mb) in counted:  # its interleaved degrees share the memory (and come later)
            fitting += counted[tp, cp, pp, dp, mb]
            continue
        state, acts = tables.memory(tp, cp, pp, dp, mb)
        fits = 0
        for i, a in enumerate(acts):
            for j, st in enumerate(state):
                if st + a <= limit:
                    fits += 1
                elif least is None or st + a < least[0]:
                    least = (st + a, (tp, cp, pp, dp, v, mb, tables.rcs[i], tables.zeros[j]))
        counted[tp, cp, pp, dp, mb] = fits
        fitting += fits
    return fitting, least
