"""Real models against the theory: a catalogue row or a Hugging Face config, as a shape record
plus how the model compares with the plan for its own size."""
from __future__ import annotations

from functools import lru_cache

from ..arch.hardware import tp_sizes
from .rules.builtin import empirical_optimum
from ..arch.record import ShapeRecord, block_fields, fractional_heads_note, repeats, shape_record
from ..cost.fields import Loss
from ..theory.separation import bounds, min_depth
from ..core.frozen import frozen
from .which import CompareSetup


def shape_list_chunks(depths, widths, heads, reading: str, rows_per_chunk: int = 1 << 16):
    """``shape_record`` of the vanilla block for parallel lists of shapes (``bounds -`` with many
    lines), vectorized: chunks of arrays for ``output.stream.stream_grid`` that spell exactly what the
    scalar records spell. Names of catalogue models never come here (their blocks differ)."""
    import numpy as np

    from ..arch.blocks import vanilla, vanilla_counts
    from ..theory.separation import bound_notes, bounds_grid, params, threshold_depth

    depths, widths, heads = (np.asarray(a, dtype=np.int64) for a in (depths, widths, heads))
    divisors = {}
    for start in range(0, depths.size, rows_per_chunk):
        L, d, H = (a[start:start + rows_per_chunk] for a in (depths, widths, heads))
        big = int(d.max(initial=1)) ** 2 * int(L.max(initial=1)) * 400 >= 2**63  # counts past int64: Python ints
        Lx, dx = (L.astype(object), d.astype(object)) if big else (L, d)
        whole = d % H == 0
        chunk = {"depth": L, "width": d, "heads": H, "params_12Ld2": params(Lx, dx), "threshold_depth": threshold_depth(d.astype(np.float64), xp=np),
                 **bounds_grid(L, d, H, reading), "c2_reading": reading, **vanilla_counts(Lx, dx)}
        chunk["kv_heads"] = H
        chunk["head_dim"] = np.where(whole, d // H, -1)
        tp = np.full(L.size, None, dtype=object)
        notes = np.full(L.size, None, dtype=object)
        flagged = (chunk["regime_code"] == 1) | chunk["lower_vacuous"] | ((chunk["theorem"] > 0) & np.isnan(chunk["log3_sep_upper"])) | ~whole
        for i in np.flatnonzero(whole).tolist():
            h = int(H[i])
            if h not in divisors:
                divisors[h] = tuple(tp_sizes(vanilla(1, h * 64, h)))  # t | H (and so t | 4d and t | G = H)
            tp[i] = divisors[h]
        for i in np.flatnonzero(flagged).tolist():
            theorem = int(chunk["theorem"][i])
            row = bound_notes(int(L[i]), theorem or None, float(chunk["lower_formula"][i]), float(chunk["upper_formula"][i]))
            if not whole[i]:
                row += (fractional_heads_note(int(d[i]), int(H[i])),)
            notes[i] = row
        chunk["tp_sizes"], chunk["notes"] = tp, notes
        yield chunk


def block_for(text: str, shape):
    """The block a shape argument names: a catalogue model's own block (at its own heads), else vanilla."""
    from ..arch.blocks import vanilla

    if not (isinstance(text, str) and text.strip()[:1].isdigit()):  # a name, not LxD[xH]: only names need the catalogue
        from ..arch.catalog import find

        model = find(text)
        if model is not None and model.heads == shape.heads:
            return model.architecture
    return vanilla(shape.depth, shape.width, shape.heads)


@lru_cache(maxsize=None)
def comparison_report_type():
    """comparison.Comparison with ShapeRecord sides and the empirical context (built on first use:
    only compare imports the solver)."""
    from ..theory.comparison import Comparison

    @frozen
    class ComparisonReport(Comparison):
        """The compare record: both shape records with their blocks, the verdict and the widths,
        the empirical optimum's depth at each side's size (a fit, not theory), and the run both are
        costed on with what it assumed (``which.CompareSetup``; null until costed)."""

        deep: ShapeRecord
        shallow: ShapeRecord
        deep_empirical_depth: float
        shallow_empirical_depth: float
        setup: CompareSetup | None = None

    return ComparisonReport


def compare_with_blocks(comparison, deep_arch, shallow_arch):
    """A comparison.Comparison whose deep and shallow records carry their blocks, plus the empirical
    context the mathematics leaves out: each side's empirical optimum depth, and where each sits
    against the empirical rules (rules.shape_positions)."""
    from .rules.builtin import shape_positions

    sides = (("deep", comparison.deep), ("shallow", comparison.shallow))
    notes = comparison.notes + tuple(f"{name} {r.depth}x{r.width}: {n}" for name, r in sides
                                     for n in shape_positions(r.depth, r.width, r.params_12Ld2))
    return comparison_report_type()(**{**comparison.__dict__, "deep": shape_record(comparison.deep, deep_arch),
                                   "shallow": shape_record(comparison.shallow, shallow_arch), "notes": notes},
                                deep_empirical_depth=empirical_optimum(comparison.deep.params_12Ld2)[0],
                                shallow_empirical_depth=empirical_optimum(comparison.shallow.params_12Ld2)[0])

# the loss model (cost/loss.py; the same one plan and sweep use) on a given shape: the optimum depth for
# its size, and its predicted loss penalty against the best shape of its size (``loss``: plan's Loss record),
# each with its interval
LOSS_TYPES = {**dict.fromkeys(("optimal_depth", "optimal_depth_low", "optimal_depth_high"), "float"), "loss": "Loss"}
# a real model against the plan for its own size (``size_notes``): the minimal depth and the Levine et al. fit's optimum
SIZE_TYPES = {"min_depth": "int", "empirical_depth": "float", "empirical_width": "float"}


@frozen
@repeats(LOSS_TYPES, LOSS_TYPES, after="source")
@repeats(SIZE_TYPES, SIZE_TYPES, after="aspect_ratio")
class ModelReport(ShapeRecord):
    """The models record: the shape record of a published architecture plus its catalogue data."""

    name: str
    display_name: str
    family: str
    year: int
    vocab: int | None
    published_params: float | None
    aspect_ratio: float
    source: str


@frozen
@repeats(LOSS_TYPES, LOSS_TYPES, after="vocab_bottleneck")
@repeats(SIZE_TYPES, SIZE_TYPES, after="vocab")
class ConfigReport(ShapeRecord):
    """The inspect record: the shape record of a config.json plus its real structure.

    ``attention_layers``: layers with self-attention (fewer than depth in a hybrid or recurrent
    stack); ``params_other_mixers``: the weight matrices of its other token mixers (Mamba, Mamba-2,
    Gated DeltaNet), already inside params_nonembedding (0 for a plain stack; null when not counted)."""

    source: str
    model_type: str | None
    decoder_depth: int
    vocab: int | None
    vocab_bottleneck: bool

    attention_layers: int | None = None
    params_other_mixers: int | None = None


def loss_report(depth: int, size: float, width: int | None = None, ffn: int | None = None) -> dict:
    """The loss model's fields of a shape of ``depth`` layers (``ffn`` wide on ``width``; None: at the best
    feed-forward ratio) and ``size`` parameters (cost/loss.py)."""
    from ..cost.loss import loss_penalty, optimal_depth

    optimum = [float(v) for v in optimal_depth(max(size, 1))]
    penalty = Loss(*(float(v) for v in loss_penalty(depth, max(size, 1), None, width, ffn)))
    return dict(optimal_depth=optimum[0], optimal_depth_low=optimum[1], optimal_depth_high=optimum[2], loss=penalty)


def size_notes(depth: int, width: int, size: int, vocab: int | None, ffn: int | None = None) -> tuple[tuple[str, ...], dict]:
    """How a model's depth compares with the plan for its size, and the vocabulary note; and the record's
    fields of that comparison (``SIZE_TYPES``)."""
    lowest = min_depth(max(size, 1))
    emp_depth, emp_width = empirical_optimum(size)
    side = "respects" if depth >= lowest else "is below"
    loss = loss_report(depth, size, width, ffn)
    optimum, low, high = loss["optimal_depth"], loss["optimal_depth_low"], loss["optimal_depth_high"]
    notes = [f"depth {depth} {side} the minimal depth {lowest} for its size (threshold rule, Levine et al. 2020)",
             f"optimal depth for its size by the loss model: {optimum:.0f} [{low:.0f}, {high:.0f}]; this model is "
             f"{'deeper' if depth > optimum else 'shallower'} by {abs(depth / optimum - 1):.0%}, a predicted loss penalty of "
             f"{loss['loss'].vs_best:+.2%} [{loss['loss'].low:+.2%}, {loss['loss'].high:+.2%}] vs the best shape "
             "of its size (fitted on Gemstones and Petty et al., 41M-2B; docs/loss.md)",
             f"the Levine et al. fit alone (one rule of the evidence) puts it at depth {emp_depth:.1f}, width {emp_width:,.0f}"]
    if vocab is not None and width > vocab:
        notes.append(f"width {width} exceeds the vocabulary size {vocab}: the embedding rank caps what extra width adds "
                     "(vocabulary bottleneck, Wies et al. 2021)")
    from .rules.builtin import shape_positions  # where the shape sits against each empirical rule (the Levine fit is above)
    notes += shape_positions(depth, width, size, skip=("levine-fit",))
    return tuple(notes), dict(min_depth=lowest, empirical_depth=emp_depth, empirical_width=emp_width)


def model_report(model, reading: str = "consistent") -> ModelReport:
    """A catalogue Model with its block counts, regime, bounds and plan comparison (size by 12·L·d²).
    ``reading``: Theorem 2's c2 reading (theory.C2_READINGS)."""
    record = shape_record(bounds(model.depth, model.width, model.heads, reading), model.architecture)
    notes, compared = size_notes(model.depth, model.width, record.params_12Ld2, model.vocab, model.ffn)
    return ModelReport(**{**record.__dict__, "notes": record.notes + notes}, name=model.name, display_name=model.display_name,
                       family=model.family, year=model.year, vocab=model.vocab, published_params=model.params,
                       aspect_ratio=model.width / model.depth, **compared, source=model.source,
                       **loss_report(model.depth, record.params_12Ld2, model.width, model.ffn))


def config_report(config, reading: str = "consistent") -> ConfigReport:
    """A hf.config.ConfigModel with its block counts, regime, bounds and plan comparison (size by its real count).
    ``reading``: Theorem 2's c2 reading (theory.C2_READINGS)."""
    shape = config.shape
    record = bounds(shape.depth, shape.width, shape.heads, reading)
    known = dict(kv_heads=config.kv_heads, head_dim=config.head_dim, ffn=config.ffn, gated=config.gated,
                 experts=config.experts, top_k=config.top_k)
    fields, block_notes = block_fields(config.architecture, shape.heads, **known)
    real = config.params_nonembedding
    size = real if real is not None else getattr(config, "params_12Ld2", getattr(config, "params_convention", None))
    notes, compared = size_notes(config.depth, config.width, size, config.vocab, config.ffn)
    if real is None:
        notes = ("its size for the plan comparison is 12·L·d² (the real count is unavailable)",) + notes
    return ConfigReport(**{**record.__dict__, "notes": record.notes + config.notes + block_notes + notes}, **fields,
                        source=config.source, model_type=config.model_type, decoder_depth=config.decoder_depth,
                        vocab=config.vocab, **compared, vocab_bottleneck=config.vocab is not None and config.width > config.vocab,
                        attention_layers=getattr(config, "attention_layers", None),
                        params_other_mixers=getattr(config, "params_other_mixers", None),
                        **loss_report(config.depth, size, config.width, config.ffn))
