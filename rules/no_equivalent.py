"""ROC90x: imports of NVIDIA-only packages that have no ROCm build (TensorRT, PyCUDA,
cuda-python, numba.cuda, DALI). The packages are the ``imports`` section of the
package table (``packages()``)."""

from __future__ import annotations

from typing import Any, ClassVar

import libcst as cst

from migrator.context import PythonContext
from migrator.imports import dotted_name
from migrator.model import Severity
from migrator.rule import Invalid, Valid

from ._gpu_tools_util import IMPORT_GUARDS, ScopeTracking
from ._requirements import packages


def _package_for(module: str) -> dict[str, Any] | None:
    """The table entry whose module list covers ``module`` (itself or a parent)."""
    for entry in packages()["imports"].values():
        for name in entry["modules"]:
            if module == name or module.startswith(name + "."):
                return dict(entry)
    return None


def _is_type_checking(test: cst.BaseExpression) -> bool:
    return dotted_name(test) in {"TYPE_CHECKING", "typing.TYPE_CHECKING"}


def _is_main_check(test: cst.BaseExpression) -> bool:
    return (
        isinstance(test, cst.Comparison)
        and isinstance(test.left, cst.Name)
        and test.left.value == "__name__"
    )


class _NoEquivalentImport(ScopeTracking):
    """Finds imports (and ``numba.cuda`` attribute uses) of packages without a ROCm build and
    reports those whose import is unconditional (``unconditional = True``) or optional."""

    abstract = True
    unconditional: ClassVar[bool]
    #: one package imported several ways in one file is one problem (grouped by package)
    aggregate: ClassVar[str] = "file"

    def __init__(self, ctx: PythonContext) -> None:
        super().__init__(ctx)
        self._type_checking = 0
        self._main_blocks = 0
        self._attribute_reported = False

    def visit_If(self, node: cst.If) -> None:
        super().visit_If(node)
        if _is_type_checking(node.test):
            self._type_checking += 1
        if _is_main_check(node.test):
            self._main_blocks += 1

    def leave_If(self, original_node: cst.If) -> None:
        super().leave_If(original_node)
        if _is_type_checking(original_node.test):
            self._type_checking -= 1
        if _is_main_check(original_node.test):
            self._main_blocks -= 1

    def _is_unconditional(self) -> bool:
        if self.in_function or self.guarded_by(IMPORT_GUARDS):
            return False
        # an `if __name__ == "__main__":` block runs whenever the script does
        return self._if_depth <= self._main_blocks

    def _check(self, node: cst.CSTNode, module: str) -> None:
        if self._type_checking:
            return
        entry = _package_for(module)
        if entry is None:
            return
        unconditional = self._is_unconditional()
        if unconditional != self.unconditional:
            return
        if unconditional:
            message = (
                f"`{module}` ({entry['label']}) has no ROCm build: this import fails on ROCm "
                f"and nothing falls back; port to {entry['alternative']}"
            )
        else:
            message = (
                f"`{module}` ({entry['label']}) has no ROCm build: on ROCm this optional path "
                f"is unavailable; port it to {entry['alternative']}"
            )
        self.report(node, message=message, group=str(entry["label"]))

    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            module = dotted_name(alias.name)
            if module is not None and _package_for(module) is not None:
                self._check(node, module)
                return

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if node.relative or node.module is None:
            return
        module = dotted_name(node.module)
        if module is None:
            return
        if _package_for(module) is not None:
            self._check(node, module)
            return
        if isinstance(node.names, cst.ImportStar):
            return
        for alias in node.names:
            if isinstance(alias.name, cst.Name):
                full = f"{module}.{alias.name.value}"
                if self._from_binding(module, alias.name.value):
                    self._check(node, full)
                    return

    def _from_binding(self, module: str, name: str) -> bool:
        """``from numba import cuda``, ``from nvidia import dali``, ``from cuda import cudart``."""
        if module == "cuda":
            table = packages()["imports"]["cuda-python"]
            return name in table["from_cuda"]
        return _package_for(f"{module}.{name}") is not None

    def visit_Attribute(self, node: cst.Attribute) -> None:
        # ``import numba`` then ``@numba.cuda.jit``: report the first use of the package
        if self._attribute_reported:
            return
        qualified = self.ctx.qualname(node)
        if qualified == "numba.cuda":
            head = node.value
            if isinstance(head, cst.Name) and self.ctx.imports.bindings.get(head.value) == "numba":
                self._attribute_reported = True
                self._check(node, qualified)


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
    parse_scope = "statement"
    name = "no-rocm-equivalent-import"
    category = "no-rocm-equivalent"
    severity = Severity.ERROR
    message = "This package has no ROCm build; the import fails on ROCm"
    fact = "§9 tensorrt, pycuda/cuda-python, numba.cuda, nvidia-dali rows; [R1][K3]"
    triggers = (
        "tensorrt",
        "pycuda",
        "import cuda",
        "from cuda",
        "numba",
        "nvidia.dali",
        "import dali",
    )
    effort_hours = 8.0
    blocker = True
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
    parse_scope = "statement"
    name = "optional-no-rocm-equivalent-import"
    category = "no-rocm-equivalent"
    severity = Severity.WARNING
    message = "This optional package has no ROCm build; its code path is unavailable on ROCm"
    fact = "§9 tensorrt, pycuda/cuda-python, numba.cuda, nvidia-dali rows; [R1][K3]"
    triggers = (
        "tensorrt",
        "pycuda",
        "import cuda",
        "from cuda",
        "numba",
        "nvidia.dali",
        "import dali",
    )
    effort_hours = 4.0
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
