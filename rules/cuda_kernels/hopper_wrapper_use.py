"""ROC315 (hopper-wrapper-use): Hopper/Blackwell features reached through CUTLASS/CuTe wrappers
or the CUDA runtime rather than PTX text (``cute::prefetch_tma_descriptor``, ``WGMMA::wgmma``,
``cudaGridDependencySynchronize()``, ``cutlass::arch::Sm90``) in a source hipcc compiles for
AMD."""

from __future__ import annotations

from migrator.api import Impact, Invalid, KernelRule, Parsing, Severity, Valid

from ._shared import api_triggers, construct_spans


class HopperWrapperUse(KernelRule):
    """
    ## What it does
    Flags the lines of a C/C++/CUDA source that hipcc compiles for AMD which use a Hopper or
    Blackwell feature by a library name instead of PTX text: CuTe's TMA copies and
    descriptors (`cute::prefetch_tma_descriptor`, `cute::TmaDescriptor`, `SM90_TMA_LOAD`,
    `cute::tma_store_wait`), warpgroup MMA (`WGMMA::wgmma`, `GMMA`), register reallocation
    (`cutlass::arch::warpgroup_reg_dealloc`), cluster transaction barriers
    (`ClusterTransactionBarrier`), cluster helpers, tensor memory, the `Sm90`/`Sm100` arch
    tags, and the CUDA runtime's programmatic dependent launch
    (`cudaGridDependencySynchronize()`). One finding per file, its other lines listed as sites
    of it; in a file that includes CUTLASS the lines are sites of the CUTLASS finding (ROC330).

    ## Why it breaks on ROCm
    The wrappers compile to the same sm_90/sm_100 instructions as the PTX ROC313 reports (TMA,
    wgmma, setmaxnreg, mbarrier, clusters, tcgen05): AMD GPUs have none of them, HIP has no
    programmatic dependent launch, and hipify maps none of these names. The kernel around them
    is a Hopper or Blackwell kernel.

    ## Example
    ```cpp
    cute::prefetch_tma_descriptor(&tensor_map_a);
    cudaGridDependencySynchronize();
    cutlass::arch::warpgroup_reg_dealloc<40>();
    WGMMA::wgmma(a_desc, b_desc, accum, 1);
    ```

    ## Manual migration
    Keep the Hopper kernel for NVIDIA under `#if !defined(USE_ROCM)` and give AMD another
    kernel (an MFMA kernel, Composable Kernel, hipBLASLt or Triton) selected at build or run
    time; drop the dependent-launch calls on AMD.

    ## References
    - `docs/rocm-facts.md` §7; NVIDIA CUTLASS/CuTe (SM90 TMA, GMMA); CUDA programmatic
      dependent launch
    """

    code = "ROC315"
    # the port is weighed at the kernel's PTX and CUTLASS include; each wrapper call is reading
    impact = Impact(
        aggregate="file", effort_hours=0.5, consequence="crash-import", port=True, blocker=True
    )
    name = "hopper-wrapper-use"
    category = "ptx"
    severity = Severity.ERROR
    message = "Hopper/Blackwell feature through a library wrapper (TMA, wgmma, setmaxnreg, clusters, dependent launch): no AMD counterpart"
    fact = "§7 Hopper and Blackwell features; [NV1][P16]"
    parsing = Parsing(triggers=api_triggers("hopper_wrappers"))
    valid = [
        Valid(
            "using Arch = cutlass::arch::Sm80;\nint cluster_size = 4;\nint tma = 0;\n", path="k.cu"
        ),
        Valid("// cute::prefetch_tma_descriptor(&desc);\n", path="k.cu"),
        Valid(
            "#ifndef USE_ROCM\n__device__ void f() { cudaGridDependencySynchronize(); }\n#endif\n",
            path="k.cu",
        ),
        Valid(
            '__device__ void warpgroup_arrive() { asm volatile("s_barrier" ::: "memory"); }\n',
            path="wgmma.cuh",
        ),
    ]
    invalid = [
        Invalid(
            "__device__ void load(const cute::TmaDescriptor* desc) {\n"
            "  cute::prefetch_tma_descriptor(desc);\n  cudaGridDependencySynchronize();\n"
            "  cutlass::arch::warpgroup_reg_dealloc<40>();\n  WGMMA::wgmma(a, b, acc, 1);\n}\n",
            path="gemm.cuh",
            line=1,
            count=1,
            sites=5,
        ),
        Invalid(
            "using Barrier = cutlass::arch::ClusterTransactionBarrier;\n", path="k.cuh", line=1
        ),
        Invalid("using Copy = cute::SM90_TMA_LOAD_2D;\n", path="k.cuh", line=1),
    ]

    def check(self) -> None:
        for start, end in construct_spans(self.view, "", "hopper_wrappers", calls_only=False):
            self.report_bytes((start, end))
