"""Pydantic models of the files the experiment loop reads: rule files (``depthwidth-rule/1`` and
``/2``) and sweep result records. Imported only when such a file is read (``rules.file.parse_rule``,
``results``), never by ``plan``/``bounds`` without a rule file.

Every number must be finite (JSON never holds NaN/Infinity, and ``allow_inf_nan=False`` refuses
them); unknown keys are refused in rule files (a typo must not pass silently) and kept in results
records (a sweep row carries many fields fit does not need).
"""
from __future__ import annotations

import re
from typing import Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

Finite = float
Positive = Field(gt=0, allow_inf_nan=False)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, frozen=True)


def _ordered(pair: tuple[float, float], what: str) -> tuple[float, float]:
    if pair[0] > pair[1]:
        raise ValueError(f"{what} {list(pair)!r}: expected low <= high")
    return pair


class LevineModel(_Strict):
    a: float
    b: float
    a_interval: tuple[float, float]
    b_interval: tuple[float, float]
    r2: Optional[float] = None
    rmse: float = Field(ge=0)
    covariance: Optional[tuple[tuple[float, float], tuple[float, float]]] = None  # of (a, b)
    heldout_rmse: Optional[float] = Field(default=None, ge=0)

    @field_validator("a_interval", "b_interval")
    @classmethod
    def _low_high(cls, value, info):
        return _ordered(value, info.field_name)


class PowerModel(_Strict):
    k: float = Field(gt=0)
    alpha: float
    alpha_interval: tuple[float, float]
    k_interval: tuple[Finite, Finite]
    depth_k: float = Field(gt=0)
    depth_beta: float
    beta_interval: tuple[float, float]
    r2: Optional[float] = None
    rmse: float = Field(ge=0)
    depth_covariance: Optional[tuple[tuple[float, float], tuple[float, float]]] = None  # of (ln depth_k, beta) at ln N0
    depth_pivot: Optional[float] = None  # ln N0 the covariance is centred on
    heldout_rmse: Optional[float] = Field(default=None, ge=0)

    @field_validator("alpha_interval", "k_interval", "beta_interval")
    @classmethod
    def _low_high(cls, value, info):
        if info.field_name == "k_interval" and not value[0] > 0:
            raise ValueError("k_interval: expected positive numbers")
        return _ordered(value, info.field_name)


class RangeModel(_Strict):
    size: tuple[float, float]
    depth: tuple[float, float]
    width: tuple[float, float]

    @field_validator("size", "depth", "width")
    @classmethod
    def _positive(cls, value, info):
        if not value[0] > 0:
            raise ValueError(f"fit_range.{info.field_name}: expected positive numbers")
        return _ordered(value, f"fit_range.{info.field_name}")


class GroupModel(_Strict):
    size: float = Field(gt=0)
    optimal_depth: float = Field(gt=0)
    depth_interval: tuple[float, float]
    runs: int = Field(ge=1, strict=True)

    @field_validator("depth_interval")
    @classmethod
    def _positive(cls, value):
        if not value[0] > 0:
            raise ValueError("depth_interval: expected positive numbers")
        return _ordered(value, "depth_interval")


class SourceModel(_Strict):
    file: str
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")


class FittedOnModel(_Strict):
    """What the rule was fitted on (format /2)."""

    sizes: tuple[float, ...]
    depths: tuple[float, ...]
    widths: tuple[float, ...]
    runs: int = Field(ge=1, strict=True)
    sources: tuple[SourceModel, ...]


class LossModel(_Strict):
    """The loss penalty refitted on the sweep (cost.loss.PenaltyModel). A rule file of
    the depth-only form (3x3 cov of ln k, a, b; no q) still reads, with q = 0."""

    ln_k: float
    a: float
    b: float
    cov: Union[tuple[float, float, float, float, float, float, float, float, float],
               tuple[float, float, float, float, float, float, float, float, float, float, float, float, float, float, float, float]]
    q: float = Field(default=0.0, ge=0)
    ffn_ratio: float = Field(default=4.0, gt=0)
    tau_k: float = Field(default=0.0, ge=0)
    tau_a: float = Field(default=0.0, ge=0)
    tau_ext: float = Field(default=0.0, ge=0)
    studies: tuple[tuple[str, float], ...] = ()
    scatter: float = Field(ge=0)
    points: int = Field(ge=1, strict=True)
    groups: int = Field(ge=1, strict=True)
    shapes: int = Field(ge=1, strict=True)
    params_range: tuple[float, float]
    depth_range: tuple[float, float]
    source: str

class LayoutModel(_Strict):
    """The attention layout the sweep held (``rules.file.AttentionLayout``)."""

    head_dim: Optional[int] = Field(default=None, ge=1, strict=True)
    kv_heads: Optional[int] = Field(default=None, ge=1, strict=True)
    kv_ratio: Optional[int] = Field(default=None, ge=1, strict=True)


class RuleModel(_Strict):
    format: Literal["depthwidth-rule/1", "depthwidth-rule/2"]
    name: str = Field(pattern=r"^[a-z0-9-]+$")
    form: Literal["levine", "power"]
    levine: Optional[LevineModel]
    power: Optional[PowerModel]
    group_by: Literal["params", "flops"]
    fit_range: RangeModel
    groups: tuple[GroupModel, ...]
    source: SourceModel
    created: str
    tool: str
    fitted_on: Optional[FittedOnModel] = None
    loss_model: Optional[LossModel] = None

    layout: Optional[LayoutModel] = None

    @field_validator("created")
    @classmethod
    def _date(cls, value):
        if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
            raise ValueError(f"created {value!r}: expected a date YYYY-MM-DD")
        return value

    @model_validator(mode="after")
    def _form_has_constants(self):
        if getattr(self, self.form) is None:
            raise ValueError(f"form is {self.form!r} but its constants ({self.form!r}) are null")
        return self


class ResultRecord(BaseModel):
    """One run of a results file (JSON/JSONL): the sweep's row with its loss filled in."""

    model_config = ConfigDict(extra="allow", allow_inf_nan=False)

    id: Optional[str] = None
    depth: float = Field(ge=1)
    width: float = Field(gt=0)
    loss: Optional[float] = None
