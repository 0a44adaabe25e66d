"""ROC340 (cuda-only-header): a CUDA header hipify leaves untranslated, in a source hipcc
compiles for AMD."""

from __future__ import annotations

from migrator.api import Impact, Invalid, KernelRule, Parsing, Problem, Severity, Valid
from migrator.api.knowledge import cuda_header, hipify_tables, rewrites_include

from ._shared import table


class CudaOnlyHeader(KernelRule):
    """
    ## What it does
    Flags `#include` of CUDA headers that PyTorch's hipify has no mapping for: FP8/FP4 types
    (`cuda_fp8.h`), Ampere pipelines (`cuda_pipeline.h`, `<cuda/pipeline>`), `<cuda/barrier>`,
    `cudaTypedefs.h` (TMA driver entry points), cuDNN frontend, NVSHMEM, cuFile; and any other
    CUDA toolkit header (libcu++ `<cuda/std/...>`, `device_launch_parameters.h`,
    `<cooperative_groups/reduce.h>`, `cusolverDn.h`) that hipify's own tables do not rewrite,
    read from `migrator/data/hipify_map.json` (generated from the installed torch's tables by
    `scripts/gen_hipify_map.py`). A project's own header of the same name is not CUDA's.

    ## Why it breaks on ROCm
    On ROCm, `cpp_extension` hipifies the sources and compiles them with hipcc; a header
    hipify does not rename is looked up as it is and is not found (ROCm ships no `cuda_*.h`).
    Some have a HIP twin to include instead (`cuda_fp8.h` → `hip/hip_fp8.h`, whose FP8 types are
    the FNUZ variants on MI300); the others name features AMD GPUs do not have.

    ## Example
    ```cpp
    #include <cuda_fp8.h>
    #include <cuda_pipeline.h>
    ```

    ## Manual migration
    Include the HIP twin under `#if defined(USE_ROCM)` where the message names one; otherwise
    keep the code that needs the header NVIDIA-only and give AMD another path.

    ## References
    - `docs/rocm-facts.md` §7; PyTorch `torch/utils/hipify/cuda_to_hip_mappings.py`
    """

    code = "ROC340"
    name = "cuda-only-header"
    category = "cuda-header"
    severity = Severity.ERROR
    message = "CUDA header with no hipify mapping: the ROCm build cannot find it"
    fact = "§7 CUDA-only headers; [P16][H4]"
    parsing = Parsing(triggers=("#include", "# include"))
    impact = Impact(effort_hours=4.0, consequence="crash-import")
    valid = [
        Valid(
            "#include <cuda_fp16.h>\n#include <cuda_runtime.h>\n#include <cub/cub.cuh>\n",
            path="k.cu",
        ),
        Valid(
            "#ifdef USE_ROCM\n#include <hip/hip_fp8.h>\n#else\n#include <cuda_fp8.h>\n#endif\n",
            path="k.cu",
        ),
        Valid("#include <mma.h>\n", path="k.cu"),
        Valid(
            '#include <cuda_bf16.h>\n#include <cusparse.h>\n#include <curand_kernel.h>\n#include "my_cuda_utils.h"\n',
            path="k.cu",
        ),
    ]
    invalid = [
        Invalid("#include <cuda_fp8.h>\n", path="k.cu", line=1),
        Invalid(
            '#include <cuda_runtime.h>\n#include <cuda/std/cstdint>\n#include "device_launch_parameters.h"\n'
            "#include <cooperative_groups.h>\n#include <cooperative_groups/reduce.h>\n",
            path="k.cuh",
            line=2,
            count=3,
        ),
        Invalid("#include <cuda_runtime.h>\n#include <cuda/pipeline>\n", path="k.cuh", line=2),
    ]

    def check(self) -> None:
        headers = table()["headers"]
        facts = self.ctx.project
        own = frozenset(facts.cuda_headers) if facts is not None else frozenset()
        view = self.view
        for include in view.source.includes():
            entry = headers.get(include.header)
            if entry is None:
                # not in the hand list: a toolkit header hipify's own tables do not rewrite
                if (
                    cuda_header(include.header)
                    and include.header not in own
                    and not rewrites_include(include.header, include.system)
                ):
                    torch = hipify_tables().provenance.get("torch", "?")
                    self.report_bytes(
                        (include.start, include.end),
                        message=f"`{include.header}` is a CUDA header PyTorch's hipify does not "
                        f"map (its tables in torch {torch}): the ROCm build cannot find it",
                    )
                continue
            if entry["class"] == "mma":
                continue
            twin = entry["twin"]
            if twin:
                message = (
                    f"`{include.header}` has no hipify mapping; include `{twin}` under "
                    "`#if defined(USE_ROCM)` (its types differ on MI300: FNUZ FP8)"
                )
                self.report(
                    (view.char(include.start), view.char(include.end)),
                    message=message,
                    problem=Problem(severity=Severity.WARNING),
                )
            else:
                self.report_bytes(
                    (include.start, include.end),
                    message=f"`{include.header}` has no HIP counterpart; hipify leaves it and the ROCm build cannot find it",
                )
