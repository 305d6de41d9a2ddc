"""The threshold rule's answer for many budgets at once: ``planner.plan``'s minimal depth and
minimal-depth shape, as NumPy columns, with the same values as the scalar path row by row (the
threshold rule's columns are ``threshold_columns``'; the snapping of the width is here).

What is computed per budget (each exactly as the scalar planner computes it):
- ``min_depth``: the smallest L with 3^L >= d(L) (Levine et al. 2020), decided on exact integers:
  the first L whose threshold count (12·L·9^L for the paper's block, else the block's exact
  ``Quadratic`` at (L, 3^L), rounded down: N is whole) reaches the budget;
- ``min_depth_exact``: the real crossing (Lambert W for the paper's block, bisection otherwise),
  the scalar iterations run element-wise; every log that can change a decision is libm's
  ``math.log``, as in the scalar path (NumPy's own log may differ by an ulp);
- ``width_exact`` and the planned shape: ``planner.planned_shape``'s snapping (the valid width
  nearest the budget keeping 3^(L-1) < width <= 3^L, the most shardable within tolerance, then the
  same fallbacks), decided with array operations over each budget's candidate widths;
- the counts of that shape and its deviation from the budget, and its regime.

Each budget's candidate widths are those of ``planner._widths_near``; every distinct (depth, width)
among all budgets' candidates is built once with the scalar code (``snapping.valid_arch``,
``Spending.params``, ``planner.shardability``: nothing is re-derived), and the choices of
``snap_width`` are then made with array operations. Budgets that share widths (widths below
~10^6) cost a few us each; past that each budget has 25 widths of its own: ~0.4 ms a budget.

Rows the scalar path refuses (a budget too large to plan, no valid shape nearby) carry the scalar
path's own error text in ``PlanColumns.error``; their other values are meaningless. ``plan`` also
refuses a budget whose rule-recommended shape has no valid shape nearby, which is not computed
here: ``rule_refusals`` finds those rows (tiny budgets) with the scalar ``plan``.
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Sequence

from ..arch.blocks import flops_per_token, kv_bytes_per_token, params_active, params_embedding, params_nonembedding
from ..errors import InputError
from ..arch.hardware import tp_sizes, width_step
from .planner import MAX_PLAN_WIDTH, PlanOptions, plan
from ..arch.snapping import BUDGET_TOLERANCE, FAR_FROM_BUDGET, SNAP_SPAN, no_valid_shape, shardability, valid_arch
from ..arch.spending import quadratic
from ..theory.separation import REGIME_CODES, regime_codes
from .threshold_columns import _min_depth, _min_depth_exact, _too_large, _width_exact

EXACT_FLOAT = 2**53  # ints below this convert to float64 exactly: int/int division then rounds once, as Python's does
BUDGET_FIELDS = {"total": "params_nonembedding", "active": "params_active", "with-embeddings": "params_with_embeddings"}


@dataclass
class PlanColumns:
    """``plan_many``'s answer: one entry per budget, in order, as NumPy arrays: int64 depths and
    widths, float64 ``min_depth_exact``/``width_exact``/``budget_deviation``, and object arrays
    for the counts (Python ints, exact past int64), the nullable fields (None for null) and
    ``tp_sizes`` (tuples). ``error`` is None for a planned row, else the scalar path's InputError
    text; the other values of such a row are meaningless (0, NaN or None)."""

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
        included as ``error``."""
        names = [f.name for f in fields(self) if f.name not in ("budget_count", "regime_code")]
        columns = [getattr(self, n).tolist() for n in names]
        names.append("regime")
        columns.append(self.regime)
        count = self.budget_count
        return [dict(zip(names, row), budget_count=count) for row in zip(*columns)]


