"""Golden counts for tests/test_export.py: the parameter counts of models transformers builds from
the configs `depthwidth export` writes (plan -> export with block options, shapes, catalogue rows).

Run once (needs the optional extra: pip install torch==2.13.0 transformers), from the repository root:
    PYTHONPATH=. python tests/golden/make_export_counts.py
It writes tests/golden/export_counts.json. Each entry holds the case, the config depthwidth wrote
then, and what transformers built from it on the meta device (no weights are allocated):
- nonembedding: every weight of 2+ dimensions outside embed_tokens and lm_head (norms and biases,
  1-dimensional, are left out, as blocks.py counts);
- active: the same with only top-k of each layer's experts (Mixtral), the router kept;
- embedding: embed_tokens (GPT-2: wte), plus lm_head unless tie_word_embeddings, plus GPT-2's learned
  position table wpe (n_positions x n_embd: GPT2Model's nn.Embedding(max_position_embeddings, embed_dim)).
The test rebuilds each config with depthwidth and checks it is byte-for-byte the golden one and
that blocks.py's counts equal the counts transformers measured.
"""
from __future__ import annotations

import json
import pathlib
import tempfile

import torch
import transformers
from transformers import AutoConfig, AutoModelForCausalLM

from depthwidth.loop import export, export_blocks
from depthwidth.arch.hardware import Constraints
from depthwidth.advice.planner import PlanOptions
from depthwidth.arch.spending import Spending

OUT = pathlib.Path(__file__).with_name("export_counts.json")

# (format, budget, block options): plan -> export keeps every option
# (0.4.0: the llama and qwen2 presets follow each size's published model; the cases below pin the block they were
# generated with, head_dim/ffn_mult/tied, so their configs and counts stand; a llama plan with the preset's own
# Llama 3 8B block at 7e9 awaits a regeneration with transformers)
PLAN_CASES = [
    ("hf-llama", 10**9, {"ffn_mult": 1.3, "kv_heads": 4, "head_dim": 128, "tied": False}),
    ("hf-llama", 10**9, {"head_dim": 64, "kv_heads": 2, "ffn_mult": 1.0, "tied": False}),
    ("hf-mistral", 10**9, {"head_dim": 64, "kv_heads": 2}),
    ("hf-mistral", 3 * 10**9, {"ffn_mult": 2.0}),
    ("hf-qwen2", 10**9, {"kv_heads": 2, "ffn_mult": 1.5, "tied": False}),
    ("hf-mixtral", 10**9, {"experts": 4, "top_k": 1}),
    ("hf-mixtral", 5 * 10**9, {"experts": 16, "top_k": 4, "kv_heads": 4}),
]
SHAPE_CASES = [("hf-llama", "24x2048x16", {"ffn_mult": 1.0, "tied": False}), ("hf-mistral", "32x4096x32"), ("hf-qwen2", "28x3584x28"),
               ("hf-mixtral", "16x1024x8"), ("hf-gpt2", "12x768x12")]
MODEL_CASES = [("hf-llama", "llama3-8b"), ("hf-llama", "llama2-7b"), ("hf-llama", "llama2-70b"), ("hf-mistral", "mistral-7b")]


def plan_options(fmt: str, options: dict) -> PlanOptions:
    """The options `plan --arch PRESET --<option> ...` builds (cli.plan_options)."""
    name = export.TARGETS[fmt].preset
    overrides = tuple(sorted(options.items()))
    constraints = Constraints(head_dim=options.get("head_dim"))  # the preset's own head size follows the budget's size
    # levine-fit: the rule the golden plans were made with (the default until 0.2; tests/test_export.py options_for)
    return PlanOptions(spending=Spending(name, overrides), constraints=constraints, rule="levine-fit")


def measured(config: dict) -> dict:
    with tempfile.TemporaryDirectory() as folder:
        pathlib.Path(folder, "config.json").write_text(json.dumps(config))
        cfg = AutoConfig.from_pretrained(folder, local_files_only=True)
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(cfg)
    nonembedding = active = embedding = 0
    experts = getattr(cfg, "num_local_experts", None)
    for name, parameter in model.named_parameters():
        if "embed_tokens" in name or name.startswith("lm_head") or name.endswith(("wte.weight", "wpe.weight")):
            embedding += parameter.numel()
            continue
        if parameter.ndim < 2:
            continue
        nonembedding += parameter.numel()
        share = cfg.num_experts_per_tok / experts if experts and ".experts." in name + "." else 1
        active += parameter.numel() * share
    if not cfg.tie_word_embeddings and not any(n.startswith("lm_head") for n, _ in model.named_parameters()):
        embedding += cfg.vocab_size * cfg.hidden_size  # pragma: no cover - a tied model reporting no head
    return {"nonembedding": int(nonembedding), "active": int(round(active)), "embedding": int(embedding)}


def main() -> None:
    entries = []
    for fmt, budget, options in PLAN_CASES:
        block = export_blocks.plan_architecture(budget, fmt, plan_options(fmt, options))
        config = export.config_for(block, fmt)
        entries.append({"kind": "plan", "format": fmt, "budget": budget, "options": options, "config": config,
                        "counts": measured(config)})
    for fmt, shape, *pinned in SHAPE_CASES:
        depth, width, heads = map(int, shape.split("x"))
        options = pinned[0] if pinned else {}
        config = export.config_for(export_blocks.export_architecture(fmt, depth, width, heads, **options), fmt)
        entries.append({"kind": "shape", "format": fmt, "shape": shape, **({"options": options} if options else {}),
                        "config": config, "counts": measured(config)})
    for fmt, name in MODEL_CASES:
        config = export.config_for(export_blocks.model_architecture(name, fmt), fmt)
        entries.append({"kind": "model", "format": fmt, "model": name, "config": config, "counts": measured(config)})
    data = {"generator": "tests/golden/make_export_counts.py", "transformers": transformers.__version__,
            "torch": torch.__version__, "entries": entries}
    OUT.write_text(json.dumps(data, indent=1) + "\n")
    print(f"wrote {OUT} ({len(entries)} entries)")


if __name__ == "__main__":
    main()
