"""What to build: the empirical rules with their sources (``rules``, ``published``, user rule
files in ``rulefile``/``user_rules``), the evidence band (``evidence``), the planner
(``planner``, ``threshold``, ``plan_columns``, ``brief``), the pick and its reasons (``pick``, ``notes``), every rule
side by side (``rule_table``), real models against the theory (``reports``) and the paper's
claims recomputed (``claims``).

May import: ``cost``, ``hf``, ``arch``, ``theory`` and the base modules.
"""
