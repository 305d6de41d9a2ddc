"""Architectures -> config files people train with: Hugging Face config.json, nanoGPT config files,
LitGPT model_config.yaml and Megatron-LM arguments.

Everything here but ``write_config`` and ``write_configs`` is pure: a ``blocks.Architecture``
in, a dict (and its file text) out. The counts printed next to a written file come from
``blocks`` (one place per concept); ``depthwidth inspect`` reads written config.json files back.

Where the block comes from: a shape with the format's preset and every block option ``plan``
takes (``export_architecture``), a catalogue model's own block (``model_architecture``: Llama 3
8B is 8 KV heads, ffn 14336, vocab 128256, untied), or a plan's recommended shape with all of the
plan's options (``plan_architecture``), so the exported counts are the plan's.

Formats and their fields (Hugging Face key names as the model's configuration class spells them,
transformers 4.x and 5.x alike):
- ``hf-llama``, ``hf-mistral``, ``hf-qwen2``, ``hf-mixtral``: ``model_type``, ``architectures``,
  ``hidden_size``, ``num_hidden_layers``, ``num_attention_heads``, ``num_key_value_heads``,
  ``head_dim`` (not for qwen2: Qwen2Config has no such field), ``intermediate_size``,
  ``vocab_size``, ``tie_word_embeddings``, ``max_position_embeddings``, ``hidden_act`` (silu),
  ``rms_norm_eps`` and ``rope_theta`` (the configuration class defaults, or a catalogue model's own,
  ``MODEL_FIELDS``); mixtral adds ``num_local_experts`` and ``num_experts_per_tok``.
- ``hf-gpt2``: ``n_embd``, ``n_layer``, ``n_head``, ``n_inner``, ``n_positions``, ``n_ctx``,
  ``activation_function`` gelu_new, ``layer_norm_epsilon``, and ``bos_token_id`` =
  ``eos_token_id`` = vocab - 1 (GPT-2's <|endoftext|> is its last token, 50256).
- ``nanogpt``, ``litgpt``, ``megatron``: see ``trainformats`` (each checked against its project's source).

A block the format cannot express (a gated feed-forward in GPT-2, grouped key/value heads in
nanoGPT, experts outside Mixtral/LitGPT/Megatron, ...) is refused with one line naming the conflict.
"""
from __future__ import annotations

import json
import os
from dataclasses import replace

from . import trainformats
from ..arch.blocks import DEFAULT_CONTEXT, Architecture, params_active, params_embedding, params_nonembedding, position_table_note
from ..arch.record import COUNT_FIELDS, COUNT_TYPES, LAYOUT_FIELDS, repeats
from ..core.errors import InputError
# the formats and the blocks they write have modules of their own; their names stay importable from here
from .export_blocks import (check_tp, learned_positions, learns_positions,
                            with_vocab)
from .export_formats import (CONFIG_CLASSES, FAMILY_DEFAULTS, GATED_FORMATS,
                             MANIFEST_NAME, MAX_CONTEXT, MHA_ONLY, MODEL_FIELDS, MOE_FORMATS, OWN_HEAD_DIM, TARGETS, target)
from ..core.frozen import frozen


@frozen
@repeats(Architecture, LAYOUT_FIELDS, after="width", gated="gated_ffn")
@repeats(COUNT_TYPES, COUNT_FIELDS, after="context")
class Export:
    """The record of one written config (field names are the JSON contract)."""

    path: str
    format: str
    model_type: str | None
    depth: int
    width: int
    vocab: int
    tied: bool
    context: int
    notes: tuple[str, ...]


