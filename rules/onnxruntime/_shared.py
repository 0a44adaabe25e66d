"""What the ROC850, ROC851 rules share."""

from __future__ import annotations

_NVIDIA_EPS = frozenset({"CUDAExecutionProvider", "TensorrtExecutionProvider"})

_AMD_EPS = frozenset({"MIGraphXExecutionProvider", "ROCMExecutionProvider"})

_MIGRAPHX = "MIGraphXExecutionProvider"

_FACT = "§9 onnxruntime-gpu row; [K4][K3]"
