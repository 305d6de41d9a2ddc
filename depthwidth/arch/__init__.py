"""What a network is: real blocks and their one counter of parameters, FLOPs and KV cache
(``blocks``), the named block families and their sizes (``presets``), published architectures
(``catalog``), accelerators and tensor-parallel validity (``hardware``), spending a budget with a block (``spending``), snapping
to valid shapes (``snapping``) and the one shape record (``record``).

May import: ``theory`` and the base package ``core``.
"""
