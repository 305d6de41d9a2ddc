"""Issue 42: shapes that shard, `why` naming only listed shapes, the candidate table's micro-batch and
width, and `plan --params --days` (the tokens that fit). Field names are read through ``get`` so the
tests hold whether a figure sits at the top of the record or nested (the record's nesting is issue 42's
other half)."""
from __future__ import annotations

import math
import re

import pytest

from conftest import parse_json, run

BUDGETS = ["1e9", "3e9", "1e10", "3e10", "1e11"]
PRESETS = ["llama", "mistral", "qwen2"]


def get(record: dict, *paths: str):
    """The first of ``paths`` (dotted names) the record holds."""
    for path in paths:
        value = record
        for part in path.split("."):
            if not isinstance(value, dict) or part not in value:
                break
            value = value[part]
        else:
            return value
    raise KeyError(paths)


def first(data):
    return data[0] if isinstance(data, list) else data


def shards_eight(heads: int, kv_heads: int) -> bool:
    """Tensor parallelism of 8 (Megatron-LM): 8 | heads, and 8 | kv_heads or kv_heads | 8 (replicated KV heads)."""
    return heads % 8 == 0 and (kv_heads % 8 == 0 or 8 % kv_heads == 0)


def nonembedding(shape: dict) -> int:
    return get(shape, "params_nonembedding", "params.nonembedding")


# ---- shapes that shard -------------------------------------------------------------------------------

@pytest.mark.parametrize("arch", PRESETS)
@pytest.mark.parametrize("budget", BUDGETS)
def test_every_listed_shape_of_1b_or_more_splits_eight_ways(arch, budget):
    plan = first(parse_json(run(["plan", "--params", budget, "--arch", arch, "--all", "--format", "json"])))
    shapes = [*plan["candidates"], get(plan, "recommended")] if "recommended" in plan else list(plan["candidates"])
    rows = parse_json(run(["sweep", "--params", budget, "--arch", arch, "--format", "json"]))
    assert shapes and rows
    for shape in [*shapes, *rows]:
        if nonembedding(shape) >= 1e9:
            assert shards_eight(shape["heads"], shape["kv_heads"]), (budget, arch, shape["depth"], shape["width"])
    # at a budget of 1B or more the plan's answer and its candidates shard, also those a little below 1B
    rec_heads = get(plan, "recommended.heads", "recommended_heads")
    assert shards_eight(rec_heads, get(plan, "recommended.kv_heads", "recommended_kv_heads"))
    assert all(shards_eight(c["heads"], c["kv_heads"]) for c in plan["candidates"])


def test_a_sweep_below_1b_says_which_rows_cannot_split_eight_ways(monkeypatch):
    rows = parse_json(run(["sweep", "--params", "3e8", "--arch", "llama", "--format", "json"]))
    short = [r["id"] for r in rows if not shards_eight(r["heads"], r["kv_heads"])]
    assert short and all(8 not in r["tp_sizes"] for r in rows if r["id"] in short)  # 3e8 llama: 20/10, 18/9 ... heads
    monkeypatch.setenv("COLUMNS", "200")
    notes = " ".join(run(["sweep", "--params", "3e8", "--arch", "llama"]).stdout.split("Notes:")[1].split())
    note = next(n for n in notes.split(" - ") if "cannot split 8 ways" in n)
    assert all(i in note for i in short)


def test_a_plan_below_1b_notes_the_shapes_that_cannot_split_eight_ways():
    plan = first(parse_json(run(["plan", "--params", "3e8", "--arch", "llama", "--all", "--format", "json"])))
    short = [f"{c['depth']}x{c['width']}" for c in plan["candidates"] if not shards_eight(c["heads"], c["kv_heads"])]
    assert short
    note = next(n for n in plan["notes"] if "cannot split 8 ways" in n)
    assert all(s in note for s in short)


# ---- why names only listed shapes ----------------------------------------------------------------------

WHY_PLANS = [
    ["--params", "1e9"], ["--params", "1.2e9"], ["--params", "8e9", "--arch", "llama"], ["--params", "3e8", "--arch", "llama"],
    ["--params", "7e9", "--arch", "mistral", "--prefer", "serve"], ["--params", "2e9", "--arch", "qwen2", "--prefer", "train"],
    ["--params", "1e9", "--loss-tolerance", "0.5%"], ["--params", "7e10", "--arch", "llama", "--gpus", "512"],
]
CANDIDATE_ROW = re.compile(r"^\s*(?:\d+\s+)?(\d+)\s+([\d,]+)\s+\d+ \(\d+\)")


