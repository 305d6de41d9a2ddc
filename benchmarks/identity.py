"""Byte-identity of the CLI across two checkouts: a refactor changes no output.

    python benchmarks/identity.py --base /tmp/base --head .            # 150 command lines, seed 0
    python benchmarks/identity.py --base B --head H -n 300 --seed 7     # more, another draw
    python benchmarks/identity.py --list -n 20                          # only print the command lines

Draws seeded random command lines over every command (plan with presets, budgets, clusters,
--prefer, --all, --brief and every --format; sweep, cost, compare, inspect on the committed
configs, bounds, equiv, models, rules, reproduce, certify, schema, fit, export and plot to a
temporary directory, and bad input that must exit 2). Each line runs once per checkout with
``python -m depthwidth`` and that checkout first on PYTHONPATH, in its own empty working
directory, with COLUMNS, the locale and SOURCE_DATE_EPOCH fixed. Every difference in stdout,
stderr, exit code or the files a command writes is printed; the exit code is 1 when any differs.
Standard library only; asserts nothing about the outputs themselves.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import difflib
import hashlib
import os
import random
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = ("gpt2", "llama-7b", "mistral-7b", "bert-base", "t5-base", "gemma-3-4b", "glm-4.5", "bloom-176b",
           "modernbert-base", "llava-1.5-7b")
PRESETS = ("vanilla", "gpt2", "llama", "mistral", "qwen2", "gemma", "mixtral", "deepseek")
BUDGETS = ("1e8", "350M", "1.3B", "7e9", "13e9", "7e10", "1e11", "3e8", "2.7B", "1e12")
GPUS = ("h100", "a100-80gb", "a100-40gb", "h200", "b200", "mi300x", "tpu-v5p", "h100-pcie")
FORMATS = ("table", "json", "jsonl", "csv")
SHAPES = ("12x768", "24x1024", "32x4096", "48x1600", "6x512", "80x8192", "2x64", "40x5120x40")
MODELS = ("gpt2", "llama-2-7b", "gpt-3", "chinchilla")
SCHEMAS = ("plan", "candidate", "plan-rules", "shape", "bounds", "grid", "compare", "equiv", "models", "inspect", "cost",
           "sweep", "export", "fit", "rules", "reproduce", "certify")  # every record `schema` prints


def _cluster(r: random.Random) -> list[str]:
    """--gpu, and --gpus with --tp that divides it, or nothing."""
    args = ["--gpu", r.choice(GPUS)] if r.random() < 0.5 else []
    if r.random() < 0.5:
        tp = r.choice((1, 2, 4, 8))
        args += ["--tp", str(tp), "--gpus", str(tp * r.choice((1, 8, 64)))]
    return args


def _format(r: random.Random) -> list[str]:
    return ["--format", r.choice(FORMATS)] if r.random() < 0.7 else []


def plan(r: random.Random, configs: Path) -> list[str]:
    if r.random() < 0.1:  # sized by compute or by time instead of a parameter count
        return ["plan", *r.choice((["--flops", r.choice(("1e21", "3e22"))], ["--days", "7", "--gpus", "128"])), "--arch",
                r.choice(PRESETS[:3])] + _format(r)
    args = ["plan", "--params", r.choice(BUDGETS), "--arch", r.choice(PRESETS)]
    if r.random() < 0.3:
        args += ["--params", r.choice(BUDGETS)]
    if r.random() < 0.3:
        args += ["--tokens", r.choice(("2e12", "1e11", "300B"))]
    extra = r.choice(([], ["--all"], ["--brief"], ["--explain"], ["--rules"], ["--prefer", r.choice(("train", "serve", "balanced"))],
                      ["--rule", r.choice(("kaplan-band", "levine-fit", "threshold", "mobilellm", "consensus"))], ["--loss-tolerance", "0.5%"],
                      ["--days", "14", "--gpus", "64"], ["--plot", "plan.svg"], ["--field", "recommended.depth"]))
    return args + extra + _cluster(r) + _format(r)


def sweep(r: random.Random, configs: Path) -> list[str]:
    args = ["sweep", "--params", r.choice(BUDGETS[:6]), "--arch", r.choice(PRESETS[:5])]
    if r.random() < 0.4:
        args += ["--count", str(r.randint(3, 8))]
    return args + _cluster(r) + _format(r)


def cost(r: random.Random, configs: Path) -> list[str]:
    source = [r.choice(SHAPES[:6])] if r.random() < 0.6 else ["--config", str(configs / f"{r.choice(CONFIGS[:3])}.json")]
    return ["cost", *source, "--arch", r.choice(PRESETS[:4])] + (["--serve"] if r.random() < 0.3 else []) + _cluster(r) + _format(r)


def compare(r: random.Random, configs: Path) -> list[str]:
    deep, shallow = r.sample(SHAPES[:6] + MODELS, 2)
    return ["compare", "--deep", deep, "--shallow", shallow] + _cluster(r)[:2] + _format(r)


def inspect(r: random.Random, configs: Path) -> list[str]:
    paths = [str(configs / f"{name}.json") for name in r.sample(CONFIGS, r.randint(1, 2))]
    return ["inspect", *paths] + (["--explain"] if r.random() < 0.3 else []) + _cluster(r)[:2] + _format(r)


def bounds(r: random.Random, configs: Path) -> list[str]:
    if r.random() < 0.3:
        return ["bounds", "--depth", f"1:{r.randint(4, 30)}", "--width", "256:2048:256"] + _format(r)
    return ["bounds", *r.sample(SHAPES, r.randint(1, 3))] + (["--tp", "8"] if r.random() < 0.3 else []) + _format(r)


def small(r: random.Random, configs: Path) -> list[str]:
    """The commands with few options: equiv, models, rules, reproduce, certify, schema."""
    return r.choice((
        ["equiv", "--deep", r.choice(("6x512", "12x768", "gpt2")), "--depth", r.choice(("2,3", "1:4"))] + _format(r),
        ["models", "--sort", r.choice(("name", "params", "depth", "width", "year"))] + (["--all"] if r.random() < 0.3 else []) + _format(r),
        ["models", "--filter", r.choice(("llama", "gpt*", "mistral")), "--min-params", "1e9"] + _format(r),
        ["rules"] + _format(r),
        ["reproduce"] + _format(r),
        ["certify", r.choice(("1x4", "2x4", "2x6")), "-m", str(r.choice((20, 40))), "--seed", str(r.randint(0, 9))] + _format(r),
        ["schema", r.choice(SCHEMAS)],
    ))


def files(r: random.Random, configs: Path) -> list[str]:
    """Commands that write into the working directory: export, fit --save, plot."""
    return r.choice((
        ["export", r.choice(SHAPES[:5]), "--to", r.choice(("hf-llama", "hf-gpt2", "nanogpt", "hf-qwen2")), "--out", "out"] + _format(r)[:2],
        ["export", "--plan", r.choice(BUDGETS[:4]), "--to", "hf-llama", "--out", "out"],
        ["fit", str(ROOT / "examples" / "results.csv")] + _format(r),
        ["fit", str(ROOT / "examples" / "results.csv"), "--save", "rule.json", "--form", r.choice(("levine", "power", "both"))],
        ["plot", "bounds", "-w", r.choice(("512", "1024")), "--out", "b.svg"],
        ["plot", "phase", "--out", "p.svg", "--params", r.choice(BUDGETS[:5])],
        ["sweep", "--params", r.choice(BUDGETS[:3]), "--export", "hf-llama", "--out", "runs"],
    ))


def errors(r: random.Random, configs: Path) -> list[str]:
    """Bad input: each should be one stderr line and exit 2."""
    return r.choice((
        ["plan", "--params", r.choice(("-5", "abc", "0", "1e400", "nan"))],
        ["plan", "--params", "1e9", "--gpu", "k80"],
        ["plan", "--params", "1e9", "--arch", "nope"],
        ["plan", "--params", "1e9", "--prefer", "cheap"],
        ["plan", "--params", "1e9", "--tp", "3", "--gpus", "8"],
        ["cost", "0x0"],
        ["compare", "--deep", "2x64", "--shallow", "no-such-model"],
        ["inspect", str(configs / "not-a-config.json")],
        ["bounds", "--depth", "5:1", "--width", "64"],
        ["schema", "nothing"],
        ["export", "12x768", "--to", "hf-nothing", "--out", "x"],
        ["plan", "--params", "1e9", "--format", "xml"],
        ["sweep", "--params", "1e9", "--depths", "0:4"],
        ["plan", "--params", "1e9", "--loss-tolerance", "-1%"],
    ))


# command lines whose warnings --field selects by the shape each concerns (drawn lines rarely hit them)
FIXED = [
    ["plan", "--params", "7e9", "--arch", "llama", *field, *fmt]
    for field in ([], ["--field", "threshold.min_depth"], ["--field", "recommended.depth"], ["--field", "warnings"])
    for fmt in ([], ["--format", "json"])
] + [
    ["plan", "--params", budget, *extra, "--field", field]
    for budget, extra in (("1e8", ["--multiple", "1024"]), ("5e12", ["--arch", "llama"]), ("1e16", ["--arch", "llama"]),
                          ("2e8", ["--pp", "40", "--gpus", "40"]), ("3e8", ["--arch", "llama", "--tp", "8"]),
                          ("2e7", ["--multiple", "4096"]))
    for field in ("threshold.width", "recommended.depth", "band.low")
]


KINDS = ((plan, 30), (sweep, 10), (cost, 12), (compare, 8), (inspect, 10), (bounds, 8), (small, 14), (files, 8), (errors, 12))


def command_lines(n: int, seed: int, configs: Path) -> list[list[str]]:
    """``n`` drawn command lines, the same for the same seed, each kind of command at least once; then FIXED."""
    r = random.Random(seed)
    kinds = [kind for kind, _ in KINDS]
    drawn = kinds + r.choices(kinds, weights=[w for _, w in KINDS], k=max(0, n - len(kinds)))
    return [kind(r, configs) for kind in drawn] + [list(line) for line in FIXED]


def run(checkout: Path, argv: list[str], columns: int) -> tuple[bytes, bytes, int, dict[str, str]]:
    """One command line in ``checkout``, in a fresh directory: stdout, stderr, exit code and the
    digest of every file it wrote (by path relative to that directory)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR"))}
    env.update(PYTHONPATH=str(checkout), COLUMNS=str(columns), LINES="50", LC_ALL="C.UTF-8", TERM="dumb",
               SOURCE_DATE_EPOCH="0", PYTHONHASHSEED="0", PYTHONIOENCODING="utf-8")
    with tempfile.TemporaryDirectory(prefix="identity-") as work:
        done = subprocess.run([sys.executable, "-m", "depthwidth", *argv], cwd=work, env=env, capture_output=True,
                              stdin=subprocess.DEVNULL, timeout=600)
        written = {str(p.relative_to(work)): hashlib.sha256(p.read_bytes()).hexdigest()[:16]
                   for p in sorted(Path(work).rglob("*")) if p.is_file()}
        # the working directory's name appears where a command echoes a path it wrote
        scrub = lambda b: b.replace(work.encode(), b"<cwd>")  # noqa: E731
        return scrub(done.stdout), scrub(done.stderr), done.returncode, written