def plan_many(budgets: Sequence[int], options: PlanOptions | None = None) -> PlanColumns:
    """The minimal depth and minimal-depth shape of ``planner.plan`` for every budget (whole
    numbers >= 1), vectorized. Raises InputError only for options every budget would refuse
    (e.g. --count with-embeddings without a vocabulary); a refused budget is a row's ``error``."""
    import numpy as np

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
        return _merged(values, {size: ([values[i] for i in rows], rows) for size, rows in groups.items()}, options)
    options = options.at_budget(values[0]) if values else options
    spending, constraints = options.spending, options.constraints
    n = len(values)
    model = quadratic(spending)  # an impossible count raises here, once, as plan() would for any budget
    wide = bool(n) and max(values) >= EXACT_FLOAT
    budget = np.array(values, dtype=object if wide else np.int64).reshape(n)
    depth = _min_depth(budget, spending, model)
    width_exact = _width_exact(budget, depth, spending, model)
    exact = _min_depth_exact(budget, spending, model)
    error = np.full(n, None, dtype=object)
    too_large = np.flatnonzero(width_exact > MAX_PLAN_WIDTH)
    if too_large.size:
        _too_large(error, too_large, values, spending)
    out = _empty(n)
    rows = np.flatnonzero(error == None)  # noqa: E711 - element-wise
    if rows.size:
        facts = _Facts(spending, constraints, options.context)
        small = budget[rows].astype(np.float64) < 2.0**50
        for part, numeric in ((rows[small], True), (rows[~small], False)):
            if part.size:
                _snap(out, part, budget, depth, width_exact, options, numeric, error, facts)
    code = np.zeros(n, np.int8)
    planned = np.flatnonzero(error == None)  # noqa: E711
    if planned.size:
        code[planned] = regime_codes(depth[planned], out["width"][planned])
    return PlanColumns(budget=budget, budget_count=BUDGET_FIELDS[spending.count], min_depth=depth, min_depth_exact=exact,
                       width_exact=width_exact, regime_code=code, error=error, **out)


def _merged(values: list[int], groups: dict, options: PlanOptions) -> PlanColumns:
    """``plan_many`` of budgets in different sizes of the preset: each size alone, put back in order."""
    import numpy as np

    parts = [(rows, plan_many(part, options)) for part, rows in groups.values()]
    out = {"budget_count": parts[0][1].budget_count}
    for name in (f.name for f in fields(PlanColumns) if f.name != "budget_count"):
        arrays = [getattr(cols, name) for _, cols in parts]
        out[name] = np.empty(len(values), dtype=arrays[0].dtype if len({a.dtype for a in arrays}) == 1 else object)
        for (rows, _), array in zip(parts, arrays):
            out[name][rows] = array
    return PlanColumns(**out)


def rule_refusals(columns: PlanColumns, options: PlanOptions | None = None) -> dict[int, str]:
    """Rows that ``planner.plan`` refuses for its rule's recommended shape (which ``plan_many``
    does not compute), as {row: the scalar error text}: the scalar ``plan`` is run on the rows
    whose planned shape is off the budget by more than the tolerance, the only rows where that
    refusal has been seen (tiny budgets that an embedding or fixed latent sizes overspend: see
    tests/test_planvec.py). A screen, not a proof: rows inside the tolerance are not checked."""
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



# ---- snapping the minimal-depth width -------------------------------------------------------------

COUNTED = ("params_nonembedding", "params_active", "flops_per_token", "kv_bytes_per_token")
FIXED = ("heads", "kv_heads", "head_dim", "ffn", "gated", "experts", "top_k", "params_embedding", "tp_sizes")


def _empty(n: int) -> dict:
    import numpy as np

    out = {name: np.zeros(n, np.int64) for name in ("width", "heads", "kv_heads", "head_dim", "ffn")}
    out["gated"], out["budget_deviation"] = np.zeros(n, bool), np.full(n, np.nan)
    for name in ("experts", "top_k", "params_embedding", "params_with_embeddings", "tp_sizes", *COUNTED):
        out[name] = np.full(n, None, dtype=object)
    return out


