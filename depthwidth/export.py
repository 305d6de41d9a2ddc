"""Architectures -> config files people train with: Hugging Face config.json and nanoGPT's GPTConfig.

Everything here but ``write_config`` and ``write_configs`` is pure: a ``blocks.Architecture``
in, a dict out. The counts printed next to a written file come from ``blocks`` (one place per
concept); ``depthwidth inspect`` reads every written file back to the same shape and counts.

Formats and their fields (key names as the model's configuration class spells them,
transformers 4.x and 5.x alike):
- ``hf-llama``, ``hf-mistral``, ``hf-qwen2``, ``hf-mixtral``: ``model_type``, ``architectures``,
  ``hidden_size``, ``num_hidden_layers``, ``num_attention_heads``, ``num_key_value_heads``,
  ``head_dim`` (not for qwen2: Qwen2Config has no such field), ``intermediate_size``,
  ``vocab_size``, ``tie_word_embeddings``, ``max_position_embeddings``, ``hidden_act`` (silu:
  the SwiGLU feed-forward), ``rms_norm_eps`` and ``rope_theta`` (the defaults of transformers'
  configuration class of that family), full attention (no sliding window); mixtral adds
  ``num_local_experts`` and ``num_experts_per_tok`` (``intermediate_size`` is one expert's).
- ``hf-gpt2``: ``n_embd``, ``n_layer``, ``n_head``, ``n_inner``, ``n_positions``, ``n_ctx``,
  ``activation_function`` gelu_new, ``layer_norm_epsilon``, and ``bos_token_id`` =
  ``eos_token_id`` = vocab - 1 (GPT-2's <|endoftext|> is its last token, 50256).
- ``nanogpt``: the fields of nanoGPT's ``GPTConfig`` (karpathy/nanoGPT model.py): block_size,
  vocab_size, n_layer, n_head, n_embd, dropout, bias. nanoGPT's block is GPT-2's: multi-head
  attention with head size n_embd/n_head, a plain 4·n_embd GELU MLP and tied embeddings.

A block the format cannot express (a gated feed-forward in GPT-2, grouped key/value heads in
nanoGPT, experts outside Mixtral, ...) is refused with one line naming the conflict.
"""
from __future__ import annotations

import json
import os
import shutil
import secrets
from contextlib import contextmanager
from dataclasses import dataclass, replace

from .blocks import DEFAULT_CONTEXT, Architecture, params_active, params_embedding, params_nonembedding, preset
from .errors import InputError

# DEFAULT_CONTEXT (2048, blocks.flops_per_token's T) is also LLaMA's max_position_embeddings (LlamaConfig's default)
MAX_CONTEXT = 2**31 - 1  # stored as a 32-bit integer by trainers and kernels
CONFIG_NAME = "config.json"
MANIFEST_NAME = "manifest.json"


@dataclass(frozen=True)
class Target:
    """One export format: the preset its architecture comes from and the family's fixed fields."""

    name: str
    preset: str
    model_type: str | None
    architecture: str | None  # the ``architectures`` entry: the causal-LM class of the family
    default_vocab: int  # the configuration class's default vocab_size, used when the block has none
    fixed: tuple[tuple[str, object], ...] = ()  # family defaults written explicitly


