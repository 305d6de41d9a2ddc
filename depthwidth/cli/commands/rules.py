"""`depthwidth rules`: the empirical depth/width rules side by side."""
from ..options import Field, Fmt, Format


def command(
    format: Fmt = Format.table,
    field: Field = None,
) -> None:
    """The empirical depth/width rules side by side: kind, formula, source, range, and whether verified.

    Example: depthwidth rules --format json
    """
    from ...output import emit
    from ...output.tables import rules_tables
    from ...advice.rules.builtin import REGISTRY

    emit(list(REGISTRY.values()), format.value, field, rules_tables)
