"""ROC901 (optional-no-rocm-equivalent-import): flags optional imports of NVIDIA-only packages
(`tensorrt`, `torch_tensorrt`, `tensorrt_llm`, `pycuda`, cuda-python, `numba.cuda`,
`nvidia.dali`)."""

from __future__ import annotations

from migrator.api import Impact, Invalid, Severity, Valid

from ._shared import _NoEquivalentImport


class OptionalNoRocmEquivalentImport(_NoEquivalentImport):
    """
    ## What it does
    Flags optional imports of NVIDIA-only packages (`tensorrt`, `torch_tensorrt`,
    `tensorrt_llm`, `pycuda`, cuda-python, `numba.cuda`, `nvidia.dali`): inside a function or
    under an `if`. An import in `try: ... except ImportError:` whose handler falls back (does
    not raise) is a portable fallback and is not reported (`migrate scan --show-guarded`).

    ## Why it breaks on ROCm
    The package has no ROCm build, so on ROCm the feature behind this import is unavailable
    and the fallback runs (typically a slower path, or an error when the feature is asked
    for). The program still starts.

    ## Example
    ```python
    def build_engine(onnx_path):
        import tensorrt as trt
    ```

    ## Manual migration
    Port the accelerated path to the ROCm alternative named in the finding (MIGraphX /
    `torch-migraphx`, `hip-python`, `numba-hip`, rocAL), or accept the fallback on ROCm.

    ## References
    - ROCm/ROCm `docs/compatibility/ml-compatibility/pytorch-compatibility.rst`
    """

    code = "ROC901"
    name = "optional-no-rocm-equivalent-import"
    severity = Severity.WARNING
    impact = Impact(consequence="performance", effort_hours=4.0)
    message = "This optional package has no ROCm build; its code path is unavailable on ROCm"
    unconditional = False
    valid = [
        Valid("import tensorrt\n"),
        Valid("try:\n    import tensorrt_fake\nexcept ImportError:\n    pass\n"),
        Valid("from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    import tensorrt\n"),
        Valid("def f():\n    import torch.cuda\n"),
        Valid("try:\n    import tensorrt as trt\nexcept ImportError:\n    trt = None\n"),
        Valid(
            "try:\n    from numba import cuda\nexcept (ImportError, OSError):\n    cuda = None\n"
        ),
    ]
    invalid = [
        Invalid(
            "def build():\n    from torch_tensorrt import compile\n    return compile\n",
            line=2,
            column=5,
        ),
        Invalid("if use_dali:\n    from nvidia import dali\n"),
    ]
