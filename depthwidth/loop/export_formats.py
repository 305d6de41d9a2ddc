"""The export formats (`depthwidth export --to`, `sweep --export`): each target's preset, model
type, causal-LM class, default vocabulary, fixed family fields and file, what each format can
express (gated feed-forward, experts, its own head size, multi-head only), and the fields a
catalogue model writes beyond its block. Data, with its sources; ``export.py`` writes them.
"""
from __future__ import annotations


from ..core.errors import InputError
from ..core.frozen import frozen


MAX_CONTEXT = 2**31 - 1  # stored as a 32-bit integer by trainers and kernels


CONFIG_NAME = "config.json"


MANIFEST_NAME = "manifest.json"


BLOCK_OPTIONS = ("kv_heads", "head_dim", "ffn_mult", "gated", "experts", "top_k", "vocab", "tied")


@frozen
class Target:
    """One export format: the preset its architecture comes from and the family's fixed fields."""

    name: str
    preset: str
    model_type: str | None
    architecture: str | None  # the ``architectures`` entry: the causal-LM class of the family
    default_vocab: int  # the configuration class's default vocab_size, used when the block has none
    fixed: tuple[tuple[str, object], ...] = ()  # family defaults written explicitly
    file_name: str = CONFIG_NAME  # the file written in an --out directory
    extensions: tuple[str, ...] = (".json",)  # an --out path with one of these is the file itself


# rms_norm_eps and rope_theta: the defaults of transformers' LlamaConfig, MistralConfig, Qwen2Config
# and MixtralConfig (the same in 4.x and 5.x); vocabularies: the same classes' vocab_size defaults,
# GPT2Config's 50257, nanoGPT train.py's 50304 (50257 padded to a multiple of 64), LlamaConfig's 32000
# for LitGPT and Megatron-LM (whose vocabulary comes from the tokenizer at run time).
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
    Target("nanogpt", "gpt2", None, None, 50304, (("dropout", 0.0), ("bias", False)), "train_config.py", (".py",)),
    Target("litgpt", "llama", None, None, 32000, (), "model_config.yaml", (".yaml", ".yml")),
    Target("megatron", "llama", None, None, 32000, (), "megatron_args.sh", (".sh",)),
)}


FORMATS = tuple(TARGETS)


CONFIG_CLASSES = {"hf-llama": "LlamaConfig", "hf-mistral": "MistralConfig", "hf-qwen2": "Qwen2Config",
                  "hf-gpt2": "GPT2Config", "hf-mixtral": "MixtralConfig"}


FAMILY_DEFAULTS = ("rms_norm_eps", "rope_theta", "layer_norm_epsilon")  # numbers taken from the configuration class


GATED_FORMATS = frozenset({"hf-llama", "hf-mistral", "hf-qwen2", "hf-mixtral"})


OWN_HEAD_DIM = frozenset({"hf-llama", "hf-mistral", "hf-mixtral", "litgpt", "megatron"})  # heads·head_dim may differ from d


MOE_FORMATS = frozenset({"hf-mixtral", "litgpt", "megatron"})


MHA_ONLY = frozenset({"hf-gpt2", "nanogpt"})


# A catalogue model's own fields beyond its block (written instead of the family defaults):
# Llama 3: rope_theta 500000 and norm_eps 1e-5 (meta-llama/llama3 llama/model.py ModelArgs, commit
# 453ae54806ac9bd4ea793dfecd2b2f27ece5f9cf: verified); Llama 2: norm_eps 1e-5 and rope theta 10000
# (meta-llama/llama llama/model.py ModelArgs and precompute_freqs_cis, commit 8580eb9a896bdb82d376b7040d18a2e7b402b10f:
# verified). Both keep the output head apart from the embedding (untied), and their FeedForward gives the
# catalogue's ffn: Llama 2 7B int(2·4·4096/3) = 10922 rounded up to 256 -> 11008, multi-head (n_kv_heads None).
MODEL_FIELDS = {
    **{name: {"rope_theta": 500000.0, "rms_norm_eps": 1e-5} for name in ("llama3-8b", "llama3-70b", "llama3-405b")},
    **{name: {"rms_norm_eps": 1e-5} for name in ("llama2-7b", "llama2-13b", "llama2-70b")},
}


def target(fmt: str) -> Target:
    """The format named ``fmt`` (one of FORMATS)."""
    if fmt not in TARGETS:
        raise InputError("format", fmt, f"expected one of {', '.join(FORMATS)}")
    return TARGETS[fmt]
