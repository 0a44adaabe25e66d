"""Kernel classes a single file's tokens cannot settle (issue #48, kernelclasses48): WMMA calls
written without ``wmma::`` where a project header holds ``using namespace nvcuda;``, on the real
command line."""

from __future__ import annotations

import json

from migrator.kernels.namespaces import nvcuda_using_files
from tests.attacks.conftest import migrate
from tests.conftest import write


def _findings(tmp_path, rule):
    done = migrate("scan", "--no-cache", "--format", "json", ".", cwd=tmp_path)
    return [f for f in json.loads(done.stdout)["findings"] if f["rule"] == rule]


def _sites(finding):
    lines = {finding["line"]}
    lines.update(site["line"] for site in finding.get("related", ()) if "line" in site)
    return lines


_GEMM = (
    '#include "tiles.cuh"\n'
    "__global__ void k(const half* a, const half* b, float* c) {\n"
    "  fragment<matrix_a, 16, 16, 16, half, row_major> fa;\n"
    "  fragment<matrix_b, 16, 16, 16, half, col_major> fb;\n"
    "  fragment<accumulator, 16, 16, 16, float> acc;\n"
    "  fill_fragment(acc, 0.0f);\n"
    "  load_matrix_sync(fa, a, 16);\n"
    "  load_matrix_sync(fb, b, 16);\n"
    "  mma_sync(acc, fa, fb, acc);\n"
    "  store_matrix_sync(c, acc, 16, mem_row_major);\n}\n"
)


def test_wmma_calls_through_a_using_directive_in_a_project_header(tmp_path):
    write(
        tmp_path,
        "csrc/common/tiles.cuh",
        "#pragma once\n#include <mma.h>\nusing namespace nvcuda::wmma;\n",
    )
    write(tmp_path, "csrc/wrap.cuh", '#pragma once\n#include "common/tiles.cuh"\n')
    write(tmp_path, "csrc/gemm.cu", _GEMM.replace('"tiles.cuh"', '"wrap.cuh"'))
    found = {f["path"]: f for f in _findings(tmp_path, "ROC320")}
    assert set(found) == {"csrc/common/tiles.cuh", "csrc/gemm.cu"}
    assert _sites(found["csrc/gemm.cu"]) == set(range(3, 11))


def test_a_project_mma_sync_without_nvcuda_is_left_alone(tmp_path):
    write(tmp_path, "csrc/tiles.cuh", "#pragma once\n__device__ void mma_sync(float*, float*);\n")
    write(
        tmp_path,
        "csrc/gemm.cu",
        '#include "tiles.cuh"\n__global__ void k(float* c, float* a) { mma_sync(c, a); }\n',
    )
    assert not _findings(tmp_path, "ROC320")


def test_nvcuda_using_files_follows_includes_transitively():
    texts = {
        "a/h.cuh": b"using namespace nvcuda;\n",
        "a/mid.cuh": b'#include "h.cuh"\n',
        "b/k.cu": b'#include "../a/mid.cuh"\n',
        "b/other.cu": b"int x;\n",
    }
    assert nvcuda_using_files(texts) == {"a/mid.cuh", "b/k.cu"}


_SAGE3_SETUP = (
    "from setuptools import setup\n"
    "from torch.utils.cpp_extension import BuildExtension, CUDAExtension\n"
    "setup(name='sage3', packages=['sage3'], ext_modules=[CUDAExtension("
    "'fp4attn_cuda', ['sage3/blackwell/api.cu'])], cmdclass={'build_ext': BuildExtension})\n"
)


def test_an_architecture_named_folder_an_extension_without_a_rocm_branch_compiles(tmp_path):
    """SageAttention3: ``sageattn3/blackwell/`` holds CuTe kernels its setup.py (no ROCm branch)
    builds and its package imports at module level; a ROCm build hipifies and compiles them, so
    the folder's name does not make them NVIDIA-only."""
    write(tmp_path, "setup.py", _SAGE3_SETUP)
    write(tmp_path, "sage3/__init__.py", "import fp4attn_cuda\n")
    write(
        tmp_path,
        "sage3/blackwell/api.cu",
        '#include <torch/extension.h>\n#include "kernel_traits.h"\n'
        'PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("n", []() { return 1; }); }\n',
    )
    write(
        tmp_path,
        "sage3/blackwell/kernel_traits.h",
        "#pragma once\n#include <cute/tensor.hpp>\n#include <cutlass/cutlass.h>\n",
    )
    found = _findings(tmp_path, "ROC330")
    assert found and "sage3/blackwell/kernel_traits.h" in {f["path"] for f in found} | {
        site.get("path") for f in found for site in f.get("related", ())
    }
