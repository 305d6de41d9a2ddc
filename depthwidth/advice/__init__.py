"""What to build: the empirical rules with their sources (the ``rules`` package: built-in rules,
rule files, fitted laws, the side-by-side table; ``published``), the evidence band (``evidence``,
``bandfit``), the planner (``planner``, ``threshold``, ``plan_columns``, ``brief``), the pick and its
reasons (``pick``, ``target``, ``notes``), real models against the theory (``reports``) and the
paper's claims recomputed (``claims``).

May import: ``cost``, ``hf``, ``arch``, ``theory`` and ``core``.
"""
