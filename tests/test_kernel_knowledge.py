"""What the kernel rules know beyond the constructs they match by shape (issue #48): the
preprocessor's alternative spellings of operators, PyTorch's hipify tables as data, library
uses past the ``#include`` line, and the warp size written as a multiplier. Scans of small real
projects through the command line, and the preprocessor on real parses."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from migrator.kernels import preproc
from migrator.kernels.source import parse
from tests.conftest import ROOT, write


def _rows(report: dict) -> list[tuple[str, int]]:
    return sorted((f["rule"], f["line"]) for f in report["findings"])


# --- the preprocessor's alternative tokens ----------------------------------------------------

_SPELLED_GUARD = (
    "__device__ unsigned rev(unsigned x) {\n"
    "#if defined(__CUDA_ARCH__) {and} (__CUDA_ARCH__ >= 1000)\n"
    '  asm volatile("brev.b32 %0, %1;" : "=r"(x) : "r"(x));\n'
    "#else\n"
    "  x = __brev(x);\n"
    "#endif\n"
    "  return x;\n"
    "}\n"
)


@pytest.mark.parametrize(
    ("condition", "on_hip"),
    [
        ("defined(__CUDA_ARCH__) and (__CUDA_ARCH__ >= 1000)", 0),
        ("not defined(USE_ROCM)", 0),
        ("defined(USE_ROCM) or defined(__CUDA_ARCH__)", 1),
        ("defined(__CUDA_ARCH__) and not defined(USE_ROCM)", 0),
        ("(TORCH_HIP_VERSION bitand 4) not_eq 4", 0),
        ("compl 0 and not defined(USE_ROCM)", 0),
    ],
)
def test_alternative_tokens_evaluate_like_the_symbols(condition, on_hip):
    source = parse(f"#if {condition}\nfirst();\n#else\nsecond();\n#endif\n".encode())
    (_, chain), *_ = preproc.all_branches(source)
    assert chain[0].on_hip == on_hip


def test_a_guard_spelled_with_and_hides_its_ptx_like_one_spelled_with_symbols(tmp_path, scan_json):
    """The PTX sits in an NVIDIA-architecture branch whose ``#else`` is the portable code hipcc
    compiles: a guard, whichever spelling the condition uses."""
    for spelling in ("&&", "and"):
        write(tmp_path, "k.cu", _SPELLED_GUARD.replace("{and}", spelling))
        assert _rows(scan_json("--no-cache", str(tmp_path))) == [], spelling


# --- CUTLASS/CuTe and Hopper features past the #include line --------------------------------

_GEMM_CONFIG = "#pragma once\n#include <cutlass/gemm/device/gemm.h>\n"
_LINEAR = (
    '#include "gemm_config.h"\n'
    "torch::Tensor linear(torch::Tensor a) {\n"
    "  using Gemm = cutlass::gemm::device::Gemm<\n"
    "      int8_t, cutlass::layout::RowMajor, int8_t, cutlass::layout::ColumnMajor,\n"
    "      int32_t, cutlass::layout::RowMajor, int32_t, cutlass::arch::OpClassTensorOp,\n"
    "      cutlass::arch::Sm80>;\n"
    "  Gemm gemm_op;\n"
    "  return a;\n"
    "}\n"
)
_HOPPER = (
    '#include "barrier.cuh"\n'
    "__global__ void k(const cute::TmaDescriptor* desc, float* out) {\n"
    "  cute::prefetch_tma_descriptor(desc);\n"
    "  cudaGridDependencySynchronize();\n"
    "  out[threadIdx.x] = 0.f;\n"
    "}\n"
    "void launch(const cute::TmaDescriptor* desc, float* out) { k<<<1, 32>>>(desc, out); }\n"
)
_BINDING = '#include <torch/extension.h>\nPYBIND11_MODULE(m, m) { m.def("linear", &linear); }\n'


def test_cutlass_uses_are_sites_of_the_cutlass_finding(tmp_path, scan_json):
    """A file that uses CUTLASS through a project header is part of the CUTLASS port: its uses
    are listed (naming ROC331) with the one CUTLASS finding, never one finding per line."""
    write(tmp_path, "csrc/gemm_config.h", _GEMM_CONFIG)
    write(tmp_path, "csrc/linear.cu", _LINEAR)
    write(tmp_path, "csrc/binding.cpp", _BINDING)
    report = scan_json("--no-cache", str(tmp_path))
    cutlass = [f for f in report["findings"] if f["rule"] in {"ROC330", "ROC331"}]
    assert len(cutlass) == 2  # the include (ROC330) and the file using it (ROC331)
    uses = next(f for f in cutlass if f["rule"] == "ROC331")
    assert (uses["path"], uses["line"]) == ("csrc/linear.cu", 3)
    assert sorted(site["line"] for site in uses["related"]) == [4, 5, 6]
    # in a file that includes CUTLASS itself, the uses are sites of the CUTLASS finding
    write(tmp_path, "csrc/linear.cu", _GEMM_CONFIG.replace("#pragma once\n", "") + _LINEAR)
    report = scan_json("--no-cache", str(tmp_path))
    cutlass = [f for f in report["findings"] if f["rule"] in {"ROC330", "ROC331"}]
    assert [f["rule"] for f in cutlass] == ["ROC330"]
    folded = [
        site["line"]
        for site in cutlass[0]["related"]
        if site["path"] == "csrc/linear.cu" and site.get("rule") == "ROC331"
    ]
    assert sorted(folded) == [4, 5, 6, 7]


def test_hopper_features_through_wrappers_are_one_finding_per_file(tmp_path, scan_json):
    write(tmp_path, "csrc/k.cu", _HOPPER)
    report = scan_json("--no-cache", str(tmp_path))
    hopper = [f for f in report["findings"] if f["rule"] == "ROC315"]
    assert [(f["path"], f["line"]) for f in hopper] == [("csrc/k.cu", 2)]
    assert sorted(site["line"] for site in hopper[0]["related"]) == [3, 4]
    assert hopper[0]["severity"] == "error"


# --- hipify's own tables: CUDA names and headers it does not map -----------------------------

_CUBLASLT = (
    '#include <cublasLt.h>\n#include "compat.h"\n#include "check.h"\n'
    "void gemm(cublasLtMatmulDesc_t desc, cublasLtMatmulPreference_t pref) {\n"
    "  CHECK_CUDA(cudaDeviceSynchronize());\n"
    "  uint32_t mask = CUBLASLT_REDUCTION_SCHEME_NONE | CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;\n"
    "  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK,\n"
    "                                       &mask, sizeof(mask));\n"
    "#if ADVANCED_FEATURES\n"
    "  int sms = 132;\n"
    "  cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET, &sms, 4);\n"
    "#endif\n"
    "  mask = CUBLASLT_REDUCTION_SCHEME_NONE;\n"
    "}\n"
)
_COMPAT = "#pragma once\n#define ADVANCED_FEATURES (CUDART_VERSION >= 11080)\n"
_CHECK = "#pragma once\n#define CHECK_CUDA(x) do { if ((x) != cudaSuccess) abort(); } while (0)\n"


def test_cuda_names_hipify_does_not_map_are_reported_once_per_name_and_file(tmp_path, scan_json):
    """Read from hipify's own tables: the cuBLASLt enums it lacks are reported where first
    used, a second use is a site of the same finding; what it maps, the project's own
    ``CHECK_CUDA`` macro and code under a project macro that is a CUDA version test (false on
    ROCm, as the compiler expands it) are not."""
    write(tmp_path, "csrc/compat.h", _COMPAT)
    write(tmp_path, "csrc/check.h", _CHECK)
    write(tmp_path, "csrc/cublaslt.cpp", _CUBLASLT)
    write(tmp_path, "csrc/binding.cpp", _BINDING.replace("linear", "gemm"))
    report = scan_json("--no-cache", str(tmp_path))
    found = [f for f in report["findings"] if f["rule"] == "ROC370"]
    named = {f["message"].split("`")[1]: f for f in found}
    assert sorted(named) == [
        "CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK",
        "CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE",
        "CUBLASLT_REDUCTION_SCHEME_NONE",
    ]
    first = named["CUBLASLT_REDUCTION_SCHEME_NONE"]
    assert first["line"] == 6
    assert [site["line"] for site in first["related"]] == [13]
    assert "torch 2.13" in first["message"] or "PyTorch 2.13" in first["message"]


def test_cuda_headers_hipify_does_not_map_are_reported_and_project_headers_are_not(
    tmp_path, scan_json
):
    write(
        tmp_path,
        "csrc/k.cu",
        "#include <cuda_runtime.h>\n#include <cuda/std/cstdint>\n"
        '#include "device_launch_parameters.h"\n#include <cooperative_groups.h>\n'
        '#include <cooperative_groups/reduce.h>\n#include "math_constants.h"\n'
        "__global__ void k(float* x) { x[threadIdx.x] = 0.f; }\n"
        "void launch(float* x) { k<<<1, 32>>>(x); }\n",
    )
    write(tmp_path, "csrc/math_constants.h", "#pragma once\n#define PI_F 3.14159f\n")
    report = scan_json("--no-cache", str(tmp_path))
    headers = sorted(
        (f["line"], f["message"].split("`")[1]) for f in report["findings"] if f["rule"] == "ROC340"
    )
    assert headers == [
        (2, "cuda/std/cstdint"),
        (3, "device_launch_parameters.h"),
        (5, "cooperative_groups/reduce.h"),
    ]


def test_the_hipify_map_is_current_for_the_installed_torch():
    """The data file is generated from the pinned torch's hipify tables, with its provenance."""
    data = json.loads((ROOT / "migrator" / "data" / "hipify_map.json").read_text())
    assert data["provenance"]["script"] == "scripts/gen_hipify_map.py"
    assert data["identifiers"]["cudaMalloc"] == "hipMalloc"
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen_hipify_map.py"), "--check"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_an_include_under_an_nvcc_version_test_is_not_compiled_by_hipcc(tmp_path, scan_json):
    """``__CUDACC_VER_MAJOR__`` is nvcc's: hip-clang never defines it, so the ``#else`` (a
    header hipify maps, portable code) is what hipcc compiles."""
    write(
        tmp_path,
        "csrc/reduce.cuh",
        "#pragma once\n"
        "#if ((__CUDACC_VER_MAJOR__ > 11) || (__CUDACC_VER_MAJOR__ == 11 && __CUDACC_VER_MINOR__ >= 0))\n"
        "#include <cooperative_groups/reduce.h>\n#else\n#include <cooperative_groups.h>\n#endif\n",
    )
    write(
        tmp_path,
        "csrc/load.cu",
        "__device__ float load(const float* p) {\n  float v;\n#if __CUDACC_VER_MAJOR__ >= 11\n"
        '  asm volatile("ld.global.nc.f32 %0, [%1];" : "=f"(v) : "l"(p));\n#else\n'
        "  v = __ldg(p);\n#endif\n  return v;\n}\n",
    )
    assert _rows(scan_json("--no-cache", str(tmp_path))) == []


def test_a_project_macro_defined_as_a_cuda_version_test_is_false_on_hip(tmp_path, scan_json):
    """``#define ADVANCED (CUDART_VERSION >= 11080)`` in a header: ``#if ADVANCED`` elsewhere
    is false for hipcc, as the compiler expands it; defined twice, its value is not known."""
    write(tmp_path, "csrc/compat.h", _COMPAT.replace("ADVANCED_FEATURES", "ADVANCED"))
    write(
        tmp_path,
        "csrc/k.cu",
        '#include "compat.h"\n__device__ unsigned lane() {\n  unsigned i = 0;\n#if ADVANCED\n'
        '  asm volatile("mov.u32 %0, %%laneid;" : "=r"(i));\n#endif\n  return i;\n}\n'
        "__global__ void k(unsigned* x) { x[0] = lane(); }\n"
        "void run(unsigned* x) { k<<<1, 1>>>(x); }\n",
    )
    assert _rows(scan_json("--no-cache", str(tmp_path))) == []
    write(tmp_path, "csrc/other.h", "#pragma once\n#define ADVANCED 1\n")
    assert _rows(scan_json("--no-cache", str(tmp_path))) == [("ROC310", 5)]
