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
