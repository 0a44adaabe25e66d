"""A project whose deliverable is its CUDA library (no Python package of its own: a CMake build and
tests that ``torch.ops.load_library`` it, as dietgpu) has that library as its core path: a kernel
that needs a port blocks it (issue #48), on the real command line."""

from __future__ import annotations

import json

from tests.attacks.conftest import migrate
from tests.conftest import write

_CMAKE = (
    "cmake_minimum_required(VERSION 3.18)\nproject(codec LANGUAGES CUDA CXX)\n"
    "find_package(Torch REQUIRED)\nadd_library(codec SHARED codec/Codec.cpp codec/lanes.cu)\n"
)
_KERNEL = (
    "__device__ __forceinline__ int lane_id() {\n  int id;\n"
    '  asm("mov.u32 %0, %%laneid;" : "=r"(id));\n  return id;\n}\n'
    "__global__ void encode(int* out) { out[threadIdx.x] = lane_id(); }\n"
    "void run(int* out) { encode<<<1, 32>>>(out); }\n"
)
_BINDING = (
    "#include <torch/extension.h>\nvoid run(int* out);\n"
    'TORCH_LIBRARY(codec, m) { m.def("run", [](at::Tensor t) { run(t.data_ptr<int>()); }); }\n'
)


def _verdict(root) -> str:
    done = migrate("report", "--no-cache", "--format", "json", ".", cwd=root)
    data = json.loads(done.stdout)
    return (data["projects"][0] if "projects" in data else data)["verdict"]


def test_a_library_only_project_with_a_kernel_that_needs_a_port_is_blocked(tmp_path):
    write(tmp_path, "CMakeLists.txt", _CMAKE)
    write(tmp_path, "codec/lanes.cu", _KERNEL)
    write(tmp_path, "codec/Codec.cpp", _BINDING)
    write(
        tmp_path,
        "codec/codec_test.py",
        'import torch\ntorch.ops.load_library("build/libcodec.so")\n'
        "def test_run():\n    torch.ops.codec.run(torch.zeros(32, dtype=torch.int32))\n",
    )
    assert _verdict(tmp_path) == "blocked"
