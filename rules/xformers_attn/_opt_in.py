"""What ROC412 and ROC413 (xformers attention switched on in code or by a flag) share."""

from __future__ import annotations

_FACT = "§4d xformers wheels; [X3]"

_MESSAGE = (
    "xformers attention switched on: PyPI xformers wheels are CUDA builds and its ROCm wheels "
    "are experimental (own index); diffusers raises without xformers and uses torch SDPA "
    "(AOTriton kernels on ROCm) when this is left off"
)
