"""ROC85x: ONNX Runtime execution providers that exist only for NVIDIA GPUs.

One rule per module; what the rules share is in ``_shared.py``.
"""
