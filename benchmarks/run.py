"""depthwidth benchmarks (issue 5): startup, vectorized bounds, and a 10^6-row grid.

    python benchmarks/run.py            # everything
    python benchmarks/run.py startup    # only the startup figures
    python benchmarks/run.py instructions  # the startup commands' instructions (valgrind), which load does not move
    python benchmarks/run.py budgets    # only plan --brief on 10^5 budgets against bounds on 10^5 shapes
    python benchmarks/run.py hardening  # only bounds - memory on 10^6 lines, plan and sweep over 1e6..1e30

Prints figures from one run on one machine next to their targets, with "ok" or "MISSED";
asserts nothing (the test suite never times anything). Standard library and NumPy only; about
half a minute. Figures move with machine load: run it on a quiet machine.

Children run the console script installed beside this interpreter (a pyenv shim in front of
it would add a bash process and ~50 ms to every call), and with bytecode caching on (in a
temporary PYTHONPYCACHEPREFIX), as an installed package runs. When the environment sets
PYTHONDONTWRITEBYTECODE, every call recompiles depthwidth's modules from source; that figure is
printed too, for information.
"""
from __future__ import annotations

import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # the checkout this script belongs to, installed or not

RUNS = 15  # timed runs per command, after one warm-up
GRID = ["bounds", "--depth", "1:1000", "--width", "64:64000:64"]  # 1000 x 1000 = 10^6 rows


def cli() -> list[str]:
    """How to run depthwidth: the console script next to this Python, on PATH, or ``-m``."""
    beside = Path(sys.executable).with_name("depthwidth")
    if beside.is_file() and os.access(beside, os.X_OK):
        return [str(beside)]
    found = shutil.which("depthwidth")
    return [found] if found else [sys.executable, "-m", "depthwidth"]


def child_env(bytecode_cache: str | None) -> dict:
    env = dict(os.environ)
    env.pop("DEPTHWIDTH_DEBUG", None)
    if bytecode_cache is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = bytecode_cache
    return env


def run_once(cmd: list[str], env: dict, data: bytes | None = None) -> float:
    """Wall seconds of one run of ``cmd`` (``data`` on its standard input, else none)."""
    stdin = {"input": data} if data is not None else {"stdin": subprocess.DEVNULL}
    start = time.perf_counter()
    done = subprocess.run(cmd, **stdin, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"benchmark command failed ({done.returncode}): {' '.join(cmd)}\n{done.stderr.decode()[-2000:]}")
    return elapsed


def median_walls(commands: dict[str, list[str]], env: dict, runs: int = RUNS) -> dict[str, float]:
    """Median wall seconds per command; one warm-up each, then rounds interleaving the commands
    so that drifting machine load hits them all alike."""
    for cmd in commands.values():
        run_once(cmd, env)
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(runs):
        for name, cmd in commands.items():
            times[name].append(run_once(cmd, env))
    return {name: statistics.median(values) for name, values in times.items()}


def verdict(value: float, limit: float, higher_is_better: bool = False) -> str:
    good = value >= limit if higher_is_better else value <= limit
    return "ok" if good else "MISSED"


def line(label: str, figure: str, target: str = "", word: str = "") -> None:
    print(f"  {label:<54} {figure:>32}   {target:<16} {word}".rstrip())


