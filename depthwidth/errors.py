"""The one exception type for bad input; cli.py turns it into exit code 2."""


class InputError(ValueError):
    """Bad user input: carries the offending value and what would have been accepted.

    ``str(err)`` is the single stderr line the CLI prints, e.g.
    ``bad shape '12x0': width must be an integer >= 2; expected DEPTHxWIDTH[xHEADS] such as 12x768``.
    """

    def __init__(self, what: str, value: object, accepted: str):
        self.what = what
        self.value = value
        self.accepted = accepted
        super().__init__(f"bad {what} {_show(value)}: {accepted}")


def _show(value: object, limit: int = 60) -> str:
    """repr() of the value, its start and end kept when it is long (a path ends in the file name),
    so one error stays on one readable line."""
    value = value if isinstance(value, (str, bytes)) else str(value)
    text = repr(value)
    if len(text) <= limit:
        return text
    return f"{text[:limit - 20]}...{text[-17:]} ({len(value)} {'bytes' if isinstance(value, bytes) else 'chars'})"
