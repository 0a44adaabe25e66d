"""ROC370 (unmapped-cuda-name): a CUDA runtime, driver or library name that PyTorch's hipify
does not map (``CUBLASLT_REDUCTION_SCHEME_NONE``, ``cudaGraphConditionalHandle``), in a source
hipcc compiles for AMD, read from hipify's own tables (``migrator/data/hipify_map.json``)."""

from __future__ import annotations

from typing import Any

from migrator.api import Impact, Invalid, KernelRule, Parsing, Problem, Severity, Valid
from migrator.api.knowledge import (
    cuda_names_in,
    declared_unmapped,
    hipify_tables,
    unmapped_cuda_name,
    unsupported_mapping,
)

from ._shared import table

#: Token types of a name used in code (not a field of the project's own struct).
_NAMES = frozenset({"identifier", "type_identifier"})


def _in_directives(source: Any) -> list[tuple[int, int]]:
    """Byte ranges of preprocessor conditions (``#if CUDART_VERSION >= 11000``, ``#ifdef
    CUBLAS_V2``): a name tested there is read as the preprocessor reads it, not compiled."""
    spans: list[tuple[int, int]] = []
    for node in source.nodes("preproc_if", "preproc_elif", "preproc_ifdef", "preproc_elifdef"):
        part = node.child_by_field_name("condition") or node.child_by_field_name("name")
        if part is not None:
            spans.append((node.start_byte, part.end_byte))
    return spans


def _covered_elsewhere() -> frozenset[str]:
    """Names another kernel rule reports (Hopper features, Ampere pipelines, WMMA)."""
    data = table()
    names = {*data["hopper_api"]["names"], *data["hopper_wrappers"]["names"]}
    names |= set(data["async_copy_api"]["names"])
    return frozenset(names)


class UnmappedCudaName(KernelRule):
    """
    ## What it does
    Flags each CUDA runtime, driver or library name (a function, type, enum or constant:
    `cudaX`, `cuX`, `CUx`, `CU_X`, `CUDA_X`, `CUDART_X`, `cublasX`/`CUBLAS_X`, cuBLASLt, cuSPARSE,
    cuSOLVER, cuFFT, cuRAND, cuDNN, NVRTC, `__nv_x`) that PyTorch's hipify does not map, in a
    source hipcc compiles for AMD, once per name and file, its further uses listed as sites.
    What hipify maps is read from its own tables, generated into
    `migrator/data/hipify_map.json` with the torch version they come from
    (`scripts/gen_hipify_map.py`). Names the project declares itself, and macros and constants
    torch's headers define (`CUDA_KERNEL_LOOP`, `CUDA_NUM_THREADS`), are not CUDA's.

    ## Why it breaks on ROCm
    On ROCm, `cpp_extension` hipifies the sources and hipcc compiles the result: a CUDA name
    hipify does not rename stays as it is, and no ROCm header declares it, so the extension
    does not build. Most are newer or NVIDIA-only API (a cuBLASLt preference attribute, a
    CUDA-graph conditional node, a driver call); some have a HIP counterpart under another
    name, some none.

    ## Example
    ```cpp
    uint32_t mask = CUBLASLT_REDUCTION_SCHEME_NONE | CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK,
                                         &mask, sizeof(mask));
    ```

    ## Manual migration
    Put the call under `#if !defined(USE_ROCM)` and give AMD the HIP counterpart (hipBLASLt,
    HIP runtime) where one exists, or drop the setting on AMD.

    ## References
    - `docs/rocm-facts.md` §7; PyTorch `torch/utils/hipify/cuda_to_hip_mappings.py`
    """

    code = "ROC370"
    impact = Impact(aggregate="file", effort_hours=1.0, consequence="crash-import")
    name = "unmapped-cuda-name"
    category = "cuda-api"
    severity = Severity.ERROR
    message = "CUDA name with no hipify mapping: the hipified source does not compile on ROCm"
    fact = "§7 CUDA-only headers; [P16][H4]"
    parsing = Parsing(triggers=("cu", "CU", "__nv_", "nvrtc", "NVRTC"))
    valid = [
        Valid(
            "void f(cudaStream_t s) {\n  cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_TRANSA, &t, 4);\n"
            "  cudaMemcpyAsync(a, b, n, cudaMemcpyDeviceToDevice, s);\n}\n",
            path="k.cu",
        ),
        Valid(
            "#define CUDA_CHECK(x) do { if ((x) != cudaSuccess) abort(); } while (0)\n"
            "void f() { CUDA_CHECK(cudaDeviceSynchronize()); }\n",
            path="k.cu",
        ),
        Valid(
            "#if CUDART_VERSION >= 12000\nvoid g();\n#endif\n"
            "#ifndef USE_ROCM\nint m = CUBLASLT_REDUCTION_SCHEME_NONE;\n#endif\n",
            path="k.cu",
        ),
        Valid(
            "__global__ void k(int n) { CUDA_KERNEL_LOOP(i, n) {} }\n"
            "int threads = at::cuda::detail::CUDA_NUM_THREADS;\n",
            path="k.cu",
        ),
        Valid('// CUBLASLT_REDUCTION_SCHEME_NONE\nconst char* s = "cudaFooBar";\n', path="k.cu"),
    ]
    invalid = [
        Invalid(
            "void f() {\n"
            "  uint32_t m = CUBLASLT_REDUCTION_SCHEME_NONE | CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;\n"
            "  set(p, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &m);\n"
            "  uint32_t again = CUBLASLT_REDUCTION_SCHEME_NONE;\n}\n",
            path="cublaslt.hpp",
            line=2,
            count=3,
            sites=4,
        ),
        Invalid(
            "__global__ void k() { cudaGridDependencySynchronize(); cudaFooBarNoSuchApi(); }\n",
            path="k.cu",
            line=1,
            count=1,
        ),
    ]

    def check(self) -> None:
        view = self.view
        source = view.source
        # the names in the file's bytes first: most files use only names hipify maps, and
        # their tokens need not be listed
        if not any(unmapped_cuda_name(name) for name in cuda_names_in(source.data)):
            return
        candidates = [
            token
            for token in source.tokens()
            if token.type in _NAMES and unmapped_cuda_name(token.text)
        ]
        if not candidates:
            return
        facts = self.ctx.project
        # a scan reads the project's declarations once (``ProjectFacts.cuda_names``); a file
        # analysed on its own reads its own
        own = set(facts.cuda_names) if facts is not None else declared_unmapped(source.data)
        own |= _covered_elsewhere()
        directives = _in_directives(source)
        torch = hipify_tables().provenance.get("torch", "?")
        for token in candidates:
            if token.text in own or any(a <= token.start < b for a, b in directives):
                continue
            target = unsupported_mapping(token.text)
            if target is not None:
                message = (
                    f"`{token.text}`: hipify maps it to `{target}`, which its tables mark "
                    f"unsupported on HIP (torch {torch})"
                )
            else:
                message = (
                    f"`{token.text}` has no hipify mapping (PyTorch {torch}'s tables): the "
                    "hipified source does not compile on ROCm; keep it under "
                    "`#if !defined(USE_ROCM)` with a HIP path, or drop it on AMD"
                )
            self.report_bytes(
                (token.start, token.end), message=message, problem=Problem(group=token.text)
            )
