"""ROC360 (branch-compiles-out-on-amd): an `#if` on `__CUDA_ARCH__` or a CUDA library version
whose code hipcc skips, with no branch for AMD in its place."""

from __future__ import annotations

from migrator.api import Impact, Invalid, KernelRule, Parsing, Severity, Valid
from migrator.api.knowledge import cuda_build_macros
from migrator.api.reach import cuda_build_branches, dead_on_amd


class BranchCompilesOutOnAmd(KernelRule):
    """
    ## What it does
    Flags `#if`/`#ifdef` branches holding statements whose condition reads `__CUDA_ARCH__` or
    a CUDA library version (`CUBLAS_VERSION`, `CUDART_VERSION`, `CUDNN_VERSION`,
    `CUDA_VERSION`) and that have no `#else`/`#elif` giving AMD code; and, in a project scan,
    branches on a macro the project's build defines only where it finds CUDA
    (`add_definitions(-DWITH_CUDA)` under a test for `nvcc`, `define_macros` under
    `if CUDA_HOME:`): a ROCm build takes their other branch.

    ## Why it breaks on ROCm
    hip-clang never defines `__CUDA_ARCH__`, ROCm defines none of the CUDA library version
    macros, and hipify renames `CUDA_VERSION` to `TORCH_HIP_VERSION` (a three-digit number). So
    the branch is always false on AMD: the code compiles, but the kernel or function is empty
    there, and a caller gets nothing or an error status, with no compiler message.

    ## Example
    ```cpp
    #if defined(CUBLAS_VERSION) && CUBLAS_VERSION >= 11600
    int gemm_bias_lt(...) { ... cublasLtMatmul(...); return 0; }
    #endif
    ```

    ## Manual migration
    Add the AMD path: `|| defined(USE_ROCM)` where the code is portable after hipify (cuBLASLt
    maps to hipBLASLt), or an `#else` branch with an AMD implementation; test with
    `__HIP_DEVICE_COMPILE__`/`__gfx*__` macros for architecture-specific device code.

    ## References
    - `docs/rocm-facts.md` §7 version macros; HIP porting guide
    """

    code = "ROC360"
    impact = Impact(aggregate="file", effort_hours=2.0, consequence="crash-path")
    name = "branch-compiles-out-on-amd"
    category = "preprocessor"
    severity = Severity.WARNING
    message = "this branch is false on AMD (no __CUDA_ARCH__ or CUDA library version there) and nothing replaces it"
    fact = "§7 version macros; [P1][H2]"
    parsing = Parsing(triggers=("__CUDA_ARCH__", "_VERSION", "#if", "# if"))
    valid = [
        Valid(
            "#if __CUDA_ARCH__ >= 800\n  y = fast(x);\n#else\n  y = slow(x);\n#endif\n", path="k.cu"
        ),
        Valid(
            "#if defined(CUBLAS_VERSION) && CUBLAS_VERSION >= 11000\n#include <cublasLt.h>\n#endif\n",
            path="k.cu",
        ),
        Valid(
            "#if defined(CUBLAS_VERSION) || defined(USE_ROCM)\nint f() { return 0; }\n#endif\n",
            path="k.cu",
        ),
        Valid(
            '#if __CUDA_ARCH__ < 700\n  static_assert(false, "needs sm70");\n#endif\n', path="k.cu"
        ),
        # async-copy bookkeeping: the copies it orders are reported where they are issued
        Valid(
            "__device__ void commit_group() {\n#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800\n"
            '  asm volatile("cp.async.commit_group;\\n" ::);\n#endif\n}\n',
            path="cp_async.cuh",
        ),
    ]
    invalid = [
        # an #else that only reports and returns an error status is no AMD path
        Invalid(
            "int loss(int loc) {\n#if CUDART_VERSION >= 11000\n  return gpu_loss(loc);\n#else\n"
            '  std::cerr << "not compiled with GPU support" << std::endl;\n'
            "  return STATUS_EXECUTION_FAILED;\n#endif\n}\n",
            path="entry.cu",
            line=2,
        ),
        Invalid(
            "#if defined(CUBLAS_VERSION) && CUBLAS_VERSION >= 11600\nint gemm_lt() { return run(); }\n#endif\n",
            path="dense.cu",
            line=1,
        ),
        Invalid(
            "__device__ void cvt(float2 v, __nv_bfloat162* o) {\n#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800\n  *o = __float22bfloat162_rn(v);\n#endif\n}\n",
            path="k.cuh",
            line=2,
        ),
    ]

    def check(self) -> None:
        view = self.view
        for gated in cuda_build_branches(view.source, cuda_build_macros(self.ctx.project)):
            self.report_bytes(
                (gated.directive_start, gated.directive_end),
                message=f"`{gated.directive}` is compiled only with CUDA: the build defines "
                f"`{gated.macro}` only where it finds CUDA ({gated.build}:{gated.line}), so a "
                f"ROCm build compiles the other branch; define `{gated.macro}` in the HIP build",
            )
        for branch in dead_on_amd(view.source):
            message = (
                f"`{branch.directive}` is false on AMD and nothing replaces it: the code "
                "compiles out there"
            )
            if "__CUDACC__" in branch.directive:
                message = (
                    f"`{branch.directive}` is false under hipcc: only CMake builds compile this "
                    "file, no hipify step renames `__CUDACC__`, and hipcc defines `__HIPCC__` "
                    "instead, so AMD gets the branch written for the host compiler (or nothing); "
                    "test `__CUDACC__ || __HIPCC__`"
                )
            self.report_bytes((branch.directive_start, branch.directive_end), message=message)
