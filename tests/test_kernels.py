"""CUDA kernels in scope (issue #32), on real components: tree-sitter's CUDA grammar, the
preprocessor's branches as HIP sees them, build files read statically, PyTorch's own hipify on
a private copy, and the distribution's hipcc compiling for AMD targets (CI installs it)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from migrator.kernels import builds, macros, preproc
from migrator.kernels.source import parse
from tests.conftest import FIXTURES, write

FIXTURE = FIXTURES / "quant_kernels"


def _files(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


# --- the C/C++ reader and the preprocessor --------------------------------------------------


def test_asm_in_comments_and_strings_is_not_code():
    source = parse(
        b'// asm volatile("mov.u32 %0, %%laneid;");\n'
        b'const char* s = "asm(\\"trap;\\")";\n'
        b'__device__ void f() { asm volatile("" ::: "memory"); }\n'
    )
    assert [source.line_of(b.start) for b in source.asm_blocks()] == [3]
    assert source.asm_blocks()[0].template == ""


@pytest.mark.parametrize(
    ("condition", "skipped", "fallback"),
    [
        ("#ifdef USE_ROCM\nrocm();\n#else\ncuda();\n#endif\n", "cuda();", True),
        ("#ifndef USE_ROCM\ncuda();\n#endif\n", "cuda();", True),
        ("#if __CUDA_ARCH__ >= 800\nfast();\n#else\nslow();\n#endif\n", "fast();", True),
        ("#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800\nfast();\n#endif\n", "fast();", False),
        ("#if CUDA_VERSION >= 11000\nnew_api();\n#else\nold_api();\n#endif\n", "new_api();", True),
    ],
)
def test_branches_hipcc_skips(condition, skipped, fallback):
    source = parse(condition.encode())
    offset = source.data.index(skipped.encode())
    regions = [r for r in preproc.regions(source) if r.start <= offset < r.end]
    assert len(regions) == 1
    assert regions[0].fallback is fallback


def test_host_pass_guard_turns_the_cuda_path_on_under_hip():
    """`!defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800` is true under HIP: the PTX compiles
    for AMD, so it is not a guard."""
    source = parse(
        b"#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800\n"
        b'asm volatile("cp.async.ca.shared.global [%0], [%1], 16;" :: "r"(a), "l"(b));\n'
        b"#endif\n"
    )
    assert preproc.regions(source) == []


def test_rocm_named_project_macro_counts_as_a_rocm_branch():
    source = parse(b"#if BNB_HIP\nv += __shfl_xor(v, 16, 32);\n#endif\n")
    assert preproc.rocm_only(source, source.data.index(b"__shfl"))


# --- the scan -------------------------------------------------------------------------------


def test_scan_reports_the_ptx_kernel_at_its_line_and_not_the_clean_one(scan_json):
    report = scan_json("--no-cache", str(FIXTURE), cwd=FIXTURE)
    kernel = [f for f in report["findings"] if f["path"].startswith("csrc/")]
    assert [(f["rule"], f["path"], f["line"], f["column"]) for f in kernel] == [
        ("ROC310", "csrc/lane_ptx.cu", 6, 3),
        ("ROC361", "csrc/mma_gemm.cu", 6, 1),
    ]


def test_a_cu_file_is_read_when_named_directly(run_cli):
    result = run_cli(
        "scan", "--no-cache", "--output-format", "concise", str(FIXTURE / "csrc" / "lane_ptx.cu")
    )
    assert result.exit_code == 1
    assert "lane_ptx.cu:6:3: ROC310" in result.output


def test_guarded_ptx_is_hidden_and_arch_branch_without_amd_path_is_reported(tmp_path, scan_json):
    write(
        tmp_path,
        "k.cu",
        "#ifdef USE_ROCM\n__device__ unsigned lane() { return __lane_id(); }\n#else\n"
        '__device__ unsigned lane() { unsigned i; asm("mov.u32 %0, %%laneid;" : "=r"(i)); return i; }\n'
        "#endif\n"
        "__global__ void k(float* x) {\n#if __CUDA_ARCH__ >= 800\n"
        '  asm volatile("st.global.release.gpu.f32 [%0], %1;" :: "l"(x), "f"(1.f));\n'
        "#endif\n}\n"
        "void launch(float* x) { k<<<1, 1>>>(x); }\n",
    )
    report = scan_json("--no-cache", str(tmp_path))
    found = sorted((f["rule"], f["line"]) for f in report["findings"])
    assert found == [("ROC361", 6)]  # the kernel compiles to nothing on AMD: one problem
    (kernel,) = report["findings"]
    assert "compiles to nothing" in kernel["message"]
    assert sorted((r["rule"], r["line"]) for r in kernel["related"]) == [
        ("ROC310", 8),
        ("ROC360", 7),
    ]


_UTILS_H = (
    "#pragma once\n#ifdef __HIP_PLATFORM_AMD__\n#include <hip/hip_fp16.h>\n"
    "#else\n#if __CUDA_ARCH__ >= 530\n#define PTX_AVAILABLE\n#endif\n#endif\n"
)
_USES_PTX_MACRO = (
    '#include "utils.h"\n__device__ float load(const float* p) {\n  float v;\n'
    "#ifdef PTX_AVAILABLE\n"
    '  asm volatile("ld.global.nc.f32 %0, [%1];" : "=f"(v) : "l"(p));\n'
    "#else\n  v = __ldg(p);\n#endif\n  return v;\n}\n"
)


def test_a_macro_a_header_defines_only_for_nvidia_leaves_the_portable_branch(tmp_path, scan_json):
    write(tmp_path, "csrc/includes/utils.h", _UTILS_H)
    write(tmp_path, "csrc/ops/load.cu", _USES_PTX_MACRO)
    report = scan_json("--no-cache", str(tmp_path))
    assert [f["rule"] for f in report["findings"]] == []
    # the same header defining it for every build: the PTX is compiled for AMD
    write(tmp_path, "csrc/includes/utils.h", "#pragma once\n#define PTX_AVAILABLE\n")
    report = scan_json("--no-cache", str(tmp_path))
    assert [(f["rule"], f["path"], f["line"]) for f in report["findings"]] == [
        ("ROC310", "csrc/ops/load.cu", 5)
    ]


def test_macros_defined_only_where_hip_skips():
    assert macros.nvidia_only_macros([_UTILS_H.encode()]) == {"PTX_AVAILABLE"}
    # defined for AMD too somewhere in the project: not NVIDIA-only
    both = [_UTILS_H.encode(), b"#ifdef USE_ROCM\n#define PTX_AVAILABLE 0\n#endif\n"]
    assert macros.nvidia_only_macros(both) == frozenset()
    assert macros.nvidia_only_macros([b"#ifdef X\n#define Y\n#endif\n"]) == frozenset()


def test_sources_only_the_cuda_branch_builds_are_not_reported(tmp_path, scan_json):
    write(
        tmp_path,
        "setup.py",
        "import glob, os, torch\nfrom torch.utils.cpp_extension import CUDAExtension\n"
        "this_dir = os.path.dirname(__file__)\n"
        "sources = glob.glob(os.path.join(this_dir, 'csrc', '*.cpp'))\n"
        "if torch.version.hip:\n    sources += ['csrc/hip/gemm.cu']\n"
        "else:\n    sources += glob.glob(os.path.join(this_dir, 'csrc', 'cuda', '*.cu'))\n"
        "ext = CUDAExtension('pkg._C', sources=sources)\n",
    )
    ptx = '__device__ void f(unsigned* r, unsigned a) { asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];" : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(a)); }\n'
    write(tmp_path, "csrc/cuda/gemm.cu", '#include "mma_utils.cuh"\n' + ptx)
    write(tmp_path, "csrc/cuda/mma_utils.cuh", ptx)
    write(tmp_path, "csrc/hip/gemm.cu", ptx)
    write(tmp_path, "csrc/binding.cpp", "int main() { return 0; }\n")
    excluded = builds.cuda_only_sources(tmp_path, _files(tmp_path))
    assert sorted(excluded) == ["csrc/cuda/gemm.cu", "csrc/cuda/mma_utils.cuh"]
    report = scan_json("--no-cache", str(tmp_path))
    assert [
        (f["rule"], f["path"]) for f in report["findings"] if f["rule"].startswith("ROC31")
    ] == [("ROC311", "csrc/hip/gemm.cu")]


def test_cmake_backend_branches(tmp_path):
    write(
        tmp_path,
        "CMakeLists.txt",
        "set(GPU_FILES csrc/ops.cu)\nif(BUILD_CUDA)\n  list(APPEND SRC ${GPU_FILES} csrc/sm80.cu)\n"
        "elseif(BUILD_HIP)\n  list(APPEND SRC ${GPU_FILES})\nendif()\nadd_library(lib SHARED ${SRC})\n",
    )
    for name in ("ops.cu", "sm80.cu"):
        write(tmp_path, f"csrc/{name}", "__global__ void k() {}\n")
    assert builds.cuda_only_sources(tmp_path, _files(tmp_path)) == {
        "csrc/sm80.cu": "only the CUDA build in CMakeLists.txt compiles it"
    }


# --- readiness ------------------------------------------------------------------------------


def _verdict(run_cli, path: Path) -> dict:
    result = run_cli("report", "--format", "json", "--no-cache", str(path))
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    return document["projects"][0] if "projects" in document else document


def test_a_ptx_extension_imported_at_module_level_blocks_the_package(run_cli):
    project = _verdict(run_cli, FIXTURE)
    assert project["verdict"] == "blocked"
    assert any("ROC310" in item["rules"] for item in project["deciding"])


def test_the_same_extension_behind_an_import_guard_only_needs_work(run_cli, tmp_path):
    copy = tmp_path / "quant_kernels"
    shutil.copytree(FIXTURE, copy)
    init = copy / "quant_kernels" / "__init__.py"
    init.write_text(
        '"""Guarded."""\n\nfrom quant_kernels import _dequant\n\ntry:\n'
        "    from quant_kernels import _lane\nexcept ImportError:\n    _lane = None\n"
    )
    assert _verdict(run_cli, copy)["verdict"] == "needs-work"


# --- bad input ------------------------------------------------------------------------------


def test_bad_kernel_sources_each_get_one_line_and_the_rest_goes_on(tmp_path, run_cli):
    write(
        tmp_path,
        "broken.cu",
        '__global__ void k( {{{ asm volatile("mov.u32 %0, %%laneid;" : "=r"(x));\n',
    )
    write(tmp_path, "a.cuh", '#include "b.cuh"\n__device__ int a();\n')
    write(tmp_path, "b.cuh", '#include "a.cuh"\n__device__ int b();\n')
    write(tmp_path, "missing.cu", '#include "nowhere.h"\n__global__ void k() {}\n')
    write(tmp_path, "latin1.cu", b"// caf\xe9\n__global__ void k() {}\n")
    big = tmp_path / "generated.cu"
    with big.open("w") as handle:
        line = "__device__ int f%d() { return %d; }\n"
        for index in range(1_300_000):
            handle.write(line % (index, index))
    assert big.stat().st_size > 40 * 1024 * 1024
    write(
        tmp_path,
        "ptx.cu",
        '__device__ void f() { unsigned i; asm("mov.u32 %0, %%laneid;" : "=r"(i)); }\n',
    )
    result = run_cli("scan", "--no-cache", "--output-format", "concise", str(tmp_path))
    assert result.exit_code == 1
    assert "ptx.cu:1:" in result.output and "ROC310" in result.output
    assert "broken.cu:1:" in result.output  # error recovery keeps the asm
    assert "generated.cu" in result.output  # skipped, named, with the reason
    assert "Traceback" not in result.output


def test_kernel_evaluation_script_on_the_fixture(scan_json):
    """scripts/kernel_eval.py's scoring on the bundled fixture's labels: the PTX site found with
    its class, no harmless site reported, nothing unlabelled."""
    import importlib.util
    import sys

    from migrator.files.tomlcompat import tomllib
    from tests.conftest import ROOT

    spec = importlib.util.spec_from_file_location(
        "kernel_eval", ROOT / "scripts" / "kernel_eval.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["kernel_eval"] = module
    spec.loader.exec_module(module)
    labels = tomllib.loads(
        (ROOT / "tests" / "eval" / "kernels_fixture" / "quant_kernels.toml").read_text()
    )
    report = scan_json("--no-cache", str(FIXTURE), cwd=FIXTURE)
    result = module.evaluate("quant_kernels", labels, report["findings"], FIXTURES)
    assert (result.blocking, result.found, result.harmless, result.alarms) == (4, 4, 6, 0)
    assert result.unlabelled == [] and result.missed == []


def _tokens(source: Path, *defines: str) -> list[str]:
    """The host compiler's preprocessed token stream of a file (g++ -E -P)."""
    import subprocess

    done = subprocess.run(
        ["g++", "-E", "-P", "-x", "c++", *defines, str(source)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return done.stdout.split()


def test_the_mask_fix_leaves_the_nvidia_build_token_for_token_identical(tmp_path, run_cli):
    kernel = (
        "#define FINAL_MASK 0xffffffff\n"
        "constexpr unsigned FULL_MASK = 0xffffffff;\n"
        "template <typename T> T reduce(T v) {\n"
        "  for (int o = 16; o > 0; o >>= 1) v += shfl_xor(FINAL_MASK, v, o) + FULL_MASK;\n"
        "  return v;\n}\n"
        "unsigned long long shfl_xor(unsigned long long, float v, int) { return 0; }\n"
    )
    path = write(tmp_path, "reduce.cuh", kernel)
    before = path.read_text()
    nvidia_before = _tokens(path)
    result = run_cli("fix", str(tmp_path))
    assert result.exit_code in (0, 1), result.output
    after = path.read_text()
    assert after != before
    assert _tokens(path) == nvidia_before  # NVIDIA: the same program
    rocm = " ".join(_tokens(path, "-DUSE_ROCM"))
    assert rocm.count("0xffffffffffffffffull") == 2  # the define's use and the constant
    assert "0xffffffff " not in rocm and "0xffffffff;" not in rocm
    assert run_cli("fix", str(tmp_path)).exit_code in (0, 1)
    assert path.read_text() == after  # fixing twice changes nothing


def test_the_report_shows_each_extension_with_its_blockers_and_imports(run_cli):
    result = run_cli("report", "--format", "md", "--no-cache", str(FIXTURE))
    assert result.exit_code == 0
    assert (
        "| `quant_kernels._lane` | setup.py:16 | blocked | 2 | no | inline-ptx 1 | — |"
        " quant_kernels/__init__.py:3 (module level) |" in result.stdout
    )
    document = _verdict(run_cli, FIXTURE)
    assert [row["label"] for row in document["extensions"]] == [
        "ports mechanically",
        "blocked",
        "blocked",
    ]