def conflicts(block: Architecture, fmt: str) -> list[str]:
    """Why ``fmt`` cannot express this block (empty: it can)."""
    name = target(fmt).name
    out = []
    if block.encoder_only:
        out.append(f"an encoder-only stack ({name} is a causal decoder)")
    if block.embedding_width is not None and block.embedding_width != block.width:
        out.append(f"a factorized embedding of size {block.embedding_width} (ALBERT-style)")
    if block.q_lora_rank is not None or block.kv_lora_rank is not None:
        out.append("latent attention (MLA)")
    if block.layer_groups is not None:
        out.append(f"{block.layer_groups} shared layer groups (ALBERT-style)")
    if block.decoder_depth:
        out.append(f"{block.decoder_depth} decoder layers (encoder-decoder)")
    if block.shared_experts:
        out.append(f"shared experts ({block.shared_experts})")
    if block.dense_layers:
        out.append(f"dense layers in a mixture-of-experts stack ({block.dense_layers})")
    if name == "hf-mixtral":
        if not block.experts or block.experts < 2 or not block.top_k or not block.expert_ffn:
            out.append("a dense feed-forward (Mixtral's layers are all mixtures of experts; use hf-mistral)")
    elif block.experts and name not in MOE_FORMATS:
        out.append(f"{block.experts} routed experts (only hf-mixtral, litgpt and megatron have experts)")
    if block.experts and name in ("litgpt", "megatron") and not block.gated:
        out.append(f"plain experts ({name}'s experts are gated: LLaMAMoE / --swiglu)")
    if name in GATED_FORMATS and not block.gated:
        out.append(f"a plain feed-forward ({name}'s MLP is gated SwiGLU, 3·d·ffn; use hf-gpt2 or nanogpt)")
    if name in MHA_ONLY and block.gated:
        out.append(f"a gated feed-forward ({name}'s MLP is plain, 2·d·ffn; use hf-llama)")
    if block.heads % block.kv_heads:
        out.append(f"{block.kv_heads} key/value heads do not divide {block.heads} attention heads")
    if name in MHA_ONLY and block.kv_heads != block.heads:
        out.append(f"{block.kv_heads} key/value heads ({name} has multi-head attention only: kv_heads = heads = {block.heads})")
    if name == "hf-llama" and block.width % block.heads:
        out.append(f"width {block.width} not divisible by {block.heads} heads (LlamaConfig requires it)")
    if name not in OWN_HEAD_DIM and block.heads * block.head_dim != block.width:
        out.append(f"head_dim {block.head_dim} with {block.heads} heads spans {block.heads * block.head_dim}, "
                   f"not the width {block.width} ({name} has no head_dim field)")
    if name in ("hf-llama", "hf-mistral", "hf-mixtral") and block.vocab < 3:
        out.append(f"a vocabulary of {block.vocab} (the family's bos/eos token ids 1 and 2 need at least 3 tokens)")
    if name == "nanogpt":
        if block.ffn != 4 * block.width:
            out.append(f"feed-forward size {block.ffn} (nanoGPT's MLP is fixed at 4·n_embd = {4 * block.width})")
        if not block.tied:
            out.append("untied embeddings (nanoGPT always ties the output head to the token embedding)")
    return out


def config_for(block: Architecture, fmt: str, context: int = DEFAULT_CONTEXT, tp: int = 1) -> dict:
    """The config of ``block`` in format ``fmt`` with ``context`` positions: a dict of the file's
    keys (Megatron-LM: {"MODEL_ARGS": [argument, ...]})."""
    spec = target(fmt)
    if isinstance(context, bool) or not isinstance(context, int) or not 1 <= context <= MAX_CONTEXT:
        raise InputError("--context", context, f"expected a whole number of positions from 1 to {MAX_CONTEXT:,}")
    block = with_vocab(block, fmt)
    problems = conflicts(block, fmt)
    if problems:
        raise InputError("format", fmt, f"cannot express this {block.family} block: {'; '.join(problems)}")
    check_tp(block, tp)
    own = MODEL_FIELDS.get(block.family, {})
    llama_like = block.gated
    if spec.name == "nanogpt":
        return trainformats.nanogpt_config(block, learned_positions(block, context))
    if spec.name == "litgpt":
        return trainformats.litgpt_config(block, context, block.family, "RMSNorm" if llama_like else "LayerNorm",
                                          int(own["rope_theta"]) if "rope_theta" in own else None)
    if spec.name == "megatron":
        positions = context if llama_like else learned_positions(block, context)  # a learned table's own length
        return {"MODEL_ARGS": trainformats.megatron_args(block, positions, tp, rope=llama_like,
                                                          norm="RMSNorm" if llama_like else "LayerNorm")}
    if spec.name == "hf-gpt2":
        positions = learned_positions(block, context)
        return {"model_type": spec.model_type, "architectures": [spec.architecture], "n_embd": block.width,
                "n_layer": block.depth, "n_head": block.heads, "n_inner": block.ffn, "n_positions": positions,
                "n_ctx": positions, "vocab_size": block.vocab, "tie_word_embeddings": block.tied,
                "bos_token_id": block.vocab - 1, "eos_token_id": block.vocab - 1, **dict(spec.fixed)}
    config = {"model_type": spec.model_type, "architectures": [spec.architecture], "hidden_size": block.width,
              "num_hidden_layers": block.depth, "num_attention_heads": block.heads,
              "num_key_value_heads": block.kv_heads}
    if spec.name in OWN_HEAD_DIM:
        config["head_dim"] = block.head_dim
    config["intermediate_size"] = block.expert_ffn if spec.name == "hf-mixtral" else block.ffn
    if spec.name == "hf-mixtral":
        config.update(num_local_experts=block.experts, num_experts_per_tok=block.top_k)
    fixed = dict(spec.fixed)
    fixed.update({k: v for k, v in own.items() if k in fixed})
    config.update(vocab_size=block.vocab, tie_word_embeddings=block.tied, max_position_embeddings=context, **fixed)
    return config


