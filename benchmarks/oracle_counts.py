"""Golden parameter counts from transformers itself, for tests/test_hf_corpus.py.

Regenerate (needs the ``oracle`` extra: ``pip install -e '.[oracle]'``; torch's CPU wheel is enough):

    PYTHONPATH=. python benchmarks/oracle_counts.py            # writes tests/golden/hf_counts.json

Inputs: the default config of every model type transformers registers (``CONFIG_MAPPING``), the
real configs (``tests/configs/*.json`` and the REAL list of ``tests/test_hfconfig.py``) and the small
hybrid ``LAYOUTS`` below. The ``oracle`` extra pins the versions the committed file was made with
(torch 2.13.0, transformers 5.23.0); ``benchmarks/oracle_report.py`` prints issue 33's numbers from it. Each is built with the first model class transformers maps it
to (seq2seq LM, speech seq2seq, image-text-to-text, causal LM, masked LM, ..., else the bare model) on PyTorch's meta
device (``torch.device("meta")``, else accelerate's ``init_empty_weights``: no memory, no weights;
then ``tie_weights()`` as ``from_pretrained`` does), and its parameters are counted by
one rule, the project's convention (reference card, "Beyond 12·L·d²"):

- ``layers``: every weight with two or more dimensions (linear matrices, fused expert tensors,
  convolution kernels) whose module path passes through a numbered layer (``...layers.3...``,
  ``...h.0...``), except ``nn.Embedding`` tables and the output head. Norms and biases (one
  dimension) are left out; so are matrices outside the numbered layers (poolers, projectors, patch
  embeddings, masked-LM transforms); so are biases stored as matrices (GPT-OSS's per-expert
  ``..._bias``). Each parameter counts once (shared layers once).
- ``text_layers``: the same, inside the language model of a multimodal model (``language_model``,
  ``text_model``), which is what ``depthwidth inspect`` reads from ``text_config``; else equal to
  ``layers``.
- ``input_embeddings``: the table ``get_input_embeddings()`` returns (every table of a per-codebook
  ``ModuleList``: Qwen3-Omni's code predictor); ``untied_head``: the weight of ``get_output_embeddings()``
  (else of a ``HEAD_ATTRIBUTES`` module: CSM's ``codebooks_head``) when it is not the same tensor (0 when
  tied, null when the class has no head); ``position_embeddings``: every other ``nn.Embedding`` table (learned positions, relative
  position biases) and position parameters named so, ``token_type_embeddings`` apart, all three
  inside the language model of a multimodal model (a vision tower's patch positions are not counted);
  ``embedding_projection``: a factorized embedding's projection to the width (ALBERT's
  ``embedding_hidden_mapping_in``, ELECTRA's ``embeddings_project``, OPT's ``project_in``/``project_out``, Gemma 4's ``per_layer_model_projection``
  of the per-layer input table, CSM's depth decoder's ``inputs_embeds_projector``).
- ``other_mixers``: class names of modules inside the (text) layers that are not attention or
  feed-forward (state-space, recurrent, convolution, linear attention), by name; empty for a
  plain attention + feed-forward stack.
- ``active``: ``layers`` with each mixture-of-experts block's routed experts scaled by top-k / E,
  top-k read from the router module (else the config); null when a model has no experts.

A model type no auto mapping names (a vision or audio tower, a depth decoder: a sub-config) is built
with the class of its own modeling module whose ``config_class`` is its config class (``sub_config_class``;
``mapping`` "CONFIG_CLASS"; its ``PreTrainedModel`` base builds nothing and is skipped). A model transformers
cannot build here gets ``error`` (the reason) and no counts; models that need ``timm`` fail that way and are
named in the file (the ``oracle`` extra leaves timm out: it pulls a torchvision built for another torch, whose
missing operators make every transformers import fail).
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "golden" / "hf_counts.json"
REAL = ROOT / "tests" / "configs"

CLASS_MAPPINGS = ("MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES", "MODEL_FOR_SPEECH_SEQ_2_SEQ_MAPPING_NAMES",
                  "MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES", "MODEL_FOR_MULTIMODAL_LM_MAPPING_NAMES",
                  "MODEL_FOR_CAUSAL_LM_MAPPING_NAMES", "MODEL_FOR_MASKED_LM_MAPPING_NAMES",
                  "MODEL_FOR_PRETRAINING_MAPPING_NAMES", "MODEL_MAPPING_NAMES")
# Keys of a saved config that no count depends on (dropped to keep the golden file small).
DROP_KEYS = ("id2label", "label2id", "task_specific_params", "_name_or_path", "transformers_version",
             "suppress_tokens", "begin_suppress_tokens", "forced_decoder_ids", "prompt_template", "bad_words_ids",
             "image_token_index", "chat_template", "auto_map", "quantization_config")
NUMBERED = re.compile(r"(^|\.)\d+(\.|$)")
# Layer modules that are not attention or feed-forward (state-space, recurrent, convolution, linear attention).
# Case-sensitive: GPT-2's ``Conv1D`` is a linear layer and ``GptOssMLP`` is a feed-forward, neither a mixer.
NOT_ATTENTION = re.compile(r"Mamba|SSM|Mixer|RWKV|Rwkv|Recurrent|LSTM|DeltaNet|LinearAttention|Lightning|ShortConv|"
                           r"^Conv1d$|Hyena|Retention|Rglru|TimeMix|ChannelMix")
# A factorized embedding's projection to the width (ALBERT, ELECTRA, OPT-350m): part of the embedding.
EMBEDDING_PROJECTION = re.compile(r"embedding_hidden_mapping_in|embeddings_project|project_in|project_out|"
                                  r"per_layer_model_projection|inputs_embeds_projector")
# Output heads that get_output_embeddings() does not return: CSM's depth decoder keeps one head per codebook
# but the first in one (codebooks - 1) x width x vocab tensor (models/csm/modeling_csm.py, CsmCodebooksHead).
HEAD_ATTRIBUTES = ("codebooks_head",)
# Small configs whose layer layouts the default configs leave out (source "layout:<name>"): mixed
# short-convolution / attention layers, Jamba's periods, Bamba's attention indices, Nemotron-H's
# legacy pattern, a Mamba with its time-step rank given (depthwidth/hf/mixers.py reads each).
LAYOUTS = {
    "lfm2-mixed": ("lfm2", dict(num_hidden_layers=16, hidden_size=2048, num_attention_heads=32, num_key_value_heads=8,
                                intermediate_size=12288, layer_types=["conv", "conv", "full_attention"] * 5 + ["conv"])),
    "jamba-small": ("jamba", dict(num_hidden_layers=8, hidden_size=512, num_attention_heads=8, num_key_value_heads=2,
                                  intermediate_size=1024, num_experts=4, attn_layer_period=4, attn_layer_offset=2)),
    "mamba-small": ("mamba", dict(num_hidden_layers=4, hidden_size=256, state_size=8, time_step_rank=12, expand=3)),
    "bamba-small": ("bamba", dict(num_hidden_layers=6, hidden_size=512, num_attention_heads=8, num_key_value_heads=2,
                                  intermediate_size=1024, attn_layer_indices=[2, 5], mamba_n_heads=16, mamba_d_head=64)),
    "nemotron_h-pattern": ("nemotron_h", dict(hidden_size=512, num_attention_heads=8, num_key_value_heads=2, head_dim=64,
                                              intermediate_size=1024, mamba_num_heads=8, mamba_head_dim=64,
                                              hybrid_override_pattern="M-M*-ME", n_routed_experts=4, num_experts_per_tok=2,
                                              moe_intermediate_size=256, moe_shared_expert_intermediate_size=512)),
    "qwen3_next-small": ("qwen3_next", dict(num_hidden_layers=6, hidden_size=512, num_attention_heads=8,
                                            num_key_value_heads=2, head_dim=64, intermediate_size=1024,
                                            moe_intermediate_size=256, shared_expert_intermediate_size=256,
                                            num_experts=8, num_experts_per_tok=2, full_attention_interval=3)),
}
TEXT_PARTS = ("language_model", "text_model", "llm", "text_decoder", "language_model_head")


def trimmed(cfg: dict) -> dict:
    """A config dict without the keys listed in DROP_KEYS (at any depth)."""
    return {k: trimmed(v) if isinstance(v, dict) else v for k, v in cfg.items() if k not in DROP_KEYS}


def model_class(model_type: str, config):
    """The first transformers class of CLASS_MAPPINGS registered for this model type, else the class
    of the config's own modeling module built from exactly this config class (``config_class``)."""
    import transformers
    from transformers.models.auto import modeling_auto
    for mapping in CLASS_MAPPINGS:
        name = getattr(modeling_auto, mapping).get(model_type)
        if isinstance(name, (tuple, list)):
            name = name[0]
        if name and hasattr(transformers, name):
            return mapping, getattr(transformers, name)
    return sub_config_class(config)


