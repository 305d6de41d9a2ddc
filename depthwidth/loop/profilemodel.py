"""The Pydantic model of a calibration profile (``profiles.py``), imported only when one is read.
Unknown keys are refused (a typo must not pass silently), numbers must be finite."""
from __future__ import annotations

from typing import Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, frozen=True)


class MeasurementModel(_Strict):
    kind: Literal["step-seconds", "tokens-per-second", "log"]
    source: str
    log_format: Optional[str] = None
    log_sha256: Optional[str] = None
    step_seconds: float = Field(gt=0)
    step_seconds_low: Optional[float] = Field(default=None, gt=0)
    step_seconds_high: Optional[float] = Field(default=None, gt=0)
    steps_read: int = Field(ge=1)
    warmup_skipped: int = Field(ge=0)
    note: str


class RunModel(_Strict):
    shape: str
    arch: str
    params_nonembedding: int = Field(gt=0)
    gpus: int = Field(ge=1)
    context: int = Field(ge=1)
    global_batch: int = Field(ge=1)
    attention: str
    layout: dict[str, Union[int, str]]
    fixed_layout: dict[str, Union[int, str]]


class TrainingModel(_Strict):
    efficiency: float = Field(gt=0)
    efficiency_low: Optional[float] = Field(default=None, gt=0)
    efficiency_high: Optional[float] = Field(default=None, gt=0)
    interval_note: str
    compute_share_before: Optional[float] = Field(default=None, ge=0, le=1)  # absent in profiles written before it
    default_efficiency: float = Field(gt=0)
    step_seconds_before: float = Field(gt=0)
    measurement: MeasurementModel
    run: RunModel


class ServingMeasuredModel(_Strict):
    source: str
    batch: Optional[int] = Field(default=None, ge=1)
    input_tokens: Optional[int] = Field(default=None, ge=0)
    output_tokens: Optional[int] = Field(default=None, ge=0)
    time_per_output_token: Optional[float] = Field(default=None, gt=0)
    output_tokens_per_second: Optional[float] = Field(default=None, gt=0)


class ServingModel(_Strict):
    efficiency: float = Field(gt=0)
    gpu: str
    tp: int = Field(ge=1)
    model: str
    measured: ServingMeasuredModel


class ProfileModel(_Strict):
    format: Literal["depthwidth-profile/1"]
    accelerator: str
    calibrated_on: str
    training: Optional[TrainingModel] = None
    serving: Optional[ServingModel] = None
