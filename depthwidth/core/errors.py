"""The exception types the CLI turns into one stderr line: InputError (exit 2) and
EnvironmentFailure (exit 1: standard input or output unusable)."""


class InputError(ValueError):
    """Bad user input: carries the offending value and what would have been accepted.

    ``str(err)`` is the single stderr line the CLI prints, e.g.
    ``bad shape '12x0': width must be an integer >= 2; expected DEPTHxWIDTH[xHEADS] such as 12x768``;
    with ``where`` (say ``standard input line 4``) it reads ``bad shape '12x0' (standard input line 4): ...``.
    """

    def __init__(self, what: str, value: object, accepted: str, where: str | None = None, number: float | None = None):
        self.what = what
        self.value = value
        self.accepted = accepted
        self.where = where
        self.number = number  # the value as a number, when ``value`` is its spelling (a budget: cli.inputs.as_typed)
        super().__init__(f"bad {what} {_show(value)}{f' ({where})' if where else ''}: {accepted}")

    def at(self, where: str) -> "InputError":
        """The same error, saying where the value came from."""
        return InputError(self.what, self.value, self.accepted, where, self.number)


def not_one_of(what: str, value: object, accepted) -> InputError:
    """The error for a name not among ``accepted``: "did you mean" the closest one (difflib), then
    every accepted name (a misspelt --field, --arch, --gpu or --rule)."""
    import difflib

    accepted = [str(a) for a in accepted]
    close = difflib.get_close_matches(str(value).strip().lower(), [a.lower() for a in accepted], n=1, cutoff=0.6)
    hint = next((f"did you mean '{a}'?" for a in accepted if close and a.lower() == close[0]), "")
    if len(accepted) > 20:  # a long list would bury the near miss and pass a line's length: its level only (top, or its parent's)
        parent = str(value).rpartition(".")[0]
        shown = [a for a in accepted if "." not in a or (parent and a.rpartition(".")[0] == parent)]
        return InputError(what, value, (hint + " " if hint else "") + "expected one of " + ", ".join(shown)
                          + (" (and nested names: the JSON output shows them)" if len(shown) < len(accepted) else ""))
    return InputError(what, value, (hint + " " if hint else "") + "expected one of " + ", ".join(accepted))


class EnvironmentFailure(RuntimeError):
    """Standard input or output cannot be used (closed, full, unwritable): exit 1, one line,
    ``cannot read standard input: ...`` or ``cannot write output: ...``."""


def _show(value: object, limit: int = 60) -> str:
    """repr() of the value, its start and end kept when it is long (a path ends in the file name),
    so one error stays on one readable line."""
    value = value if isinstance(value, (str, bytes)) else str(value)
    if len(value) > 10 * limit:  # repr() of a 30 MB value would copy it; its ends are enough
        value_shown = value[: limit] + value[-limit:]
        text = repr(value_shown)
        return f"{text[:limit - 20]}...{text[-17:]} ({len(value)} {'bytes' if isinstance(value, bytes) else 'chars'})"
    text = repr(value)
    if len(text) <= limit:
        return text
    return f"{text[:limit - 20]}...{text[-17:]} ({len(value)} {'bytes' if isinstance(value, bytes) else 'chars'})"


EXIT_BAD_INPUT = 2  # InputError and usage errors
EXIT_FAILURE = 1  # everything else: unusable stdin/stdout, a differing claim under --strict, an internal error