def startup(exe: list[str], env: dict) -> None:
    print(f"\nStartup: median wall of {RUNS} runs after one warm-up, rounds interleaved")
    commands = {
        "interpreter": [sys.executable, "-c", "pass"],  # what every Python call pays here, site's .pth files included
        "floor": [sys.executable, "-c", "import typer"],
        "plan": exe + ["plan", "--params", "1e9"],
        "help": exe + ["--help"],
        "version": exe + ["--version"],
    }
    json_commands = {  # issue 16: every JSON/JSONL command within 1.5x the floor, like the table path
        f"{' '.join(args[:1])} {fmt}": exe + args + ["--format", fmt]
        for args in (["plan", "--params", "1e9"], ["bounds", "12x768", "24x1024x16"],
                     ["compare", "--deep", "12x768", "--shallow", "6x1086"], ["equiv", "--deep", "6x1000x16", "--depth", "2,3"])
        for fmt in ("json", "jsonl")}
    config = str(ROOT / "tests" / "configs" / "llama-7b.json")
    json_commands["inspect json"] = exe + ["inspect", config, "--format", "json"]  # a config read without Pydantic
    json_commands["plan csv"] = exe + ["plan", "--params", "1e9", "--format", "csv"]  # issue 32: CSV and --field too
    json_commands["plan field"] = exe + ["plan", "--params", "1e9", "--field", "recommended.width"]
    # calibrate (a bisection of the performance model) within 1.5x the floor, as every machine output
    json_commands["calibrate json"] = exe + ["calibrate", "32x4096", "--arch", "llama", "--gpus", "64", "--tp", "2", "--pp", "1",
                                             "--zero", "1", "--micro-batch", "2", "--global-batch", "512", "--context", "4096",
                                             "--recompute", "selective", "--step-seconds", "2.0", "--format", "json"]
    table_commands = {f"{args[0]} table": exe + args for args in (  # issue 45: every one-screen table <= 2.0x
        ["compare", "--deep", "12x768", "--shallow", "6x1086"], ["cost", "32x4096", "--arch", "llama", "--gpus", "64"],
        ["sweep", "--params", "1e9"], ["bounds", "12x768", "24x1024x16"], ["inspect", config],
        ["equiv", "--deep", "6x1000x16", "--depth", "2,3"], ["models"])}
    walls = median_walls({**commands, **json_commands, **table_commands}, env)
    floor = walls["floor"]
    line('python -c "pass" (the interpreter, for information)', f"{walls['interpreter'] * 1e3:.1f} ms")
    line('python -c "import typer" (the floor)', f"{floor * 1e3:.1f} ms")
    print(f"  {'':<54} {'(ms above the floor)':>32}")
    machine = lambda name: f"depthwidth {name.split()[0]} ... " + ("--field NAME" if name.endswith("field") else f"--format {name.split()[1]}")
    for name, label, limit in (("plan", "depthwidth plan --params 1e9 (the table)", 2.0),  # issue 32: the table <= 2.0x
                               *((name, f"depthwidth {name.split()[0]} ... (the table)", 2.0) for name in table_commands),
                               *((name, machine(name), 1.5) for name in json_commands),  # machine outputs <= 1.5x
                               ("help", "depthwidth --help", None), ("version", "depthwidth --version", None)):
        ratio = walls[name] / floor
        line(label, f"{walls[name] * 1e3:.1f} ms = {ratio:.2f}x floor (+{(walls[name] - floor) * 1e3:.0f})",
             f"<= {limit:g}x floor" if limit else "(no target)", verdict(ratio, limit) if limit else "")
    if os.environ.get("PYTHONDONTWRITEBYTECODE"):
        inherited = median_walls({"floor": commands["floor"], "plan": commands["plan"]}, child_env(None))
        line("plan, for information: PYTHONDONTWRITEBYTECODE", f"{inherited['plan'] * 1e3:.1f} ms = "
             f"{inherited['plan'] / inherited['floor']:.2f}x floor", "(no bytecode cache)")


