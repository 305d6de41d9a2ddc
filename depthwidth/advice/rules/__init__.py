"""The empirical depth/width rules: what a rule is (``record``: ``Rule`` and ``Constant``), the
built-in rules with every constant's source (``builtin``), `plan --rules`'s side-by-side table
(``table``), rule files fitted on a user's own sweep (``file``, validated by ``filemodels``), what
a fitted law says (``law``) and the user's fitted rules read back as rules (``user``).
"""
