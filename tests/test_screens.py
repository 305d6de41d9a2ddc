"""Issue 45: every command's default table on one screen at 80 and 120 columns (no table split into
parts, no `n/a`, no line over the width), `compare` naming the shape to train with the figures
`cost` gives for the same run, and `models` within 60 lines. In-process (conftest.run)."""
import json
from pathlib import Path

import pytest

from conftest import run, section

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests" / "configs").glob("*.json") if p.name != "not-a-config.json")
LLAMA31 = str(Path("tests") / "fixtures" / "screens" / "llama-3.1-8b.json")

DEFAULTS = {
    "compare": ["compare", "--deep", "12x768", "--shallow", "6x1086"],
    "compare-sizes": ["compare", "--deep", "24x1024x16", "--shallow", "2x1000x16"],
    "compare-models": ["compare", "--deep", "gpt3-175b", "--shallow", "48x16384", "--gpus", "1024", "--tokens", "3e11"],
    "compare-llama": ["compare", "--deep", "llama3-8b", "--shallow", "16x5632x44", "--tokens", "1e12", "--gpus", "64"],
    "cost-one": ["cost", "32x4096", "--arch", "llama", "--gpus", "64"],
    "cost-several": ["cost", "12x768", "24x1024", "--tokens", "2e10", "--serve"],
    "cost-config": ["cost", "--config", LLAMA31, "--config", "tests/configs/glm-4.5.json", "--tokens", "1e12", "--gpus", "512", "--serve"],
    "sweep": ["sweep", "--params", "1e9"],
    "sweep-costs": ["sweep", "--params", "1e9", "--arch", "llama", "--tokens", "2e10", "--gpus", "64"],
    "bounds": ["bounds", "12x768"],
    "bounds-several": ["bounds", "12x768", "6x729x9", "gpt3-175b", "1x9"],
    "inspect": ["inspect", LLAMA31],
    "inspect-run": ["inspect", LLAMA31, "--tokens", "1.5e13", "--gpus", "512", "--tp", "8"],
    **{f"inspect-{Path(c).stem}": ["inspect", c] for c in CONFIGS},
    "equiv": ["equiv", "--deep", "6x1000x16", "--depth", "2,3"],
    "equiv-model": ["equiv", "--deep", "llama3-8b", "--depth", "16"],
    "models": ["models"],
    "models-filtered": ["models", "--filter", "llama*", "--sort", "depth"],
}


def screen(args, monkeypatch, columns: int = 80) -> str:
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("COLUMNS", str(columns))
    out = run(args)
    assert out.code == 0, out.stderr
    return out.stdout


@pytest.mark.parametrize("columns", [80, 120])
@pytest.mark.parametrize("name", sorted(DEFAULTS))
def test_one_screen_without_parts_or_na(name, columns, monkeypatch):
    text = screen(DEFAULTS[name], monkeypatch, columns)
    lines = text.splitlines()
    assert "part 1 of" not in text and "n/a" not in text and "…" not in text
    assert max(map(len, lines)) <= columns, max(lines, key=len)
    assert not any(ch in text for ch in "┏┃│└"), "a boxed table: the screens are plain text"


def _json(args, monkeypatch):
    return json.loads(screen([*args, "--format", "json"], monkeypatch))


def _row(text: str, label: str) -> list[str]:
    """The cells of the side-by-side row ``label`` (cells two or more spaces apart)."""
    import re

    line = next(line for line in text.splitlines() if line.startswith(label + "  "))
    return re.split(r"\s{2,}", line.strip())[1:]


@pytest.mark.parametrize("deep,shallow,tokens", [("12x768", "3x1536", None), ("24x1024x16", "6x2048x32", "2e10"),
                                                 ("32x4096", "8x8192", None), ("32x4096", "128x2048", "1.3e11")])