# rms_norm_eps and rope_theta: the defaults of transformers' LlamaConfig, MistralConfig, Qwen2Config
# and MixtralConfig (the same in 4.x and 5.x); vocabularies: the same classes' vocab_size defaults,
# GPT2Config's 50257 and nanoGPT GPTConfig's 50304 (50257 padded to a multiple of 64).
TARGETS: dict[str, Target] = {t.name: t for t in (
    Target("hf-llama", "llama", "llama", "LlamaForCausalLM", 32000,
           (("hidden_act", "silu"), ("rms_norm_eps", 1e-6), ("rope_theta", 10000.0))),
    Target("hf-mistral", "mistral", "mistral", "MistralForCausalLM", 32000,
           (("hidden_act", "silu"), ("rms_norm_eps", 1e-6), ("rope_theta", 10000.0), ("sliding_window", None))),
    Target("hf-qwen2", "qwen2", "qwen2", "Qwen2ForCausalLM", 151936,
           (("hidden_act", "silu"), ("rms_norm_eps", 1e-6), ("rope_theta", 10000.0), ("use_sliding_window", False))),
    Target("hf-gpt2", "gpt2", "gpt2", "GPT2LMHeadModel", 50257,
           (("activation_function", "gelu_new"), ("layer_norm_epsilon", 1e-5))),
    Target("hf-mixtral", "mixtral", "mixtral", "MixtralForCausalLM", 32000,
           (("hidden_act", "silu"), ("rms_norm_eps", 1e-5), ("rope_theta", 1e6), ("sliding_window", None))),
    Target("nanogpt", "gpt2", None, None, 50304, (("dropout", 0.0), ("bias", False))),
)}
FORMATS = tuple(TARGETS)
CONFIG_CLASSES = {"hf-llama": "LlamaConfig", "hf-mistral": "MistralConfig", "hf-qwen2": "Qwen2Config",
                  "hf-gpt2": "GPT2Config", "hf-mixtral": "MixtralConfig"}
FAMILY_DEFAULTS = ("rms_norm_eps", "rope_theta", "layer_norm_epsilon")  # numbers taken from the configuration class
GATED_FORMATS = frozenset({"hf-llama", "hf-mistral", "hf-qwen2", "hf-mixtral"})
OWN_HEAD_DIM = frozenset({"hf-llama", "hf-mistral", "hf-mixtral"})  # a head_dim field: heads·head_dim may differ from the width


@dataclass(frozen=True)
class Export:
    """The record of one written config (field names are the JSON contract)."""

    path: str
    format: str
    model_type: str | None
    depth: int
    width: int
    heads: int
    kv_heads: int
    head_dim: int
    ffn: int
    gated_ffn: bool
    experts: int | None
    top_k: int | None
    vocab: int
    tied: bool
    context: int
    params_real: int  # non-embedding, every expert (blocks.params_nonembedding)
    params_active: int  # per token (blocks.params_active)
    params_embedding: int | None
    notes: tuple[str, ...]


def target(fmt: str) -> Target:
    """The format named ``fmt`` (one of FORMATS)."""
    if fmt not in TARGETS:
        raise InputError("format", fmt, f"expected one of {', '.join(FORMATS)}")
    return TARGETS[fmt]


def export_architecture(fmt: str, depth: int, width: int, heads: int | None = None, *, arch: str | None = None,
                        kv_heads: int | None = None, vocab: int | None = None, tied: bool | None = None) -> Architecture:
    """The block a format exports at this depth and width: the format's preset (or ``arch``),
    ``heads`` with head_dim = width / heads when given, then the key/value heads, vocabulary and
    tying overrides; a vocabulary the preset leaves open becomes the format's default."""
    spec = target(fmt)
    family = preset(arch or spec.preset)
    shown = f"{depth}x{width}" + ("" if heads is None else f"x{heads}")
    overrides: dict = {}
    if heads is not None:
        if not 2 <= heads < width or width % heads:
            raise InputError("shape", shown, f"{heads} heads do not divide the width {width}: head_dim = width / heads "
                                             "must be a whole number (and heads at least 2)")
        overrides["head_dim"] = width // heads
    elif width % family.head_dim or width == family.head_dim:
        raise InputError("shape", shown, f"the {family.name} preset's heads have {family.head_dim} dimensions, which "
                                         f"do not split the width {width} into 2 or more heads; give the heads "
                                         f"(LxDxH with H dividing the width) or a width that is a multiple of {family.head_dim}")
    if kv_heads is not None:
        overrides["kv_heads"] = kv_heads
    if vocab is not None:
        overrides["vocab"] = vocab
    if tied is not None:
        overrides["tied"] = tied
    return with_vocab(family.architecture(depth, width, **overrides), fmt)


