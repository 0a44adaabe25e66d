"""ROC15x: SDPA backend selection (deprecated ``sdp_kernel``, cuDNN-only and fused-only choices
that leave ROCm with no kernel).

One rule per module; what the rules share is in ``_shared.py``.
"""
