"""ROC311 (ptx-tensor-core): Flags inline PTX that drives NVIDIA tensor cores (`mma.sync`, `ldmatrix`, `movmatrix`,"""

from __future__ import annotations

from migrator.api import Impact, Invalid, KernelRule, Parsing, Severity, Valid

from ._shared import api_triggers, asm_class, construct_spans

#: The PTX instruction a wrapper's name starts with (by its first eight characters).
_WRAPPED = {"ldmatrix": "ldmatrix", "mma_sync": "mma.sync", "movmatri": "movmatrix"}


class PtxTensorCore(KernelRule):
    """
    ## What it does
    Flags inline PTX that drives NVIDIA tensor cores (`mma.sync`, `ldmatrix`, `movmatrix`,
    `wmma.*`) in a source hipcc compiles for AMD, and calls of functions named after those
    instructions (`smem.ldmatrix_m8n8x4(...)`, `mma::mma_sync_m16n16k16_row_col_f16f16f32(...)`)
    that the file does not define: the tensor-core wrappers of a library (flashinfer, a
    vendored copy) whose PTX sits in a header outside the file, often a git submodule the
    checkout does not hold. A wrapper the file defines itself is reported by the PTX it holds.

    ## Why it breaks on ROCm
    AMD matrix cores are programmed through MFMA (CDNA) or WMMA (RDNA) instructions with other
    shapes and register layouts; no mapping from `mma.sync` fragments exists, and hipify leaves
    the assembly untouched. The kernel's data layout around the instruction is NVIDIA's too.

    ## Example
    ```cpp
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};\n"
        : "=f"(c[0]), "=f"(c[1]), "=f"(c[2]), "=f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]),
          "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
    ```

    ## Manual migration
    Rewrite the tile loop on rocWMMA or Composable Kernel (CK), or on `__builtin_amdgcn_mfma_*`
    intrinsics with AMD's layouts; keep the NVIDIA kernel under `#if !defined(USE_ROCM)`.

    ## References
    - `docs/rocm-facts.md` §7; HIP FAQ (inline assembly), HIP porting guide
    """

    code = "ROC311"
    impact = Impact(
        aggregate="file", effort_hours=40.0, consequence="crash-import", port=True, blocker=True
    )
    name = "ptx-tensor-core"
    category = "ptx"
    severity = Severity.ERROR
    message = "tensor-core PTX (mma.sync, ldmatrix) has no AMD equivalent; the kernel needs an MFMA/WMMA rewrite"
    fact = "§7 tensor-core PTX; [H1][RW1]"
    parsing = Parsing(triggers=("asm", *api_triggers("tensor_core_wrappers")), requires=("(",))
    valid = [
        Valid('__device__ void f() { asm volatile("" ::: "memory"); }\n', path="k.cu"),
        # WMMA's own mma_sync is ROC320's; a declaration of a wrapper is not a use
        Valid("void g() { wmma::mma_sync(c, a, b, c); }\n", path="k.cu"),
        Valid(
            "template <typename T>\n__device__ void ldmatrix_m8n8x4(uint32_t* r, T* p);\n",
            path="mma.cuh",
        ),
        Valid(
            "#ifndef USE_ROCM\n"
            '__device__ void ld(unsigned* r, unsigned a) { asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];" : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(a)); }\n'
            "#endif\n",
            path="k.cuh",
        ),
    ]
    invalid = [
        Invalid(
            '#include "flashinfer/mma.cuh"\n'
            "__global__ void sgmv(float* y, uint32_t* a, uint32_t* b, Smem s, uint32_t o) {\n"
            "  s.ldmatrix_m8n8x4(o, a);\n"
            "  mma::mma_sync_m16n16k16_row_col_f16f16f32<half>(y, a, b);\n}\n",
            path="sgmv.cuh",
            line=3,
            count=1,
            sites=2,
        ),
        Invalid(
            '__device__ void ld(unsigned* r, unsigned a) {\n  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];" : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(a));\n}\n',
            path="k.cuh",
            line=2,
        ),
        Invalid(
            "__device__ void mma(float* c, unsigned* a, unsigned* b) {\n"
            '  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};\\n"\n'
            '      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3]) : "r"(a[0]), "r"(a[1]), "r"(b[0]));\n}\n',
            path="gemm.cu",
            line=2,
        ),
    ]

    def check(self) -> None:
        view = self.view
        source = view.source
        lines: set[int] = set()
        for block in source.asm_blocks():
            if asm_class(block.template) == "tensor_core":
                self.report_bytes((block.start, block.end))
                lines.add(source.line_of(block.start))
        for start, end in construct_spans(view, "", "tensor_core_wrappers", calls_only=False):
            if source.line_of(start) in lines:
                continue  # the line's own PTX is reported
            name = source.text(start, end)
            self.report_bytes(
                (start, end),
                message=f"`{name}` wraps tensor-core PTX ({_WRAPPED.get(name[:8], 'mma.sync')}),"
                " which has no AMD equivalent; the kernel needs an MFMA/WMMA rewrite",
            )
