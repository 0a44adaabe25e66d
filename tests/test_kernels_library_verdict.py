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


_PORTABLE = (
    "#include <torch/extension.h>\n"
    "__global__ void fill(float* x) { x[blockIdx.x * blockDim.x + threadIdx.x] = 1.f; }\n"
    "void run_cuda(at::Tensor t) { fill<<<1, 64>>>(t.data_ptr<float>()); }\n"
)
_OPS = (
    "#include <torch/extension.h>\n#ifdef WITH_CUDA\nvoid run_cuda(at::Tensor t);\n#endif\n"
    "void run(at::Tensor t) {\n#ifdef WITH_CUDA\n  run_cuda(t);\n#endif\n}\n"
    'PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("run", &run); }\n'
)
_SETUP = (
    "from setuptools import setup\n"
    "from torch.utils.cpp_extension import BuildExtension, CUDAExtension\n"
    "setup(name='fillpkg', packages=['fillpkg'], ext_modules=[CUDAExtension("
    "'fillpkg._C', ['csrc/fill.cpp', 'csrc/cuda/fill_cuda.cu'], "
    "define_macros=[('WITH_CUDA', None)])], cmdclass={'build_ext': BuildExtension})\n"
)
#: The same sources as a C++ library for libtorch users, GPU code only where CUDA is found.
_CPP_LIBRARY = (
    "cmake_minimum_required(VERSION 3.0)\nproject(fillcpp)\n"
    'option(WITH_CUDA "Enable CUDA support" OFF)\n'
    "if(WITH_CUDA)\n  enable_language(CUDA)\n  add_definitions(-D__CUDA_NO_HALF_OPERATORS__)\n"
    "  add_definitions(-DWITH_CUDA)\nendif()\n"
    "find_package(Torch REQUIRED)\nfile(GLOB OPERATOR_SOURCES csrc/*.cpp)\n"
    "if(WITH_CUDA)\n  file(GLOB OPERATOR_SOURCES ${OPERATOR_SOURCES} csrc/cuda/*.cu)\nendif()\n"
    "add_library(${PROJECT_NAME} SHARED ${OPERATOR_SOURCES})\n"
    "target_link_libraries(${PROJECT_NAME} PRIVATE ${TORCH_LIBRARIES})\n"
)


def test_a_cpp_library_build_beside_the_python_build_is_shown_apart(tmp_path):
    """pytorch_cluster: the package's setup.py extension ports mechanically; its CMakeLists.txt
    builds the same sources into a C++ library no Python module loads, GPU code only with CUDA
    (ROC605): a separate deliverable (optional), not the package's core path."""
    from migrator.reporting.readiness.layout import analyze
    from migrator.reporting.readiness.roles import CORE, OPTIONAL

    write(tmp_path, "setup.py", _SETUP)
    write(tmp_path, "csrc/cuda/fill_cuda.cu", _PORTABLE)
    write(tmp_path, "csrc/fill.cpp", _OPS)
    write(tmp_path, "fillpkg/__init__.py", "from fillpkg._C import run\n")
    write(tmp_path, "CMakeLists.txt", _CPP_LIBRARY)
    paths = ["setup.py", "csrc/cuda/fill_cuda.cu", "csrc/fill.cpp", "fillpkg/__init__.py"]
    layout = analyze(tmp_path, [*paths, "CMakeLists.txt"])
    assert layout.role_of("CMakeLists.txt") == OPTIONAL
    assert layout.role_of("csrc/cuda/fill_cuda.cu") == CORE
    # a CMake build that is the package's own module (pybind11_add_module) stays core
    write(
        tmp_path,
        "CMakeLists.txt",
        _CPP_LIBRARY.replace("add_library(${PROJECT_NAME} SHARED", "pybind11_add_module(_C"),
    )
    assert analyze(tmp_path, [*paths, "CMakeLists.txt"]).role_of("CMakeLists.txt") == CORE