def with_vocab(block: Architecture, fmt: str) -> Architecture:
    """The block with the format's default vocabulary when it has none (a config needs one)."""
    return block if block.vocab is not None else replace(block, vocab=target(fmt).default_vocab)


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
    elif block.experts:
        out.append(f"{block.experts} routed experts (only hf-mixtral has experts)")
    if name in GATED_FORMATS and not block.gated:
        out.append(f"a plain feed-forward ({name}'s MLP is gated SwiGLU, 3·d·ffn; use hf-gpt2 or nanogpt)")
    if name not in GATED_FORMATS and block.gated:
        out.append(f"a gated feed-forward ({name}'s MLP is plain, 2·d·ffn; use hf-llama)")
    if block.heads % block.kv_heads:
        out.append(f"{block.kv_heads} key/value heads do not divide {block.heads} attention heads")
    if name in ("hf-gpt2", "nanogpt") and block.kv_heads != block.heads:
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


def config_for(block: Architecture, fmt: str, context: int = DEFAULT_CONTEXT) -> dict:
    """The config dict of ``block`` in format ``fmt``, with ``context`` positions."""
    spec = target(fmt)
    if not 1 <= context <= MAX_CONTEXT:
        raise InputError("--context", context, f"expected a whole number of positions from 1 to {MAX_CONTEXT:,}")
    block = with_vocab(block, fmt)
    problems = conflicts(block, fmt)
    if problems:
        raise InputError("format", fmt, f"cannot express this {block.family} block: {'; '.join(problems)}")
    if spec.name == "nanogpt":
        return {"block_size": context, "vocab_size": block.vocab, "n_layer": block.depth, "n_head": block.heads,
                "n_embd": block.width, **dict(spec.fixed)}
    if spec.name == "hf-gpt2":
        return {"model_type": spec.model_type, "architectures": [spec.architecture], "n_embd": block.width,
                "n_layer": block.depth, "n_head": block.heads, "n_inner": block.ffn, "n_positions": context,
                "n_ctx": context, "vocab_size": block.vocab, "tie_word_embeddings": block.tied,
                "bos_token_id": block.vocab - 1, "eos_token_id": block.vocab - 1, **dict(spec.fixed)}
    config = {"model_type": spec.model_type, "architectures": [spec.architecture], "hidden_size": block.width,
              "num_hidden_layers": block.depth, "num_attention_heads": block.heads,
              "num_key_value_heads": block.kv_heads}
    if spec.name in OWN_HEAD_DIM:
        config["head_dim"] = block.head_dim
    config["intermediate_size"] = block.expert_ffn if spec.name == "hf-mixtral" else block.ffn
    if spec.name == "hf-mixtral":
        config.update(num_local_experts=block.experts, num_experts_per_tok=block.top_k)
    config.update(vocab_size=block.vocab, tie_word_embeddings=block.tied, max_position_embeddings=context,
                  **dict(spec.fixed))
    return config


def export_notes(block: Architecture, fmt: str, context: int = DEFAULT_CONTEXT) -> tuple[str, ...]:
    """What the written file holds beyond the counted block, for the record's notes."""
    spec = target(fmt)
    notes = ["params_real and params_active count every weight matrix in the layers (blocks.py); "
             "norms and biases are left out, embeddings are params_embedding"]
    if spec.name in ("hf-gpt2", "nanogpt"):
        notes.append(f"learned position embeddings ({context:,} x {block.width:,}) are not in params_embedding")
    if spec.name == "hf-qwen2":
        notes.append("Qwen2 adds biases to q, k and v (not counted)")
    if spec.name == "nanogpt":
        notes.append("bias false: nanoGPT's linear layers and norms without biases (its default)")
    defaults = [f"{key} {value}" for key, value in spec.fixed if key in FAMILY_DEFAULTS]
    if defaults:
        notes.append(f"{', '.join(defaults)}: the defaults of transformers' {CONFIG_CLASSES[spec.name]}")
    return tuple(notes)


