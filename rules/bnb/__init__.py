"""ROC51x: bitsandbytes quantization and 8-bit optimizers (category ``bitsandbytes``).

One rule per module (the package is named for the import alias ``bnb``); the table is read in ``_table.py``.
"""
