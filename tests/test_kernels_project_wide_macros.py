"""Kernel facts a single file cannot know, read once over the whole project (issue #48): a lane
mask macro defined as the 32-lane full mask in one header and used in another source, and a
dynamic shared-memory size chosen by a constant of its own, on the real command line."""

from __future__ import annotations

import json

from migrator.kernels.mask_macros import full_mask_macros
from tests.attacks.conftest import migrate
from tests.conftest import write

_KERNEL = (
    "template <typename T>\n__device__ T warp_sum(T v) {\n"
    "  v += __shfl_xor_sync(SHFL_MASK, v, 16);\n  v += __shfl_xor_sync(SHFL_MASK, v, 8);\n"
    "  return v;\n}\n"
    "__global__ void k(float* x) { x[threadIdx.x] = warp_sum(x[threadIdx.x]); }\n"
    "void launch(float* x) { k<<<1, 64>>>(x); }\n"
)


def _findings(tmp_path, rule):
    done = migrate("scan", "--no-cache", "--format", "json", ".", cwd=tmp_path)
    return [f for f in json.loads(done.stdout)["findings"] if f["rule"] == rule]


def test_a_mask_macro_from_another_header_is_the_32_bit_mask(tmp_path):
    write(tmp_path, "csrc/defs.cuh", "#pragma once\n#define SHFL_MASK 0xffffffff\n")
    write(tmp_path, "csrc/reduce.cu", _KERNEL)
    found = _findings(tmp_path, "ROC303")
    assert {f["path"] for f in found} == {"csrc/defs.cuh", "csrc/reduce.cu"}
    (use,) = [f for f in found if f["path"] == "csrc/reduce.cu"]
    assert use["line"] == 3


def test_a_mask_macro_the_project_defines_64_bit_for_rocm_is_left_alone(tmp_path):
    write(
        tmp_path,
        "csrc/defs.cuh",
        "#pragma once\n#ifdef USE_ROCM\n#define SHFL_MASK 0xffffffffffffffffull\n"
        "#else\n#define SHFL_MASK 0xffffffff\n#endif\n",
    )
    write(tmp_path, "csrc/reduce.cu", _KERNEL)
    assert not [f for f in _findings(tmp_path, "ROC303") if f["path"] == "csrc/reduce.cu"]


def test_full_mask_macros_reads_every_definition():
    assert full_mask_macros([b"#define A 0xFFFFFFFFu // all lanes\n#define B 7\n"]) == {"A"}
    assert full_mask_macros([b"#define A 0xffffffff\n", b"#define A 0xffffffffffffffff\n"]) == set()
    # bitsandbytes' compat.cuh: one spelling per platform is the project's choice
    assert (
        full_mask_macros(
            [b"#if BNB_HIP\n#define M 0xffffffffull\n#else\n#define M 0xffffffffu\n#endif\n"]
        )
        == set()
    )


def test_a_local_shared_memory_size_above_the_lds_is_reported_at_its_definition(tmp_path):
    write(
        tmp_path,
        "csrc/gemm.cu",
        "__global__ void k(int4* x) { extern __shared__ int4 s[]; x[0] = s[0]; }\n"
        "void launch(int4* x) {\n  int shared = 16 * (2 * 256 * 8 + 32 * 9);\n"
        "  cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, shared);\n"
        "  k<<<1, 256, shared>>>(x);\n}\n"
        'PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("launch", &launch); }\n',
    )
    (finding,) = _findings(tmp_path, "ROC350")
    assert finding["line"] == 3 and "68 KiB" in finding["message"]


def test_a_project_that_redefines_the_sync_intrinsics_for_rocm_owns_their_masks(tmp_path):
    """exllamav2's compat.cuh: under USE_ROCM, __shfl_xor_sync(mask, v, m) is __shfl_xor(v, m)."""
    write(
        tmp_path,
        "csrc/compat.cuh",
        "#pragma once\n#if defined(USE_ROCM)\n"
        "#define __shfl_xor_sync(mask, var, laneMask) __shfl_xor(var, laneMask)\n#endif\n",
    )
    write(
        tmp_path,
        "csrc/reduce.cu",
        '#include "compat.cuh"\n'
        "__global__ void k(float* x) {\n  float v = x[threadIdx.x];\n"
        "  v += __shfl_xor_sync(0xffffffff, v, 16);\n  x[threadIdx.x] = v;\n}\n"
        "void launch(float* x) { k<<<1, 64>>>(x); }\n",
    )
    assert not _findings(tmp_path, "ROC303")
    # without the ROCm definition the 32-bit mask is reported
    write(tmp_path, "csrc/compat.cuh", "#pragma once\n")
    assert [f["line"] for f in _findings(tmp_path, "ROC303")] == [4]
