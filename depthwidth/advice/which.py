"""Which of two shapes to train (`compare`'s first screen), by the plan's own models:
each shape's predicted loss penalty and time to the best shape's loss (``target.assess``, the loss
model of ``cost/loss.py``), its run timed by the performance model in its best layout on the
cluster (``pick.costing``, as `plan` costs its candidates), and the pick as `plan --prefer balanced`
makes it (``target.score``: the least wall-clock time to the target loss; GPU-hours without days).
The figures a reader checks (step time, MFU, memory, decode latency) are `cost`'s record of the
shape on the same cluster (``predict.predict``). Without a training length both shapes are costed
at the plan's default: 20 tokens per parameter of the larger (Hoffmann et al. 2022). Pure: no I/O.
"""
from __future__ import annotations

from ..core.frozen import frozen


@frozen
class Side:
    """One shape: its label (deep | shallow), LxD name, the count its tokens and target are measured
    in, `cost`'s record on the cluster (a dict) and its ``target.Targeted``."""

    label: str
    name: str
    params: int
    record: dict
    targeted: object


@frozen
class Which:
    """The two sides, the pick first; the run both are costed on (tokens, GPUs, whether each was
    assumed) and the size whose best shape's loss is the target."""

    sides: tuple
    tokens: float
    tokens_assumed: bool
    gpu: str
    gpus: int
    gpus_assumed: bool
    target_params: int
    modeled: bool  # True: the performance model's time; False: the flat --mfu given
    loss_notes: tuple


@frozen
class CompareSetup:
    """What both shapes of `compare` are costed on, its screen and its JSON alike (names as plan's ``setup``):
    the accelerator and GPU count (``gpus_assumed``: no --gpus, so one node, or the smallest cluster that holds
    the larger shape), the training length (``tokens_assumed``: no --tokens, so 20 tokens per parameter of the
    larger, Hoffmann et al. 2022), and the size whose best shape's loss is the target (``target_params``)."""

    gpu: str
    gpus: int
    gpus_assumed: bool
    tokens: float
    tokens_assumed: bool
    target_params: int


def compare_setup(w: Which) -> CompareSetup:
    """The run ``w`` costs both shapes on, with what it assumed."""
    return CompareSetup(w.gpu, w.gpus, w.gpus_assumed, w.tokens, w.tokens_assumed, w.target_params)


def loss_fields(w: Which) -> dict:
    """{label: the flat loss fields (``target.Targeted.fields``: loss_vs_best and its interval, the time to the
    target loss in days and GPU-hours)} of each side of ``w``: the figures its screen prints, at its length."""
    return {side.label: side.targeted.fields() for side in w.sides}


def which(named: list, spec, fixed: tuple = (), modeled: bool = True) -> Which:
    """The Which of ``named`` = [(label, name, blocks.Architecture)] on ``spec`` (a cost.run.RunSpec:
    accelerator, GPUs or None, context, tokens or None, and with ``modeled`` False the flat --mfu),
    ``fixed`` the layout fields the user gave ((name, value) pairs), the rest searched."""
    from ..arch import blocks
    from ..cost.perf.modeled import cluster as modeled_cluster
    from ..cost.perf.predict import predict
    from . import target
    from .pick import costing

    counts = [blocks.params_nonembedding(arch) for _, _, arch in named]
    budget = max(counts)
    largest = max(zip(counts, range(len(named))))[1]  # without --gpus: the smallest cluster that holds the larger one
    cost = costing(spec, budget, spec.tokens, spec.context, model=modeled, fixed=fixed, probe=named[largest][2])
    run = cost.ranking
    cluster = modeled_cluster(run, fixed, mfu=None if modeled else run.mfu, serve=True, count_layouts=False)
    sides = [Side(label, name, count, predict(arch, cluster), cost.assess(arch, count, budget))
             for (label, name, arch), count in zip(named, counts)]
    ranked = target.score([s.targeted for s in sides], "balanced")
    left = list(sides)  # two equal shapes share one memoized Targeted: take each side once
    order = [left.pop(next(i for i, s in enumerate(left) if s.targeted is t)) for _, t in ranked]
    return Which(tuple(order), run.tokens, spec.tokens is None, run.gpu, run.gpus, spec.gpus is None, budget, modeled,
                 tuple(target.loss_notes(budget, spec.tokens)))
