"""Write a generated docs page, or with ``--check`` say whether the committed page is current
(shared by docs/gen_cli.py and docs/gen_hardware.py)."""
from __future__ import annotations

import sys
from pathlib import Path


def write_or_check(out: Path, text: str, argv: list[str], source: str, script: str) -> int:
    """0 when ``out`` now holds ``text``; with ``--check``, 1 (and one stderr line) when it differs."""
    if "--check" in argv:
        if not out.exists() or out.read_text(encoding="utf-8") != text:
            print(f"{out} differs from {source}: run python {script}", file=sys.stderr)
            return 1
        return 0
    out.write_text(text, encoding="utf-8")
    return 0