def test_compare_names_the_shape_to_train_with_costs_figures(deep, shallow, tokens, monkeypatch):
    """The pick is the shape `cost` (another code path: predict on each shape) gives the least time to
    the best shape's loss, on the same run; both shapes' loss vs best and days are `cost`'s."""
    given = ["--tokens", tokens] if tokens else []
    text = screen(["compare", "--deep", deep, "--shallow", shallow, *given], monkeypatch)
    assert len(text.splitlines()) <= 30
    record = _json(["compare", "--deep", deep, "--shallow", shallow], monkeypatch)
    sides = [record["deep"], record["shallow"]]
    length = float(tokens) if tokens else 20 * max(s["params_nonembedding"] for s in sides)  # Hoffmann et al. 2022
    costs = _json(["cost", deep, shallow, "--tokens", repr(length)], monkeypatch)
    names = [f"{s['depth']}x{s['width']}" for s in sides]
    times = [c["run"]["time_to_target_days"] or float("inf") for c in costs]
    assert sides[0]["params_nonembedding"] == sides[1]["params_nonembedding"]  # one size: one target for both commands
    assert max(times) > 1.1 * min(times), "a clear pick, beyond a near tie"
    pick = times.index(min(times))
    assert section(text, "train").startswith(f"{names[pick]} ({['deep', 'shallow'][pick]}):")
    assert ("no --tokens: 20/param" in text) is (tokens is None)
    loss = _row(text, "loss vs best [95%]")
    days = [cell.split()[0] for cell in _row(text, next(line.split("  ")[0] for line in text.splitlines() if line.startswith("days at ")))]
    for i, c in enumerate(costs):
        assert loss[i].startswith(f"{c['loss']['vs_best']:+.1%} ["), (loss[i], c["loss"]["vs_best"])
        expected = c["run"]["train_days"]
        assert float(days[i].replace(",", "")) == pytest.approx(expected, rel=0.06 if expected < 1 else 0.01), (days[i], expected)
    for word in ("loss vs best", "step time, MFU", "memory per GPU", "decode latency", "theory", "why"):
        assert word in text, word


def test_compare_theory_sentence_says_what_is_proven(monkeypatch):
    proven = screen(["compare", "--deep", "24x1024x16", "--shallow", "2x1000x16"], monkeypatch)
    assert section(proven, "theory").startswith("proven: 24x1024 can express functions 2x1000 cannot")
    assert "not proven: that it trains to a lower loss" in section(proven, "theory")
    overlap = screen(["compare", "--deep", "12x768", "--shallow", "6x1086"], monkeypatch)
    assert section(overlap, "theory").startswith("nothing is proven either way")


def test_compare_explain_holds_the_detail(monkeypatch):
    short = screen(["compare", "--deep", "12x768", "--shallow", "6x1086"], monkeypatch)
    detail = screen(["compare", "--deep", "12x768", "--shallow", "6x1086", "--explain"], monkeypatch)
    assert detail.startswith(short.rsplit("--explain", 1)[0])
    for text in ("1,681.565", "11,206.654", "width 497 at depth 6", "width 10^68.221", "Notes:", "Depth Delusion"):
        assert text in detail and text not in short, text
    assert max(map(len, detail.splitlines())) <= 80 and "n/a" not in detail


def test_compare_json_has_no_screen_fields(monkeypatch):
    """The screen's pick is table-only: the record (issue 42 owns it) keeps its fields."""
    record = _json(["compare", "--deep", "12x768", "--shallow", "6x1086"], monkeypatch)
    assert "which" not in record and "train" not in record and set(record["deep"]) == set(record["shallow"])


def test_cost_of_one_shape_is_one_table(monkeypatch):
    text = screen(DEFAULTS["cost-one"], monkeypatch)
    assert sum(line.startswith("shape ") for line in text.splitlines()) == 1
    [row] = _json(DEFAULTS["cost-one"], monkeypatch)
    r = row["run"]
    lay = r["layout"]
    assert f"layout tp {lay['tp']} x pp {lay['pp']} x dp {lay['dp']}, micro-batch {lay['micro_batch']}" in text
    assert f"{r['mfu']:.1%}" in text and f"{r['step_seconds']:.3g}" in text