# A sub-config (a vision or audio tower, a depth decoder) that no auto mapping names is built by the class of
# its modeling module whose ``config_class`` is exactly its config class; the head-bearing class first, as above.
SUB_CLASS_ORDER = ("ForConditionalGeneration", "ForCausalLM", "Model", "")


def sub_config_class(config):
    """("CONFIG_CLASS", class) of the modeling module's class built from ``type(config)``, or (None, None)."""
    import importlib
    from transformers import PreTrainedModel
    package = type(config).__module__.rsplit(".", 1)[0]
    try:
        module = importlib.import_module(f"{package}.modeling_{package.rsplit('.', 1)[-1]}")
    except Exception:
        return None, None
    found = sorted(((name, cls) for name, cls in vars(module).items()
                    if isinstance(cls, type) and issubclass(cls, PreTrainedModel) and cls.__module__ == module.__name__
                    and getattr(cls, "config_class", None) is type(config)
                    and not name.endswith("PreTrainedModel")), key=lambda item: item[0])  # the base builds nothing
    for suffix in SUB_CLASS_ORDER:
        for name, cls in found:
            if name.endswith(suffix):
                return "CONFIG_CLASS", cls
    return None, None


def build(cls, config):
    """The model on the meta device (no weights allocated)."""
    import torch
    from accelerate import init_empty_weights
    make = (lambda: cls._from_config(config)) if hasattr(cls, "_from_config") else (lambda: cls(config))
    try:
        with torch.device("meta"):
            model = make()
    except Exception:
        with init_empty_weights():  # builds where meta tensors break a constructor; ties no weights itself
            model = make()
    try:
        model.tie_weights()  # as from_pretrained does: the head shares the input table when the config ties it
    except Exception:
        pass
    return model


