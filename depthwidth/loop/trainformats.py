"""Config files for the training code people run besides Hugging Face: nanoGPT, LitGPT, Megatron-LM.

Pure: a ``blocks.Architecture`` in, a dict (or an argument list) and its file text out. Each
format's key names were checked against its project's own source (search tool, stored copies):

- nanoGPT (karpathy/nanoGPT, train.py at commit e2221318e607eb5ee0669d6b7641af25a2111545, and
  configurator.py at 085bba526a18b1031cee40d8f10199f5f0b7c9a3): ``python train.py config/x.py``
  exec()s the file over train.py's globals, so the file is Python assignments. The model globals
  are n_layer, n_head, n_embd, block_size, bias and dropout; train.py has NO vocab_size global
  (it reads data/<dataset>/meta.pkl, else uses 50304), so the vocabulary is written as a comment.
  nanoGPT's block is GPT-2's: multi-head attention, a plain 4·n_embd GELU MLP, tied embeddings.
- LitGPT (Lightning-AI/litgpt, litgpt/config.py at commit 293089e26877cfe9f49bc0d7d79b71d35f67fa65):
  ``Config.from_file`` is ``Config(**yaml.safe_load(file))``, so every key is a field of the
  Config dataclass: name, block_size, vocab_size, padded_vocab_size, n_layer, n_head, n_embd,
  n_query_groups, head_size, intermediate_size, mlp_class_name (GptNeoxMLP: plain 2·d·f; LLaMAMLP:
  gated 3·d·f; LLaMAMoE: n_expert gated experts + a d x n_expert gate), norm_class_name, norm_eps,
  bias, rotary_percentage, parallel_residual, rope_base, n_expert, n_expert_per_token. The file a
  checkpoint folder holds is ``model_config.yaml`` (``Config.from_checkpoint``). LitGPT's model
  (litgpt/model.py at commit 981d0418516b34354e426feb547fe5830e620a84) builds q, k, v as one
  n_embd x (n_head + 2·n_query_groups)·head_size matrix and keeps ``wte`` and ``lm_head`` apart
  (no tied embeddings).
- Megatron-LM (NVIDIA/Megatron-LM, megatron/training/arguments.py at commit
  307dcf37f03d44da131ba21999278abe4112d2ad): argparse options --num-layers, --hidden-size,
  --num-attention-heads, --kv-channels, --group-query-attention with --num-query-groups,
  --ffn-hidden-size (one expert's size with --num-experts), --swiglu, --num-experts,
  --moe-router-topk, --seq-length, --max-position-embeddings, --position-embedding-type,
  --normalization, --untie-embeddings-and-output-weights, --disable-bias-linear,
  --tensor-model-parallel-size, --vocab-size. Megatron reads no argument file, so the file is a
  bash array ``MODEL_ARGS=( ... )`` as its example launch scripts hold them, one run per file.
"""
from __future__ import annotations

import shlex

NANOGPT_KEYS = ("n_layer", "n_head", "n_embd", "block_size", "bias", "dropout")
LITGPT_DEFAULTS = {"norm_eps": 1e-5, "rope_base": 10000}  # litgpt Config's defaults (config.py, commit above)


def nanogpt_config(block, context: int) -> dict:
    """The train.py globals of a nanoGPT config file for this block."""
    return {"n_layer": block.depth, "n_head": block.heads, "n_embd": block.width, "block_size": context,
            "bias": False, "dropout": 0.0}


def nanogpt_text(config: dict, vocab: int, title: str) -> str:
    """A nanoGPT config file: Python assignments ``train.py`` exec()s (configurator.py)."""
    lines = [f"# {title}", "# nanoGPT: python train.py THIS_FILE (configurator.py exec()s it over train.py's globals)"]
    lines += [f"{key} = {config[key]!r}" for key in NANOGPT_KEYS]
    lines.append(f"# vocab_size {vocab}: train.py takes it from data/<dataset>/meta.pkl, else uses 50304 (no setting here)")
    return "\n".join(lines) + "\n"


