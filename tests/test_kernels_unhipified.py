"""``#ifdef __CUDACC__`` in files no hipify step touches (issue #48, fresh round 4).

PyTorch's extension builder hipifies ``CUDAExtension``/``load()`` sources on ROCm, renaming
``__CUDACC__`` to ``__HIPCC__``; a CMake-built library reaches hipcc as it is, and hip-clang
does not define ``__CUDACC__``: its GPU half, included or called only under that macro,
compiles out on AMD (an RNN-T loss library whose GPU loss then returns an error status)."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import write

ENTRY = (
    '#include "api.h"\n'
    '#include "detail/hostdevice.h"\n'
    "#ifdef __CUDACC__\n"
    '#include "detail/gpu_impl.h"\n'
    "#endif\n"
    "int run(int where) {\n"
    "  if (where == 0) return cpu_run();\n"
    "#ifdef __CUDACC__\n"
    "  return gpu_run();\n"
    "#endif\n"
    "  return -1;\n"
    "}\n"
)
GPU_IMPL = (
    "__global__ void k(float* x) { x[threadIdx.x] = 0.f; }\n"
    "inline int gpu_run() { k<<<1, 32>>>(nullptr); return 0; }\n"
)


HOSTDEVICE = (
    "#ifdef __CUDACC__\n#define HOSTDEVICE __host__ __device__\n#else\n#define HOSTDEVICE\n#endif\n"
    "#if defined(__CUDACC__) || defined(__HIPCC__)\n#define DEVICE_OK 1\n#endif\n"
)


def _project(root: Path, build: str) -> None:
    write(root, "include/api.h", "int cpu_run();\nint run(int where);\n")
    write(root, "src/detail/hostdevice.h", HOSTDEVICE)
    write(root, "src/entry.cu", ENTRY)
    write(root, "src/detail/gpu_impl.h", GPU_IMPL)
    if build == "cmake":
        write(
            root,
            "CMakeLists.txt",
            "cmake_minimum_required(VERSION 3.18)\nproject(loss LANGUAGES CXX CUDA)\n"
            "include_directories(include)\nadd_library(loss SHARED src/entry.cu)\n",
        )
    else:
        write(
            root,
            "setup.py",
            "from setuptools import setup\n"
            "from torch.utils.cpp_extension import BuildExtension, CUDAExtension\n\n"
            "setup(name='loss', ext_modules=[CUDAExtension('loss._C', ['src/entry.cu'])],\n"
            "      cmdclass={'build_ext': BuildExtension})\n",
        )


def _sites(scan_json, root: Path, rule: str) -> set[tuple[str, int]]:
    findings = scan_json("--no-cache", str(root))["findings"]
    return {
        (site.get("path", finding["path"]), site["line"])
        for finding in findings
        for site in [finding, *finding.get("related", [])]
        if (site.get("rule") or finding["rule"]) == rule
        and finding["severity"] in {"warning", "error"}
    }


def test_cudacc_branches_of_a_cmake_built_file_compile_out_on_amd(tmp_path, scan_json):
    _project(tmp_path, "cmake")
    sites = _sites(scan_json, tmp_path, "ROC360")
    # the include of the GPU half and the GPU dispatch: both false under hipcc
    assert {("src/entry.cu", 3), ("src/entry.cu", 8)} <= sites
    # a header only the CMake-built file includes: its host-compiler #else is no AMD path; a
    # condition that admits hipcc too is left alone
    assert ("src/detail/hostdevice.h", 1) in sites
    assert ("src/detail/hostdevice.h", 6) not in sites


def test_cudacc_branches_of_a_torch_extension_are_hipified(tmp_path, scan_json):
    _project(tmp_path, "setup")
    sites = _sites(scan_json, tmp_path, "ROC360")
    assert not {s for s in sites if s[0] in {"src/entry.cu", "src/detail/hostdevice.h"}}


def test_a_cu_link_to_a_cpp_is_read_as_the_cuda_source_it_is(tmp_path, scan_json):
    # one file built twice: by the host compiler for the CPU library, by nvcc through a link
    _project(tmp_path, "cmake")
    (tmp_path / "src/entry.cu").rename(tmp_path / "src/entry.cpp")
    (tmp_path / "src/entry.cu").symlink_to("entry.cpp")
    sites = _sites(scan_json, tmp_path, "ROC360")
    assert {("src/entry.cpp", 3), ("src/entry.cpp", 8)} <= sites
