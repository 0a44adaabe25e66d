"""ROC361 (kernel-compiles-to-nothing-on-amd): a `__global__`/`__device__` function with code
under nvcc and an empty body, or a stub, under hipcc."""

from __future__ import annotations

from migrator.api import Impact, Invalid, KernelRule, Parsing, Severity, Valid
from migrator.api.reach import DIFFERENTIAL_READER, arch_names, empty_on_amd


class KernelCompilesToNothingOnAmd(KernelRule):
    """
    ## What it does
    Reads each `__global__` and `__device__` function twice: as nvcc's device pass sees it for
    the NVIDIA architectures the project builds for (sm_80 and sm_90 unless the build names
    others; `__CUDA_ARCH__` defined) and as hipcc sees it for AMD (`__HIP__`, `__HIPCC__`,
    `__HIP_PLATFORM_AMD__`, `USE_ROCM`, `__HIP_DEVICE_COMPILE__` defined; `__CUDA_ARCH__` not).
    Flags a function whose body holds code under CUDA and none under HIP: what hipcc keeps is
    empty, or only `#pragma message`/`#warning`/`#error`, `static_assert`, `assert(false)`,
    `printf`, `(void)` casts, a trap or a constant `return`. An `#else` counts as an AMD path
    only if it holds code. Sites inside the function (its PTX, its guard) are listed with it.

    ## Why it breaks on ROCm
    The kernel compiles, links and launches on AMD, and does nothing: its output stays zero or
    uninitialised, with no compiler error and no run-time error. A compile check passes it. The
    usual cause is a tensor-core or `cp.async` path under `#if __CUDA_ARCH__ >= 750` whose
    `#else` only prints a message for old NVIDIA GPUs.

    ## Example
    ```cpp
    __global__ void mma_gemm(const half* a, const half* b, float* c) {
    #if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 750
      ... mma.sync PTX ...
    #else
    #pragma message("mma_gemm needs sm_75 or newer")
    #endif
    }
    ```

    ## Manual migration
    Write the AMD path: an `#elif defined(__HIP_PLATFORM_AMD__)` branch with a portable
    implementation (plain CUDA C++ that hipify maps, rocWMMA or MFMA builtins for matrix
    cores), or make the build refuse AMD (`#error` in the `#else`) until one exists, and keep
    the Python side from loading the kernel there.

    ## References
    - `docs/kernels.md` (differential preprocessing); `docs/rocm-facts.md` §7 version macros
    """

    code = "ROC361"
    impact = Impact(
        aggregate="file", effort_hours=16.0, consequence="crash-path", port=True, blocker=True
    )
    name = "kernel-compiles-to-nothing-on-amd"
    category = "preprocessor"
    severity = Severity.ERROR
    message = "this kernel has code for NVIDIA and none for AMD: on AMD it compiles to nothing"
    fact = "§7 version macros; [P1][H2]"
    parsing = Parsing(triggers=("__global__", "__device__"))
    valid = [
        Valid(
            "__global__ void k(float* x) {\n#if __CUDA_ARCH__ >= 800\n  x[0] = fast();\n"
            "#else\n  x[0] = slow();\n#endif\n}\n",
            path="k.cu",
        ),
        Valid(
            "__global__ void k(float* x) {\n#if defined(__CUDA_ARCH__) || defined(USE_ROCM)\n"
            "  x[0] = 1.f;\n#endif\n}\n",
            path="k.cu",
        ),
        Valid(
            "__device__ bool has_bf16() {\n#if __CUDA_ARCH__ >= 800\n  return true;\n#else\n"
            "  return false;\n#endif\n}\n",
            path="k.cuh",
        ),
        Valid(
            "__global__ void k(float* x) {\n#ifdef ENABLE_FAST_PATH\n  x[0] = 1.f;\n#endif\n}\n",
            path="k.cu",
        ),
        Valid(
            "#if __CUDA_ARCH__ >= 800\n__global__ void k(float* x) { x[0] = fast(); }\n#else\n"
            "__global__ void k(float* x) { x[0] = slow(); }\n#endif\n",
            path="k.cu",
        ),
        # async-copy bookkeeping: it orders cp.async copies, reported where they are issued
        Valid(
            "__device__ void commit_group() {\n#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800\n"
            '  asm volatile("cp.async.commit_group;\\n" ::);\n#endif\n}\n'
            "template <int n>\n__device__ void wait_group() {\n#if __CUDA_ARCH__ >= 800\n"
            '  asm volatile("cp.async.wait_group %0;\\n" ::"n"(n));\n#endif\n}\n',
            path="cp_async.cuh",
        ),
    ]
    invalid = [
        Invalid(
            "__global__ void mma_gemm(float* c) {\n"
            "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 750\n"
            '  float d = 0.f;\n  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 '
            '{%0}, {%1}, {%2}, {%0};" : "+f"(d) : "r"(0), "r"(0));\n'
            "  c[threadIdx.x] = d;\n#else\n"
            '#pragma message("mma_gemm needs sm_75 or newer")\n#endif\n}\n',
            path="gemm.cu",
            line=1,
            column=1,
        ),
        Invalid(
            "__device__ float fast_exp2(float v) {\n#if __CUDA_ARCH__ >= 750\n"
            '  float y; asm("ex2.approx.f32 %0, %1;" : "=f"(y) : "f"(v));\n  return y;\n'
            "#else\n  return 0.f;\n#endif\n}\n",
            path="math.cuh",
            line=1,
        ),
        Invalid(
            "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800\n"
            "__global__ void k(float* x) { x[0] = fast(); }\n#else\n"
            '__global__ void k(float* x) { printf("unsupported\\n"); }\n#endif\n',
            path="k.cu",
            line=4,
        ),
        Invalid(
            "__device__ void load(unsigned s, const void* g) {\n#if __CUDA_ARCH__ >= 800\n"
            '  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(s), "l"(g));\n'
            '  asm volatile("cp.async.commit_group;" ::);\n#endif\n}\n',
            path="cp_async.cuh",
            line=1,
        ),
        Invalid(
            "__global__ void copy_async(float* x) {\n#ifndef USE_ROCM\n  x[0] = 1.f;\n#else\n"
            "  assert(false);\n#endif\n}\n",
            path="k.cu",
            line=1,
        ),
    ]

    def check(self) -> None:
        view = self.view
        for empty in empty_on_amd(view.source):
            what = "kernel" if empty.kernel else "device function"
            if empty.guard:
                why = f"`{empty.guard}` is false under hipcc and nothing with code replaces it"
            else:
                why = "what hipcc keeps of it is empty or a stub"
            self.report(
                (view.char(empty.start), view.char(empty.end)),
                message=(
                    f"{what} `{empty.name}` has code for NVIDIA ({arch_names(empty.archs)}) "
                    f"and none for AMD: {why}; on AMD it compiles to nothing ({DIFFERENTIAL_READER})"
                ),
            )
