"""ROC142-ROC143: transformers' `tf32` training argument, which stops training at start-up on
ROCm (category ``tf32``).

One rule per module; what the rules share is in ``_shared.py``.
"""
