"""Calibration profiles (``depthwidth calibrate --out``; ``--profile`` on plan, cost, sweep, compare,
inspect): one JSON file, ``format`` ``depthwidth-profile/1``, validated with Pydantic when read; or the
name of a stack's profile fitted on the published runs (``stack_profiles.py``).

The file: ``format``, ``accelerator`` (the ``--gpu`` it was measured on: a profile applies to that
accelerator only), ``calibrated_on`` (one line saying on what; every command that applies it prints
it), and one section per use: ``training`` (the stack's efficiency, its interval, the measurement
and the run it came from; ``cost/perf/calibration.py``) and ``serving`` (the serving efficiency, modelled
over measured decode step, and what it was measured on; ``cost/serve_calibrate.py``). A profile holds
one section or both; each applies to its own figures only.
"""
from __future__ import annotations

import json

from ..core.errors import InputError
from ..core.frozen import frozen

FORMAT = "depthwidth-profile/1"
HINT = "a profile written by `depthwidth calibrate --out`"


@frozen
class Profile:
    """What a command needs of a profile: the accelerator, the training and serving efficiencies (None:
    that section is absent, so the model's own), the line to print."""

    accelerator: str
    efficiency: float | None
    calibrated_on: str
    serving_efficiency: float | None = None


def profile_json(record: dict) -> bytes:
    """The profile file's bytes (``record``: its fields, plain values, every number finite)."""
    return (json.dumps(record, indent=2, allow_nan=False) + "\n").encode()


def write_profile(record: dict, path: str) -> None:
    """Write the profile to ``path`` (all or nothing; the directory must exist)."""
    from ..core.staging import cannot_write, need_parent, replace_file

    if not path.strip():
        raise InputError("--out", path, "expected a file name such as my-stack.json")
    need_parent(path, path, "--out")
    data = profile_json(record)
    try:
        replace_file(data, path)
    except IsADirectoryError:
        raise InputError("--out", path, "expected a file name, not a folder") from None
    except OSError as err:
        raise cannot_write(path, err) from None


def read_profile(path: str, gpu: str) -> Profile:
    """The profile at ``path``, checked and validated, for a run on ``gpu``; InputError (one line) otherwise."""
    from ..core.userfile import read_bytes
    from .stack_profiles import STACK_PROFILES, stack_profile

    try:
        named = stack_profile(path, gpu)
    except ValueError as err:
        raise InputError("--profile", path, f"{err}: a profile holds for the accelerator it was measured on") from None
    if named is not None:
        return Profile(gpu, named[0], named[1])
    import os

    if not os.path.exists(path) and "/" not in path and not path.endswith(".json"):
        raise InputError("--profile", path, f"no such file, nor a named profile: expected {HINT}, or one of "
                                            + ", ".join(STACK_PROFILES))
    model = _validated(read_bytes(path, "--profile", HINT), path)
    if model.accelerator != gpu:
        raise InputError("--profile", path, f"was calibrated on {model.accelerator}, and this run is on {gpu}: a profile holds "
                                            "for the accelerator it was measured on; calibrate on this one")
    if model.training is None and model.serving is None:
        raise InputError("--profile", path, f"holds neither a training nor a serving section; expected {HINT}")
    return Profile(model.accelerator, None if model.training is None else model.training.efficiency, model.calibrated_on,
                   None if model.serving is None else model.serving.efficiency)


def _validated(data: bytes, path: str):
    """The Pydantic model of a profile file's bytes."""
    from pydantic import ValidationError

    from .profilemodel import ProfileModel

    try:
        text = data.decode("utf-8-sig")
        raw = json.loads(text, parse_constant=_no_constant)
    except UnicodeDecodeError:
        raise InputError("--profile", path, f"not UTF-8 text; expected {HINT}") from None
    except (ValueError, RecursionError) as err:
        raise InputError("--profile", path, f"not valid JSON ({err}); expected {HINT}") from None
    if not isinstance(raw, dict) or raw.get("format") != FORMAT:
        found = raw.get("format") if isinstance(raw, dict) else type(raw).__name__
        raise InputError("--profile", path, f"format is {found!r}; expected {FORMAT!r}: {HINT}")
    try:
        return ProfileModel.model_validate_json(text, strict=True)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        more = f" (and {err.error_count() - 1} more problems)" if err.error_count() > 1 else ""
        raise InputError("--profile", path, f"{where}: {first['msg']}{more}; expected {HINT}") from None


def _no_constant(token: str):
    raise ValueError(f"{token} is not allowed")
