"""ROC311 (ptx-tensor-core): Flags inline PTX that drives NVIDIA tensor cores (`mma.sync`, `ldmatrix`, `movmatrix`,"""

from __future__ import annotations

from migrator.api import Invalid, KernelRule, Severity, Valid

from ._shared import asm_class


class PtxTensorCore(KernelRule):
    """
    ## What it does
    Flags inline PTX that drives NVIDIA tensor cores (`mma.sync`, `ldmatrix`, `movmatrix`,
    `wmma.*`) in a source hipcc compiles for AMD.

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
    aggregate = "file"  # one problem per kernel file: its sites are listed with it
    name = "ptx-tensor-core"
    category = "ptx"
    severity = Severity.ERROR
    message = "tensor-core PTX (mma.sync, ldmatrix) has no AMD equivalent; the kernel needs an MFMA/WMMA rewrite"
    fact = "§7 tensor-core PTX; [H1][RW1]"
    triggers = ("asm",)
    requires = ("(",)
    effort_hours = 40.0
    consequence = "crash-import"
    port = True
    blocker = True
    valid = [
        Valid('__device__ void f() { asm volatile("" ::: "memory"); }\n', path="k.cu"),
        Valid(
            "#ifndef USE_ROCM\n"
            '__device__ void ld(unsigned* r, unsigned a) { asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];" : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(a)); }\n'
            "#endif\n",
            path="k.cuh",
        ),
    ]
    invalid = [
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
        for block in view.source.asm_blocks():
            if asm_class(block.template) == "tensor_core":
                self.report_bytes((block.start, block.end))
