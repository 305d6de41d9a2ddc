"""What a command's first screen needs beyond its record (issue 45): `compare`'s pick between its two
shapes (``advice.which``), costed on the run options as `plan` and `cost` cost a shape. Computed only
for the table: the JSON record is the command's own."""
from __future__ import annotations


def compare_which(spec, fixed: tuple, rate, named):
    """``advice.which.which`` of ``named`` = [(label, text, blocks.Architecture)] on the run options as
    ``training.given_run`` read them: ``fixed`` the layout fields the user gave (the rest searched, as
    `cost` and `plan` search them), ``rate`` the flat --mfu (None: the performance model times the run)."""
    from ..advice.which import which

    return which(named, spec, fixed, rate is None)
