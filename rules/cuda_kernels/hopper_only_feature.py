"""ROC313 (hopper-only-feature): Hopper/Blackwell-only features (wgmma, TMA, bulk async copies,
mbarrier, thread-block clusters) in a source hipcc compiles for AMD."""

from __future__ import annotations

from migrator.api import Impact, Invalid, KernelRule, Parsing, Severity, Valid

from ._shared import construct_spans


class HopperOnlyFeature(KernelRule):
    """
    ## What it does
    Flags Hopper and Blackwell features in a C/C++/CUDA source that hipcc compiles for AMD:
    inline PTX for `wgmma`, bulk asynchronous copies (`cp.async.bulk`, TMA), `mbarrier`,
    `fence.proxy.async`, `tcgen05` and cluster registers; and the C++ side of the same features
    (`cuTensorMapEncodeTiled`, `CUtensorMap`, `__cluster_dims__`, `this_cluster()`).

    ## Why it breaks on ROCm
    These are sm_90/sm_100 hardware features with no AMD counterpart in HIP: no tensor-memory
    accelerator descriptors, no warpgroup MMA, no thread-block clusters. hipify maps none of
    them. A kernel built on them is an NVIDIA-architecture kernel and must be rewritten for AMD
    (Composable Kernel, rocWMMA or MFMA intrinsics), or kept NVIDIA-only with a portable path.

    ## Example
    ```cpp
    CUtensorMap map;
    cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, ptr, dims, strides,
                           box, elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                           CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                           CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    ```

    ## Manual migration
    Keep the Hopper kernel for NVIDIA under `#if !defined(USE_ROCM)` and give AMD another
    kernel (an Ampere-style one rewritten for MFMA, a CK or Triton kernel) selected at build or
    run time.

    ## References
    - `docs/rocm-facts.md` §7; CUDA PTX ISA (wgmma, cp.async.bulk, mbarrier)
    """

    code = "ROC313"
    impact = Impact(
        aggregate="file", effort_hours=40.0, consequence="crash-import", port=True, blocker=True
    )
    name = "hopper-only-feature"
    category = "ptx"
    severity = Severity.ERROR
    message = (
        "Hopper/Blackwell-only feature (wgmma, TMA, mbarrier, clusters) has no AMD counterpart"
    )
    fact = "§7 Hopper and Blackwell features; [NV1][P16]"
    parsing = Parsing(
        triggers=(
            "asm",
            "cuTensorMap",
            "CUtensorMap",
            "__cluster_dims__",
            "this_cluster",
            "ClusterDimension",
            "NonPortableClusterSize",
        )
    )
    valid = [
        Valid('__device__ void f() { asm volatile("" ::: "memory"); }\n', path="k.cu"),
        Valid("// cuTensorMapEncodeTiled is used on sm90 only\n", path="k.cu"),
        Valid(
            "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900\n"
            '  asm volatile("wgmma.fence.sync.aligned;\\n" ::: "memory");\n'
            "#else\n  portable_mma();\n#endif\n",
            path="k.cuh",
        ),
    ]
    invalid = [
        Invalid(
            '__device__ void fence() {\n  asm volatile("wgmma.fence.sync.aligned;\\n" ::: "memory");\n}\n',
            path="k.cuh",
            line=2,
        ),
        Invalid(
            "void make(void* p) {\n  CUtensorMap map;\n  cuTensorMapEncodeTiled(&map, t, 2, p, d, s, b, e, i, w, l, f);\n}\n",
            path="tma.cpp",
            line=2,
            count=1,
            sites=2,
        ),
        Invalid(
            "__global__ void __cluster_dims__(2, 1, 1) k(float* x) { x[0] = 1.f; }\n",
            path="k.cu",
            line=1,
        ),
    ]

    def check(self) -> None:
        for start, end in construct_spans(self.view, "hopper", "hopper_api", calls_only=False):
            self.report_bytes((start, end))