def instructions(exe: list[str], env: dict) -> None:
    """Instructions counted by valgrind, which machine load does not move (a shared machine moves the
    wall ratios above by 0.05-0.1x from run to run): the floor and plan's outputs, for information."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        print("\nInstructions: valgrind is not installed (Debian: apt install valgrind); skipped")
        return
    print("\nInstructions (valgrind --tool=callgrind, one run each after a warm-up; load does not move them)")
    commands = {"floor": [sys.executable, "-c", "import typer"],
                "plan table": exe + ["plan", "--params", "1e9"],
                "plan json": exe + ["plan", "--params", "1e9", "--format", "json"],
                "calibrate json": exe + ["calibrate", "32x4096", "--arch", "llama", "--gpus", "64", "--tp", "2", "--pp", "1",
                                         "--zero", "1", "--micro-batch", "2", "--global-batch", "512", "--context", "4096",
                                         "--recompute", "selective", "--step-seconds", "2.0", "--format", "json"]}
    counted = {}
    for name, cmd in commands.items():
        run_once(cmd, env)  # the bytecode cache filled first
        done = subprocess.run([valgrind, "--tool=callgrind", "--callgrind-out-file=/dev/null", *cmd],
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, text=True)
        found = [word for row in done.stderr.splitlines() if "Collected" in row for word in row.split()[-1:]]
        if done.returncode != 0 or not found:
            raise SystemExit(f"valgrind failed on {' '.join(cmd)}:\n{done.stderr[-2000:]}")
        counted[name] = int(found[0])
    floor = counted["floor"]
    for name, count in counted.items():
        above = "" if name == "floor" else f" = {count / floor:.2f}x floor (+{(count - floor) / 1e6:.1f} M)"
        line(name, f"{count / 1e6:.1f} M{above}", "(no target)")


def vectorized() -> None:
    import numpy as np

    from depthwidth.theory.shapes import default_heads
    from depthwidth.theory.separation import bounds, bounds_grid, iter_bounds_grid

    depths, widths = np.arange(1, 1001), np.arange(64, 64001, 64)
    depth, width = np.repeat(depths, widths.size), np.tile(widths, depths.size)
    heads = default_heads(width, xp=np)
    shapes = depth.size

    def timed(work, repeats: int = 5) -> float:
        work()  # warm-up: first-touch page faults of the big temporaries
        walls = []
        for _ in range(repeats):
            start = time.perf_counter()
            work()
            walls.append(time.perf_counter() - start)
        return statistics.median(walls)

    arrays = shapes / timed(lambda: bounds_grid(depth, width, heads))
    records = shapes / timed(lambda: sum(chunk["depth"].size for chunk in iter_bounds_grid(depths, widths)), 3)
    sample = slice(None, None, shapes // 20_000)
    few = list(zip(depth[sample].tolist(), width[sample].tolist(), heads[sample].tolist()))
    start = time.perf_counter()
    for L, d, H in few:
        bounds(L, d, H)
    scalar = len(few) / (time.perf_counter() - start)

    print(f"\nBounds in-process over the {shapes:,} shapes of the 1000 x 1000 grid (median of 5 after one warm-up)")
    line("vectorized: theory.bounds_grid (arrays)", f"{arrays / 1e6:.1f} M shapes/s", ">= 5 M/s", verdict(arrays, 5e6, True))
    line("vectorized: theory.iter_bounds_grid (+params, notes)", f"{records / 1e6:.1f} M shapes/s", ">= 5 M/s",
         verdict(records, 5e6, True))
    line(f"scalar loop: theory.bounds on {len(few):,} of them", f"{scalar / 1e3:.0f} k shapes/s")
    line("vectorized / scalar (bounds_grid)", f"{arrays / scalar:.0f}x", ">= 50x", verdict(arrays / scalar, 50, True))
    line("vectorized / scalar (iter_bounds_grid)", f"{records / scalar:.0f}x", ">= 50x", verdict(records / scalar, 50, True))


def grid_run(cmd: list[str], env: dict, stdin=subprocess.DEVNULL) -> tuple[float, float]:
    """Wall seconds and peak memory (max RSS, MB: the child's or its largest worker's) of one child
    writing to /dev/null (``stdin``: a file to read, else none)."""
    with open(os.devnull, "wb") as sink:
        start = time.perf_counter()
        child = subprocess.Popen(cmd, stdin=stdin, stdout=sink, stderr=subprocess.PIPE, env=env)
        child.stderr.read()
        _, status, usage = os.wait4(child.pid, 0)
        elapsed = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise SystemExit(f"benchmark command failed ({child.returncode}): {' '.join(cmd)}")
    scale = 1 if sys.platform == "darwin" else 1024  # ru_maxrss: bytes on macOS, KiB on Linux
    return elapsed, usage.ru_maxrss * scale / 1e6


def grid(exe: list[str], env: dict) -> None:
    print("\nGrid: depthwidth bounds --depth 1:1000 --width 64:64000:64 (10^6 rows) > /dev/null, median of 3")
    for fmt, target in (("csv", True), ("jsonl", False), ("json", False)):
        runs = [grid_run(exe + GRID + ["--format", fmt], env) for _ in range(3 if target else 1)]
        wall = statistics.median(r[0] for r in runs)
        memory = max(r[1] for r in runs)
        if target:
            line(f"--format {fmt}: wall", f"{wall:.2f} s", "<= 3 s", verdict(wall, 3.0))
            line(f"--format {fmt}: peak memory (max RSS)", f"{memory:.0f} MB", "<= 500 MB", verdict(memory, 500))
        else:
            line(f"--format {fmt}: wall, peak memory (one run)", f"{wall:.2f} s, {memory:.0f} MB", "(no target)")


POLARS_GRID = """
import sys, time
import numpy as np
import polars as pl
sys.path.insert(0, {root!r})
from depthwidth.theory.separation import REGIME_CODES, iter_bounds_grid
chunks = list(iter_bounds_grid(np.arange(1, 1001), np.arange(64, 64001, 64)))
column = lambda key: np.concatenate([c[key] for c in chunks])
notes = column("notes")
theorem = column("theorem")
frame = pl.DataFrame({{
    "depth": column("depth"), "width": column("width"), "heads": column("heads"), "params_12Ld2": column("params_12Ld2"),
    "threshold_depth": column("threshold_depth"), "regime": np.array(REGIME_CODES)[column("regime_code")],
    "theorem": pl.Series(theorem).replace(0, None), "log3_sep_lower": column("log3_sep_lower"),
    "log3_sep_upper": column("log3_sep_upper"), "lower_vacuous": column("lower_vacuous"),
    "c2_reading": [chunks[0]["c2_reading"]] * notes.size,
    "notes": ["" if n is None else "; ".join(n) for n in notes.tolist()],
}}).with_columns(pl.col("log3_sep_lower").fill_nan(None), pl.col("log3_sep_upper").fill_nan(None))
frame.write_csv(sys.stdout.buffer)
"""


def csv_against_polars(exe: list[str], env: dict) -> None:
    """The 10^6-row grid as CSV, end to end, against a child that imports NumPy and Polars,
    computes the same columns with depthwidth.theory.separation and writes them with Polars' write_csv."""
    import importlib.util

    print("\nGrid CSV against Polars: both children write the same 10^6 rows and 12 columns to /dev/null, median of 3")
    if importlib.util.find_spec("polars") is None:
        line("depthwidth / Polars write_csv", "skipped", "<= 1.0x", "(polars is not installed: pip install -e \".[bench]\")")
        return
    ours = statistics.median(grid_run(exe + GRID + ["--format", "csv"], env)[0] for _ in range(3))
    theirs = statistics.median(grid_run([sys.executable, "-c", POLARS_GRID.format(root=str(ROOT))], env)[0] for _ in range(3))
    line("depthwidth bounds --depth 1:1000 --width 64:64000:64 -f csv", f"{ours:.2f} s")
    line("Polars: the same columns, write_csv", f"{theirs:.2f} s")
    line("depthwidth / Polars", f"{ours / theirs:.2f}x", "<= 1.0x", verdict(ours / theirs, 1.0))  # issue 29