def export_record(block: Architecture, fmt: str, path: str, context: int = DEFAULT_CONTEXT,
                  notes: tuple[str, ...] | None = None) -> Export:
    """The record printed for a written config: its path, the block and blocks.py's counts."""
    block = with_vocab(block, fmt)
    notes = export_notes(block, fmt, context) if notes is None else notes
    return Export(
        path=path, format=fmt, model_type=target(fmt).model_type, depth=block.depth, width=block.width,
        heads=block.heads, kv_heads=block.kv_heads, head_dim=block.head_dim,
        ffn=block.expert_ffn if block.experts and block.expert_ffn else block.ffn, gated_ffn=block.gated,
        experts=block.experts, top_k=block.top_k,
        vocab=block.vocab, tied=block.tied, context=context, params_real=params_nonembedding(block),
        params_active=params_active(block), params_embedding=params_embedding(block), notes=notes,
    )


# ---- writing (the only I/O here) ----------------------------------------------------------------

def _dump(data) -> bytes:
    return (json.dumps(data, indent=2, allow_nan=False) + "\n").encode()


def config_path(out: str) -> str:
    """Where ``--out`` puts the file: OUT itself when it ends in .json (and is no directory),
    else OUT/config.json."""
    if out.lower().endswith(".json") and not os.path.isdir(out):
        return out
    return os.path.join(out, CONFIG_NAME)


def _parent(path: str) -> str:
    return os.path.dirname(os.path.abspath(path))


def _need_parent(out: str, path: str) -> None:
    """Refuse when the directory ``path`` goes in does not exist (nothing is created above it)."""
    if not os.path.isdir(_parent(path)):
        raise InputError("--out", out, f"its directory {_parent(path)!r} does not exist; create it first")


def write_config(config: dict, out: str, force: bool = False) -> str:
    """Write ``config`` to OUT (a .json file) or OUT/config.json, atomically; returns the path.

    Never overwrites an existing file unless ``force``. The bytes go to a temporary file in the
    same directory, which is then renamed over the target (os.replace); a new OUT directory is
    built under a temporary name beside it and renamed into place, so a failure leaves nothing
    behind. Nothing above OUT is created.
    """
    path = config_path(out)
    directory = out if path != out else None
    if directory is not None and os.path.lexists(directory) and not os.path.isdir(directory):
        raise InputError("--out", out, "exists and is not a directory (a file path must end in .json)")
    if os.path.isdir(path):
        raise InputError("--out", out, f"{path!r} is a directory, not a file")
    if os.path.lexists(path) and not force:
        raise InputError("--out", out, f"{path!r} exists; pass --force to overwrite it")
    data = _dump(config)
    if directory is None or os.path.isdir(directory):
        _need_parent(out, path)
        _replace_file(data, path, out)
        return path
    _need_parent(out, directory)
    staging = _staging_dir(directory, ".tmp")
    with _undone_on_failure(lambda: shutil.rmtree(staging, ignore_errors=True), out):
        with open(os.path.join(staging, CONFIG_NAME), "wb") as file:
            file.write(data)
        os.rename(staging, directory)
    return path


def _staging_name(path: str, suffix: str) -> str:
    """A fresh hidden name beside ``path``: .NAME.<random>.tmp in the same directory (same file system)."""
    return os.path.join(_parent(path), f".{os.path.basename(os.path.abspath(path))}.{secrets.token_hex(4)}{suffix}")


def _staging_dir(path: str, suffix: str) -> str:
    """Create a new empty directory beside ``path`` (mode from the umask, like any new directory)."""
    while True:
        name = _staging_name(path, suffix)
        try:
            os.mkdir(name)
            return name
        except FileExistsError:  # pragma: no cover - 32 random bits
            continue


def _staging_file(path: str) -> tuple[int, str]:
    """Create and open a new file beside ``path`` (mode 0666 less the umask, like any new file)."""
    while True:
        name = _staging_name(path, ".tmp")
        try:
            return os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), name
        except FileExistsError:  # pragma: no cover - 32 random bits
            continue


