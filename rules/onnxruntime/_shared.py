"""What ROC850 and ROC851 share: the NVIDIA and AMD execution provider names and the fact."""

from __future__ import annotations

_NVIDIA_EPS = frozenset({"CUDAExecutionProvider", "TensorrtExecutionProvider"})

_AMD_EPS = frozenset({"MIGraphXExecutionProvider", "ROCMExecutionProvider"})

_MIGRAPHX = "MIGraphXExecutionProvider"

_FACT = "§9 onnxruntime-gpu row; [K4][K3]"
