"""Rule files: a depth/width law fitted on a user's own sweep (``depthwidth fit --save``).

The format is ``depthwidth-rule/2`` (``/1`` is still read), a JSON object (UTF-8, never NaN or
Infinity): the Levine et al. 2020 (NeurIPS version) form ln d_opt = a + b·L and/or a power law
d_opt = k·N^alpha (with L_opt = depth_k·N^beta), their intervals, covariances and goodness of fit
(held out), the data range, the per-group optima, what the rule was fitted on (sizes, depths,
widths, number of runs, source hashes: ``fitted_on``) and the provenance (date, tool version).

Reading validates with the Pydantic models of ``rulemodels`` (imported only when a rule file is
read), then checks that the law is plausible across its own fitted range (``rules.law.plausibility``):
an optimum between depth 1 and 10^4 and width 1 and 10^7. What the law says for a budget (the
planner's fitted depth with its interval) is ``rulelaw``'s. No SciPy, no NumPy here.
"""
from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path

from ...core.errors import InputError
from .law import DEPTH_LIMITS, WIDTH_LIMITS, plausibility
from ...core.frozen import frozen

RULE_FORMAT = "depthwidth-rule/2"
READ_FORMATS = ("depthwidth-rule/1", RULE_FORMAT)
NAME_PATTERN = re.compile(r"[a-z0-9-]+")


@frozen
class LevineLaw:
    """ln d_opt = a + b·L (the form of Levine et al. 2020, NeurIPS version), fitted on one's own optima."""

    a: float
    b: float
    a_interval: tuple[float, float]
    b_interval: tuple[float, float]
    r2: float | None  # of ln(optimal width) predicted from each group's size; None when all widths are equal
    rmse: float  # root-mean-square error of that prediction, in ln(width)
    covariance: tuple[tuple[float, float], tuple[float, float]] | None = None  # of (a, b)
    heldout_rmse: float | None = None  # leave-one-size-out error in ln(width) (None: fewer than 3 sizes)

    def width_at_depth(self, depth: float) -> float:
        """exp(a + b·L)."""
        return math.exp(self.a + self.b * depth)


@frozen
class PowerLaw:
    """d_opt = k·N^alpha and L_opt = depth_k·N^beta, N the group size (params or FLOPs)."""

    k: float
    alpha: float
    alpha_interval: tuple[float, float]
    k_interval: tuple[float, float]
    depth_k: float
    depth_beta: float
    beta_interval: tuple[float, float]
    r2: float | None
    rmse: float
    depth_covariance: tuple[tuple[float, float], tuple[float, float]] | None = None  # of (ln depth_k', beta)
    depth_pivot: float | None = None  # ln N0: ln L = ln depth_k' + beta·(ln N - ln N0), depth_k' = depth_k·N0^beta
    heldout_rmse: float | None = None

    def width_for_size(self, size: float) -> float:
        """k·N^alpha, computed in log space."""
        return math.exp(math.log(self.k) + self.alpha * math.log(size))

    def depth_for_size(self, size: float) -> float:
        """depth_k·N^beta, computed in log space."""
        return math.exp(math.log(self.depth_k) + self.depth_beta * math.log(size))


@frozen
class FitRange:
    """The data the law was fitted on: group sizes, and the depths and widths of every run."""

    size: tuple[float, float]
    depth: tuple[float, float]
    width: tuple[float, float]


@frozen
class GroupOptimum:
    """One size group's optimal depth (the vertex of its loss parabola in ln L) and its interval."""

    size: float
    optimal_depth: float
    depth_interval: tuple[float, float]
    runs: int


@frozen
class Source:
    file: str
    sha256: str


@frozen
class FittedOn:
    """What a rule was fitted on: each group's size, every run's depth and width, how many runs,
    and the sha256 of every file read."""

    sizes: tuple[float, ...]
    depths: tuple[float, ...]
    widths: tuple[float, ...]
    runs: int
    sources: tuple[Source, ...]


@frozen
class AttentionLayout:
    """The attention layout the sweep held in every run (``loop.sweep``): its head size, and a fixed
    number of key/value heads or a fixed number of query heads per key/value head (None: not held)."""

    head_dim: int | None
    kv_heads: int | None
    kv_ratio: int | None


