"""ROC51x: bitsandbytes quantization and 8-bit optimizers (category ``bitsandbytes``).

One rule per module; the table is read in ``_table.py``.
"""
