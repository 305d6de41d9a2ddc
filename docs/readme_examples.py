"""The README's worked examples: each ```console block is a command (after `$ `) and its output.

    python docs/readme_examples.py           # rerun every example and rewrite its output in README.md
    python docs/readme_examples.py --check   # exit 1 when an output differs (tests/test_examples.py)

Commands run with bash from the repository root; stdout only (warnings on stderr are not shown).
A command writing under /tmp/depthwidth-example/ gets a fresh temporary folder in its place.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
BLOCK = re.compile(r"```console\n\$ (?P<command>[^\n]+)\n(?P<output>.*?)```", re.S)
SCRATCH = "/tmp/depthwidth-example/"


def examples(text: str) -> list[tuple[str, str]]:
    """(command, printed output) of every console block, in order."""
    return [(m["command"], m["output"]) for m in BLOCK.finditer(text)]


def run(command: str) -> str:
    """What ``command`` prints, each line right-stripped, ending in one newline."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}  # as a pipe sees it, unless the command sets them
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    with tempfile.TemporaryDirectory() as scratch:
        real = command.replace(SCRATCH, scratch + "/")
        out = subprocess.run(["bash", "-o", "pipefail", "-c", real], capture_output=True, text=True, env=env, cwd=ROOT,
                             timeout=300)
        if out.returncode not in (0, 141):  # 141: `| head` closed the pipe
            raise RuntimeError(f"{command!r} exited {out.returncode}: {out.stderr[-300:]}")
        text = out.stdout.replace(scratch + "/", SCRATCH)
    return "".join(line.rstrip() + "\n" for line in text.rstrip("\n").split("\n"))


def main(argv: list[str]) -> int:
    text = README.read_text(encoding="utf-8")
    if "--check" in argv:
        bad = [command for command, output in examples(text) if run(command) != output]
        for command in bad:
            print(f"README example differs: $ {command} (python docs/readme_examples.py rewrites it)", file=sys.stderr)
        return 1 if bad else 0
    README.write_text(BLOCK.sub(lambda m: f"```console\n$ {m['command']}\n{run(m['command'])}```", text), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