def stdin_against_grid(exe: list[str], env: dict) -> None:
    """`bounds -` on 10^4 shape lines against the grid path writing the same 10^4 shapes."""
    from depthwidth.theory.shapes import default_heads

    widths = range(64, 6401, 64)
    lines = "".join(f"{L}x{d}x{default_heads(d)}\n" for L in range(1, 101) for d in widths).encode()
    grid_cmd = exe + ["bounds", "--depth", "1:100", "--width", "64:6400:64", "--format", "csv"]
    stdin_cmd = exe + ["bounds", "-", "--format", "csv"]

    print("\nbounds - on 10^4 stdin lines against the grid of the same 10^4 shapes, CSV, median of 5")
    stdin = statistics.median(run_once(stdin_cmd, env, lines) for _ in range(5))
    grid_wall = statistics.median(run_once(grid_cmd, env) for _ in range(5))
    line("bounds - (10^4 lines)", f"{stdin:.2f} s")
    line("bounds --depth 1:100 --width 64:6400:64", f"{grid_wall:.2f} s")
    line("stdin / grid", f"{stdin / grid_wall:.2f}x", "<= 1.5x", verdict(stdin / grid_wall, 1.5))


def many_budgets(exe: list[str], env: dict) -> None:
    """`plan --brief` on 10^5 budgets from stdin against `bounds -` on 10^5 shapes, both CSV
    (issue 25: within 3x); and the full `plan` per budget, timed on 10^3 budgets, for scale."""
    import random

    rng = random.Random(25)
    budgets = "".join(f"{10 ** rng.uniform(6, 14):.6g}\n" for _ in range(10**5)).encode()
    shapes = "".join(f"{rng.randint(2, 80)}x{rng.randint(2, 200) * 64}\n" for _ in range(10**5)).encode()

    print("\nplan --brief on 10^5 budgets against bounds - on 10^5 shapes, CSV from stdin, median of 3")
    brief = statistics.median(run_once(exe + ["plan", "--params", "-", "--brief", "--format", "csv"], env, budgets) for _ in range(3))
    bounds = statistics.median(run_once(exe + ["bounds", "-", "--format", "csv"], env, shapes) for _ in range(3))
    lines = budgets.splitlines(True)
    full = run_once(exe + ["plan", "--params", "-", "--format", "csv"], env, b"".join(lines[:1000]))
    one = statistics.median(run_once(exe + ["plan", "--params", "-", "--format", "csv"], env, lines[0]) for _ in range(3))
    line("plan --params - --brief (10^5 budgets)", f"{brief:.2f} s")
    line("bounds - (10^5 shapes)", f"{bounds:.2f} s")
    line("plan --brief / bounds", f"{brief / bounds:.2f}x", "<= 3x", verdict(brief / bounds, 3.0))
    # issue 40: the full plan's cost per budget, start-up taken out (the hint to --brief above 10^3 budgets cites it)
    line("plan --params - in full, per budget (10^3 budgets)", f"{full:.2f} s for 10^3, {one:.2f} s for 1: "
         f"{(full - one) / 999 * 1e3:.1f} ms a budget")