def test_wide_shows_the_columns_that_gave_way(monkeypatch):
    text = screen(["sweep", "--params", "1e9"], monkeypatch)
    header = next(line for line in text.splitlines() if line.startswith("id "))
    assert "(--wide: also" in text and "FLOPs/token" not in header
    monkeypatch.setenv("COLUMNS", "80")
    wide = run(["sweep", "--params", "1e9", "--wide"]).stdout
    assert "FLOPs/token" in wide and "KV bytes/token" in wide and "(--wide" not in wide


def test_models_default_view_and_all(monkeypatch):
    text = screen(["models"], monkeypatch)
    every = _json(["models"], monkeypatch)
    assert len(text.splitlines()) <= 60
    body = text.splitlines()[2:]
    names = [line.split()[0] for line in body[:next(i for i, line in enumerate(body) if line.startswith(("(", "...")))]]
    assert names == [m["name"] for m in every][:len(names)] and len(names) >= min(len(every), 50)
    full = screen(["models", "--all"], monkeypatch)
    assert all(m["name"] in full for m in every) and "empirical depth" in full and "log3 upper" in full
    assert "empirical depth" not in text


def test_inspect_leaves_out_what_a_config_does_not_give(monkeypatch, tmp_path):
    """A config without a vocabulary: no embedding count, no vocabulary line, one note naming them."""
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": "foo_unknown", "hidden_size": 1024, "num_hidden_layers": 6, "num_attention_heads": 16}))
    [record] = _json(["inspect", str(path)], monkeypatch)
    text = screen(["inspect", str(path)], monkeypatch)
    missing = [k for k in ("params_embedding", "vocab") if record[k] is None]
    assert missing and "n/a" not in text
    assert "not given: embedding params, params with embeddings, vocabulary (the config gives no vocabulary size)" in " ".join(text.split())
    assert "vocab " not in text


def test_inspect_llama31_reads_its_shape(monkeypatch):
    text = screen(["inspect", LLAMA31], monkeypatch)
    assert "32x4096x32, 8 KV heads; feed-forward 14,336 (gated)" in text  # the published config.json
    assert "128,256" in text and "no --tokens: no training FLOPs or time" in text


@pytest.mark.parametrize("name", ["compare", "cost-one", "sweep", "bounds", "equiv", "models"])
def test_one_screen_tables_load_no_rich_or_numpy(name):
    """Cold start (benchmarks/run.py startup: every table <= 2.0x the `import typer` floor): the
    screens are plain text, so no Rich; the performance model and the theory run on plain numbers."""
    from test_startup import cli_modules

    packages = cli_modules(DEFAULTS[name])
    assert not packages & {"rich", "numpy", "scipy", "pydantic"}, packages & {"rich", "numpy", "scipy", "pydantic"}


def test_compare_explain_loads_no_rich_either():
    from test_startup import cli_modules

    assert "rich" not in cli_modules([*DEFAULTS["compare"], "--explain"])


@pytest.mark.parametrize("name", sorted(n for n in DEFAULTS if n.startswith("inspect")))
def test_inspect_is_one_screen_and_explain_prints_every_note(name, monkeypatch):
    """At most 25 lines at 80 columns (the plan's screen); the notes that do not fit are counted, and
    --explain prints every note of the JSON record (which does not change)."""
    import re

    args = DEFAULTS[name]
    text = screen(args, monkeypatch)
    assert len(text.splitlines()) <= 25
    detail = screen([*args, "--explain"], monkeypatch)
    [record] = _json(args, monkeypatch)
    flat = " ".join(detail.split())
    assert all(" ".join(note.split()) in flat for note in record["notes"])
    bullets = lambda t: sum(line.startswith("  - ") for line in t.splitlines())
    left = re.search(r"\((\d+) more notes?: --explain\)", text)
    assert bullets(text) + (int(left.group(1)) if left else 0) == bullets(detail)
    assert max(map(len, detail.splitlines())) <= 80 and "n/a" not in detail
