"""The training run from the command line: a budget with its training length, and the RunSpec
(``cost.run.RunSpec``) every shape's costs are computed under.

Budget and length together (README "Costs of a training run"):
- ``--params N``: N; no training length (costs that need one are null);
- ``--params N --tokens D``: N trained on D tokens;
- ``--flops C --tokens D``: N = C/(6·D) (Kaplan et al. 2020's C = 6·N·D), trained on D tokens;
- ``--tokens D`` alone: compute-optimal N = D/20 (Hoffmann et al. 2022), trained on D tokens;
- ``--flops C`` alone: compute-optimal N = sqrt(C/120), trained on D = 20·N tokens.
"""
from __future__ import annotations

from decimal import Decimal

from ..core.errors import InputError
from .inputs import bounded_number, budgets, check_list_rows, expand_stdin, parse_each
from ..core.frozen import frozen


@frozen
class Budgets:
    """Parsed budgets: where they came from, the counts, and each one's training tokens (None: not given)."""

    source: str
    values: list
    tokens: list


def _token_count(text: str) -> float:
    from ..core.budgets import MAX_TOKENS, parse_quantity

    value = parse_quantity(text, "--tokens")
    if not Decimal(1) <= value <= MAX_TOKENS:
        raise InputError("--tokens", text, "expected a number of training tokens from 1 to 1e50, such as 2e12")
    return float(value)


def budgets_with_tokens(params, flops, tokens) -> Budgets:
    """The budgets and their training lengths from --params, --flops and --tokens (module docstring).
    With --params or --flops, --tokens is one value for every budget or one per budget, in order."""
    from ..core.budgets import FLOPS_PER_PARAM_TOKEN, TOKENS_PER_PARAM, check_params, parse_quantity

    if params and flops:
        raise InputError("options", "--params --flops", "expected one budget: --params or --flops (each may come with --tokens)")
    if not tokens or not (params or flops):
        source, values = budgets(params, flops, tokens)
        if source == "tokens":  # D alone: N = D/20, and the run is D tokens long
            lengths = parse_each(expand_stdin(tokens), _token_count)
        elif source == "flops":  # C alone: compute-optimal, D = 20·N
            lengths = [float(TOKENS_PER_PARAM * n) for n in values]
        else:
            lengths = [None] * len(values)
        return Budgets(source, values, lengths)
    lengths = parse_each(expand_stdin(tokens), _token_count)
    if params:
        source, values = budgets(params, None, None)
    else:
        texts = expand_stdin(flops)
        check_list_rows(len(texts), "--flops", f"{len(texts)} budgets", "budgets")
        accepted = "expected a FLOP budget C with C/(6·D) from 100 to 1e50 parameters"
        values = []
        for text, length in zip(texts, lengths if len(lengths) == len(texts) else lengths * len(texts)):
            quantity = parse_each([text], lambda t: parse_quantity(t, "FLOP budget"))[0]
            values.append(check_params(quantity / (FLOPS_PER_PARAM_TOKEN * Decimal(repr(length))), text, "FLOP budget", accepted))
        source = "flops"
    if len(lengths) not in (1, len(values)):
        raise InputError("--tokens", f"{len(lengths)} values", f"expected one training length, or one per budget ({len(values)})")
    return Budgets(source, values, lengths * len(values) if len(lengths) == 1 else lengths)  # values keep their texts


def run_spec(tokens=None, gpu="h100", gpus=None, tp=1, pp=1, zero=1, recompute="selective", mfu=0.4, context=2048, batch=1,
             **model):
    """The cost.run.RunSpec of the options (it checks itself: a bad value is an InputError naming its flag);
    ``model``: the RunSpec fields only the performance model reads (micro_batch, global_batch, attention, efficiency)."""
    from ..cost.run import RunSpec

    if isinstance(mfu, str):  # a text option (a float option would load Pydantic): parsed here
        mfu = mfu_rate(mfu)
    return RunSpec(tokens=tokens, gpu=gpu.strip().lower(), gpus=gpus, tp=tp, pp=pp, zero=zero,
                   recompute=str(getattr(recompute, "value", recompute)).strip().lower(), mfu=mfu, context=context, batch=batch,
                   **{k: v for k, v in model.items() if v is not None})


