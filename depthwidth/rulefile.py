"""Rule files: a depth/width law fitted on a user's own sweep (``depthwidth fit --save``).

The format is ``depthwidth-rule/1``, a JSON object (UTF-8, never NaN or Infinity):
the Levine et al. 2020 (NeurIPS version) form ln d_opt = a + b·L and/or a power law
d_opt = k·N^alpha (with L_opt = depth_k·N^beta), their intervals and goodness of fit, the data
range, the per-group optima, and the provenance (source file's sha256, date, tool version).

This module reads, validates and writes rule files. It imports no SciPy and no NumPy, so
``plan --rule-file`` stays a scalar command; the fitting itself lives in ``fit.py``.
"""
from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass
from pathlib import Path

from .errors import InputError

RULE_FORMAT = "depthwidth-rule/1"
FORMS = ("levine", "power")
GROUP_BY = ("params", "flops")
NAME_PATTERN = re.compile(r"[a-z0-9-]+")
MAX_RULE_BYTES = 10 * 1024 * 1024


@dataclass(frozen=True)
class LevineLaw:
    """ln d_opt = a + b·L (the form of Levine et al. 2020, NeurIPS version), fitted on one's own optima."""

    a: float
    b: float
    a_interval: tuple[float, float]
    b_interval: tuple[float, float]
    r2: float | None  # of ln(optimal width) predicted from each group's size; None when all widths are equal
    rmse: float  # root-mean-square error of that prediction, in ln(width)

    def width_at_depth(self, depth: float) -> float:
        """exp(a + b·L)."""
        return math.exp(self.a + self.b * depth)


@dataclass(frozen=True)
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

    def width_for_size(self, size: float) -> float:
        """k·N^alpha, computed in log space."""
        return math.exp(math.log(self.k) + self.alpha * math.log(size))

    def depth_for_size(self, size: float) -> float:
        """depth_k·N^beta, computed in log space."""
        return math.exp(math.log(self.depth_k) + self.depth_beta * math.log(size))


@dataclass(frozen=True)
class FitRange:
    """The data the law was fitted on: group sizes, and the depths and widths of every run."""

    size: tuple[float, float]
    depth: tuple[float, float]
    width: tuple[float, float]


@dataclass(frozen=True)
class GroupOptimum:
    """One size group's optimal depth (the vertex of its loss parabola in ln L) and its interval."""

    size: float
    optimal_depth: float
    depth_interval: tuple[float, float]
    runs: int


@dataclass(frozen=True)
class Source:
    file: str
    sha256: str


@dataclass(frozen=True)
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
    except OSError as err:
        raise InputError("--save", str(path), f"cannot write it: {err.strerror or err}") from None
    finally:
        try:
            temp.unlink()
        except OSError:
            pass
    return target


# ---- reading -----------------------------------------------------------------------------------

def read_rule_file(path: str | os.PathLike) -> FittedRule:
    """Read and validate a ``depthwidth-rule/1`` file; InputError (one line) on any problem."""
    shown = str(path)
    try:
        if Path(path).stat().st_size > MAX_RULE_BYTES:
            raise InputError("rule file", shown, f"larger than {MAX_RULE_BYTES // (1024 * 1024)} MB; expected a rule file written by `depthwidth fit --save`")
        data = Path(path).read_bytes()
    except FileNotFoundError:
        raise InputError("rule file", shown, "no such file; write one with `depthwidth fit RESULTS.csv --save RULE.json`") from None
    except IsADirectoryError:
        raise InputError("rule file", shown, "is a folder; expected a rule file written by `depthwidth fit --save`") from None
    except OSError as err:
        raise InputError("rule file", shown, f"cannot read it: {err.strerror or err}") from None
    return parse_rule(data, shown)