class _Facts:
    """What the scalar code says about each distinct (depth, width): valid under the constraints,
    its shardability and the count the budget limits; the record fields of the few shapes chosen
    are built on demand (``fields``). Budgets that share a width mostly share the depth too."""

    def __init__(self, spending, constraints, context: int):
        self.spending, self.constraints, self.context = spending, constraints, context
        self.index: dict[tuple[int, int], int] = {}
        self.rows: list[tuple] = []  # (valid, shardability, count, arch or None)
        self.details: dict[int, tuple] = {}

    def ids(self, depth: int, widths) -> list[int]:
        """The fact index of each width at this depth, built on first sight."""
        out = []
        for width in widths:
            found = self.index.get((depth, width))
            if found is None:
                found = self.index[depth, width] = len(self.rows)
                self.rows.append(self._build(depth, width))
            out.append(found)
        return out

    def column(self, j: int) -> list:
        return [row[j] for row in self.rows]

    def _build(self, depth: int, width: int) -> tuple:
        arch = valid_arch(self.spending, self.constraints, depth, width)
        if arch is None:
            return (False, 0, 0, None)
        return (True, shardability(arch), self.spending.params(arch), arch)

    def fields(self, fact: int) -> tuple:
        """(FIXED values, COUNTED values) of a valid fact."""
        found = self.details.get(fact)
        if found is None:
            arch = self.rows[fact][3]
            counted = (params_nonembedding(arch), params_active(arch), flops_per_token(arch, self.context),
                       kv_bytes_per_token(arch))
            fixed = (arch.heads, arch.kv_heads, arch.head_dim, arch.ffn, arch.gated, arch.experts, arch.top_k,
                     params_embedding(arch), tp_sizes(arch))
            found = self.details[fact] = (fixed, counted)
        return found


def _ints(values: list[int]):
    """int64 when every value fits with room to spare, else Python ints."""
    import numpy as np

    return np.array(values, dtype=np.int64 if all(abs(v) < 2**62 for v in values) else object)