def _choice(text, option: str, accepted: tuple) -> str | None:
    """A choice option's value, lower case, or None when not given; InputError naming the accepted values."""
    if text is None:
        return None
    value = text.strip().lower()
    if value not in accepted:
        raise InputError(option, text, "expected " + (" or ".join(accepted) if len(accepted) == 2 else "one of " + ", ".join(accepted)))
    return value


def train_run(train, batch: int = 1):
    """(cost.run.RunSpec, the fixed layout fields, the --mfu override or None) of cost's run options
    (options.TRAIN: cost, compare, inspect, calibrate). The fixed fields are the layout the user gave,
    the rest searched by the performance model; every option is checked here, before any work."""
    recompute = _choice(train.recompute, "--recompute", ("none", "selective", "full", "op"))
    attention = _choice(train.attention, "--attention", ("flash", "unfused"))
    rate = None if train.mfu is None else mfu_rate(train.mfu)
    profile = _profile(train.profile, train.gpu, rate)
    if rate is not None and train.cp not in (None, 1):
        raise InputError("--cp", train.cp, "--mfu times the layout given without context parallelism (its flat cost counts "
                         "none); drop --cp, or --mfu to let the performance model time it")
    spec = run_spec(one_token_count(train.tokens), train.gpu, train.gpus, train.tp or 1, train.pp or 1,
                    1 if train.zero is None else train.zero, recompute or "selective", rate or 0.4, train.context, batch,
                    micro_batch=train.micro_batch, global_batch=train.global_batch, attention=attention, **profile)
    fixed = tuple((k, v) for k, v in (("tp", train.tp), ("pp", train.pp), ("cp", train.cp), ("micro_batch", train.micro_batch),
                                      ("zero", train.zero), ("recompute", recompute)) if v is not None)
    return spec, fixed, rate


def _profile(path, gpu: str, rate) -> dict:
    """The RunSpec fields of the calibration profile at ``path`` (efficiency, calibrated_on; none
    without one), checked against ``--gpu``."""
    if path is None:
        return {}
    if rate is not None:
        raise InputError("--profile", path, "times from a calibrated efficiency; --mfu times from a flat utilization: give one of them")
    from ..arch.hardware import accelerator
    from ..loop.profiles import read_profile

    profile = read_profile(path, accelerator(gpu).name)
    return {"efficiency": profile.efficiency, "calibrated_on": profile.calibrated_on, "serving_efficiency": profile.serving_efficiency}


def mfu_rate(text: str) -> float:
    """--mfu as a number, in its one range for every command (arch.hardware.MIN_MFU to 1)."""
    from ..arch.hardware import MFU_ACCEPTED, MIN_MFU

    return bounded_number(text, "--mfu", 1, MFU_ACCEPTED, lowest=MIN_MFU)


def given_run(run):
    """(RunSpec, fixed layout fields, --mfu or None) of the run options of given shapes (options.RUN: compare, inspect)."""
    return train_run(run, run.batch)


def searched_run(layout, tp, context, batch):
    """The RunSpec of a layout the performance model searches (options.LAYOUT: plan, sweep); the
    searched fields at their flat-utilization defaults. Every run option is checked here."""
    attention = _choice(layout.attention, "--attention", ("flash", "unfused"))
    profile = _profile(layout.profile, layout.gpu, layout.mfu)
    return run_spec(None, layout.gpu, layout.gpus, tp, layout.pp or 1, 1 if layout.zero is None else layout.zero,
                    layout.recompute or "selective", layout.mfu or "0.4", context, batch, micro_batch=layout.micro_batch,
                    global_batch=layout.global_batch, attention=attention, **profile)


RUN_OPTIONS = ("gpus", "pp", "zero", "recompute", "micro_batch", "global_batch", "attention", "mfu", "profile")