def parse_rule(data: bytes | str, shown: str = "<rule>") -> FittedRule:
    """Validate rule-file content (bytes or text) into a FittedRule."""

    def bad(message: str) -> InputError:
        return InputError("rule file", shown, message)

    try:
        text = data.decode("utf-8-sig") if isinstance(data, bytes) else data
        raw = json.loads(text, parse_constant=_reject_constant)
    except UnicodeDecodeError:
        raise bad("not UTF-8 text; expected a JSON rule file written by `depthwidth fit --save`") from None
    except (ValueError, RecursionError) as err:
        raise bad(f"not valid JSON ({err}); expected a rule file written by `depthwidth fit --save`") from None
    if not isinstance(raw, dict):
        raise bad("expected a JSON object written by `depthwidth fit --save`")
    if raw.get("format") != RULE_FORMAT:
        raise bad(f"format is {raw.get('format')!r}; expected {RULE_FORMAT!r}")
    missing = [k for k in ("name", "form", "levine", "power", "group_by", "fit_range", "groups", "source", "created", "tool")
               if k not in raw]
    if missing:
        raise bad("missing keys: " + ", ".join(missing))

    name = raw["name"]
    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
        raise bad(f"name {name!r}: expected lower-case letters, digits and hyphens")
    form = raw["form"]
    if form not in FORMS:
        raise bad(f"form {form!r}: expected one of {', '.join(FORMS)}")
    group_by = raw["group_by"]
    if group_by not in GROUP_BY:
        raise bad(f"group_by {group_by!r}: expected one of {', '.join(GROUP_BY)}")

    levine = None if raw["levine"] is None else _levine(_object(raw["levine"], "levine", bad), bad)
    power = None if raw["power"] is None else _power(_object(raw["power"], "power", bad), bad)
    if (levine if form == "levine" else power) is None:
        raise bad(f"form is {form!r} but its constants ({form!r}) are null")

    fit_range = _object(raw["fit_range"], "fit_range", bad)
    ranges = FitRange(*(_interval(fit_range, key, bad, "fit_range.", positive=True) for key in ("size", "depth", "width")))

    if not isinstance(raw["groups"], list):
        raise bad("groups: expected a list")
    groups = []
    for i, item in enumerate(raw["groups"]):
        where = f"groups[{i}]."
        item = _object(item, f"groups[{i}]", bad)
        runs = item.get("runs")
        if isinstance(runs, bool) or not isinstance(runs, int) or runs < 1:
            raise bad(f"{where}runs {runs!r}: expected a whole number >= 1")
        groups.append(GroupOptimum(_number(item, "size", bad, where, positive=True),
                                   _number(item, "optimal_depth", bad, where, positive=True),
                                   _interval(item, "depth_interval", bad, where, positive=True), runs))

    source = _object(raw["source"], "source", bad)
    file, digest = source.get("file"), source.get("sha256")
    if not isinstance(file, str) or not isinstance(digest, str) or not re.fullmatch(r"[0-9a-f]{64}", digest):
        raise bad("source: expected {\"file\": name, \"sha256\": 64 hex digits}")
    created = raw["created"]
    if not isinstance(created, str) or not re.fullmatch(r"\d{4}-\d{2}-\d{2}", created):
        raise bad(f"created {created!r}: expected a date YYYY-MM-DD")
    if not isinstance(raw["tool"], str):
        raise bad(f"tool {raw['tool']!r}: expected text such as 'depthwidth 0.2.0'")
    return FittedRule(RULE_FORMAT, name, form, levine, power, group_by, ranges, tuple(groups),
                      Source(file, digest), created, raw["tool"])


def _reject_constant(token: str):
    raise ValueError(f"{token} is not allowed")


def _object(value, key: str, bad) -> dict:
    if not isinstance(value, dict):
        raise bad(f"{key}: expected an object")
    return value


def _number(obj: dict, key: str, bad, where: str = "", positive: bool = False, optional: bool = False) -> float | None:
    value = obj.get(key)
    if value is None and optional and key in obj:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or (positive and value <= 0):
        kind = "a positive finite number" if positive else "a finite number"
        raise bad(f"{where}{key} {'missing' if key not in obj else repr(value)}: expected {kind}")
    return float(value)


def _interval(obj: dict, key: str, bad, where: str = "", positive: bool = False) -> tuple[float, float]:
    value = obj.get(key)
    if not isinstance(value, list) or len(value) != 2:
        raise bad(f"{where}{key} {'missing' if key not in obj else repr(value)}: expected [low, high]")
    low, high = (_number({key: v}, key, bad, where, positive) for v in value)
    if low > high:
        raise bad(f"{where}{key} {value!r}: expected low <= high")
    return (low, high)


def _levine(obj: dict, bad) -> LevineLaw:
    w = "levine."
    return LevineLaw(_number(obj, "a", bad, w), _number(obj, "b", bad, w), _interval(obj, "a_interval", bad, w),
                     _interval(obj, "b_interval", bad, w), _number(obj, "r2", bad, w, optional=True),
                     _number(obj, "rmse", bad, w))


def _power(obj: dict, bad) -> PowerLaw:
    w = "power."
    return PowerLaw(_number(obj, "k", bad, w, positive=True), _number(obj, "alpha", bad, w),
                    _interval(obj, "alpha_interval", bad, w), _interval(obj, "k_interval", bad, w, positive=True),
                    _number(obj, "depth_k", bad, w, positive=True), _number(obj, "depth_beta", bad, w),
                    _interval(obj, "beta_interval", bad, w), _number(obj, "r2", bad, w, optional=True),
                    _number(obj, "rmse", bad, w))