def _snap(out, rows, budget, depth, width_exact, options, numeric: bool, error, facts) -> None:
    """``planner.planned_shape`` for these rows: candidate widths k·step for k within SNAP_SPAN of
    round(width_exact/step); first inside (3^(L-1), 3^L], then anywhere; the same choices."""
    import numpy as np

    spending, constraints = options.spending, options.constraints
    step = width_step(constraints, spending.head_dim)
    L = depth[rows]
    center = width_exact[rows]
    k0 = np.maximum(1, np.rint(center / step)).astype(np.int64)  # round(center / step), halves to even as Python's
    span = np.arange(-SNAP_SPAN, SNAP_SPAN + 1, dtype=np.int64)
    k = k0[:, None] + span
    present = k >= 1
    width = k * step
    # each distinct (depth, k) once: a fact index per cell (a row's ks are consecutive, so are their positions)
    index = np.full(k.shape, -1, np.int64)
    for c in np.unique(L).tolist():
        mine = np.flatnonzero(L == c)
        ks = np.unique((np.unique(k0[mine])[:, None] + span).ravel())
        ks = ks[ks >= 1]
        ids = np.array(facts.ids(c, (ks * step).tolist()), np.int64)
        start = np.maximum(k[mine, 0], 1)
        cells = np.clip(np.searchsorted(ks, start)[:, None] + (k[mine] - start[:, None]), 0, ks.size - 1)
        index[mine] = np.where(present[mine], ids[cells], -1)
    safe = np.maximum(index, 0)
    valid = present & np.array(facts.column(0), bool)[safe]
    shard = np.array(facts.column(1), np.int64)[safe]
    b = budget[rows]
    if numeric:  # every count and the budget below 2^53: int64, and a float division that rounds once
        base = _ints(facts.column(2))
        numeric = base.dtype != object and float(np.abs(base).max()) < EXACT_FLOAT
    if numeric:
        count = base[safe]
        deviation = count / b.astype(np.int64)[:, None] - 1
    else:  # Python ints: int / int rounds once, as in the scalar path
        count = np.array(facts.column(2), dtype=object)[safe]
        deviation = np.array([[c / v - 1 for c in row] for row, v in zip(count.tolist(), b.tolist())],
                             dtype=np.float64).reshape(count.shape)
    off = np.abs(deviation)
    distance = np.abs(width.astype(np.float64) - center[:, None])
    powers = np.array([3**p for p in range(40)], dtype=np.int64)  # widths here are at most ~1e15 < 3^39
    low = np.where(L > 1, powers[np.clip(L - 1, 0, 39)] + 1, 2)
    high = np.where(L > 39, np.iinfo(np.int64).max, powers[np.clip(L, 0, 39)])
    inside = valid & (width >= low[:, None]) & (width <= high[:, None])
    first = _pick(inside, off, shard, distance)
    need = (first < 0) | (_at(off, first) > FAR_FROM_BUDGET)
    anywhere = np.full(rows.size, -1, np.int64)
    if need.any():
        anywhere[need] = _pick(valid[need] & (width[need] >= 2), off[need], shard[need], distance[need])
    use = need & ((first < 0) | ((anywhere >= 0) & (_at(off, anywhere) <= FAR_FROM_BUDGET)))
    chosen = np.where(use, anywhere, first)
    too_small = (chosen >= 0) & (_at(deviation, chosen) > FAR_FROM_BUDGET)  # below every valid shape: the scalar
    for i in np.flatnonzero(too_small).tolist():  # path's refusal, naming the smallest budget it can plan (rare rows)
        error[int(rows[i])] = _scalar_refusal(int(b[i]), spending, constraints)
    refused = too_small | (chosen < 0) | ((_at(off, chosen) > FAR_FROM_BUDGET) & (center > 2 * step))
    for i in np.flatnonzero(refused & ~too_small).tolist():
        error[int(rows[i])] = str(no_valid_shape(spending, constraints, int(L[i]), float(center[i])))
    keep = np.flatnonzero(~refused)
    if not keep.size:
        return
    col = chosen[keep]
    target = rows[keep]
    out["width"][target] = width[keep, col]
    out["budget_deviation"][target] = deviation[keep, col]
    chosen_facts, where = np.unique(index[keep, col], return_inverse=True)
    details = [facts.fields(f) for f in chosen_facts.tolist()]
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


def _scalar_refusal(budget: int, spending, constraints) -> str:
    """The scalar planner's refusal of a budget below every valid shape (``planner.planned_shape``)."""
    from .planner import planned_shape, theory_for

    try:
        planned_shape(budget, spending, constraints, theory_for(budget, spending))
    except InputError as err:
        return str(err)
    raise AssertionError(f"the scalar planner planned {budget}, which the vector path found below every valid shape")


def _at(values, column):
    """values[row, column[row]] (NaN where column < 0)."""
    import numpy as np

    picked = values[np.arange(values.shape[0]), np.maximum(column, 0)]
    return np.where(column >= 0, picked, np.nan)


def _pick(allowed, off, shard, distance):
    """``snap_width``'s choice per row among the allowed cells: within tolerance the most
    shardable, then the nearest the budget; else the nearest the budget; ties to the earlier in
    ``_widths_near``'s order (nearer the ideal width, then the smaller). -1 where none is allowed."""
    import numpy as np

    within = allowed & (off <= BUDGET_TOLERANCE)
    has_within = within.any(axis=1)
    pool = np.where(has_within[:, None], within, allowed)
    keys = (np.where(has_within[:, None], -shard, 0), off, distance)
    for key in keys:
        masked = np.where(pool, key, np.inf)
        best = masked.min(axis=1, initial=np.inf)
        pool &= masked == best[:, None]
    return np.where(pool.any(axis=1), pool.argmax(axis=1), -1)
