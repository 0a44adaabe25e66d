"""ROC50x: NVIDIA apex fused modules, optimizers, amp and imports (category ``apex``).

One rule per module; what the rules share is in ``_shared.py``.
"""
