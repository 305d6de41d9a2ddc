"""Predicted vs billed time: published GPU-hours of whole runs are not ideal hours.

The model predicts the steady-state step of a healthy cluster. Published totals also hold restarts,
failures, evaluation, long-context and annealing stages, and slower early software. Their ratio to the
model's prediction (same shape, tokens and accelerator; the layout search's best layout) is the factor
a user should expect between a predicted time and the bill. ``tests/test_perf.py`` recomputes it.
"""
from __future__ import annotations

# (run, billed GPU-hours, tokens, accelerator, GPUs assumed, context, global batch in sequences, source)
PUBLISHED_TOTALS = (
    ("Llama 2 7B", 184_320, 2e12, "a100-80gb", 1024, 4096, 1024,
     "Touvron et al. 2023 (arXiv 2307.09288), Table 2: 184,320 A100-80GB GPU-hours, 2.0T tokens, 4M-token batch"),
    ("Llama 3 8B", 1.3e6, 15e12, "h100", 1024, 8192, 512,
     "Meta Llama 3 model card (meta-llama/llama3 MODEL_CARD.md): 'Llama 3 8B | 1.3M' H100-80GB GPU-hours, 15T+ "
     "tokens (second-hand copy; 1.46M is Llama 3.1 8B's figure); GPUs and batch not published (assumed)"),
    ("Llama 3.1 405B", 30.84e6, 15.6e12, "h100", 16384, 8192, 2048,
     "Meta Llama 3.1 model card: 30.84M H100-80GB GPU-hours; Dubey et al. 2024 (arXiv 2407.21783), "
     "Table 4: 16,384 GPUs, 8,192 context, 16M-token batch, 15.6T tokens"),
)
# billed / predicted GPU-hours of the runs above with this model (tests/test_perf.py recomputes them)
BILLED_RATIOS = {"Llama 2 7B": 1.44, "Llama 3 8B": 2.64, "Llama 3.1 405B": 1.02}
BILLED_RATIO = 1.6  # their geometric mean; range 1.0-2.6
BILLED_NOTE = ("billed time is typically 1.0-2.6x the predicted (geometric mean 1.6: Llama 2 7B 1.44, Llama 3 8B 2.64, "
               "Llama 3.1 405B 1.02; published GPU-hours vs this model, docs/performance.md)")
