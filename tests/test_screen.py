"""Issue 32: `plan` on one screen, and the screen agreeing with `--format json` field by field."""
import json
import re

import pytest

from conftest import completed, section

DONE_WHEN = (["--params", "1e9"], ["--params", "7e9", "--arch", "llama", "--tokens", "2e12", "--gpus", "512"],
             ["--params", "3e8", "--arch", "llama", "--gpus", "8"])


def plan(*args, columns=80):
    out = completed(["plan", *args], columns=columns)  # in-process (conftest.completed)
    assert out.returncode == 0, out.stderr
    return out.stdout


def record(*args):
    [r] = json.loads(plan(*args, "--format", "json"))
    return r


def table(text: str) -> list[dict]:
    """The ranked table's rows as {header: cell}: columns are right-aligned under their headers."""
    lines = text.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("#  "))
    header = lines[head]
    ends = [m.end() for m in re.finditer(r"\S+(?: \(\w+\)| \w+ \w+)?(?=  |$)", header)]
    names = [header[(ends[i - 1] if i else 0):end].strip() for i, end in enumerate(ends)]
    rows = []
    for line in lines[head + 1:]:
        if line.startswith("--explain") or not line.strip():
            break
        cells = [line[(ends[i - 1] if i else 0):end].strip() for i, end in enumerate(ends)]
        rows.append(dict(zip(names, cells)))
    return rows


@pytest.mark.parametrize("args", DONE_WHEN)
def test_one_screen_at_80_columns(args):
    text = plan(*args)
    lines = text.splitlines()
    assert len(lines) <= 25 and max(map(len, lines)) <= 80
    assert "n/a" not in text and "part 1 of" not in text and "…" not in text


@pytest.mark.parametrize("args", DONE_WHEN)
def test_screen_and_json_agree_field_by_field(args):
    text, r = plan(*args), record(*args)
    answer = section(text, "answer")
    assert answer.startswith(f"{r['recommended']['depth']}x{r['recommended']['width']}, {r['recommended']['heads']} heads "
                             f"({r['recommended']['kv_heads']} KV), ffn {r['recommended']['ffn']:,}")
    assert f"({r['recommended']['budget_deviation'] * 100:+.1f}%)" in answer
    assert section(text, "why") == " ".join(r["why"].split())
    floor = section(text, "floor")
    assert f"minimal depth {r['threshold']['min_depth']} " in floor and f"band [{r['band']['low']}, {r['band']['high']}]" in floor
    run = section(text, "run")
    days = r["recommended"]["run"]["train_days"]
    assert (f"{days:,.1f} days" if days >= 1 else f"{days:.2g} days") in run
    assert f"{r['recommended']['run']['memory_per_gpu_bytes'] / 1e9:,.1f} GB/GPU" in run
    assert f"{r['setup']['gpus']:,} x {r['setup']['gpu']}" in run
    assert ("20/param, Hoffmann et al. 2022" in run) is r["setup"]["tokens_assumed"]
    assert ("one node: no --gpus" in run) is r["setup"]["gpus_assumed"]
    rows = table(text)
    lo, hi = [r["band"]["low"], r["band"]["high"]]
    in_band = {(c["depth"], c["width"]) for c in r["candidates"] if lo <= c["depth"] <= hi}
    assert {(int(row["depth"]), int(row["width"].replace(",", ""))) for row in rows} == in_band
    assert (int(rows[0]["depth"]), int(rows[0]["width"].replace(",", ""))) == (r["recommended"]["depth"], r["recommended"]["width"])
    for row in rows:
        c = next(c for c in r["candidates"] if (c["depth"], c["width"]) == (int(row["depth"]), int(row["width"].replace(",", ""))))
        assert row["heads (KV)"] == f"{c['heads']} ({c['kv_heads']})"
        assert float(row["days"].replace(",", "")) == pytest.approx(c["run"]["train_days"], rel=0.06, abs=0.006)
        assert float(row["GB/GPU"].replace(",", "")) == pytest.approx(c["run"]["memory_per_gpu_bytes"] / 1e9, abs=0.051)


def test_all_lists_the_candidates_outside_the_band_and_explain_the_detail():
    r = record("--params", "1e9")
    rows = table(plan("--params", "1e9", "--all"))
    assert len(rows) == len(r["candidates"])
    lo, hi = [r["band"]["low"], r["band"]["high"]]
    for row in rows:
        depth = int(row["depth"])
        assert row["band"] == ("in" if lo <= depth <= hi else "below" if depth < lo else "above")
    detail = plan("--params", "1e9", "--explain")
    for words in ("Evidence at 1B", "Candidate shapes", "Threshold analysis", "3,227.5", "Kaplan"):
        assert words in detail, words
    assert "Evidence" not in plan("--params", "1e9")


def test_columns_appear_only_for_fields_the_records_carry():
    """A field other branches add (loss_vs_best, mfu) becomes a column; absent, no column and no n/a."""
    from dataclasses import replace

    from depthwidth.advice.planner import plan as make_plan
    from depthwidth.output.screen import plan_screen

    p = make_plan(10**9)
    # the model's fields (at 100 columns: at 80 the micro-batch column leaves no room for MFU, which gives way first)
    assert "loss vs best" in plan_screen(p, 80) and "MFU" in plan_screen(p, 100).split("Candidates")[1]
    bare = tuple(replace(c, loss=None, run=replace(c.run, mfu=None, tokens_per_second=None),
                         serve=replace(c.serve, decode_seconds_per_token=None)) for c in p.candidates)
    p = replace(p, candidates=bare)
    assert "loss vs best" not in plan_screen(p, 80) and "MFU " not in plan_screen(p, 80).split("Candidates")[1]
    from depthwidth.cost.fields import Loss

    candidates = tuple(replace(c, loss=Loss(0.01 * i, 0.0, 0.1), run=replace(c.run, mfu=0.5)) for i, c in enumerate(p.candidates))
    text = plan_screen(replace(p, candidates=candidates), 80)
    assert "loss vs best" in text and "MFU" in text and "+0.0" in text