def cost_command(exe: list[str], env: dict) -> None:
    """Issue 30: `cost` JSON within 1.5x the `import typer` floor, its table within 2.0x (issue 44: the JSON
    with --serve within 1.5x too); 10^4 shapes through `cost - --format jsonl` at least 10x faster than 10^4
    processes (timed on 20, scaled)."""
    args = ["cost", "32x4096", "--arch", "llama", "--gpu", "h100", "--gpus", "64", "--tokens", "2e11"]
    print(f"\ncost: median wall of {RUNS} runs, against the import typer floor")
    walls = median_walls({"floor": [sys.executable, "-c", "import typer"], "json": exe + args + ["--format", "json"],
                          "table": exe + args, "json --serve": exe + args + ["--serve", "--format", "json"]}, env)
    for name, limit in (("json", 1.5), ("table", 2.0), ("json --serve", 1.5)):
        ratio = walls[name] / walls["floor"]
        line(f"depthwidth {' '.join(args[:2])} ... ({name})", f"{walls[name] * 1e3:.1f} ms = {ratio:.2f}x floor",
             f"<= {limit:g}x floor", verdict(ratio, limit))
    lines = "".join(f"{8 + i % 40}x{128 * (8 + i % 57)}\n" for i in range(10**4)).encode()
    many = run_once(exe + ["cost", "-", "--arch", "llama", "--gpus", "64", "--format", "jsonl"], env, lines)
    one = statistics.median(run_once(exe + ["cost", f"{8 + i}x{128 * (8 + i)}", "--arch", "llama", "--gpus", "64",
                                            "--format", "jsonl"], env) for i in range(20))
    line("cost - (10^4 shapes, one process)", f"{many:.2f} s")
    line("10^4 processes (20 timed, scaled)", f"{one * 10**4:.0f} s")
    line("processes / one process", f"{one * 10**4 / many:.1f}x", ">= 10x", verdict(one * 10**4 / many, 10.0, True))

def huge_budgets(exe: list[str], env: dict) -> None:
    """Issue 34 finding 1: `sweep` answers every budget it accepts about as fast as `plan` (the default
    sweep's search is over a bounded number of widths; `sweep -p 1e20` once ran for minutes)."""
    print("\nsweep against plan, one budget each, 1e6 to 1e30, CSV (after one warm-up of each)")
    for command in ("sweep", "plan"):
        run_once(exe + [command, "-p", "1e9", "--format", "csv"], env)
    worst = 0.0
    for exponent in (6, 9, 12, 15, 18, 20, 25, 30):
        budget = f"1e{exponent}"
        sweep = run_once(exe + ["sweep", "-p", budget, "--format", "csv"], env)
        plan = run_once(exe + ["plan", "-p", budget, "--format", "csv"], env)
        worst = max(worst, sweep / plan)
        line(f"sweep -p {budget} / plan -p {budget}", f"{sweep:.2f} s / {plan:.2f} s = {sweep / plan:.2f}x")
    line("the slowest sweep against its plan", f"{worst:.2f}x", "<= 3x", verdict(worst, 3.0))


