"""ROC12x: OCP FP8 dtypes and their 448 maximum on MI300 (gfx942 implements FNUZ FP8 only).

One rule per module; what the rules share is in ``_shared.py``.
"""
