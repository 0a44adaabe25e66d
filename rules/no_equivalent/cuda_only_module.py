"""ROC902: a module written on a CUDA-only kernel toolkit (the CuTe DSL's ``cutlass``,
``cuda.bindings``, PyCUDA, TensorRT) never runs on a ROCm build. The engine
(``migrator.reach.cuda_only``) guards the module's other findings and those of the tests and
component modules that import it, and merges these findings per folder."""

from __future__ import annotations

import libcst as cst

from migrator.api import Impact, Invalid, Parsing, PythonRule, Severity, Valid
from migrator.api.reach import CUDA_ONLY_PROBLEM, toolkit_of, toolkits
from migrator.api.syntax import dotted_name


def _imported(small: cst.BaseSmallStatement) -> str | None:
    """The toolkit module an import statement names, else None."""
    if isinstance(small, cst.Import):
        for alias in small.names:
            name = dotted_name(alias.name)
            if name is not None and toolkit_of(name):
                return name
    elif isinstance(small, cst.ImportFrom) and not small.relative and small.module is not None:
        module = dotted_name(small.module)
        if module is None:
            return None
        if toolkit_of(module):
            return module
        if not isinstance(small.names, cst.ImportStar):
            for alias in small.names:
                full = f"{module}.{alias.name.value}" if isinstance(alias.name, cst.Name) else ""
                if full and toolkit_of(full):
                    return full
    return None


class CudaOnlyModule(PythonRule):
    """
    ## What it does
    Flags a module that imports a CUDA-only kernel toolkit at top level (not inside `try`,
    `if` or a function): NVIDIA's CUTLASS CuTe DSL (`cutlass`), cuTile Python (`cuda.tile`),
    cuda-python (`cuda.bindings`, `cuda.core`, `from cuda import cudart`), PyCUDA, TensorRT or
    MS-AMP (`msamp`, an FP8 library built on CUDA kernels). One finding per module, at the
    first such import; the modules of one folder are one finding (the others are related
    sites).

    ## Why it breaks on ROCm
    These toolkits exist only for NVIDIA GPUs: the module's kernels are written for them, so
    the module never runs on a ROCm build. Its other findings (capability gates, FP8 dtypes,
    warp sizes) are moot and are hidden (`migrate scan --show-guarded` shows them, marked), as
    are those of the tests and benchmarks that import it at top level, and of the modules of a
    folder written mostly on the toolkit. When the project already branches on ROCm builds
    elsewhere, the module is most likely NVIDIA-only by design and the finding is `info`
    (otherwise an `error`: running or importing the module fails on ROCm). One such import
    reported by ROC900 (cuda-python, PyCUDA, TensorRT) is part of this finding.

    ## Example
    ```python
    import cutlass
    import cutlass.cute as cute
    ```

    ## Manual migration
    Keep the module NVIDIA-only and import it only where an NVIDIA GPU is present (an import
    guard or a vendor branch), with a portable path (Triton, torch ops) on ROCm; or port the
    kernels (Triton, `hip-python` for cuda-python, MIGraphX for TensorRT).

    ## References
    - NVIDIA CUTLASS DSL quick start (docs.nvidia.com/cutlass): the `nvidia-cutlass-dsl` wheel
      needs the NVIDIA driver of its CUDA toolkit
    - NVIDIA/cuda-python: Python access to the CUDA platform
    - pypi.org/project/cuda-tile: cuTile Python, a language for NVIDIA GPUs (Tile IR, NVIDIA
      driver r580 or later)
    """

    code = "ROC902"
    # its findings are import statements
    parsing = Parsing(
        scope="statement",
        triggers=("cutlass", "import cuda", "from cuda", "pycuda", "tensorrt", "msamp"),
        statement_requires=("import",),
    )
    name = "cuda-only-module"
    category = "no-rocm-equivalent"
    severity = Severity.ERROR
    #: The engine (``migrator.reach.cuda_only``) merges these findings per folder by this key.
    impact = Impact(
        consequence="crash-path", effort_hours=8.0, blocker=True, problem=CUDA_ONLY_PROBLEM
    )
    message = "This module is written on a CUDA-only kernel toolkit and never runs on ROCm"
    fact = "§9 cutlass, cutile, pycuda/cuda-python, tensorrt, ms-amp rows; [K3][K6][K7]"
    valid = [
        Valid("try:\n    import cutlass\nexcept ImportError:\n    cutlass = None\n"),
        Valid("def compile_kernel():\n    import cutlass.cute as cute\n    return cute\n"),
        Valid('"""Example:\nimport cutlass\n"""\nimport torch\n'),
        Valid("import torch\n\nif torch.version.hip is None:\n    import cutlass\n"),
        Valid("from .cuda import kernels\nimport torch.cuda\n"),
        Valid("import numba\nfrom numba import cuda\n"),
    ]
    invalid = [
        Invalid("import torch\nimport cutlass\nimport cutlass.cute as cute\n", line=2, column=1),
        Invalid("from cutlass.cute.runtime import from_dlpack\n", count=1),
        Invalid("import cuda.bindings.driver as cuda\n"),
        Invalid("from cuda import cudart\n"),
        Invalid("import tensorrt as trt\n"),
        Invalid("import torch\nimport msamp\n", line=2),
        Invalid("import cuda.tile as ct\nimport torch\n", line=1),
    ]

    def visit_Module(self, node: cst.Module) -> None:
        if not toolkits():
            return
        for statement in node.body:
            if not isinstance(statement, cst.SimpleStatementLine):
                continue
            for small in statement.body:
                module = _imported(small)
                if module is None:
                    continue
                label, alternative = toolkits()[toolkit_of(module) or module]
                self.report(
                    statement,
                    message=(
                        f"this module imports `{module}` ({label}), which has no ROCm build: "
                        "the module never runs on ROCm; keep it NVIDIA-only behind an import "
                        f"guard with a portable path, or port it to {alternative}"
                    ),
                )
                return
