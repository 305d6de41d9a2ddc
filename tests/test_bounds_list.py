"""`bounds -` with many lines takes the vectorized path (issue 16): the same bytes as the scalar
records, in every format, including thresholds, vacuous bounds, heads not dividing the width,
and counts past int64."""
from __future__ import annotations

import random

import pytest

from conftest import completed, run

EDGES = ["6x729", "6x704", "2x10x9", "12x768x12", "40x1000000000000000", "1x3", "7x2186x1", "31x99999999999999x3"]


def _lines(seed: int, count: int = 400) -> list[str]:
    rng = random.Random(seed)
    lines = []
    for _ in range(count):
        depth, width = rng.randint(1, 48), rng.randint(2, 9000)
        heads = f"x{rng.randint(1, min(20, width - 1))}" if rng.random() < 0.3 else ""
        lines.append(f"{depth}x{width}{heads}")
    return lines + EDGES


def _cli(args, input=None) -> str:
    proc = completed(args, input)  # in-process (conftest.completed); the tests below run real processes
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _scalar(lines: list[str], args: list[str]) -> list[str]:
    """The scalar path: fewer shapes per call than the vectorized path's threshold."""
    from depthwidth.cli.commands.bounds import VECTOR_ROWS

    step = VECTOR_ROWS - 1
    return [_cli(["bounds", *lines[i:i + step], *args]) for i in range(0, len(lines), step)]


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["jsonl", "json", "csv"])
def test_stdin_lines_spell_as_the_scalar_records(fmt):
    lines = _lines(7)
    vectorized = _cli(["bounds", "-", "--format", fmt], input="\n".join(lines) + "\n")
    parts = _scalar(lines, ["--format", "jsonl" if fmt == "json" else fmt])
    if fmt == "jsonl":
        expected = "".join(parts)
    elif fmt == "json":
        expected = "[\n" + ",\n".join("".join(parts).splitlines()) + "\n]\n"
    else:
        header = parts[0].splitlines()[0]
        expected = "\n".join([header] + [row for part in parts for row in part.splitlines()[1:]]) + "\n"
    assert vectorized == expected


@pytest.mark.parametrize("field", ["tp_sizes", "notes", "flops_per_token", "head_dim"])
def test_stdin_field_spells_as_the_scalar_records(field):
    lines = _lines(11, 150)
    assert _cli(["bounds", "-", "--field", field], input="\n".join(lines) + "\n") == "".join(_scalar(lines, ["--field", field]))


def test_vectorized_counts_follow_the_convention():
    """12·L·d² parameters; FLOPs 6N + 12·L·T·d (T = 2048); KV bytes 2·L·d·2; tp sizes the divisors of H."""
    import json

    rows = [json.loads(line) for line in _cli(["bounds", "-", "--format", "jsonl"], input="\n".join(["12x768x12"] * 70)).splitlines()]
    row = rows[0]
    assert row["params_nonembedding"] == 12 * 12 * 768**2 == row["params_active"] == row["params_12Ld2"]
    assert row["params_embedding"] is None and row["params_with_embeddings"] is None
    assert row["flops_per_token"] == 6 * 12 * 12 * 768**2 + 12 * 12 * 2048 * 768
    assert row["kv_bytes_per_token"] == 2 * 12 * 768 * 2
    assert row["tp_sizes"] == [t for t in range(1, 13) if 12 % t == 0]


def test_many_uneven_shapes_do_not_flood_stderr():
    """100 distinct widths not divisible by their heads: 20 warnings one by one, then one line for the other 80."""
    from depthwidth.cli.notices import WARN_EACH

    lines = [f"12x{1001 + 2 * i}x16" for i in range(100)]  # odd widths: never a multiple of 16
    proc = run(["bounds", "-", "--format", "csv"], input="\n".join(lines))  # in-process: stderr apart, as in a process
    assert proc.code == 0
    warnings = proc.stderr.strip().splitlines()
    assert len(warnings) == WARN_EACH + 1 == 21
    assert f"and {100 - WARN_EACH} more shapes" in warnings[-1]


@pytest.mark.parametrize("bad, message", [("12x0", "width must be"), ("6x10x10", "heads must be"), ("bert-bas", "did you mean")])
def test_a_bad_line_among_many_names_its_line(bad, message):
    lines = ["12x768"] * 100
    lines[56] = bad
    proc = run(["bounds", "-", "--format", "csv"], input="\n".join(lines))
    assert proc.code == 2 and proc.stdout == ""
    [line] = proc.stderr.strip().splitlines()
    assert message in line and "standard input line 57" in line


def test_many_lines_with_a_model_name_take_the_scalar_path_with_its_block():
    import json

    lines = ["12x768x12"] * 80 + ["gpt2-xl"]
    rows = [json.loads(r) for r in _cli(["bounds", "-", "--format", "jsonl"], input="\n".join(lines)).splitlines()]
    assert len(rows) == 81 and rows[-1]["tp_sizes"] == [1, 5, 25] and rows[0]["tp_sizes"] == [1, 2, 3, 4, 6, 12]


@pytest.mark.parametrize("args, stdin, where", [
    (["bounds", "12x0", "-"], "12x768\n12x0\n", None),  # the argument is bad; stdin line 2 only has the same text
    (["bounds", "-"], "12x768\n# a comment\n\n12x0\n", "standard input line 4"),  # comments and blanks still count
    (["bounds", "12x768", "-"], "12x768\nbert-bas\n", "standard input line 2"),  # a name that is no model
    (["plan", "--params", "-"], "1e9\n2e9\nlots\n", "standard input line 3"),
    (["plan", "--params", "lots", "--params", "-"], "1e9\nlots\n", None),
])
def test_a_bad_value_names_its_stdin_line_only_when_it_came_from_stdin(args, stdin, where):
    proc = run(args, input=stdin)
    assert proc.code == 2 and proc.stdout == ""
    [line] = proc.stderr.strip().splitlines()
    assert ("standard input line" in line) == (where is not None), line
    if where is not None:
        assert f"({where})" in line
