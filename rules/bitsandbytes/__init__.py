"""ROC51x: bitsandbytes quantization and 8-bit optimizers (category ``bitsandbytes``).

One rule per module; what the rules share is in ``_shared.py``.
"""