def _top_k(module, config) -> int | None:
    """top-k of a mixture-of-experts block: an attribute of the block or its router, else the config's."""
    for sub in [module, *module.children()]:
        for attr in ("top_k", "num_experts_per_tok", "topk", "k", "moe_top_k", "experts_per_token"):
            value = getattr(sub, attr, None)
            if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
                return value
    for cfg in (config, getattr(config, "text_config", None)):
        for attr in ("num_experts_per_tok", "moe_top_k", "experts_per_token", "top_k"):
            value = getattr(cfg, attr, None) if cfg is not None else None
            if isinstance(value, int) and value >= 1:
                return value
    return None


def count(model, config) -> dict:
    """The counts of the module docstring for one built model."""
    import torch.nn as nn
    try:
        emb_in = model.get_input_embeddings()
    except Exception:  # e.g. vision models: "not auto-handled"
        emb_in = None
    try:
        head = model.get_output_embeddings()
    except Exception:
        head = None
    if head is None:  # a head of several codebooks in one tensor (CSM's depth decoder: codebooks_head)
        head = next((getattr(model, name) for name in HEAD_ATTRIBUTES if getattr(model, name, None) is not None), None)
    heads = []
    if isinstance(head, nn.ModuleList):
        heads = [m for m in head if hasattr(m, "weight")]
    elif head is not None and hasattr(head, "weight"):
        heads = [head]
    # one input table per codebook (Qwen3-Omni's code predictor: get_input_embeddings() is a ModuleList)
    tables = [m.weight for m in emb_in if hasattr(m, "weight")] if isinstance(emb_in, nn.ModuleList) else \
        [emb_in.weight] if getattr(emb_in, "weight", None) is not None else []
    in_params = {id(w) for w in tables}
    head_params = {id(h.weight) for h in heads}
    untied = None if not heads else sum(h.weight.numel() for h in heads if id(h.weight) not in in_params)

    text_prefixes = []
    for name, module in model.named_modules():
        last = name.rsplit(".", 1)[-1]
        if last in TEXT_PARTS and not any(name.startswith(p + ".") for p in text_prefixes):
            text_prefixes.append(name)

    embedding_params = {}
    for name, module in model.named_modules():
        if isinstance(module, nn.Embedding) or type(module).__name__.endswith("Embedding") and hasattr(module, "weight") \
                and isinstance(getattr(module, "weight", None), nn.Parameter) and module.weight.dim() == 2:
            embedding_params[id(module.weight)] = name

    layers = text_layers = 0
    positions = token_types = projections = 0
    seen = set()
    experts = {}  # moe block name -> routed expert parameters
    for name, param in model.named_parameters():
        if id(param) in seen:
            continue
        seen.add(id(param))
        if id(param) in in_params or id(param) in head_params:
            continue
        in_text = not text_prefixes or any(name.startswith(p + ".") for p in text_prefixes)
        if id(param) in embedding_params:
            if not in_text:
                continue
            module_name = embedding_params[id(param)]
            if "token_type" in module_name:
                token_types += param.numel()
            else:
                positions += param.numel()
            continue
        lname = name.lower()
        if not NUMBERED.search(name):
            if in_text and param.dim() == 2 and EMBEDDING_PROJECTION.search(name):
                projections += param.numel()
                continue
            if in_text and ("position" in lname or "pos_embed" in lname) and param.dim() >= 2:
                positions += param.numel()
            continue
        if param.dim() < 2 or lname.endswith("bias"):  # norms, biases (GPT-OSS keeps expert biases as E x n tensors)
            continue
        layers += param.numel()
        if in_text:
            text_layers += param.numel()
            match = re.search(r"^(.*?\.(?:experts|routed_experts))(\.|$)", name)
            if match:
                experts[match.group(1)] = experts.get(match.group(1), 0) + param.numel()

    mixers = sorted({type(module).__name__ for name, module in model.named_modules()
                     if NUMBERED.search(name) and (not text_prefixes or any(name.startswith(p + ".") for p in text_prefixes))
                     and NOT_ATTENTION.search(type(module).__name__)})
    active = None
    if experts:
        active = text_layers
        modules = dict(model.named_modules())
        for block, numel in experts.items():
            parent = modules.get(block.rsplit(".", 1)[0])
            module = modules.get(block)
            n_experts = len(module) if isinstance(module, nn.ModuleList) else getattr(module, "num_experts", None)
            if n_experts is None:
                for param in module.parameters(recurse=False):
                    n_experts = param.shape[0]
                    break
            top_k = _top_k(parent, config) if parent is not None else None
            if not n_experts or top_k is None:
                active = None
                break
            active -= numel - numel * top_k // n_experts
    return dict(layers=layers, text_layers=text_layers,
                input_embeddings=sum(w.numel() for w in tables) if tables else None,
                untied_head=untied, position_embeddings=positions, token_type_embeddings=token_types,
                embedding_projection=projections,
                active=active, text_part=text_prefixes[0] if text_prefixes else None, other_mixers=mixers)