def stdin_memory(exe: list[str], env: dict) -> None:
    """Issue 34: `bounds -` on 10^6 shape lines (the stdin limit) stays under 200 MB peak (it held 894 MB)."""
    import random

    rng = random.Random(34)
    print("\nbounds - on 10^6 stdin lines (the most any command reads), CSV and JSON to /dev/null, one run each")
    with tempfile.TemporaryFile() as lines:
        lines.write("".join(f"{rng.randint(1, 96)}x{rng.choice((256, 512, 768, 1024, 2048, 4096))}\n"
                            for _ in range(10**6)).encode())
        for fmt in ("csv", "json"):
            lines.seek(0)
            wall, memory = grid_run(exe + ["bounds", "-", "--format", fmt], env, stdin=lines)
            line(f"--format {fmt}: peak memory (max RSS), wall", f"{memory:.0f} MB, {wall:.1f} s", "<= 200 MB",
                 verdict(memory, 200))


BUDGET_TIMEOUT = 60  # seconds: a budget still running then is reported as missed (and larger ones are not run)


def every_budget(exe: list[str], env: dict) -> None:
    """Issue 34: `plan` and `sweep` answer every accepted budget from 1e6 to 1e30 within seconds
    (sweep 1e20 ran for minutes); the slowest decade of each, and its ratio to `plan --params 1e9`."""
    print("\nplan and sweep at every decade from 1e6 to 1e30, one run each, JSON/CSV to /dev/null")
    base = statistics.median(run_once(exe + ["plan", "--params", "1e9"], env) for _ in range(3))
    for name, args in (("plan", ["plan", "--format", "json"]), ("sweep", ["sweep", "--format", "csv"])):
        walls = {}
        for power in range(6, 31):
            cmd = exe + args + ["--params", f"1e{power}"]
            start = time.perf_counter()
            try:
                done = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                      env=env, timeout=BUDGET_TIMEOUT)
                walls[power] = time.perf_counter() - start if done.returncode == 0 else None
            except subprocess.TimeoutExpired:
                walls[power] = float("inf")
                break  # larger budgets take longer still: the slowest is known to be over the timeout
        failed = [p for p, w in walls.items() if w is None]
        slowest = max((p for p in walls if walls[p] is not None), key=lambda p: walls[p])
        wall = walls[slowest]
        figure = f"over {BUDGET_TIMEOUT} s (stopped there)" if wall == float("inf") else f"{wall:.2f} s = {wall / base:.0f}x plan 1e9"
        line(f"{name}: slowest of 1e6..1e30 (1e{slowest})", figure, "<= 10 s", verdict(wall, 10.0))
        if failed:
            line(f"{name}: refused (exit != 0)", ", ".join(f"1e{p}" for p in failed), "(none expected)", "MISSED")


def main() -> None:
    import numpy as np

    exe = cli()
    print("depthwidth benchmarks: one run on one machine")
    print(f"  {platform.system()} {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
          f"NumPy {np.__version__}, {time.strftime('%Y-%m-%d %H:%M')}")
    print(f"  running: {' '.join(exe)}")
    with tempfile.TemporaryDirectory(prefix="depthwidth-bench-pyc-") as cache:
        env = child_env(cache)
        if sys.argv[1:] == ["instructions"]:
            return instructions(exe, env)
        startup(exe, env)
        if sys.argv[1:] == ["startup"]:
            return
        if sys.argv[1:] == ["budgets"]:
            return many_budgets(exe, env)
        if sys.argv[1:] == ["cost"]:
            return cost_command(exe, env)

        if sys.argv[1:] == ["sweeps"]:
            return huge_budgets(exe, env)

        if sys.argv[1:] == ["hardening"]:
            stdin_memory(exe, env)
            return every_budget(exe, env)
        vectorized()
        grid(exe, env)
        csv_against_polars(exe, env)
        stdin_against_grid(exe, env)
        many_budgets(exe, env)
        cost_command(exe, env)

        huge_budgets(exe, env)

        stdin_memory(exe, env)
        every_budget(exe, env)


if __name__ == "__main__":
    main()
