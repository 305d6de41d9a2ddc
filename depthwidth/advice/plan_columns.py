"""The threshold rule's answer for many budgets at once, as NumPy columns (`plan --brief`): the same
code as one budget's plan (``threshold.py``, with arrays where ``plan`` has numbers), and the
fields of the record ``plan`` prints for it (``plan_record.PlanBrief``).

Every distinct (depth, width) near any budget's ideal width is built once by ``snapping.ShapeFacts``
(valid, shardability, count): budgets that share widths (widths below ~10^6) cost a few us each;
past that each budget has 25 widths of its own.

Rows ``plan`` refuses (a budget too large, below every valid shape, no valid shape nearby) carry the
refusal (the ``InputError`` ``plan`` raises) in ``PlanColumns.error``; their other values are meaningless. ``plan`` also refuses a
budget whose rule-recommended shape has no valid shape nearby, which is not computed here:
``rule_refusals`` finds those rows (tiny budgets) with ``plan`` itself.
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Sequence

from ..arch.blocks import flops_per_token, kv_bytes_per_token, params_active, params_embedding, params_nonembedding
from ..arch.hardware import tp_sizes
from ..arch.snapping import BUDGET_TOLERANCE, ShapeFacts, no_valid_shape
from ..core.errors import InputError
from ..core.num import EXACT_FLOAT
from ..theory.separation import REGIME_CODES, regime_codes
from .planner import PlanOptions, plan
from .threshold import MAX_PLAN_WIDTH, below_every_shape, minimal_shape, refusals, threshold, too_large

BUDGET_FIELDS = {"total": "params_nonembedding", "active": "params_active", "with-embeddings": "params_with_embeddings"}
COUNTED = ("params_nonembedding", "params_active", "flops_per_token", "kv_bytes_per_token")
FIXED = ("heads", "kv_heads", "head_dim", "ffn", "gated", "experts", "top_k", "params_embedding", "tp_sizes")


@dataclass
class PlanColumns:
    """``plan_many``'s answer: one entry per budget, in order, as NumPy arrays: int64 depths and
    widths, float64 ``min_depth_exact``/``width_exact``/``budget_deviation``, and object arrays
    for the counts (Python ints, exact past int64), the nullable fields (None for null) and
    ``tp_sizes`` (tuples). ``error`` is None for a planned row, else the InputError ``plan`` raises
    (its text: ``str``); the other values of such a row are meaningless (0, NaN or None)."""

    budget: object  # the budgets as given (int64, or Python ints)
    budget_count: str  # the count field the budget limits: params_nonembedding | params_active | params_with_embeddings
    min_depth: object
    min_depth_exact: object
    width_exact: object
    width: object
    heads: object
    kv_heads: object
    head_dim: object
    ffn: object
    gated: object
    experts: object
    top_k: object
    params_nonembedding: object
    params_active: object
    params_embedding: object
    params_with_embeddings: object
    budget_deviation: object
    flops_per_token: object
    kv_bytes_per_token: object
    tp_sizes: object
    regime_code: object  # index into theory.REGIME_CODES
    error: object

    @property
    def regime(self) -> list[str]:
        return [REGIME_CODES[c] for c in self.regime_code.tolist()]

    def records(self) -> list[dict]:
        """One dict of Python values per row, keyed by field name (``regime`` spelled out), errors
        included as ``error`` (the refusal's text)."""
        names = [f.name for f in fields(self) if f.name not in ("budget_count", "regime_code")]
        columns = [[None if e is None else str(e) for e in column] if n == "error" else column
                   for n, column in ((n, getattr(self, n).tolist()) for n in names)]
        names.append("regime")
        columns.append(self.regime)
        count = self.budget_count
        return [dict(zip(names, row), budget_count=count) for row in zip(*columns)]


def plan_many(budgets: Sequence[int], options: PlanOptions | None = None) -> PlanColumns:
    """The minimal depth and minimal-depth shape of ``planner.plan`` for every budget (whole
    numbers >= 1). Raises InputError only for options every budget would refuse (e.g. --count
    with-embeddings without a vocabulary); a refused budget is a row's ``error``."""
    options = options or PlanOptions()
    values = [int(b) for b in budgets]
    if any(b < 1 for b in values):
        raise ValueError("plan_many needs whole budgets >= 1")
    from ..arch.presets import preset

    groups: dict = {}
    size_index = preset(options.spending.arch).size_index  # Spending.at_budget's choice, without a Spending per budget
    for i, b in enumerate(values):  # the preset's published size of each budget (presets.Preset.sizes)
        groups.setdefault(size_index(b), []).append(i)
    if len(groups) > 1:
        columns = _merged(values, [([values[i] for i in rows], rows) for rows in groups.values()], options)
    else:
        columns = _one_size(values, options)
    return _unsharded_retry(values, columns, options)


def _unsharded_retry(values: list[int], columns: PlanColumns, options: PlanOptions) -> PlanColumns:
    """The refused rows planned again without the 8-way rule (``Constraints.shard_from``), as ``planner.plan``
    does; a row refused again keeps that refusal."""
    import numpy as np

    failed = np.flatnonzero(columns.error != None).tolist()  # noqa: E711 - element-wise
    if not failed or options.constraints.shard_from is None:
        return columns
    try:
        retried = plan_many([values[i] for i in failed], options.without_shard_rule())
    except InputError:  # refused for every retried row at once (each too large): the rows keep their refusals
        return columns
    out = {"budget_count": columns.budget_count}
    for name in (f.name for f in fields(PlanColumns) if f.name != "budget_count"):
        mine, again = getattr(columns, name), getattr(retried, name)
        out[name] = mine.copy() if mine.dtype == again.dtype else mine.astype(object)
        out[name][failed] = again
    return PlanColumns(**out)


def _one_size(values: list[int], options: PlanOptions) -> PlanColumns:
    """``plan_many`` of budgets in one size of the preset (one block)."""
    import numpy as np

    options = options.at_budget(values[0]) if values else options
    spending, n = options.spending, len(values)
    budget = np.array(values, dtype=object if n and max(values) >= EXACT_FLOAT else np.int64).reshape(n)
    model, depth, exact, width_exact = threshold(budget, spending)  # an impossible count raises here, once, as plan() would
    error = np.full(n, None, dtype=object)
    for i in np.flatnonzero(width_exact > MAX_PLAN_WIDTH).tolist():
        error[i] = too_large(values[i], spending, model)
    out = _empty(n)
    rows = np.flatnonzero(error == None)  # noqa: E711 - element-wise
    if rows.size:
        _shapes(out, rows, budget, depth, width_exact, options, error)
    code = np.zeros(n, np.int8)
    planned = np.flatnonzero(error == None)  # noqa: E711
    if planned.size:
        code[planned] = regime_codes(depth[planned], out["width"][planned])
    return PlanColumns(budget=budget, budget_count=BUDGET_FIELDS[spending.count], min_depth=depth, min_depth_exact=exact,
                       width_exact=width_exact, regime_code=code, error=error, **out)


def _merged(values: list[int], groups: list, options: PlanOptions) -> PlanColumns:
    """``plan_many`` of budgets in different sizes of the preset: each size alone, put back in order."""
    import numpy as np

    parts = [(rows, _one_size(part, options)) for part, rows in groups]
    out = {"budget_count": parts[0][1].budget_count}
    for name in (f.name for f in fields(PlanColumns) if f.name != "budget_count"):
        arrays = [getattr(cols, name) for _, cols in parts]
        out[name] = np.empty(len(values), dtype=arrays[0].dtype if len({a.dtype for a in arrays}) == 1 else object)
        for (rows, _), array in zip(parts, arrays):
            out[name][rows] = array
    return PlanColumns(**out)


def rule_refusals(columns: PlanColumns, options: PlanOptions | None = None) -> dict[int, str]:
    """Rows that ``planner.plan`` refuses for its rule's recommended shape (which ``plan_many``
    does not compute), as {row: the error text}: ``plan`` is run on the rows whose planned shape
    is off the budget by more than the tolerance, the only rows where that refusal has been seen
    (tiny budgets that an embedding or fixed latent sizes overspend: see
    tests/test_plan_columns.py). A screen, not a proof: rows inside the tolerance are not checked."""
    import numpy as np

    options = options or PlanOptions()
    off = np.abs(np.where(np.isnan(columns.budget_deviation), 0.0, columns.budget_deviation)) > BUDGET_TOLERANCE
    refused = {}
    for i in np.flatnonzero(off & (columns.error == None)).tolist():  # noqa: E711
        try:
            plan(int(columns.budget[i]), options)
        except InputError as err:
            refused[i] = str(err)
    return refused


def _empty(n: int) -> dict:
    import numpy as np

    out = {name: np.zeros(n, np.int64) for name in ("width", "heads", "kv_heads", "head_dim", "ffn")}
    out["gated"], out["budget_deviation"] = np.zeros(n, bool), np.full(n, np.nan)
    for name in ("experts", "top_k", "params_embedding", "params_with_embeddings", "tp_sizes", *COUNTED):
        out[name] = np.full(n, None, dtype=object)
    return out


def _shapes(out: dict, rows, budget, depth, width_exact, options: PlanOptions, error) -> None:
    """The minimal-depth shape of these rows (``threshold.minimal_shape``), its refusals as each
    row's error, and the record's fields of the shapes chosen."""
    import numpy as np

    spending, constraints = options.spending, options.constraints
    facts = ShapeFacts(spending, constraints)
    L, center, b = depth[rows], width_exact[rows], budget[rows]
    near, chosen = minimal_shape(b, L, center, facts)
    too_small, refused = refusals(near, chosen, center, facts.step)
    fact = near.at(near.fact, chosen)
    deviation = near.at(near.deviation, chosen)
    for i in np.flatnonzero(too_small).tolist():  # below every valid shape: the refusal names the smallest budget it can plan
        error[int(rows[i])] = below_every_shape(int(b[i]), spending, constraints, facts.rows[int(fact[i])][3], float(deviation[i]))
    for i in np.flatnonzero(refused & ~too_small).tolist():
        error[int(rows[i])] = no_valid_shape(spending, constraints, int(L[i]), float(center[i]))
    keep = np.flatnonzero(~refused)
    if not keep.size:
        return
    target = rows[keep]
    out["width"][target] = near.at(near.width, chosen)[keep].astype(np.int64)
    out["budget_deviation"][target] = deviation[keep]
    chosen_facts, where = np.unique(fact[keep].astype(np.int64), return_inverse=True)
    details = [_fields(facts.rows[f][3], options.context) for f in chosen_facts.tolist()]
    for j, name in enumerate(FIXED):
        column = np.empty(len(details), dtype=object)
        column[:] = [d[0][j] for d in details]
        out[name][target] = column[where] if out[name].dtype == object else column[where].astype(out[name].dtype)
    for j, name in enumerate(COUNTED):
        column = np.empty(len(details), dtype=object)
        column[:] = [d[1][j] for d in details]
        out[name][target] = column[where]
    embedding = out["params_embedding"][target]
    if not any(e is None for e in embedding.tolist()):
        out["params_with_embeddings"][target] = out["params_nonembedding"][target] + embedding


def _fields(arch, context: int) -> tuple:
    """(FIXED values, COUNTED values) of a chosen shape."""
    counted = (params_nonembedding(arch), params_active(arch), flops_per_token(arch, context), kv_bytes_per_token(arch))
    fixed = (arch.heads, arch.kv_heads, arch.head_dim, arch.ffn, arch.gated, arch.experts, arch.top_k,
             params_embedding(arch), tp_sizes(arch))
    return fixed, counted
