"""What every layer uses and is not the paper's mathematics: the error types (``errors``), the
frozen-record decorator (``frozen``), the scalar/array switch that lets a formula written once
take plain numbers or NumPy arrays (``num``), budget parsing (``budgets``), the one bounded file
reader (``userfile``), all-or-nothing writes (``staging``) and typed warnings and notes
(``messages``). Imports nothing of depthwidth outside itself.
"""