@frozen
class FittedRule:
    """A rule file's content; field names are the JSON keys of ``depthwidth-rule/1``."""

    format: str
    name: str
    form: str  # the law plan uses: "levine" or "power"
    levine: LevineLaw | None
    power: PowerLaw | None
    group_by: str  # what N means in the power law: "params" or "flops"
    fit_range: FitRange
    groups: tuple[GroupOptimum, ...]
    source: Source
    created: str
    tool: str
    fitted_on: FittedOn | None = None
    loss_model: dict | None = None  # the loss penalty refitted on the sweep (cost.loss.PenaltyModel.as_dict)
    layout: AttentionLayout | None = None  # what plan --rule-file keeps (None: the runs did not say)

    def width_at_depth(self, depth: float) -> float | None:
        """Levine form: the optimal width exp(a + b·L) at depth L; None when the Levine form was not fitted."""
        return None if self.levine is None else self.levine.width_at_depth(depth)

    def width_for_size(self, size: float) -> float | None:
        """Power form: the optimal width k·N^alpha for size N (in ``group_by`` units); None when not fitted."""
        return None if self.power is None else self.power.width_for_size(size)

    def depth_for_size(self, size: float) -> float | None:
        """Power form: the optimal depth depth_k·N^beta for size N; None when not fitted."""
        return None if self.power is None else self.power.depth_for_size(size)

    def in_range(self, size: float) -> bool:
        """Whether N lies inside the sizes the rule was fitted on."""
        low, high = self.fit_range.size
        return low <= size <= high


def rule_name(name: str | None, path: str | None) -> str:
    """The rule's name: ``name`` if given (checked), else the file stem of ``path`` made
    lower-case with other characters turned to hyphens ("My Fit.json" -> "my-fit"), else "fit"."""
    if name is not None:
        if not NAME_PATTERN.fullmatch(name):
            raise InputError("--name", name, "expected lower-case letters, digits and hyphens, e.g. my-fit")
        return name
    stem = re.sub(r"[^a-z0-9-]+", "-", Path(path).stem.lower()).strip("-") if path else ""
    return stem or "fit"


# ---- writing -----------------------------------------------------------------------------------