def oracle_row(model_type: str, config, source: str) -> dict:
    """One golden row: the config as read, the class built and its counts (or the error)."""
    import transformers
    row = {"source": source, "model_type": model_type, "config": trimmed(config.to_dict())}
    mapping, cls = model_class(model_type, config)
    if cls is None:
        row["error"] = "no model class registered for this model type"
        return row
    row["class"], row["mapping"] = cls.__name__, mapping.removesuffix("_MAPPING_NAMES")  # CONFIG_CLASS: sub_config_class
    row["text_decoder"] = mapping == "MODEL_FOR_CAUSAL_LM_MAPPING_NAMES"  # built as a causal LM (no seq2seq class)
    try:
        model = build(cls, config)
    except Exception as err:  # transformers' own failures (missing optional packages, validators)
        row["error"] = f"{type(err).__name__}: {' '.join(str(err).split())[:200]}"
        return row
    try:
        row.update(count(model, config))
    except Exception as err:
        row["error"] = f"counting: {type(err).__name__}: {' '.join(str(err).split())[:200]}"
    return row


def real_configs():
    """(source, config dict) of every real config: tests/configs/*.json and tests/test_hfconfig.py's REAL."""
    import importlib.util
    for path in sorted(REAL.glob("*.json")):
        raw = json.loads(path.read_text())
        if isinstance(raw.get("model_type"), str):
            yield f"tests/configs/{path.name}", raw
    spec = importlib.util.spec_from_file_location("test_hfconfig", ROOT / "tests" / "test_hfconfig.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for name, raw, _, _ in module.REAL:
        yield f"tests/test_hfconfig.py::REAL[{name}]", raw


def layout_row(name: str, model_type: str, keys: dict) -> dict:
    """The golden row of one LAYOUTS config (its config is the keys as given, like a saved file)."""
    from transformers import AutoConfig
    row = oracle_row(model_type, AutoConfig.for_model(model_type, **keys), f"layout:{name}")
    row["config"] = {"model_type": model_type, **keys}
    return row


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(OUT))
    parser.add_argument("--only", nargs="*", help="model types to run (default: all)")
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    import torch
    import transformers
    from transformers import CONFIG_MAPPING, AutoConfig
    transformers.logging.set_verbosity_error()
    rows = []
    started = time.time()
    types = args.only or sorted(CONFIG_MAPPING.keys())
    for model_type in types:
        try:
            config = AutoConfig.for_model(model_type)
        except Exception as err:
            rows.append({"source": "default", "model_type": model_type,
                         "error": f"config: {type(err).__name__}: {' '.join(str(err).split())[:200]}"})
            continue
        rows.append(oracle_row(model_type, config, "default"))
        print(model_type, rows[-1].get("layers", rows[-1].get("error")), file=sys.stderr, flush=True)
    if not args.only:
        for source, raw in real_configs():
            try:
                config = AutoConfig.for_model(raw["model_type"], **{k: v for k, v in raw.items() if k != "model_type"})
            except Exception as err:
                rows.append({"source": source, "error": f"config: {type(err).__name__}: {str(err)[:120]}"})
                continue
            row = oracle_row(raw["model_type"], config, source)
            row["config"] = raw  # the file as released (keys left to the family defaults stay absent)
            rows.append(row)
        for name, (model_type, keys) in LAYOUTS.items():
            rows.append(layout_row(name, model_type, keys))
    out = {"generator": "benchmarks/oracle_counts.py", "transformers": transformers.__version__,
           "torch": torch.__version__, "rows": rows}
    print(f"{round(time.time() - started)} s", file=sys.stderr)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    head = json.dumps({k: v for k, v in out.items() if k != "rows"}, sort_keys=True)[:-1]
    lines = ",\n".join(json.dumps(row, sort_keys=True, separators=(",", ":")) for row in rows)
    Path(args.out).write_text(f'{head}, "rows": [\n{lines}\n]}}\n')  # one row a line: readable diffs
    print(f"{len(rows)} rows -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
