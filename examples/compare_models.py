"""Compare published models with the theory from Python: regime, and depth against the
empirical optimum for each model's size (Levine et al. 2020)."""
from depthwidth import bounds, empirical_optimum, replicate_width
from depthwidth.arch.catalog import lookup

for name in ("bert-base", "gpt2-xl", "llama-7b", "gpt3-175b"):
    model = lookup(name)
    record = bounds(model.depth, model.width, model.heads)
    optimum_depth, optimum_width = empirical_optimum(record.params_12Ld2)
    side = "deeper" if model.depth > optimum_depth else "shallower"
    print(f"{model.display_name:12} {model.depth:3}x{model.width:<6} {record.regime:17} "
          f"log3 sep >= {record.log3_sep_lower:12,.1f}  {side} than the fit's {optimum_depth:.0f} layers")

# How wide must a 3-layer network be to replicate BERT-base's separation rank?
bert = lookup("bert-base")
width = replicate_width(bert.depth, bert.width, bert.heads, 3)
print("3-layer replicate width for BERT-base:", width.width if width.width is not None else f"10^{width.log10_width:.1f}")
