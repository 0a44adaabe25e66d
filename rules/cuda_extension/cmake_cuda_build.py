"""ROC605 (cmake-cuda-only-build): a CMake build whose GPU code needs the CUDA toolkit with no HIP
path: the CUDA language turned on only where ``nvcc`` is found (a ROCm build is CPU-only), CUDA
required outright, or CUDA-only libraries linked."""

from __future__ import annotations

from migrator.api import Impact, Invalid, Parsing, Severity, Valid
from migrator.api.knowledge import CUDA_REQUIRED, GATE, LINK

from ._build_notes import CMakeNoteRule


class CMakeCudaOnlyBuild(CMakeNoteRule):
    """
    ## What it does
    Flags, in `CMakeLists.txt` and `*.cmake` files, a build with no HIP branch anywhere among
    the project's CMake files that
    - turns its GPU code on only where it finds CUDA (`find_program(... nvcc)`,
      `check_language(CUDA)`, `if(CMAKE_CUDA_COMPILER)`, an optional `find_package(CUDA)`),
      reported once at the probe with what the CUDA branch turns on (the definitions it makes,
      the sources it adds);
    - needs CUDA outright (`project(... CUDA)`, `enable_language(CUDA)`,
      `find_package(CUDAToolkit REQUIRED)`);
    - links libraries only the CUDA toolkit ships (`CUDA::cublas`, `cudart_static`, `-lnvrtc`).

    ## Why it breaks on ROCm
    A ROCm machine has no `nvcc`: the probe fails and CMake configures the CPU-only build, whose
    extension imports fine and then raises on every GPU tensor (`#ifdef WITH_CUDA ... #else
    TORCH_CHECK(false, ...)`); a build that needs CUDA outright stops at configure time; a
    CUDA library is not found at link time.

    ## Example
    ```cmake
    find_program(HAS_NVCC nvcc)
    if(HAS_NVCC)
      enable_language(CUDA)
      add_definitions(-DWITH_CUDA)
      list(APPEND srcs kernel_cuda.cu)
    endif()
    ```

    ## Manual migration
    Add a HIP branch: CMake 3.21 and later compile HIP with `enable_language(HIP)`; mark the
    `.cu` sources `LANGUAGE HIP` (or hipify them), `find_package(hip)`, define the same macro, and
    link the HIP counterparts (`hip::host`, `roc::hipblas`).

    ## Known problems
    Read statically: a probe in a CMake function the build calls under a name the reader does
    not follow is not seen; a CMake file that says in its opening comment that it exists for
    an IDE is not read as a build.

    ## References
    - ROCm, using CMake: <https://rocm.docs.amd.com/en/latest/conceptual/cmake-packages.html>
    """

    code = "ROC605"
    name = "cmake-cuda-only-build"
    category = "cuda-extension"
    severity = Severity.ERROR
    impact = Impact(consequence="crash-path", blocker=True, effort_hours=8.0)
    message = "the CMake build needs the CUDA toolkit and has no HIP path"
    fact = "§7 gated build row, §7 CUDA toolkit libraries row; [P9][CM1]"
    parsing = Parsing(
        triggers=(
            "CUDA",
            "nvcc",
            "cuda",
            "cublas",
            "culibos",
            "nvrtc",
            "cufft",
            "curand",
            "cusparse",
            "cusolver",
            "nvToolsExt",
            "nvtx3",
            "nvjitlink",
            "cudnn",
            "nccl",
        )
    )
    note_kinds = frozenset({GATE, CUDA_REQUIRED, LINK})
    valid = [
        Valid(
            "find_program(HAS_NVCC nvcc)\nif(HAS_NVCC)\n  enable_language(CUDA)\n"
            "  add_definitions(-DWITH_CUDA)\nelseif(USE_ROCM)\n  enable_language(HIP)\n"
            "  add_definitions(-DWITH_CUDA)\nendif()\n",
            path="CMakeLists.txt",
        ),
        Valid(
            "# CMake for IDE indexing only; the real compilation is done by setup.py\n"
            "project(ops LANGUAGES CXX CUDA)\nadd_library(ops STATIC ops.cu)\n",
            path="CMakeLists.txt",
        ),
        Valid(
            "project(ops LANGUAGES CXX)\nadd_library(ops SHARED ops.cpp)\n", path="CMakeLists.txt"
        ),
    ]
    invalid = [
        Invalid(
            "find_program(HAS_NVCC nvcc)\nif(HAS_NVCC)\n  enable_language(CUDA)\n"
            "  add_definitions(-DWITH_CUDA)\n  list(APPEND srcs kernel_cuda.cu)\nendif()\n"
            "pybind11_add_module(_ops ops.cpp ${srcs})\n",
            path="CMakeLists.txt",
            line=1,
        ),
        Invalid(
            "project(ops LANGUAGES CXX CUDA)\nadd_library(ops SHARED ops.cu)\n",
            path="CMakeLists.txt",
            line=1,
        ),
        Invalid(
            "if(USE_ROCM)\n  enable_language(HIP)\nendif()\nadd_library(ops SHARED ops.cu)\n"
            "target_link_libraries(ops PRIVATE cublas_static)\n",
            path="cmake/ops.cmake",
            line=5,
        ),
    ]
