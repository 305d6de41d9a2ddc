"""What a shape costs: training FLOPs, memory per GPU, KV cache and time of a run (``run``), and
those costs as record fields (``fields``).

May import: ``hf``, ``arch``, ``theory`` and the base package ``core``; never the advice built on it.
"""
