"""The build as the build runs it (issues #47, #48), on small projects shaped like real ones: a
JIT ``load()`` in a package module reached through an import fallback, a wrapper function of
another module that calls ``cpp_extension.load``, sources collected by loops and helpers with
``../`` paths, CMake that builds its GPU code only where it finds ``nvcc``, a ``setup.py`` that
does the same with ``CUDA_HOME``, CUDA-only link libraries, run-time compilers, an IDE-only
CMakeLists.txt, vendored code, and builds the static reading cannot follow. Each through the
real command line: ``scan``, ``kernels`` and ``report``."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import write

KERNEL = (
    "#include <cuda_runtime.h>\n"
    "__global__ void encode_kernel(const float* x, float* y, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = x[i] * 2.0f;\n"
    "}\n"
)
BINDING = "#include <torch/extension.h>\nvoid forward(torch::Tensor x);\n"


def _kernels(run_cli, root: Path) -> dict:
    result = run_cli("kernels", "--no-hipify", "--format", "json", str(root))
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)


def _findings(scan_json, root: Path) -> list[dict]:
    return scan_json("--no-cache", str(root))["findings"]


def _verdict(run_cli, root: Path) -> dict:
    result = run_cli("report", "--format", "json", "--no-cache", str(root))
    assert result.exit_code in (0, 1), result.output
    document = json.loads(result.stdout)
    return document["projects"][0] if "projects" in document else document


# --- class 1: extensions built wherever the build starts ------------------------------------


def _jit_project(root: Path) -> None:
    write(root, "gridenc/__init__.py", "from .grid import GridEncoder\n")
    write(
        root,
        "gridenc/grid.py",
        "import torch\n\ntry:\n    import _gridencoder as _backend\nexcept ImportError:\n"
        "    from .backend import _backend\n\n\nclass GridEncoder(torch.nn.Module):\n"
        "    def forward(self, x):\n        return _backend.encode(x)\n",
    )
    write(
        root,
        "gridenc/backend.py",
        "import os\nfrom torch.utils.cpp_extension import load\n\n"
        "_src_path = os.path.dirname(os.path.abspath(__file__))\n"
        "nvcc_flags = ['-O3', '--expt-extended-lambda']\n\n"
        "_backend = load(name='_grid_encoder',\n"
        "                extra_cuda_cflags=nvcc_flags,\n"
        "                sources=[os.path.join(_src_path, 'src', f) for f in [\n"
        "                    'gridencoder.cu',\n                    'bindings.cpp',\n"
        "                ]],\n                )\n\n__all__ = ['_backend']\n",
    )
    write(
        root,
        "gridenc/setup.py",
        "import os\nfrom setuptools import setup\n"
        "from torch.utils.cpp_extension import BuildExtension, CUDAExtension\n\n"
        "_src_path = os.path.dirname(os.path.abspath(__file__))\n\n"
        "setup(\n    name='gridencoder',\n    ext_modules=[\n        CUDAExtension(\n"
        "            name='_gridencoder',\n"
        "            sources=[os.path.join(_src_path, 'src', f) for f in ['gridencoder.cu', 'bindings.cpp']],\n"
        "        ),\n    ],\n    cmdclass={'build_ext': BuildExtension},\n)\n",
    )
    write(root, "gridenc/src/gridencoder.cu", KERNEL)
    write(root, "gridenc/src/bindings.cpp", BINDING)
    write(root, "train.py", "from gridenc import GridEncoder\n\nmodel = GridEncoder()\n")


def test_a_jit_load_in_a_package_module_is_an_extension_with_its_sources_and_importers(
    tmp_path, run_cli, scan_json
):
    _jit_project(tmp_path)
    report = _kernels(run_cli, tmp_path)
    [extension] = report["extensions"]
    assert extension["name"] == "_grid_encoder"
    assert extension["build"] == "gridenc/backend.py:7"
    assert extension["sources"] == ["gridenc/src/bindings.cpp", "gridenc/src/gridencoder.cu"]
    # the import fallback and the prebuilt module's import, both in grid.py
    assert {(i["path"], i["line"]) for i in extension["imports"]} == {
        ("gridenc/grid.py", 4),
        ("gridenc/grid.py", 6),
    }
    assert extension["also"] == ["gridenc/setup.py:10 (`_gridencoder`)"]
    assert not report["unassigned"]["sites"]
    builds = [f for f in _findings(scan_json, tmp_path) if f["rule"] == "ROC600"]
    # one problem: the load() builds the module; the setup.py beside it prebuilds the same
    assert [(f["path"], f["line"]) for f in builds] == [("gridenc/backend.py", 7)]
    # its nvcc-only flag is a site of that one problem
    assert ("gridenc/backend.py", 5) in {(s["path"], s["line"]) for s in builds[0]["related"]}


def test_an_extension_built_through_the_projects_own_wrapper_is_found_with_its_flags(
    tmp_path, run_cli, scan_json
):
    write(tmp_path, "torch_utils/__init__.py", "")
    write(
        tmp_path,
        "torch_utils/custom_ops.py",
        "import importlib\nimport os\n\nimport torch.utils.cpp_extension\n\n\n"
        "def get_plugin(module_name, sources, headers=None, source_dir=None, **build_kwargs):\n"
        "    if headers is None:\n        headers = []\n"
        "    if source_dir is not None:\n"
        "        sources = [os.path.join(source_dir, fname) for fname in sources]\n"
        "        headers = [os.path.join(source_dir, fname) for fname in headers]\n"
        "    torch.utils.cpp_extension.load(name=module_name, sources=sources, **build_kwargs)\n"
        "    return importlib.import_module(module_name)\n",
    )
    write(tmp_path, "torch_utils/ops/__init__.py", "")
    write(
        tmp_path,
        "torch_utils/ops/bias_act.py",
        "import os\n\nfrom .. import custom_ops\n\n_plugin = None\n\n\ndef _init():\n"
        "    global _plugin\n"
        "    _plugin = custom_ops.get_plugin(\n        module_name='bias_act_plugin',\n"
        "        sources=['bias_act.cpp', 'bias_act.cu'],\n        headers=['bias_act.h'],\n"
        "        source_dir=os.path.dirname(__file__),\n"
        "        extra_cuda_cflags=['--use_fast_math'],\n    )\n    return True\n",
    )
    write(tmp_path, "torch_utils/ops/bias_act.cu", '#include "bias_act.h"\n' + KERNEL)
    write(tmp_path, "torch_utils/ops/bias_act.h", "#pragma once\nstruct Params { int n; };\n")
    write(tmp_path, "torch_utils/ops/bias_act.cpp", BINDING)
    [extension] = _kernels(run_cli, tmp_path)["extensions"]
    assert extension["name"] == "bias_act_plugin"
    assert extension["build"] == "torch_utils/ops/bias_act.py:10"
    assert extension["via"].startswith("torch_utils/custom_ops.py:7 get_plugin")
    assert extension["sources"] == ["torch_utils/ops/bias_act.cpp", "torch_utils/ops/bias_act.cu"]
    assert "torch_utils/ops/bias_act.h" in extension["files"]
    # the caller never says `cpp_extension`: its nvcc-only flag still reaches hipcc
    flags = [f for f in _findings(scan_json, tmp_path) if f["rule"] == "ROC603"]
    assert [(f["path"], f["line"]) for f in flags] == [("torch_utils/ops/bias_act.py", 15)]


def test_sources_from_loops_filters_and_helpers_with_parent_paths(tmp_path, run_cli):
    write(
        tmp_path,
        "setup.py",
        "import glob\nimport os\n\nfrom setuptools import setup\n"
        "from torch.utils.cpp_extension import BuildExtension, CUDAExtension\n\n"
        "ROOT = os.path.dirname(os.path.abspath(__file__))\n\n\n"
        "def kernel_sources(name):\n"
        "    folder = os.path.join(ROOT, 'tools', '..', 'csrc', name)\n"
        "    return [os.path.join(folder, f) for f in os.listdir(folder) if f.endswith('.cu')]\n\n\n"
        "sources = [os.path.join(ROOT, 'csrc', 'binding.cpp')]\n"
        "for path in glob.glob(os.path.join(ROOT, 'csrc', 'common', '*')):\n"
        "    if path.endswith('.cu'):\n        sources.append(path)\n\n"
        "setup(name='pkg', ext_modules=[CUDAExtension('pkg._ops', kernel_sources('ops') + sources)],\n"
        "      cmdclass={'build_ext': BuildExtension})\n",
    )
    write(tmp_path, "tools/gen.py", "print('codegen')\n")
    write(tmp_path, "csrc/binding.cpp", BINDING)
    write(tmp_path, "csrc/ops/scale.cu", KERNEL)
    write(tmp_path, "csrc/ops/scale_impl.h", "#pragma once\n")
    write(tmp_path, "csrc/common/reduce.cu", KERNEL)
    write(tmp_path, "csrc/common/reduce.h", "#pragma once\n")
    [extension] = _kernels(run_cli, tmp_path)["extensions"]
    assert extension["sources"] == [
        "csrc/binding.cpp",
        "csrc/common/reduce.cu",
        "csrc/ops/scale.cu",
    ]


# --- class 2: GPU code built only where the build finds CUDA --------------------------------


def _cmake_project(root: Path) -> None:
    write(
        root,
        "CMakeLists.txt",
        "cmake_minimum_required(VERSION 3.18)\nset(languages CXX)\n"
        "find_program(OPS_HAS_NVCC nvcc)\n"
        "if(OPS_HAS_NVCC)\n  set(languages ${languages} CUDA)\n  set(OPS_WITH_CUDA ON)\nendif()\n"
        "project(ops ${languages})\n"
        "if(OPS_WITH_CUDA)\n  add_definitions(-DOPS_WITH_CUDA)\nendif()\n"
        "add_subdirectory(csrc)\n",
    )
    write(
        root,
        "csrc/CMakeLists.txt",
        'set(srcs ops_cpu.cu)\nif(NOT OPS_WITH_CUDA)\n  message(STATUS "CPU only")\nelse()\n'
        "  list(APPEND srcs ops_cuda.cu)\nendif()\nadd_library(ops_core ${srcs})\n"
        "pybind11_add_module(_ops binding.cu)\n"
        "target_link_libraries(_ops PRIVATE ops_core)\n",
    )
    write(
        root,
        "csrc/binding.cu",
        "#include <torch/extension.h>\ntorch::Tensor forward_cpu(torch::Tensor x);\n"
        "torch::Tensor forward_cuda(torch::Tensor x);\n"
        "torch::Tensor forward(torch::Tensor x) {\n  if (x.device().is_cpu()) {\n"
        "    return forward_cpu(x);\n  }\n#ifdef OPS_WITH_CUDA\n  return forward_cuda(x);\n#else\n"
        '  TORCH_CHECK(false, "not compiled with CUDA");\n  return torch::Tensor();\n#endif\n}\n'
        "bool with_cuda() {\n#ifdef OPS_WITH_CUDA\n  return true;\n#else\n  return false;\n#endif\n}\n"
        'PYBIND11_MODULE(_ops, m) {\n  m.def("forward", &forward);\n  m.def("with_cuda", &with_cuda);\n}\n',
    )
    write(root, "csrc/ops_cpu.cu", "#include <torch/extension.h>\nint cpu_only() { return 1; }\n")
    write(root, "csrc/ops_cuda.cu", KERNEL)
    write(
        root,
        "setup.py",
        "import os\nimport setuptools\n\n\ndef cmake_extension(name):\n"
        "    return setuptools.Extension(name, [])\n\n\n"
        "setuptools.setup(name='ops', packages=['ops'], ext_modules=[cmake_extension('_ops')])\n",
    )
    write(root, "ops/__init__.py", "from _ops import forward\n")


def test_a_cmake_build_that_needs_nvcc_for_its_gpu_code_is_a_blocker_not_a_rocm_path(
    tmp_path, run_cli, scan_json
):
    _cmake_project(tmp_path)
    findings = _findings(scan_json, tmp_path)
    [gate] = [f for f in findings if f["rule"] == "ROC605"]
    assert (gate["path"], gate["line"], gate["severity"]) == ("CMakeLists.txt", 3, "error")
    assert "builds its GPU code only with CUDA" in gate["message"]
    assert "a ROCm build is CPU-only" in gate["message"] and "OPS_WITH_CUDA" in gate["message"]
    # the dispatch whose other branch raises is compiled only with CUDA (not `with_cuda()`):
    # a site of the one problem, where the user acts
    assert not [f for f in findings if f["rule"] == "ROC360"]
    assert [(s["path"], s["line"], s["rule"]) for s in gate["related"]] == [
        ("csrc/binding.cu", 8, "ROC360")
    ]
    report = _kernels(run_cli, tmp_path)
    modules = {e["name"]: e for e in report["extensions"]}
    assert modules["_ops"]["label"] == "GPU code built only with CUDA"
    assert ("ops/__init__.py", 1) in {(i["path"], i["line"]) for i in modules["_ops"]["imports"]}
    assert "csrc/ops_cuda.cu" in modules["_ops"]["files"]  # the library it links
    assert not modules["_ops"]["rocm_branch"]
    # compiled only with CUDA is the GPU code to port, not "never compiled for AMD"
    assert report["never_compiled_for_amd"] == {}
    assert _verdict(run_cli, tmp_path)["verdict"] != "ready"


def test_a_setup_py_that_builds_its_gpu_extension_only_with_cuda_home(tmp_path, scan_json):
    write(
        tmp_path,
        "setup.py",
        "import glob\nimport os\n\nimport torch\nfrom setuptools import setup\n"
        "from torch.utils.cpp_extension import CUDA_HOME, CppExtension, CUDAExtension\n\n\n"
        "def get_extensions():\n"
        "    sources = glob.glob(os.path.join('csrc', '*.cpp'))\n"
        "    source_cuda = glob.glob(os.path.join('csrc', 'cuda', '*.cu'))\n"
        "    extension = CppExtension\n    define_macros = []\n"
        "    if (torch.cuda.is_available() and CUDA_HOME is not None) or os.getenv('FORCE_CUDA', '0') == '1':\n"
        "        extension = CUDAExtension\n        sources += source_cuda\n"
        "        define_macros += [('WITH_CUDA', None)]\n"
        "    return [extension('pkg._C', sources, define_macros=define_macros)]\n\n\n"
        "setup(name='pkg', ext_modules=get_extensions())\n",
    )
    write(
        tmp_path,
        "csrc/vision.cpp",
        "#include <torch/extension.h>\nat::Tensor nms_cuda(const at::Tensor& boxes);\n"
        "at::Tensor nms(const at::Tensor& boxes) {\n  if (boxes.is_cuda()) {\n#ifdef WITH_CUDA\n"
        '    return nms_cuda(boxes);\n#else\n    AT_ERROR("Not compiled with GPU support");\n'
        "#endif\n  }\n  return boxes;\n}\n"
        'PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {\n  m.def("nms", &nms);\n}\n',
    )
    write(tmp_path, "csrc/cuda/nms.cu", KERNEL)
    findings = _findings(scan_json, tmp_path)
    [gate] = [f for f in findings if f["rule"] == "ROC606"]
    assert (gate["path"], gate["line"]) == ("setup.py", 14)
    assert "only when" in gate["message"] and "CUDA_HOME is not None" in gate["message"]
    assert [(s["path"], s["line"], s["rule"]) for s in gate["related"]] == [
        ("csrc/vision.cpp", 5, "ROC360")
    ]


# --- class 3: CUDA-only libraries, run-time compilers ---------------------------------------


def test_cuda_only_link_libraries_are_one_finding_at_the_build(tmp_path, run_cli, scan_json):
    write(
        tmp_path,
        "setup.py",
        "from setuptools import setup\nfrom torch.utils import cpp_extension\n\n"
        "setup(\n    name='int8',\n    ext_modules=[\n        cpp_extension.CUDAExtension(\n"
        "            name='int8._CUDA',\n            sources=['int8/kernels/gemm.cu'],\n"
        "            extra_link_args=['-lcublas_static', '-lcublasLt_static', '-lculibos',\n"
        "                             '-lcudart_static', '-lrt', '-lpthread'],\n        ),\n"
        "    ],\n    cmdclass={'build_ext': cpp_extension.BuildExtension},\n)\n",
    )
    write(tmp_path, "int8/kernels/gemm.cu", KERNEL)
    write(tmp_path, "int8/__init__.py", "from ._CUDA import gemm\n")
    [link] = [f for f in _findings(scan_json, tmp_path) if f["rule"] == "ROC607"]
    assert (link["path"], link["line"], link["severity"]) == ("setup.py", 10, "error")
    assert "`-lcublas_static`" in link["message"]
    assert len(link["related"]) == 3  # four CUDA libraries, one problem
    [extension] = _kernels(run_cli, tmp_path)["extensions"]
    assert extension["label"] == "needs small edits"
    assert sum(note["kind"] == "link" for note in extension["build_notes"]) == 4


def test_run_time_compilers_in_python_and_cpp_are_blockers(tmp_path, scan_json):
    write(
        tmp_path,
        "jit/compile.py",
        "import os\nimport subprocess\n\n\ndef build(source, cubin, cuda_home):\n"
        "    nvcc = os.path.join(cuda_home, 'bin', 'nvcc')\n"
        "    subprocess.run([os.path.join(cuda_home, 'bin', 'nvcc'), '-cubin', '-arch=sm_90a', '-o', cubin, source], check=True)\n"
        "    return subprocess.check_output(['nvcc', '--version'])\n",
    )
    write(
        tmp_path,
        "csrc/jit/compiler.hpp",
        "#pragma once\n#include <filesystem>\n#include <nvrtc.h>\n\n"
        "inline std::filesystem::path nvcc_path(const std::filesystem::path& home) {\n"
        '  return home / "bin" / "nvcc";\n}\n\n'
        "inline void compile(nvrtcProgram program, const char** options) {\n"
        "  nvrtcCompileProgram(program, 2, options);\n}\n",
    )
    findings = _findings(scan_json, tmp_path)
    python = [f for f in findings if f["rule"] == "ROC608"]
    assert [(f["path"], f["line"], f["severity"]) for f in python] == [
        ("jit/compile.py", 7, "error")
    ]
    assert "`nvcc`" in python[0]["message"]
    [cpp] = [f for f in findings if f["rule"] == "ROC609"]
    assert (cpp["path"], cpp["line"]) == ("csrc/jit/compiler.hpp", 6)
    assert [site["line"] for site in cpp["related"]] == [10]


# --- class 4: generated sources, IDE-only CMake -----------------------------------------------


def test_an_ide_only_cmakelists_builds_nothing_and_run_time_templates_tie_kernel_headers(
    tmp_path, run_cli
):
    write(
        tmp_path,
        "CMakeLists.txt",
        "# NOTES: current just for CMake-based IDE (e.g. CLion) indexing, the real compilation "
        "is done via JIT\ncmake_minimum_required(VERSION 3.10)\n"
        "project(gemm LANGUAGES CXX CUDA)\n"
        "pybind11_add_module(_C csrc/api.cpp)\ncuda_add_library(gemm_indexing STATIC csrc/indexing/main.cu)\n",
    )
    write(
        tmp_path,
        "setup.py",
        "from setuptools import setup\nfrom torch.utils.cpp_extension import CUDAExtension\n"
        "setup(name='gemm', ext_modules=[CUDAExtension(name='gemm._C', sources=['csrc/api.cpp'])])\n",
    )
    write(tmp_path, "csrc/api.cpp", '#include "jit_kernels/gemm.hpp"\nint api() { return 0; }\n')
    write(
        tmp_path,
        "csrc/jit_kernels/gemm.hpp",
        "#pragma once\n#include <string>\ninline std::string generate() {\n"
        '    return R"(\n#include <gemm/impls/sm90_gemm.cuh>\n'
        "static void instantiate() { auto p = &sm90_gemm<128>; }\n"
        ')";\n}\n',
    )
    write(tmp_path, "gemm/include/gemm/impls/sm90_gemm.cuh", KERNEL)
    write(tmp_path, "csrc/indexing/main.cu", '#include "../jit_kernels/gemm.hpp"\n')
    write(tmp_path, "gemm/__init__.py", "from . import _C\n")
    report = _kernels(run_cli, tmp_path)
    [extension] = report["extensions"]
    assert extension["name"] == "gemm._C"
    assert "gemm/include/gemm/impls/sm90_gemm.cuh" in extension["files"]
    assert [n["kind"] for n in report["build_notes"]] == ["ide-only"]
    assert report["never_compiled_for_amd"] == {}


def test_kernels_a_setup_py_generates_are_said_not_read_and_their_headers_stay_compiled(
    tmp_path, run_cli, scan_json
):
    write(
        tmp_path,
        "setup.py",
        "from setuptools import setup\nfrom torch.utils.cpp_extension import CUDAExtension\n\n"
        "TEMPLATE = '''\n#include \"kernel_impl.cuh\"\n"
        "template __global__ void scale<{dtype}>(const {dtype}*, {dtype}*, int);\n'''\n\n"
        "sources = ['csrc/binding.cpp', 'csrc/kernel_impl.cu']\n"
        "for dtype in ['float', 'half']:\n"
        "    with open(f'csrc/generated/scale_{dtype}.cu', 'w') as out:\n"
        "        out.write(TEMPLATE.format(dtype=dtype))\n"
        "    sources.append(f'csrc/generated/scale_{dtype}.cu')\n\n"
        "setup(name='pkg', ext_modules=[CUDAExtension('pkg._C', sources)])\n",
    )
    write(tmp_path, "csrc/binding.cpp", BINDING)
    write(tmp_path, "csrc/kernel_impl.cu", KERNEL)
    write(
        tmp_path,
        "csrc/kernel_impl.cuh",
        "#pragma once\ntemplate <typename T> __global__ void scale(const T*, T*, int);\n",
    )
    write(tmp_path, "pkg/__init__.py", "from . import _C\n")
    [generated] = [f for f in _findings(scan_json, tmp_path) if f["rule"] == "ROC610"]
    assert (generated["path"], generated["line"]) == ("setup.py", 11)
    assert "generated at build time, not read" in generated["message"]
    report = _kernels(run_cli, tmp_path)
    assert "csrc/kernel_impl.cuh" not in report["never_compiled_for_amd"]


# --- class 5: vendored code, by what it is --------------------------------------------------


def test_vendored_code_is_left_out_by_what_it_is(tmp_path, scan_json):
    trap = 'void hang() { asm volatile("int3"); }\n'
    ptx = '__device__ void f(unsigned* r) { asm volatile("mov.u32 %0, %%laneid;" : "=r"(r[0])); }\n'
    # a folder named for vendored code, a submodule .gitmodules names, a library's own copy
    write(tmp_path, "ffmlp/dependencies/googletest/src/gtest.cc", trap)
    write(
        tmp_path,
        ".gitmodules",
        '[submodule "libs/cutlass"]\n\tpath = libs/cutlass\n\turl = https://example.invalid/cutlass.git\n',
    )
    write(tmp_path, "libs/cutlass/include/arch.cuh", ptx)
    write(tmp_path, "contrib/fmt/LICENSE.rst", "MIT\n")
    write(
        tmp_path, "contrib/fmt/CMakeLists.txt", "project(fmt CXX)\nadd_library(fmt src/format.cc)\n"
    )
    write(tmp_path, "contrib/fmt/src/format.cu", ptx)
    write(tmp_path, "csrc/own.cu", ptx)
    paths = {f["path"] for f in _findings(scan_json, tmp_path) if f["rule"] == "ROC310"}
    assert paths == {"csrc/own.cu"}


# --- unknown is not fine --------------------------------------------------------------------


def test_a_build_the_reading_cannot_follow_is_said_and_keeps_the_verdict_from_ready(
    tmp_path, run_cli, scan_json
):
    write(
        tmp_path,
        "setup.py",
        "from setuptools import setup\nfrom torch.utils.cpp_extension import CUDAExtension\n"
        "from buildtools import discover_sources\n\n"
        "setup(name='pkg', ext_modules=[CUDAExtension('pkg._C', sources=discover_sources('csrc'))])\n",
    )
    write(tmp_path, "csrc/op.cu", KERNEL)
    write(tmp_path, "pkg/__init__.py", '"""A package."""\n')
    [unread] = [f for f in _findings(scan_json, tmp_path) if f["rule"] == "ROC610"]
    assert (unread["path"], unread["line"]) == ("setup.py", 5)
    assert (
        "discover_sources('csrc')" in unread["message"] or "discover_sources(" in unread["message"]
    )
    result = run_cli("kernels", "--no-hipify", str(tmp_path))
    assert result.exit_code == 1
    assert "setup.py:5" in result.output and "not tied to this build" in result.output
    assert _verdict(run_cli, tmp_path)["verdict"] != "ready"


def test_a_dotted_module_is_linked_to_its_own_imports_only(tmp_path, run_cli):
    write(
        tmp_path,
        "setup.py",
        "from setuptools import setup\nfrom torch.utils.cpp_extension import CUDAExtension\n"
        "setup(name='det', ext_modules=[CUDAExtension('det._C', ['det/csrc/nms.cu'])])\n",
    )
    write(tmp_path, "det/csrc/nms.cu", KERNEL)
    write(tmp_path, "det/__init__.py", "")
    write(tmp_path, "det/config/__init__.py", "from .defaults import _C as cfg\n")
    write(tmp_path, "det/config/defaults.py", "_C = {}\n")
    write(tmp_path, "det/layers/nms.py", "from det import _C\n")
    write(tmp_path, "det/layers/roi.py", "from .. import _C\n")
    write(tmp_path, "det/layers/align.py", "from .._C import (\n    roi_align,\n)\n")
    [extension] = _kernels(run_cli, tmp_path)["extensions"]
    assert [(i["path"], i["line"]) for i in extension["imports"]] == [
        ("det/layers/align.py", 1),
        ("det/layers/nms.py", 1),
        ("det/layers/roi.py", 1),
    ]


def test_an_import_inside_a_function_whose_signature_closes_at_column_0_is_lazy(tmp_path, run_cli):
    """AQLM's kernel_selector: ``def f(\n    a,\n) -> T:`` then the wrapper module imported in an
    ``if`` with a multi-line condition; the import runs when the function is called."""
    write(tmp_path, "pkg/__init__.py", "from .selector import pick\n")
    write(
        tmp_path,
        "pkg/wrapper.py",
        "import os\nfrom torch.utils.cpp_extension import load\n\n"
        "HERE = os.path.dirname(__file__)\n"
        "EXT = load(name='codebook_cuda', sources=[os.path.join(HERE, 'k.cu')])\n",
    )
    write(
        tmp_path,
        "pkg/selector.py",
        "def pick(\n    codes,\n    device: str,\n) -> str:\n"
        "    if (device, codes) == (\n        'cuda',\n        16,\n    ):\n"
        "        from .wrapper import EXT\n\n        return EXT\n    return None\n",
    )
    write(tmp_path, "pkg/k.cu", KERNEL)
    [extension] = _kernels(run_cli, tmp_path)["extensions"]
    assert {(i["path"], i["how"]) for i in extension["imports"]} == {("pkg/selector.py", "lazy")}


def test_a_kernel_file_a_script_writes_before_the_build_is_generated_not_read(tmp_path, run_cli):
    """fairseq's lightconv_layer: the kernel includes launch files cuda_function_gen.py writes."""
    write(
        tmp_path,
        "conv/setup.py",
        "from setuptools import setup\n"
        "from torch.utils.cpp_extension import BuildExtension, CUDAExtension\n"
        "setup(name='conv', ext_modules=[CUDAExtension('conv_cuda', ['conv_cuda.cpp', "
        "'conv_cuda_kernel.cu'])], cmdclass={'build_ext': BuildExtension})\n",
    )
    write(
        tmp_path,
        "conv/cuda_function_gen.py",
        "def gen_forward():\n    with open('conv_cuda_forward.cu', 'w') as forward:\n"
        "        forward.write('// launches')\n",
    )
    write(
        tmp_path,
        "conv/conv_cuda_kernel.cu",
        '#include "conv_cuda_forward.cu"\n#include "other_missing.cuh"\n' + KERNEL,
    )
    write(tmp_path, "conv/conv_cuda.cpp", BINDING)
    [extension] = _kernels(run_cli, tmp_path)["extensions"]
    notes = {(n["line"], n["kind"]): n["message"] for n in extension["build_notes"]}
    assert "generated at build time, not read" in notes[(1, "generated")]
    assert "cuda_function_gen.py" in notes[(1, "generated")]
    assert notes[(2, "unread")] == "`other_missing.cuh` is not in the project: not read"
    assert not any("not compiled for AMD" in message for message in notes.values())
