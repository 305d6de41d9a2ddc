"""The issue-33 numbers of ``depthwidth inspect`` against the golden transformers table.

    PYTHONPATH=. python benchmarks/oracle_report.py            # reads tests/golden/hf_counts.json
    PYTHONPATH=. python benchmarks/oracle_report.py --list     # also names every row behind each count

No torch, no transformers: it compares ``inspect`` with the rows benchmarks/oracle_counts.py wrote.
Definitions (the Done-when of issue 33; tests/test_hf_corpus.py asserts the same):

- ``configs``: default configs, one per model type transformers registers (rows with source
  "default" and a config); ``read``: those ``inspect`` reads without refusing (exit 0).
- ``nonembedding_wrong``: rows transformers built where ``params_nonembedding`` is a number that is
  off by more than 0.5% from the golden ``text_layers`` (default and real configs; a guess named in
  ``assumptions`` does not excuse it); ``nonembedding_inexact``: any difference at all.
- ``embedding_wrong``: rows where ``params_embedding`` is a number and differs from the golden's
  input table + untied head + position tables + token types + embedding projection.
- ``text_decoders``: default configs transformers builds as a causal LM (``text_decoder``) with a
  golden count; ``text_decoders_exact``: ``params_nonembedding`` equal to ``text_layers``.
- ``sub_configs``: default configs no auto class names, built by the class of their own modeling module
  (``mapping`` CONFIG_CLASS: towers, depth decoders; issue 40), with a golden count.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden" / "hf_counts.json"
TOLERANCE = 0.005


def golden_embedding(row: dict) -> int | None:
    """The golden embedding count, or None when the class has no input table or no head to read."""
    if row.get("input_embeddings") is None or row.get("untied_head") is None:
        return None
    return (row["input_embeddings"] + row["untied_head"] + row["position_embeddings"] + row["token_type_embeddings"]
            + row.get("embedding_projection", 0))


def measure(rows: list[dict]) -> tuple[dict, dict]:
    """(counts, the model types behind each count) of the module docstring."""
    from depthwidth.core.errors import InputError
    from depthwidth.hf.config import inspect_config

    names: dict[str, list[str]] = defaultdict(list)
    for row in rows:
        if "config" not in row:
            continue
        default = row["source"] == "default"
        label = row["model_type"] if default else row["source"]
        try:
            model = inspect_config(json.loads(json.dumps(row["config"])), row["model_type"])
        except InputError:
            model = None
        if default:
            names["configs"].append(label)
            names["read" if model is not None else "refused"].append(label)
        built = "error" not in row and row.get("text_layers") is not None
        decoder = default and built and row.get("text_decoder")
        if decoder:
            names["text_decoders"].append(label)
        if default and built and row.get("mapping") == "CONFIG_CLASS":
            names["sub_configs"].append(label)
        if model is None or not built:
            continue
        count, golden = model.params_nonembedding, row["text_layers"]
        if count is None:
            names["nonembedding_null"].append(label)
        else:
            names["nonembedding_compared"].append(label)
            if count != golden:
                names["nonembedding_inexact"].append(label)
            if abs(count - golden) > TOLERANCE * golden:
                names["nonembedding_wrong"].append(label)
            if decoder and count == golden:
                names["text_decoders_exact"].append(label)
        expected = golden_embedding(row)
        if model.params_embedding is not None and expected is not None:
            names["embedding_compared"].append(label)
            if model.params_embedding != expected:
                names["embedding_wrong"].append(label)
        elif expected is not None:
            names["embedding_null"].append(label)
    return {key: len(value) for key, value in names.items()}, dict(names)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--golden", default=str(GOLDEN))
    parser.add_argument("--list", action="store_true", help="name the rows behind each count")
    args = parser.parse_args(argv)
    data = json.loads(Path(args.golden).read_text())
    counts, names = measure(data["rows"])
    order = ("configs", "read", "refused", "nonembedding_compared", "nonembedding_wrong", "nonembedding_inexact",
             "nonembedding_null", "embedding_compared", "embedding_wrong", "embedding_null", "text_decoders",
             "text_decoders_exact", "sub_configs")
    print(f"golden: transformers {data['transformers']}, {len(data['rows'])} rows")
    for key in order:
        print(f"{key:24} {counts.get(key, 0)}")
        if args.list and key not in ("configs", "read", "nonembedding_compared", "embedding_compared", "text_decoders",
                                     "sub_configs"):
            print("    " + ", ".join(names.get(key, [])), file=sys.stdout)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
