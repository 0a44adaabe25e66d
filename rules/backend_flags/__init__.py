"""ROC13x cuDNN flags that mean something else on MIOpen; ROC14x TF32 and reduced-precision
matmul flags that ROCm ignores or gates differently.

One rule per module; what the rules share is in ``_shared.py``.
"""
