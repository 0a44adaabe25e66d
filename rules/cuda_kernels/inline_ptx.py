"""ROC310 (inline-ptx): Flags inline assembly (`asm`/`asm volatile`/`__asm__`) holding PTX in a C/C++/CUDA source"""

from __future__ import annotations

from migrator.api import Impact, Invalid, KernelRule, Parsing, Severity, Valid

from ._shared import asm_class


class InlinePtx(KernelRule):
    """
    ## What it does
    Flags inline assembly (`asm`/`asm volatile`/`__asm__`) holding PTX in a C/C++/CUDA source
    that hipcc compiles for AMD: not under a `USE_ROCM`/`__HIP_PLATFORM_AMD__` branch or an
    NVIDIA-architecture branch with a portable `#else`. Tensor-core, async-copy and
    Hopper-only PTX have rules of their own (ROC311-ROC313).

    ## Why it breaks on ROCm
    PTX is NVIDIA's virtual ISA. HIP-Clang accepts AMD GCN/CDNA assembly only, and PyTorch's
    hipify leaves `asm` blocks untouched, so the extension fails to compile on ROCm. A branch
    on `__CUDA_ARCH__` with no `#else` is worse: `__CUDA_ARCH__` is never defined under HIP, so
    the kernel compiles to nothing on AMD.

    ## Example
    ```cpp
    __device__ unsigned lane_id() {
        unsigned id;
        asm volatile("mov.u32 %0, %%laneid;" : "=r"(id));
        return id;
    }
    ```

    ## Manual migration
    Replace the PTX with a HIP/CUDA intrinsic hipify maps (`__lane_id()`, `__ffs`, `__popc`,
    `__builtin_amdgcn_*`, `__hip_atomic_*` with a scope) or plain C++, and keep the PTX for
    NVIDIA under `#if !defined(USE_ROCM)`. Mind 64-lane wavefronts where the assembly reads
    lane ids or masks.

    ## References
    - `docs/rocm-facts.md` §7; HIP FAQ (inline assembly), HIP porting guide
    """

    code = "ROC310"
    impact = Impact(
        aggregate="file", effort_hours=8.0, consequence="crash-import", port=True, blocker=True
    )
    name = "inline-ptx"
    category = "ptx"
    severity = Severity.ERROR
    message = "inline PTX assembly does not compile for AMD GPUs; rewrite it with HIP intrinsics"
    fact = "§7 inline PTX; [H1]"
    parsing = Parsing(triggers=("asm",), requires=("(",))
    valid = [
        # host CPU assembly: a debugger breakpoint, a spin-wait hint, a timestamp read
        Valid(
            'static inline void trap_here() { asm volatile("int3"); }\n'
            'static inline void spin() { asm volatile("pause" ::: "memory"); }\n'
            "static inline unsigned long long ticks() { unsigned lo, hi;\n"
            '  asm volatile("rdtsc" : "=a"(lo), "=d"(hi)); return ((unsigned long long)hi << 32) | lo; }\n',
            path="bench.cu",
        ),
        Valid('__device__ void fence() { asm volatile("" ::: "memory"); }\n', path="k.cu"),
        Valid(
            "#ifdef USE_ROCM\n__device__ unsigned lane() { return __lane_id(); }\n#else\n"
            '__device__ unsigned lane() { unsigned id; asm("mov.u32 %0, %%laneid;" : "=r"(id)); return id; }\n'
            "#endif\n",
            path="k.cu",
        ),
        Valid(
            '// asm volatile("mov.u32 %0, %%laneid;");\nconst char* s = "asm(\\"trap;\\")";\n',
            path="k.cu",
        ),
        Valid(
            "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700\n"
            '  asm volatile("red.relaxed.gpu.global.add.f32 [%0], %1;" :: "l"(p), "f"(v));\n'
            "#else\n  atomicAdd(p, v);\n#endif\n",
            path="k.cuh",
        ),
    ]
    invalid = [
        # assembly in a macro body (opaque text to the parser), used by a kernel
        Invalid(
            '#define LANE_ID(v) asm volatile("mov.u32 %0, %%laneid;" : "=r"(v))\n'
            "__global__ void k(unsigned* out) { unsigned id; LANE_ID(id); out[0] = id; }\n",
            path="k.cu",
            line=1,
        ),
        Invalid(
            "__device__ unsigned lane() {\n"
            '  unsigned id; asm volatile("mov.u32 %0, %%laneid;" : "=r"(id));\n'
            "  return id;\n}\n",
            path="k.cu",
            line=2,
            column=16,
        ),
        Invalid(
            "#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800\n"
            '__device__ int f(int a, int b, int c) { int d; asm("lop3.b32 %0, %1, %2, %3, 0x96;" : "=r"(d) : "r"(a), "r"(b), "r"(c)); return d; }\n'
            "#endif\n",
            path="ops.cuh",
            line=2,
        ),
        Invalid(
            "__global__ void k(float* x) {\n#if __CUDA_ARCH__ >= 800\n"
            '  asm volatile("st.global.release.gpu.f32 [%0], %1;" :: "l"(x), "f"(1.f));\n'
            "#endif\n}\n",
            path="k.cu",
            line=3,
        ),
    ]

    def check(self) -> None:
        view = self.view
        for block in view.source.asm_blocks():
            if asm_class(block.template) == "ptx":
                self.report_bytes((block.start, block.end))
