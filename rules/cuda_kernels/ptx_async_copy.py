"""ROC312 (ptx-async-copy): Flags Ampere's asynchronous copy PTX (`cp.async`, `cp.async.commit_group`,"""

from __future__ import annotations

from migrator.api import Impact, Invalid, KernelRule, Parsing, Severity, Valid

from ._shared import construct_spans


class PtxAsyncCopy(KernelRule):
    """
    ## What it does
    Flags Ampere's asynchronous copy in a source hipcc compiles for AMD: the PTX (`cp.async`,
    `cp.async.commit_group`, `cp.async.wait_group`) and its C++ wrappers
    (`__pipeline_memcpy_async`, `__pipeline_commit`, `__pipeline_wait_prior`,
    `cuda::memcpy_async`).

    ## Why it breaks on ROCm
    `cp.async` copies global memory to shared memory without registers, an sm_80 PTX feature.
    HIP has no such instruction or builtin and hipify leaves the assembly as it is, so the
    kernel does not compile for AMD; its multi-stage pipeline (commit and wait groups) has to
    be restructured.

    ## Example
    ```cpp
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" :: "r"(smem), "l"(gmem));
    asm volatile("cp.async.commit_group;\n" ::);
    ```

    ## Manual migration
    Load through registers into LDS (`__shared__`) with `__syncthreads()` between stages, or
    use the buffer-load-to-LDS paths CK uses on CDNA; keep the PTX for NVIDIA under
    `#if !defined(USE_ROCM)`.

    ## References
    - `docs/rocm-facts.md` §7; HIP FAQ (inline assembly), HIP porting guide
    """

    code = "ROC312"
    impact = Impact(
        aggregate="file", effort_hours=16.0, consequence="crash-import", port=True, blocker=True
    )
    name = "ptx-async-copy"
    category = "ptx"
    severity = Severity.ERROR
    message = "Ampere cp.async PTX has no AMD equivalent; stage the copy through registers or use a HIP pipeline"
    fact = "§7 cp.async; [H1][NV1]"
    parsing = Parsing(triggers=("asm", "__pipeline_", "memcpy_async"), requires=("(",))
    valid = [
        Valid('__device__ void f() { asm volatile("" ::: "memory"); }\n', path="k.cu"),
        Valid(
            "#if defined(USE_ROCM)\n  s[i] = g[i];\n#else\n"
            '  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" :: "r"(a), "l"(g));\n'
            "#endif\n",
            path="k.cuh",
        ),
        # bookkeeping only under an architecture guard: nothing to commit or wait for on AMD
        Valid(
            "__device__ void commit_group() {\n#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800\n"
            '  asm volatile("cp.async.commit_group;\\n" ::);\n#endif\n}\n',
            path="cp_async.cuh",
        ),
    ]
    invalid = [
        Invalid(
            '__device__ void cp(unsigned s, const void* g) {\n  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\\n" :: "r"(s), "l"(g));\n}\n',
            path="k.cuh",
            line=2,
        ),
        Invalid(
            "__device__ void load(unsigned s, const void* g) {\n#if __CUDA_ARCH__ >= 800\n"
            '  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(s), "l"(g));\n'
            "#endif\n}\n",
            path="cp_async.cuh",
            line=3,
        ),
        Invalid(
            '__device__ void wait() { asm volatile("cp.async.wait_group 0;\\n" ::); }\n',
            path="k.cu",
            line=1,
        ),
        Invalid(
            "#include <cuda_pipeline_primitives.h>\n__device__ void load(float* s, const float* g) {\n"
            "  __pipeline_memcpy_async(s, g, sizeof(float));\n  __pipeline_commit();\n"
            "  __pipeline_wait_prior(0);\n}\n",
            path="k.cu",
            line=3,
            count=1,
            sites=3,
        ),
    ]

    def check(self) -> None:
        for start, end in construct_spans(
            self.view, "async_copy", "async_copy_api", calls_only=True
        ):
            self.report_bytes((start, end))
