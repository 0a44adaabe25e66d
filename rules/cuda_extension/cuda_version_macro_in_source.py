"""ROC602 (cuda-version-macro-in-source): flags `__CUDA_ARCH__`, `CUDA_VERSION`, `CUDART_VERSION`
and `__CUDACC_VER_*__` tests inside CUDA source kept in Python strings."""

from __future__ import annotations

import re

import libcst as cst

from migrator.api import Impact, Invalid, Parsing, Severity, Valid

from ._shared import _data, _KernelSource


class CudaVersionMacroInSource(_KernelSource):
    """
    ## What it does
    Flags `__CUDA_ARCH__`, `CUDA_VERSION`, `CUDART_VERSION` and `__CUDACC_VER_*__` tests inside
    CUDA source kept in Python strings.

    ## Why it breaks on ROCm
    When the source is hipified and compiled with hipcc, `__CUDA_ARCH__` is undefined (device
    code is selected with `__HIP_DEVICE_COMPILE__`), and `CUDA_VERSION`-style numbers are
    missing or hold HIP values, so `#if __CUDA_ARCH__ >= 800` / `#if CUDA_VERSION >= 11000`
    silently drops the fast path (or picks the wrong one).

    ## Example
    ```python
    SRC = r'''
    __global__ void k(half* x) {
    #if __CUDA_ARCH__ >= 800
        x[threadIdx.x] = __hmax(x[threadIdx.x], 0);
    #endif
    }'''
    ```

    ## Manual migration
    Add the HIP side explicitly: `#if defined(USE_ROCM) || defined(__HIP_PLATFORM_AMD__)` for
    ROCm paths, `__HIP_DEVICE_COMPILE__` for device-code detection, `__gfx942__`-style macros
    (or `__HIP_ARCH_*` feature macros) for architecture features, and
    `&& !defined(USE_ROCM)` on CUDA-version gates.

    ## References
    - ROCm/HIP `docs/how-to/hip_porting_guide.md`; pytorch `docs/source/notes/hip.rst`
    """

    code = "ROC602"
    name = "cuda-version-macro-in-source"
    category = "cuda-extension"
    severity = Severity.WARNING
    impact = Impact(consequence="crash-path", effort_hours=1.0)
    message = "CUDA arch/version macros in kernel source are undefined or differ under HIP"
    fact = "§7 CUDA_VERSION/__CUDA_ARCH__ row; [P1][H2]"
    #: the macro sits in the string it reports, which is a docstring or not by its place in the
    #: function or class around it
    parsing = Parsing(
        triggers=("__CUDA_ARCH__", "CUDA_VERSION", "CUDART_VERSION", "__CUDACC_VER"),
        scope="definition",
    )
    valid = [
        Valid('SRC = r"""__global__ void k(float* x) { x[threadIdx.x] = 0; }"""\n'),
        Valid('"""Checks __CUDA_ARCH__ >= 800 in the kernels."""\nimport os\n'),
        Valid('v = os.environ.get("CUDA_VERSION")\n'),
    ]
    invalid = [
        Invalid(
            "SRC = r'''\n"
            "__global__ void k(float* x) {\n"
            "#if __CUDA_ARCH__ >= 800\n"
            "    x[threadIdx.x] = 1;\n"
            "#endif\n"
            "}'''\n",
            line=1,
            column=7,
        ),
        Invalid(  # a bare string after the module's first statement is no docstring
            "KERNELS = {}\n"
            "'''\n"
            "__global__ void k(float* x) {\n"
            "#if __CUDA_ARCH__ >= 800\n"
            "    x[threadIdx.x] = 1;\n"
            "#endif\n"
            "}'''\n",
            line=2,
            column=1,
        ),
        Invalid(
            "import cupy\n"
            "k = cupy.RawModule(\n"
            "    code='#if CUDA_VERSION >= 11000\\nextern \"C\" void f() {}\\n#endif')\n"
        ),
    ]

    def check_source(self, node: cst.BaseExpression, text: str) -> None:
        names = _data()["macros"]["names"]
        found = [name for name in names if re.search(rf"\b{re.escape(name)}\b", text)]
        if found:
            listed = ", ".join(f"`{name}`" for name in found)
            self.report(
                node,
                message=(
                    f"{listed} in kernel source: undefined or different under HIP; add "
                    "`__HIP_PLATFORM_AMD__`/`USE_ROCM` branches"
                ),
            )