def config_text(config: dict, fmt: str, block: Architecture) -> str:
    """The file text of a config: JSON, nanoGPT Python, LitGPT YAML or a Megatron-LM bash array."""
    if fmt not in ("nanogpt", "litgpt", "megatron"):
        return json.dumps(config, indent=2, allow_nan=False) + "\n"
    title = f"depthwidth: {block.depth}x{block.width}x{block.heads} {block.family} block for {fmt}"
    if fmt == "nanogpt":
        return trainformats.nanogpt_text(config, block.vocab, title)
    if fmt == "litgpt":
        return trainformats.yaml_text(config, title)
    return trainformats.megatron_text(config["MODEL_ARGS"], title)


def export_notes(block: Architecture, fmt: str, context: int = DEFAULT_CONTEXT) -> tuple[str, ...]:
    """What the written file holds beyond the counted block, for the record's notes."""
    spec = target(fmt)
    notes = ["params_nonembedding and params_active count every weight matrix in the layers (blocks.py); "
             "norms and biases are left out, embeddings are params_embedding"]
    if learns_positions(block, fmt):
        length = {"hf-gpt2": "n_positions", "nanogpt": "block_size"}.get(spec.name, "--max-position-embeddings")
        notes.append(position_table_note(learned_positions(block, context), block.width, length))
    if spec.name == "hf-qwen2":
        notes.append("Qwen2 adds biases to q, k and v (not counted)")
    if spec.name == "nanogpt":
        notes.append("bias false: nanoGPT's linear layers and norms without biases; its vocabulary comes from the "
                     f"dataset's meta.pkl (else 50304), not from the file ({block.vocab} counted here)")
    if spec.name == "litgpt" and block.tied:
        notes.append("LitGPT builds a separate lm_head (litgpt/model.py GPT): the output head is not tied, and "
                     "params_embedding counts both matrices")
    if spec.name == "megatron":
        notes.append("Megatron-LM takes the vocabulary from the tokenizer (padded to --make-vocab-size-divisible-by); "
                     "--vocab-size matters for the NullTokenizer only")
    own = MODEL_FIELDS.get(block.family, {})
    defaults = [f"{key} {value}" for key, value in spec.fixed if key in FAMILY_DEFAULTS and key not in own]
    if defaults:
        notes.append(f"{', '.join(defaults)}: the defaults of transformers' {CONFIG_CLASSES[spec.name]}")
    if own and spec.name in CONFIG_CLASSES:
        notes.append(f"{', '.join(f'{k} {v}' for k, v in own.items())}: {block.family}'s own (export.MODEL_FIELDS)")
    return tuple(notes)


def export_record(block: Architecture, fmt: str, path: str, context: int = DEFAULT_CONTEXT,
                  notes: tuple[str, ...] | None = None) -> Export:
    """The record printed for a written config: its path, the block and blocks.py's counts."""
    block = with_vocab(block, fmt)
    notes = export_notes(block, fmt, context) if notes is None else notes
    # the table the written model learns counts in params_embedding: the block's own (the gpt2
    # preset's: context rows), a plain block's context rows, none where the format has rotary positions
    rows = learned_positions(block, context) if learns_positions(block, fmt) else 0
    block = replace(block, position_params=rows * block.width)
    if fmt == "litgpt":  # LitGPT's GPT builds wte and lm_head apart (litgpt/model.py): what it trains is untied
        block = replace(block, tied=False)
    nonembedding, embedding = params_nonembedding(block), params_embedding(block)
    return Export(
        path=path, format=fmt, model_type=target(fmt).model_type, depth=block.depth, width=block.width,
        heads=block.heads, kv_heads=block.kv_heads, head_dim=block.head_dim,
        ffn=block.expert_ffn if block.experts and block.expert_ffn else block.ffn, gated_ffn=block.gated,
        experts=block.experts, top_k=block.top_k, vocab=block.vocab, tied=block.tied, context=context,
        params_nonembedding=nonembedding, params_active=params_active(block), params_embedding=embedding,
        params_with_embeddings=None if embedding is None else nonembedding + embedding, notes=notes,
    )


# ---- writing (the only I/O here; staging.py does it all or nothing) ------------------------------

def config_path(out: str, fmt: str = "hf-llama") -> str:
    """Where ``--out`` puts the file: OUT itself when it ends in the format's extension (.json,
    .py, .yaml, .sh) and is no directory, else OUT/<the format's file name>."""
    spec = target(fmt)
    if out.lower().endswith(spec.extensions) and not os.path.isdir(out):
        return out
    return os.path.join(out, spec.file_name)


