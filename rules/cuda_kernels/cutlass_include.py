"""ROC330 (cutlass-include): CUTLASS or CuTe headers in a source hipcc compiles for AMD."""

from __future__ import annotations

from migrator.api import Impact, Invalid, KernelRule, Parsing, Severity, Valid

from ._shared import table


class CutlassInclude(KernelRule):
    """
    ## What it does
    Flags `#include <cutlass/...>` and `#include <cute/...>` in a C/C++/CUDA source that hipcc
    compiles for AMD: one finding per project, at its first include, with every other include
    listed as a site of it.

    ## Why it breaks on ROCm
    CUTLASS and CuTe are NVIDIA's template libraries for tensor-core GEMM and attention
    kernels, written on PTX, `mma.sync`, `ldmatrix`, `cp.async` and Hopper's TMA and wgmma.
    They have no ROCm port and hipify does not translate them; a kernel built on them has to be
    rewritten, usually on AMD's Composable Kernel (CK), or replaced by a library call
    (hipBLASLt, a CK or Triton kernel).

    ## Example
    ```cpp
    #include <cute/tensor.hpp>
    #include "cutlass/gemm/device/gemm.h"
    ```

    ## Manual migration
    Keep the CUTLASS kernel for NVIDIA under `#if !defined(USE_ROCM)` (or in sources only the
    CUDA build compiles) and give AMD a CK, hipBLASLt or Triton path.

    ## References
    - `docs/rocm-facts.md` §7; NVIDIA CUTLASS; ROCm Composable Kernel
    """

    code = "ROC330"
    # a project built on CUTLASS is one port (its includes are the sites), not one per header
    impact = Impact(
        aggregate="project", effort_hours=40.0, consequence="crash-import", port=True, blocker=True
    )
    name = "cutlass-include"
    category = "cutlass"
    severity = Severity.ERROR
    message = "CUTLASS/CuTe is NVIDIA-only (no ROCm port); the kernel needs a CK, hipBLASLt or Triton path"
    fact = "§7 CUTLASS and CuTe; [CU1][CK1]"
    parsing = Parsing(triggers=("cutlass/", "cute/"), requires=("include",))
    valid = [
        Valid("#include <ck/ck.hpp>\n", path="k.cu"),
        Valid('// #include "cutlass/gemm.h"\nconst char* p = "cute/tensor.hpp";\n', path="k.cu"),
        Valid("#if !defined(USE_ROCM)\n#include <cute/tensor.hpp>\n#endif\n", path="k.cu"),
    ]
    invalid = [
        Invalid(
            "#include <cute/tensor.hpp>\n#include <cute/algorithm/copy.hpp>\n",
            path="k.cuh",
            line=1,
            count=1,
            sites=2,
        ),
        Invalid('#pragma once\n#include "cutlass/numeric_types.h"\n', path="k.h", line=2),
    ]

    def check(self) -> None:
        prefixes = tuple(table()["libraries"]["prefixes"])
        view = self.view
        for include in view.source.includes():
            if include.header.startswith(prefixes):
                self.report_bytes((include.start, include.end))
