"""ROC41x: xformers memory-efficient attention and imports, and diffusers' opt-in xformers
attention switched on in code or by a training script flag (category ``xformers``).

One rule per module; the mapping table is read in ``_table.py``, what ROC412 and ROC413 share
is in ``_opt_in.py``.
"""
