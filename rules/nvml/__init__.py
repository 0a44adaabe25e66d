"""ROC20x: NVML telemetry (``pynvml`` / ``nvidia-ml-py``, ``py3nvml``, ``nvidia_smi``) on ROCm.

The mapping NVML → torch.cuda / amdsmi lives in ``rules/data/nvml.toml``.

One rule per module; what the rules share is in ``_shared.py``.
"""
