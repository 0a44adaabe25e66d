"""ROC21x: running ``nvidia-smi`` (from Python and from shell, Docker, compose and CI files).

The flag mapping nvidia-smi → amd-smi lives in ``rules/data/nvidia_smi.toml``.

One rule per module; what the rules share is in ``_shared.py``.
"""
