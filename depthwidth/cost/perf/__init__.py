"""A training run's time: the step time of one layout (``step``, Calculon's split of model,
system and execution), its collectives (``comm``), the layout search (``layout``), one shape's
costed record (``predict``), the candidates' costs as `plan` and `sweep` rank them
(``modeled``) and calibration from one's own measured step (``calibration``).
"""