def run_options_given(layout, skip: tuple = ()) -> list[str]:
    """The run options given (``options.LAYOUT``: the cluster, the layout fields, --mfu, --profile) as
    ``--name value``, --gpu only when not the default, those named in ``skip`` left out: what a warning
    names when a mode costs no run (plan --brief and --rules, sweep without --tokens)."""
    from ..arch.hardware import DEFAULT_GPU

    given = [f"--gpu {layout.gpu}"] if layout.gpu.strip().lower() != DEFAULT_GPU else []
    return given + [f"--{name.replace('_', '-')} {getattr(layout, name)}" for name in RUN_OPTIONS
                    if name not in skip and getattr(layout, name) is not None]


def fixed_layout(layout) -> tuple:
    """The layout fields given on the command line ((name, value) pairs); the rest is searched."""
    recompute = _choice(layout.recompute, "--recompute", ("none", "selective", "full", "op"))
    return tuple((k, v) for k, v in (("pp", layout.pp), ("zero", layout.zero), ("micro_batch", layout.micro_batch),
                                      ("recompute", recompute)) if v is not None)


def one_token_count(tokens) -> float | None:
    """--tokens on a command that costs given shapes (compare, inspect): one training length or none."""
    if not tokens:
        return None
    texts = expand_stdin(tokens)
    if len(texts) != 1:
        raise InputError("--tokens", " ".join(texts), "expected one training length, such as 2e12")
    return parse_each(texts, _token_count)[0]


def pipeline_stages(pp, named, uneven: bool = True) -> None:
    """--pp against each (name, blocks.Architecture) given: more stages than a shape's layers is an
    input error (``run.check_stages``), and with ``uneven`` a degree that does not divide its layers
    a warning (what --help promises: compare, inspect, cost). An architecture of None (not counted)
    is skipped."""
    if not pp or pp == 1:
        return
    from ..cost.run import check_stages, imbalance
    from .notices import warn

    layered = [(name, arch.depth + arch.decoder_depth) for name, arch in named if arch is not None]
    for name, depth in layered:
        check_stages(pp, depth, name)
    for name, depth in layered if uneven else ():
        if depth % pp:
            warn(f"--pp {pp} does not divide the {depth:,} layers of {name}: its most loaded stage holds {-(-depth // pp):,}, "
                 f"so its time is costed {imbalance(depth, pp):.3f}x an even split")


def costed(record, arch, spec, fixed: tuple = (), rate=None, loss: dict | None = None):
    """``record`` with the cost fields of ``arch`` under ``spec`` (all null when the layout is unknown):
    timed by the performance model in its best layout of the ``fixed`` fields (``cost.perf.modeled``, as
    cost, plan and sweep time it; with its decode time per token), or at the flat --mfu ``rate``; with
    ``loss`` (flat loss fields: ``target.Targeted.fields``) its ``loss`` record and times to the target too."""
    from ..cost.fields import TIME_FIELDS, cost_fields, empty_cost_fields, with_costs

    if arch is None:
        return with_costs(record, empty_cost_fields())
    from ..cost.perf.modeled import decode_seconds, modeled_costs
    from ..cost.perf.predict import flat_costs

    if rate is not None:  # the layout given, at the flat --mfu (as cost times it); the decode time too
        costs, extra = flat_costs(arch, spec)
        extra["decode_seconds_per_token"] = decode_seconds(arch, spec, fixed)
    else:
        costs, extra = modeled_costs(arch, spec, fixed, serve=True)  # the decode time too: compare's screen prints it
    fields = cost_fields(costs, spec.tokens is not None)
    if spec.gpus is None:  # searched on one node; without --gpus no wall-clock days (as sweep)
        fields["train_days"] = None
    timed = {name: extra.get(name) for name in TIME_FIELDS + ("decode_seconds_per_token", "global_batch")}
    return with_costs(record, {**fields, **timed, "calibrated_on": spec.calibrated_on, **(loss or {})}, spec)
