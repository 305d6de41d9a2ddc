"""Pydantic models of the two Hugging Face files depthwidth reads: ``config.json`` (``ConfigFile``,
checked by ``config.inspect_config`` when ``read.plainly_valid`` cannot vouch for it) and the Trainer's
``trainer_state.json`` (``TrainerState``, checked by ``results.eval_loss``). Imported only when such a
file is read, never by ``plan`` or ``bounds``; a config that is plainly valid (most are) skips it.

The models check the structure the readers rely on and keep every other key as it is
(``extra="allow"``: a config holds hundreds of keys the tool does not read). Which key wins and the
family defaults stay with the readers (hf/read.py, hf/config.py, hf/layers.py). The first error becomes one
InputError line, ``bad config 'x.json': text_config.num_hidden_layers = 12.5 is not a whole number
from 1 to 10^15; expected a Hugging Face config.json``, as rule files' errors do (``rulemodels``).
"""
from __future__ import annotations

from typing import Annotated, List, Optional

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, WrapValidator, create_model
from pydantic_core import PydanticCustomError

from ..core.errors import InputError
from .read import EXPECTED, EXPERTS_KEYS, FLAG_KEYS, MAX_SIZE, NESTED_KEYS, ROLES, shown

TRAINER_STATE = "a Hugging Face Trainer's trainer_state.json"


def _says(accepted: str, **context) -> WrapValidator:
    """Any failure of the wrapped check is one error: ``is not <accepted>``."""
    def check(value, handler):
        try:
            return handler(value)
        except ValidationError:
            raise PydanticCustomError("depthwidth", "is not " + accepted, context) from None
    return WrapValidator(check)


def _object(value):
    """A nested object must be one (its own keys are then checked with their path)."""
    if value is not None and not isinstance(value, dict):
        raise PydanticCustomError("depthwidth", "is not a JSON object")
    return value


def _list(value):
    if not isinstance(value, list):
        raise PydanticCustomError("depthwidth", "is not a list")
    return value


def _whole(lowest: int):
    """A whole number from ``lowest`` to 10^15: bools, floats (12.0 too) and strings are refused."""
    return Annotated[int, Field(strict=True, ge=lowest, le=MAX_SIZE),
                     _says("a whole number from {lowest} to 10^15", lowest=lowest)]


def _flag(value):
    """A yes/no key: true or false (0 and 1 read the same); "false" as text would read as true."""
    if value is None or isinstance(value, bool) or (type(value) is int and value in (0, 1)):
        return value
    raise PydanticCustomError("depthwidth", "is not true or false")


FiniteNumber = Annotated[float, Field(strict=True, allow_inf_nan=False), _says("a finite number")]


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow", protected_namespaces=(), frozen=True)


Count, CountOrZero = Optional[_whole(1)], Optional[_whole(0)]
_ROLE_FIELDS = {key: (CountOrZero if keys is EXPERTS_KEYS else Count, None) for keys in ROLES for key in keys}
ConfigFile = create_model(
    "ConfigFile", __base__=_Open, __module__=__name__,
    __doc__="A config.json: each role key (read.ROLES: depth, width, heads, ...) a whole number when given "
            "(experts may be 0), each yes/no key (FLAG_KEYS) true or false, architectures a list of strings, model_type a string, a nested language "
            "model (read.NESTED_KEYS: text_config, ...) a config of its own. Null is as good as absent.",
    **_ROLE_FIELDS,
    architectures=(Optional[Annotated[List[Annotated[str, Field(strict=True)]], _says("a list of strings")]], None),
    model_type=(Optional[Annotated[str, Field(strict=True), _says("a string")]], None),
    **{key: (Annotated[object, BeforeValidator(_flag)], None) for key in FLAG_KEYS},
    **{key: (Optional[Annotated["ConfigFile", BeforeValidator(_object)]], None) for key in NESTED_KEYS},
)
ConfigFile.model_rebuild()


class LogEntry(_Open):
    """One entry of ``log_history``: the numbers fit reads are finite when given."""

    eval_loss: Optional[FiniteNumber] = None
    step: Optional[FiniteNumber] = None
    epoch: Optional[FiniteNumber] = None


class TrainerState(_Open):
    """A trainer_state.json: an object whose ``log_history`` is a list of objects."""

    log_history: Annotated[List[Annotated[LogEntry, BeforeValidator(_object)]], BeforeValidator(_list)]


def problem(err: ValidationError) -> str:
    """The first error of ``err`` as ``key.path = value is not ...`` (and how many more there are)."""
    first = err.errors()[0]
    if first["type"] == "invalid_key":  # a dict handed to the Python API, not JSON
        return f"key {shown(first['input'])} is not a string"
    where = ".".join(str(part) for part in first["loc"])
    if len(where) > 60:  # an absurdly nested file: its ends are enough
        where = f"{where[:25]}...{where[-30:]}"
    said = first["msg"] if first["type"] == "depthwidth" else f"is not accepted ({first['msg'][:1].lower()}{first['msg'][1:]})"
    more = err.error_count() - 1
    return f"{where} = {shown(first['input'])} {said}" + (f" (and {more} more problem{'s' * (more > 1)})" if more else "")


def check_config(cfg: object, source: str) -> None:
    """Validate a parsed config.json with ``ConfigFile``; an InputError naming the key otherwise."""
    try:
        ConfigFile.model_validate(cfg)
    except ValidationError as err:
        if err.errors()[0]["loc"] == ():
            raise InputError("config", source, f"not a JSON object; {EXPECTED}") from None
        raise InputError("config", source, f"{problem(err)}; {EXPECTED}") from None


def check_trainer_state(state: object, run_id: str, path: str) -> TrainerState:
    """Validate a parsed trainer_state.json with ``TrainerState``; an InputError naming the run and file otherwise."""
    try:
        return TrainerState.model_validate(state)
    except ValidationError as err:
        if err.errors()[0]["loc"] in ((), ("log_history",)):
            raise InputError("run", run_id, f"{path} has no log_history list (not a Trainer state?)") from None
        raise InputError("run", run_id, f"{path}: {problem(err)}; expected {TRAINER_STATE}") from None
