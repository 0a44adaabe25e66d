"""The build model through a setup.py that builds its extensions in a ``product(glob(...))``
loop with a conditional extension class and defines ``WITH_CUDA`` for ROCm builds too (the
shape of scatter/cluster libraries), beside a CMake library that defines it only with CUDA."""

from __future__ import annotations

import json
from pathlib import Path

from migrator.kernels.builds import read_builds
from tests.conftest import write

SETUP = """import glob
import os.path as osp
from itertools import product
import torch
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CppExtension, CUDAExtension

WITH_CUDA = torch.cuda.is_available()
suffices = ['cpu', 'cuda'] if WITH_CUDA else ['cpu']


def get_extensions():
    extensions = []
    main_files = glob.glob(osp.join('csrc', '*.cpp'))
    for main, suffix in product(main_files, suffices):
        define_macros = [('WITH_PYTHON', None)]
        if suffix == 'cuda':
            define_macros += [('WITH_CUDA', None)]
            if torch.version.hip:
                define_macros += [('USE_ROCM', None)]
        name = main.split('/')[-1][:-4]
        sources = [main]
        path = osp.join('csrc', 'cuda', f'{name}_cuda.cu')
        if suffix == 'cuda' and osp.exists(path):
            sources += [path]
        Extension = CppExtension if suffix == 'cpu' else CUDAExtension
        extensions += [Extension(f'pkg._{name}_{suffix}', sources, define_macros=define_macros)]
    return extensions


setup(name='pkg', ext_modules=get_extensions(), cmdclass={'build_ext': BuildExtension})
"""
CMAKE = """cmake_minimum_required(VERSION 3.0)
project(pkg)
option(WITH_CUDA "Enable CUDA support" OFF)
if(WITH_CUDA)
  enable_language(CUDA)
  add_definitions(-D__CUDA_NO_HALF_OPERATORS__)
  add_definitions(-DWITH_CUDA)
endif()
find_package(Torch REQUIRED)
file(GLOB OPERATOR_SOURCES csrc/*.* csrc/cpu/*.*)
if(WITH_CUDA)
  file(GLOB OPERATOR_SOURCES ${OPERATOR_SOURCES} csrc/cuda/*.h csrc/cuda/*.cu)
endif()
add_library(${PROJECT_NAME} SHARED ${OPERATOR_SOURCES})
target_link_libraries(${PROJECT_NAME} PRIVATE ${TORCH_LIBRARIES})
"""
FPS = """#include <torch/extension.h>
#ifdef WITH_CUDA
#include "cuda/fps_cuda.h"
#endif
torch::Tensor fps(torch::Tensor src) {
#ifdef WITH_CUDA
  return fps_cuda(src);
#else
  AT_ERROR("Not compiled with CUDA support");
#endif
}
"""
KERNEL = """#include "fps_cuda.h"
__global__ void k(float* x) { x[threadIdx.x] = 0.f; }
torch::Tensor fps_cuda(torch::Tensor src) { k<<<1, 64>>>(src.data_ptr<float>()); return src; }
"""


def _project(root: Path) -> Path:
    write(root, "setup.py", SETUP)
    write(root, "CMakeLists.txt", CMAKE)
    write(root, "csrc/fps.cpp", FPS)
    write(root, "csrc/cuda/fps_cuda.cu", KERNEL)
    write(
        root,
        "csrc/cuda/fps_cuda.h",
        "#include <torch/extension.h>\ntorch::Tensor fps_cuda(torch::Tensor src);\n",
    )
    write(root, "pkg/__init__.py", "import torch\n")
    return root


def test_a_product_loop_keeps_each_names_sources(tmp_path):
    root = _project(tmp_path / "proj")
    paths = [
        "setup.py",
        "CMakeLists.txt",
        "csrc/fps.cpp",
        "csrc/cuda/fps_cuda.cu",
        "csrc/cuda/fps_cuda.h",
        "pkg/__init__.py",
    ]
    model = read_builds(root, paths)
    setup = [e for e in model.extensions if e.build == "setup.py"]
    assert setup, model.extensions
    globs = {p.glob for e in setup for p in e.patterns}
    assert "csrc/*.cpp" in globs and "csrc/cuda/*_cuda.cu" in globs, globs
    # setup.py defines WITH_CUDA for ROCm builds too: not a macro only CUDA builds see
    assert "WITH_CUDA" not in model.cuda_macros, model.cuda_macros


def test_with_cuda_guards_of_a_build_that_defines_it_for_rocm_are_not_flagged(run_cli, tmp_path):
    root = _project(tmp_path / "proj")
    result = run_cli("scan", "--format", "json", "--no-cache", str(root))
    rules = [finding["rule"] for finding in json.loads(result.stdout)["findings"]]
    assert "ROC360" not in rules, rules
