"""The family defaults ``depthwidth inspect`` fills in, generated from transformers' own config classes.

Regenerate (needs transformers, the ``oracle`` extra; no torch):

    PYTHONPATH=. python benchmarks/hf_defaults.py        # writes depthwidth/hf/hf_defaults.json

A saved ``config.json`` leaves out every key equal to its class default (``save_pretrained`` writes
the diff), so a key absent from a file means the family's default. For every model type transformers
registers (``CONFIG_MAPPING``) this records:

- each key ``hfconfig.READ_KEYS`` names that the config class's ``__init__`` gives a default other
  than None (None means "derived from other keys", e.g. ``head_dim`` = width / heads, which the
  tool derives itself); ``attribute_map`` aliases are left out (Whisper maps ``num_key_value_heads``
  to ``encoder_attention_heads``: not a default of its own);
- ``_rope``: true when the class takes rotary parameters (rope_theta, rope_parameters, ...): its
  positions are rotary, with no learned table;
- ``_tie_forced``: true when the class ties the output head whatever ``tie_word_embeddings`` says
  (T5: "we tie weights always");
- ``_sub``: the model type of each sub-config the default config builds (``text_config`` ->
  ``llama`` for llava), read from a default instance (model types are not derived).
"""
from __future__ import annotations

import argparse
import inspect
import json
import sys
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "depthwidth" / "hf" / "hf_defaults.json"
ROPE_PARAMETERS = ("rope_theta", "rope_parameters", "rope_scaling", "rotary_dim", "rotary_pct", "rotary_emb_base",
                   "partial_rotary_factor")


def plain(value):
    """A JSON value (tuples as lists), or a marker object when it is not one."""
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    if isinstance(value, (list, tuple)) and all(isinstance(v, (bool, int, float, str)) for v in value):
        return list(value)
    raise TypeError(type(value).__name__)


def family(cls, read_keys: frozenset) -> dict:
    """The defaults of one config class (see the module docstring)."""
    found = {}
    try:
        parameters = inspect.signature(cls.__init__).parameters
    except (TypeError, ValueError):
        parameters = {}
    aliases = getattr(cls, "attribute_map", {}) or {}
    for name, parameter in parameters.items():
        if parameter.default is inspect.Parameter.empty or parameter.default is None:
            continue
        if name in read_keys and name not in aliases:  # an alias (Whisper's num_key_value_heads) is another key's value
            try:
                found[name] = plain(parameter.default)
            except TypeError:
                pass
    if any(name in parameters for name in ROPE_PARAMETERS):
        found["_rope"] = True  # the class takes rotary parameters: no learned position table
    try:  # a class that sets tie_word_embeddings itself (T5 ties always, whatever a saved config says)
        forced = cls(tie_word_embeddings=False).tie_word_embeddings
        if forced is True:
            found["_tie_forced"] = True
    except Exception:
        pass
    sub = {}
    try:
        instance = cls()
    except Exception:
        instance = None
    for key in getattr(cls, "sub_configs", {}) or {}:
        inner = getattr(instance, key, None) if instance is not None else None
        model_type = getattr(inner, "model_type", None) if inner is not None else None
        if isinstance(inner, dict):
            model_type = inner.get("model_type")
        if isinstance(model_type, str) and model_type:
            sub[key] = model_type
    if sub:
        found["_sub"] = sub
    return found


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(OUT))
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    import transformers
    from transformers import CONFIG_MAPPING

    from depthwidth.hf.read import READ_KEYS
    transformers.logging.set_verbosity_error()
    table = {}
    for model_type in sorted(CONFIG_MAPPING.keys()):
        try:
            table[model_type] = family(CONFIG_MAPPING[model_type], frozenset(READ_KEYS))
        except Exception as err:  # a class transformers cannot import here (missing optional package)
            print(f"{model_type}: {type(err).__name__}", file=sys.stderr)
    out = {"_generator": "benchmarks/hf_defaults.py", "_transformers": transformers.__version__, "families": table}
    lines = ",\n".join(f"{json.dumps(k)}: {json.dumps(v, sort_keys=True)}" for k, v in table.items())
    head = json.dumps({k: v for k, v in out.items() if k != "families"}, sort_keys=True)[:-1]
    Path(args.out).write_text(f'{head}, "families": {{\n{lines}\n}}}}\n')
    print(f"{len(table)} model types -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
