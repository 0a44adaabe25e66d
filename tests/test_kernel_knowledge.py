"""What the kernel rules know beyond the constructs they match by shape (issue #48): the
preprocessor's alternative spellings of operators, PyTorch's hipify tables as data, library
uses past the ``#include`` line, and the warp size written as a multiplier. Scans of small real
projects through the command line, and the preprocessor on real parses."""

from __future__ import annotations

import pytest

from migrator.kernels import preproc
from migrator.kernels.source import parse
from tests.conftest import write


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