def litgpt_config(block, context: int, name: str, norm: str, rope_base: int | None) -> dict:
    """LitGPT ``Config`` fields for this block (gated -> LLaMAMLP, experts -> LLaMAMoE, else GptNeoxMLP)."""
    if block.experts:
        mlp = "LLaMAMoE"
    else:
        mlp = "LLaMAMLP" if block.gated else "GptNeoxMLP"
    config = {"name": name, "block_size": context, "vocab_size": block.vocab, "padded_vocab_size": block.vocab,
              "n_layer": block.depth, "n_head": block.heads, "n_embd": block.width, "n_query_groups": block.kv_heads,
              "head_size": block.head_dim, "intermediate_size": block.expert_ffn if block.experts else block.ffn,
              "mlp_class_name": mlp, "norm_class_name": norm, "norm_eps": LITGPT_DEFAULTS["norm_eps"], "bias": False,
              "rotary_percentage": 1.0, "parallel_residual": False,
              "rope_base": rope_base or LITGPT_DEFAULTS["rope_base"]}
    if block.experts:
        config.update(n_expert=block.experts, n_expert_per_token=block.top_k)
    return config


def yaml_scalar(value) -> str:
    """One YAML 1.1 scalar that yaml.safe_load reads back as the same Python value (str, int,
    float, bool, None): JSON's spelling (null, true, false, digits, a double-quoted string; anything
    else as its text), but a float's exponent always after a dot, as YAML 1.1 needs (1e-05 -> 1.0e-05)."""
    import json

    if isinstance(value, float):
        text = repr(value)
        if "e" in text and "." not in text.split("e")[0]:
            mantissa, exponent = text.split("e")
            text = f"{mantissa}.0e{exponent}"
        return text
    return json.dumps(value if value is None or isinstance(value, int) else str(value))


def yaml_text(config: dict, title: str) -> str:
    """A flat mapping as YAML (no dependency: keys are identifiers, values scalars)."""
    return f"# {title}\n" + "".join(f"{key}: {yaml_scalar(value)}\n" for key, value in config.items())


def megatron_args(block, context: int, tp: int, rope: bool, norm: str) -> list[str]:
    """Megatron-LM model arguments for this block (arguments.py option names, commit above)."""
    args = ["--num-layers", str(block.depth), "--hidden-size", str(block.width),
            "--num-attention-heads", str(block.heads), "--kv-channels", str(block.head_dim)]
    if block.kv_heads != block.heads:
        args += ["--group-query-attention", "--num-query-groups", str(block.kv_heads)]
    args += ["--ffn-hidden-size", str(block.expert_ffn if block.experts else block.ffn)]
    if block.gated:
        args.append("--swiglu")
    if block.experts:
        args += ["--num-experts", str(block.experts), "--moe-router-topk", str(block.top_k)]
    args += ["--seq-length", str(context), "--max-position-embeddings", str(context),
             "--position-embedding-type", "rope" if rope else "learned_absolute", "--normalization", norm,
             "--vocab-size", str(block.vocab)]
    if block.gated:  # LLaMA-style blocks have no biases; GPT-2's keep Megatron's default biases
        args.append("--disable-bias-linear")
    if not block.tied:
        args.append("--untie-embeddings-and-output-weights")
    if tp > 1:
        args += ["--tensor-model-parallel-size", str(tp)]
    return args


def megatron_text(args: list[str], title: str) -> str:
    """A bash array of the arguments, one option (with its value) per line."""
    lines, i = [], 0
    while i < len(args):
        if i + 1 < len(args) and not args[i + 1].startswith("--"):
            lines.append(f"    {args[i]} {shlex.quote(args[i + 1])}")
            i += 2
        else:
            lines.append(f"    {args[i]}")
            i += 1
    return (f"# {title}\n# Megatron-LM: pretrain_gpt.py \"${{MODEL_ARGS[@]}}\" (plus data, training and parallel arguments)\n"
            "MODEL_ARGS=(\n" + "\n".join(lines) + "\n)\n")
