"""Reading Hugging Face ``config.json`` files into ``arch`` blocks: parsing with clear errors
(``read``), the Pydantic file models (``files``), what is known of transformers' families
(``families``, ``hf_defaults.json``), layer layouts (``layers``) and the reader (``config``).

May import: ``arch``, ``theory`` and the base package ``core``.
"""