def rule_dict(rule: FittedRule) -> dict:
    """The rule as plain JSON values (tuples to lists), keys in the documented order."""
    from dataclasses import asdict

    def plain(value):
        if isinstance(value, dict):
            return {k: plain(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [plain(v) for v in value]
        if isinstance(value, float) and not math.isfinite(value):
            return None
        return value

    return plain(asdict(rule))


def rule_json(rule: FittedRule) -> str:
    return json.dumps(rule_dict(rule), indent=2, allow_nan=False) + "\n"


def write_rule_file(rule: FittedRule, path: str | os.PathLike, force: bool = False) -> Path:
    """Write the rule file: to a temporary name in the same folder, then renamed into place.
    An existing file is never replaced without ``force`` (the no-overwrite rename is a hard link,
    so a file appearing meanwhile is not clobbered either)."""
    target = Path(path)
    text = rule_json(rule)
    if target.is_dir():
        raise InputError("--save", str(path), "expected a file name, not a folder")
    if target.exists() and not force:
        raise InputError("--save", str(path), "the file exists; pass --force to overwrite it")
    from ...core.staging import cannot_write, need_parent

    if not str(path):
        raise InputError("--save", str(path), "expected a file name such as my-rule.json")
    need_parent(str(path), str(target), "--save")  # a missing folder is the user's (exit 2), as for export --out
    temp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        temp.write_text(text, encoding="utf-8")
        if force:
            os.replace(temp, target)
        else:
            try:
                os.link(temp, target)
            except FileExistsError:
                raise InputError("--save", str(path), "the file exists; pass --force to overwrite it") from None
            except OSError:  # a file system without hard links: the check above is the guard
                os.replace(temp, target)
    except OSError as err:  # the environment (read-only, full, /proc): exit 1, as every writer
        raise cannot_write(str(path), err) from None
    finally:
        try:
            temp.unlink()
        except OSError:
            pass
    return target


# ---- reading -----------------------------------------------------------------------------------

RULE_HINT = "a rule file written by `depthwidth fit --save`"


def read_rule_file(path: str | os.PathLike) -> FittedRule:
    """Read (through the one bounded reader, ``userfile``) and validate a rule file; InputError
    (one line) on any problem."""
    from ...core.userfile import read_bytes

    shown = str(path)
    return parse_rule(read_bytes(shown, "rule file", RULE_HINT), shown)


def parse_rule(data: bytes | str, shown: str = "<rule>") -> FittedRule:
    """Validate rule-file content (bytes or text) into a FittedRule: JSON, then the Pydantic
    models (``rules.filemodels.RuleModel``), then the law's plausibility across its fitted range."""
    from pydantic import ValidationError

    from .filemodels import RuleModel

    def bad(message: str) -> InputError:
        return InputError("rule file", shown, message)

    try:
        text = data.decode("utf-8-sig") if isinstance(data, bytes) else data
        raw = json.loads(text, parse_constant=_reject_constant)
    except UnicodeDecodeError:
        raise bad(f"not UTF-8 text; expected {RULE_HINT}") from None
    except (ValueError, RecursionError) as err:
        raise bad(f"not valid JSON ({err}); expected {RULE_HINT}") from None
    if not isinstance(raw, dict):
        raise bad(f"expected a JSON object: {RULE_HINT}")
    if raw.get("format") not in READ_FORMATS:
        raise bad(f"format is {raw.get('format')!r}; expected one of {', '.join(map(repr, READ_FORMATS))}")
    try:
        model = RuleModel.model_validate_json(text, strict=True)  # strict: "5" is not the number 5
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise bad(f"{where}: {first['msg']}" + (f" (and {err.error_count() - 1} more problems)" if err.error_count() > 1 else "")) from None
    rule = _rule(model)
    problems = plausibility(rule)
    if problems:
        raise bad("implausible law: " + "; ".join(problems) + f" (a plausible optimum has depth {DEPTH_LIMITS[0]:g} to "
                  f"{DEPTH_LIMITS[1]:g} and width {WIDTH_LIMITS[0]:g} to {WIDTH_LIMITS[1]:g}); refit it with `depthwidth fit`")
    return rule


def _reject_constant(token: str):
    raise ValueError(f"{token} is not allowed")


def _pairs(value):
    return None if value is None else tuple(tuple(float(x) for x in row) for row in value)


def _rule(m) -> FittedRule:
    """The dataclasses of a validated RuleModel."""
    levine = power = None
    if m.levine is not None:
        v = m.levine
        levine = LevineLaw(v.a, v.b, tuple(v.a_interval), tuple(v.b_interval), v.r2, v.rmse, _pairs(v.covariance),
                           v.heldout_rmse)
    if m.power is not None:
        p = m.power
        power = PowerLaw(p.k, p.alpha, tuple(p.alpha_interval), tuple(p.k_interval), p.depth_k, p.depth_beta,
                         tuple(p.beta_interval), p.r2, p.rmse, _pairs(p.depth_covariance), p.depth_pivot, p.heldout_rmse)
    r = m.fit_range
    groups = tuple(GroupOptimum(g.size, g.optimal_depth, tuple(g.depth_interval), g.runs) for g in m.groups)
    fitted_on = None
    if m.fitted_on is not None:
        f = m.fitted_on
        fitted_on = FittedOn(tuple(f.sizes), tuple(f.depths), tuple(f.widths), f.runs,
                             tuple(Source(s.file, s.sha256) for s in f.sources))
    layout = None if m.layout is None else AttentionLayout(m.layout.head_dim, m.layout.kv_heads, m.layout.kv_ratio)
    return FittedRule(m.format, m.name, m.form, levine, power, m.group_by,
                      FitRange(tuple(r.size), tuple(r.depth), tuple(r.width)), groups,
                      Source(m.source.file, m.source.sha256), m.created, m.tool, fitted_on,
                      None if m.loss_model is None else m.loss_model.model_dump(), layout)