def check_out(out: str, fmt: str) -> None:
    """--out names a file of this format or a folder: never empty, never another format's file name
    (``--out x.yaml`` for hf-llama made a folder x.yaml; ``--out ""`` was exit 1)."""
    if not out.strip():
        raise InputError("--out", out, "expected a file or folder name, such as model/ or config.json")
    own = target(fmt).extensions
    other = sorted({e for t in TARGETS.values() for e in t.extensions} - set(own))
    if out.lower().endswith(tuple(other)) and not os.path.isdir(out):
        raise InputError("--out", out, f"names a file of another format; a {fmt} file ends in {' or '.join(own)} "
                                       "(any other name is a folder to write it in)")


def write_config(config: dict, out: str, force: bool = False, fmt: str = "hf-llama", block: Architecture | None = None) -> str:
    """Write ``config`` (format ``fmt``) to OUT or into the directory OUT, atomically; returns the path.

    Never overwrites an existing file unless ``force``; nothing above OUT is created; a failure or
    a signal leaves nothing behind (``staging``)."""
    from ..core.staging import need_parent, replace_file, write_new_dir

    check_out(out, fmt)
    path = config_path(out, fmt)
    directory = out if path != out else None
    if directory is not None and os.path.lexists(directory) and not os.path.isdir(directory):
        raise InputError("--out", out, f"exists and is not a directory (a file path must end in {' or '.join(target(fmt).extensions)})")
    if os.path.isdir(path):
        raise InputError("--out", out, f"{path!r} is a directory, not a file")
    if os.path.lexists(path) and not force:
        raise InputError("--out", out, f"{path!r} exists; pass --force to overwrite it")
    if fmt in ("nanogpt", "litgpt", "megatron") and block is None:
        raise InputError("format", fmt, "writing this format needs its block (write_config(..., block=...))")
    data = config_text(config, fmt, block and with_vocab(block, fmt)).encode()
    if directory is None or os.path.isdir(directory):
        need_parent(out, path)
        replace_file(data, path)
        return path
    need_parent(out, directory)
    write_new_dir({target(fmt).file_name: data}, directory)
    return path


def _safe_id(row_id: str) -> bool:
    return (isinstance(row_id, str) and row_id not in ("", ".", "..") and "/" not in row_id and "\\" not in row_id
            and "\0" not in row_id and row_id != MANIFEST_NAME and len(row_id.encode()) <= 255)


def write_configs(archs: list[tuple[str, Architecture]], fmt: str, out_dir: str, force: bool,
                  manifest, context: int = DEFAULT_CONTEXT, tp: int = 1) -> list[str]:
    """``sweep --export``: OUT_DIR/<id>/<the format's file> per row plus OUT_DIR/manifest.json, all or nothing.

    Every config is built (and every conflict refused) before anything touches the disk; the
    directory is assembled under a staging name beside OUT_DIR and renamed into place. An
    existing non-empty OUT_DIR is refused unless ``force``, and even then only when it is an
    earlier export (it holds a manifest.json): --force never deletes a directory of other files.
    SIGINT/SIGTERM meanwhile leave no staging folder behind. Returns the paths written, in row order.
    """
    from ..core.staging import need_parent, swap_dir, write_new_dir

    if not out_dir.strip():
        raise InputError("--out", out_dir, "expected a folder name, such as sweep/")
    ids = [row_id for row_id, _ in archs]
    bad = [row_id for row_id in ids if not _safe_id(row_id)]
    if bad:
        raise InputError("id", bad[0], "expected a file name: not empty, no '/', not '.', '..' or manifest.json")
    if len(set(ids)) != len(ids):
        raise InputError("id", next(i for i in ids if ids.count(i) > 1), "expected a different id for every row")
    name = target(fmt).file_name
    files = {f"{row_id}/{name}": config_text(config_for(block, fmt, context, tp), fmt, with_vocab(block, fmt)).encode()
             for row_id, block in archs}
    files[MANIFEST_NAME] = (json.dumps(_plain(manifest), indent=2, allow_nan=False) + "\n").encode()
    out = out_dir
    target_dir = os.path.abspath(out_dir)
    need_parent(out, target_dir)
    if os.path.lexists(target_dir) and not os.path.isdir(target_dir):
        raise InputError("--out", out, "exists and is not a directory")
    occupied = os.path.isdir(target_dir) and bool(os.listdir(target_dir))
    if occupied and not force:
        raise InputError("--out", out, "is a non-empty directory; pass --force to replace an earlier export")
    if occupied and not os.path.isfile(os.path.join(target_dir, MANIFEST_NAME)):
        raise InputError("--out", out, f"is a non-empty directory without {MANIFEST_NAME}, not an earlier export; "
                                       "--force replaces only those: choose a new or empty directory")
    (swap_dir if occupied else write_new_dir)(files, target_dir)
    return [os.path.join(out_dir, row_id, name) for row_id in ids]


def _plain(value):
    """A manifest as JSON: records (dataclasses) as dicts, tuples as lists, non-finite floats as None."""
    import dataclasses
    import math

    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