@pytest.mark.parametrize("args", WHY_PLANS)
def test_every_shape_why_names_is_a_listed_candidate(args, monkeypatch):
    """Issue 42: `why` named 19x2048 (1B), 32x4096 (8B) and 35x1536 (1.2B), shapes no output listed."""
    plan = first(parse_json(run(["plan", *args, "--format", "json"])))
    why = get(plan, "why")
    named = {(int(d), int(w)) for d, w in re.findall(r"\b(\d+)x(\d+)\b", why)}
    assert named  # the pick at least
    listed = {(c["depth"], c["width"]) for c in plan["candidates"]}
    assert named <= listed, (named - listed, why)
    monkeypatch.setenv("COLUMNS", "200")
    table = run(["plan", *args, "--all"]).stdout.split("Candidates in the band")[1].splitlines()[2:]
    shown = {(int(m[1]), int(m[2].replace(",", ""))) for m in map(CANDIDATE_ROW.match, table) if m}
    assert named <= shown, (named - shown, table)


# ---- the candidate table: its micro-batch, 80 columns, the count the answer gives ----------------------

@pytest.mark.parametrize("args", [["--params", "1e9"], ["--params", "7e9", "--arch", "llama"], ["--params", "3e8", "--arch", "qwen2"],
                                  ["--params", "7e10", "--arch", "mistral", "--gpus", "64"], ["--params", "1e12", "--arch", "gpt2"],
                                  ["--params", "5e12", "--arch", "llama"], ["--params", "2e10", "--arch", "mixtral"]])
