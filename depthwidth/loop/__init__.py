"""The experiment loop: iso-budget sweeps (``sweep``, ``sweep_costs``), config files to train
with (``export``, ``trainformats``), training results in (``results``) and fitting a rule on them
(``fit``).

May import: ``advice``, ``cost``, ``hf``, ``arch``, ``theory`` and the base package ``core``.
"""