def differences(base: tuple, head: tuple) -> list[str]:
    """What differs between two runs, as readable lines (a unified diff for stdout/stderr)."""
    found = []
    for label, a, b in (("stdout", base[0], head[0]), ("stderr", base[1], head[1])):
        if a != b:
            diff = difflib.unified_diff(a.decode(errors="replace").splitlines(), b.decode(errors="replace").splitlines(),
                                        "base", "head", lineterm="", n=1)
            found.append(f"  {label} differs:\n" + "\n".join("    " + line for line in list(diff)[:40]))
    if base[2] != head[2]:
        found.append(f"  exit code {base[2]} -> {head[2]}")
    if base[3] != head[3]:
        found.append(f"  files written differ: {base[3]} -> {head[3]}")
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", type=Path, help="the checkout before the change")
    parser.add_argument("--head", type=Path, default=ROOT, help="the checkout after it (default: this one)")
    parser.add_argument("-n", type=int, default=150, help="how many command lines (default 150)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--columns", type=int, default=100)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--only", help="keep only the command lines that contain this text (e.g. 'plot phase')")
    parser.add_argument("--list", action="store_true", help="print the command lines and stop")
    args = parser.parse_args()
    lines = command_lines(args.n, args.seed, (args.base or ROOT).resolve() / "tests" / "configs")
    if args.only:
        lines = [line for line in lines if args.only in shlex.join(line)]
    if args.list:
        print("\n".join(shlex.join(line) for line in lines))
        return 0
    if args.base is None:
        parser.error("--base is required unless --list")
    base, head = args.base.resolve(), args.head.resolve()

    def both(argv):
        return run(base, argv, args.columns), run(head, argv, args.columns)

    differing, codes = 0, {}
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for argv, (a, b) in zip(lines, pool.map(both, lines)):
            codes[a[2]] = codes.get(a[2], 0) + 1
            if found := differences(a, b):
                differing += 1
                print(f"DIFFERS: depthwidth {shlex.join(argv)}\n" + "\n".join(found))
    print(f"{len(lines)} command lines (seed {args.seed}, COLUMNS={args.columns}; exit codes {dict(sorted(codes.items()))}): "
          f"{differing} differ")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