def _replace_file(data: bytes, path: str, out: str) -> None:
    """Write ``data`` to a temporary file beside ``path``, then rename it over ``path``."""
    handle, staging = _staging_file(path)
    with _undone_on_failure(lambda: _remove(staging), out):
        with os.fdopen(handle, "wb") as file:
            file.write(data)
        os.replace(staging, path)


@contextmanager
def _undone_on_failure(cleanup, out: str):
    """Run ``cleanup`` (remove the staging copy) if the block fails; an OSError becomes one line
    naming --out, anything else (Ctrl-C) propagates."""
    try:
        yield
    except OSError as err:
        cleanup()
        raise InputError("--out", out, f"cannot write it ({err.strerror or err})") from None
    except BaseException:
        cleanup()
        raise


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def _safe_id(row_id: str) -> bool:
    return (isinstance(row_id, str) and row_id not in ("", ".", "..") and "/" not in row_id and "\\" not in row_id
            and "\0" not in row_id and row_id != MANIFEST_NAME)


def write_configs(archs: list[tuple[str, Architecture]], fmt: str, out_dir: str, force: bool,
                  manifest, context: int = DEFAULT_CONTEXT) -> list[str]:
    """``sweep --export``: OUT_DIR/<id>/config.json per row plus OUT_DIR/manifest.json, all or nothing.

    Every config is built (and every conflict refused) before anything touches the disk; the
    directory is assembled under a temporary name beside OUT_DIR and renamed into place. An
    existing non-empty OUT_DIR is refused unless ``force``, and even then only when it is an
    earlier export (it holds a manifest.json): --force never deletes a directory of other files.
    Returns the config paths written, in row order.
    """
    ids = [row_id for row_id, _ in archs]
    bad = [row_id for row_id in ids if not _safe_id(row_id)]
    if bad:
        raise InputError("id", bad[0], "expected a file name: not empty, no '/', not '.', '..' or manifest.json")
    if len(set(ids)) != len(ids):
        raise InputError("id", next(i for i in ids if ids.count(i) > 1), "expected a different id for every row")
    configs = [(row_id, _dump(config_for(block, fmt, context))) for row_id, block in archs]
    listing = _dump(_plain(manifest))
    out = out_dir
    target_dir = os.path.abspath(out_dir)
    _need_parent(out, target_dir)
    if os.path.lexists(target_dir) and not os.path.isdir(target_dir):
        raise InputError("--out", out, "exists and is not a directory")
    occupied = os.path.isdir(target_dir) and bool(os.listdir(target_dir))
    if occupied and not force:
        raise InputError("--out", out, "is a non-empty directory; pass --force to replace an earlier export")
    if occupied and not os.path.isfile(os.path.join(target_dir, MANIFEST_NAME)):
        raise InputError("--out", out, f"is a non-empty directory without {MANIFEST_NAME}, not an earlier export; "
                                       "--force replaces only those: choose a new or empty directory")
    name = os.path.basename(target_dir)
    staging = _staging_dir(target_dir, ".tmp")
    with _undone_on_failure(lambda: shutil.rmtree(staging, ignore_errors=True), out):
        for row_id, data in configs:
            os.mkdir(os.path.join(staging, row_id))
            with open(os.path.join(staging, row_id, CONFIG_NAME), "wb") as file:
                file.write(data)
        with open(os.path.join(staging, MANIFEST_NAME), "wb") as file:
            file.write(listing)
        if occupied:  # move the earlier export aside, put the new one in place, then delete the old one
            old = _staging_dir(target_dir, ".old")
            try:
                os.rename(target_dir, os.path.join(old, name))
            except BaseException:
                os.rmdir(old)
                raise
            try:
                os.rename(staging, target_dir)
            except BaseException:
                os.rename(os.path.join(old, name), target_dir)  # the earlier export goes back
                os.rmdir(old)
                raise
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(staging, target_dir)  # replaces an empty directory, creates a missing one
    return [os.path.join(out_dir, row_id, CONFIG_NAME) for row_id in ids]


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
