"""ROC900 (no-rocm-equivalent-import): flags unconditional imports (module level, not inside
`try: ... except ImportError`, not in a function or an `if`) of packages that exist only for
NVIDIA GPUs."""

from __future__ import annotations

from migrator.api import Impact, Invalid, Severity, Valid

from ._shared import _NoEquivalentImport


class NoRocmEquivalentImport(_NoEquivalentImport):
    """
    ## What it does
    Flags unconditional imports (module level, not inside `try: ... except ImportError`, not
    in a function or an `if`) of packages that exist only for NVIDIA GPUs: `tensorrt`,
    `torch_tensorrt`, `tensorrt_llm`, `pycuda`, cuda-python (`cuda.bindings`, `from cuda
    import cudart`), `numba.cuda` and `nvidia.dali`.

    ## Why it breaks on ROCm
    These packages have no ROCm build, so the import raises `ImportError` (or, for
    `numba.cuda`, every kernel launch fails without a CUDA driver) and the program cannot run
    on an AMD GPU until the code is ported by hand.

    ## Example
    ```python
    import pycuda.driver as cuda
    import tensorrt as trt
    ```

    ## Manual migration
    - TensorRT, Torch-TensorRT: MIGraphX (`torch-migraphx`) or `torch.compile`.
    - PyCUDA, cuda-python: `hip-python` (`hip-python-interop` keeps CUDA-style names).
    - `numba.cuda`: `numba-hip`, Triton kernels or plain torch ops.
    - DALI: AMD rocAL / MIVisionX or CPU data pipelines.
    If the feature is optional, move the import into a `try: ... except ImportError:` with a
    fallback (then ROC901 reports it as a warning instead).

    ## References
    - ROCm/ROCm `docs/compatibility/ml-compatibility/pytorch-compatibility.rst`
    - pypi.org: hip-python, hip-python-interop, numba-hip, torch-migraphx
    """

    code = "ROC900"
    name = "no-rocm-equivalent-import"
    severity = Severity.ERROR
    impact = Impact(consequence="crash-import", port=True, effort_hours=8.0, blocker=True)
    message = "This package has no ROCm build; the import fails on ROCm"
    unconditional = True
    valid = [
        Valid("try:\n    import tensorrt as trt\nexcept ImportError:\n    trt = None\n"),
        Valid("def export():\n    import tensorrt\n    return tensorrt\n"),
        Valid('"""Requires tensorrt and pycuda."""\nimport torch\n'),
        Valid("from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    import tensorrt\n"),
        Valid("import numba\n\n@numba.njit\ndef f(x):\n    return x\n"),
        Valid("from .cuda import kernels\nimport torch.cuda\n"),
    ]
    invalid = [
        Invalid("import pycuda.driver as cuda\n", line=1, column=1),
        Invalid("import tensorrt as trt\n"),
        Invalid("from numba import cuda\n\n@cuda.jit\ndef k(x):\n    pass\n"),
        Invalid("from cuda import cudart\n"),
        Invalid("import cuda.bindings.runtime as rt\n"),
        Invalid("from nvidia.dali import pipeline_def\n"),
        Invalid("import torch_tensorrt\n"),
        Invalid("import numba\n\n@numba.cuda.jit\ndef k(x):\n    pass\n", line=3, column=2),
        Invalid("import sys\n\nif __name__ == '__main__':\n    import pycuda.autoinit\n"),
    ]