def test_all_fits_80_columns_and_shows_the_micro_batch(args, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    out = run(["plan", *args, "--all"])
    if out.code == 2:  # a refusal past the evidence: one line
        assert len(out.error_lines) == 1
        return
    lines = out.stdout.splitlines()
    assert max(map(len, lines)) <= 80, max(lines, key=len)
    plan = first(parse_json(run(["plan", *args, "--format", "json"])))
    table = out.stdout.split("Candidates in the band")[1].splitlines()[1:]
    header = table[0].split()
    assert "micro-batch" in header
    column = header.index("micro-batch") - len(header)  # counted from the right: "heads (KV)" is two words
    rows = {(int(m[1]), int(m[2].replace(",", ""))): line.split()[column]
            for line in table[1:] if (m := CANDIDATE_ROW.match(line))}
    for c in plan["candidates"]:
        key = (c["depth"], c["width"])
        assert key in rows and rows[key] == str(c["run"]["layout"]["micro_batch"]), (key, rows)


@pytest.mark.parametrize("count, words", [("total", "non-embedding"), ("with-embeddings", "with-embeddings")])
def test_the_answer_line_says_which_count_it_gives(count, words):
    out = run(["plan", "--params", "1e9", "--arch", "llama", "--count", count])
    answer = next(line for line in out.stdout.splitlines() if line.startswith("answer"))
    assert f" {words} params " in answer


# ---- --params with --days: the tokens that fit -----------------------------------------------------------

H100_BF16 = 989.5e12  # NVIDIA H100 SXM dense BF16 FLOP/s (datasheet: 1,979 with sparsity)


@pytest.mark.parametrize("args", [["--params", "1e9", "--days", "14", "--gpus", "8"],
                                  ["--params", "7e9", "--arch", "llama", "--days", "30", "--gpus", "64"]])
def test_params_with_days_answers_the_tokens_that_fit(args):
    """Issue 42: `plan --params 1e9 --days 14 --gpus 8` was refused; the tokens that fit, by the plan's own step time."""
    plan = first(parse_json(run(["plan", *args, "--format", "json"])))
    days = float(args[args.index("--days") + 1])
    tokens = get(plan, "tokens", "recommended.run.tokens")
    layout = get(plan, "recommended_layout", "recommended.run.layout")
    step = get(plan, "recommended_step_seconds", "recommended.run.step_seconds")
    context = get(plan, "run.context", "budget.context", "recommended.run.context")
    sequences = layout["micro_batch"] * layout["accumulation"] * layout["dp"]
    assert math.isclose(tokens, days * 86400 / step * sequences * context, rel_tol=1e-6)
    # independently: training FLOPs 6·N·D + 12·L·d·T·D (PaLM, Chowdhery et al. 2022, App. B: 6N + 12LHQT per token)
    # over gpus·peak·MFU
    n = get(plan, "recommended_params_nonembedding", "recommended.params_nonembedding", "recommended.params.nonembedding")
    depth, width = get(plan, "recommended_depth", "recommended.depth"), get(plan, "recommended_width", "recommended.width")
    gpus, mfu = get(plan, "setup.gpus", "run.gpus"), get(plan, "recommended_mfu", "recommended.run.mfu")
    vocab = 128256 if "llama" in args else 0  # Llama 3's vocabulary (params.json); the paper's block has no logits
    # ... plus the logits, 6·d·V per token (the output projection's weights, counted by MFU as PaLM's does)
    seconds = (6 * n + 12 * depth * width * context + 6 * width * vocab) * tokens / (gpus * H100_BF16 * mfu)
    assert math.isclose(seconds / 86400, days, rel_tol=0.05)
    assert any("per parameter" in note and "days" in note for note in get(plan, "notes"))
    text = run(["plan", *args]).stdout
    assert f"{tokens / n:.3g}/param" in text


def test_params_with_days_and_tokens_is_refused():
    out = run(["plan", "--params", "1e9", "--days", "14", "--tokens", "2e10"])
    assert out.code == 2 and len(out.error_lines) == 1 and "--days" in out.stderr


# ---- a sane answer past the evidence ----------------------------------------------------------------------

@pytest.mark.parametrize("budget", ["5e12", "1e13", "1e15", "1e17"])
def test_past_the_evidence_the_plan_answers_a_shape_in_the_band(budget):
    """Issue 42: `plan --params 5e12 --arch llama` answered the minimal-depth 12x183296 with 1,432 heads,
    outside the band; now a shape in the band (whose depths depthwidth accepts), saying it extrapolates."""
    out = run(["plan", "--params", budget, "--arch", "llama", "--format", "json"])
    assert out.code == 0
    plan = first(parse_json(out))
    lo, hi = get(plan, "band.low"), get(plan, "band.high")
    depth = get(plan, "recommended_depth", "recommended.depth")
    assert lo <= depth <= hi and hi <= 10**6
    assert get(plan, "recommended_width", "recommended.width") < get(plan, "width", "threshold.width")
    assert "no published evidence reaches" in get(plan, "why") and "extrapolates" in get(plan, "why")
    assert any("extrapolates" in w for w in out.stderr.splitlines())


def test_the_1e30_plan_stays_finite_and_answers_the_threshold_shape():
    """Where the band passes 10^6 layers no shape in it is accepted: the minimal-depth shape answers (the
    acceptance check 'plan 1e30 stays finite' needs an answer, exit 0)."""
    plan = first(parse_json(run(["plan", "--params", "1e30", "--format", "json"])))
    assert get(plan, "recommended_depth", "recommended.depth") == get(plan, "min_depth", "threshold.min_depth") == 29
    assert math.isfinite(get(plan, "min_depth_exact", "threshold.min_depth_exact"))


# ---- docs: the README links every page of the site ----------------------------------------------------------

def test_the_readme_links_every_page_of_the_docs_site():
    """Issue 42: the README's "Read more" missed four pages (performance model, loss model, sweeps, counting)."""
    import pathlib

    import yaml

    root = pathlib.Path(__file__).resolve().parents[1]
    site = yaml.safe_load((root / "mkdocs.yml").read_text())

    def pages(nav):
        for entry in nav:
            for value in (entry.values() if isinstance(entry, dict) else [entry]):
                yield from (pages(value) if isinstance(value, list) else [value])

    listed = list(pages(site["nav"]))
    assert len(listed) >= 19 and all((root / "docs" / page).exists() for page in listed)
    readme = (root / "README.md").read_text()
    linked = set(re.findall(r"\]\(docs/([\w-]+\.md)\)", readme))
    assert set(listed) <= linked, set(listed) - linked


def test_the_readme_says_the_theory_terms_in_plain_words():
    import pathlib

    readme = (pathlib.Path(__file__).resolve().parents[1] / "README.md").read_text()
    intro = readme.split("## Quick start")[0]
    for term in ("minimal depth", "floor", "regime", "valid shapes", "Billed"):
        assert f"**{term}**" in intro, term
