"""Opt-in switches nothing in the project turns on (issue #48, fresh round 4): a vendored
library's ``#ifdef FLASHINFER_ENABLE_FP8`` block (``<cuda_fp8.h>``, ``__nv_fp8_e4m3``) is compiled
by no build of the project, so it is not reported; once the build defines the switch it is."""

from __future__ import annotations

from pathlib import Path

from migrator.kernels.switches import is_switch
from tests.conftest import write

VEC = (
    "#pragma once\n"
    "#ifdef FLASHINFER_ENABLE_FP8\n"
    "#include <cuda_fp8.h>\n"
    "#endif\n"
    "struct vec { float x; };\n"
    "#ifdef FLASHINFER_ENABLE_FP8\n"
    "__device__ __nv_fp8_e4m3 to_fp8(float v) { return __nv_fp8_e4m3(v); }\n"
    "#endif\n"
)
KERNEL = '#include "flashinfer/vec.cuh"\n__global__ void k(vec* v) { v[0].x = 1.f; }\n'


def _project(root: Path, flags: str) -> None:
    write(root, "csrc/include/flashinfer/vec.cuh", VEC)
    write(root, "csrc/k.cu", KERNEL)
    write(
        root,
        "setup.py",
        "from setuptools import setup\n"
        "from torch.utils.cpp_extension import BuildExtension, CUDAExtension\n\n"
        "setup(name='k', ext_modules=[CUDAExtension('k._C', ['csrc/k.cu'],\n"
        f"      include_dirs=['csrc/include'], extra_compile_args={{'nvcc': [{flags}]}})],\n"
        "      cmdclass={'build_ext': BuildExtension})\n",
    )


def _rules(scan_json, root: Path) -> set[tuple[str, str, int]]:
    findings = scan_json("--no-cache", str(root))["findings"]
    return {
        (site.get("rule") or finding["rule"], site.get("path", finding["path"]), site["line"])
        for finding in findings
        for site in [finding, *finding.get("related", [])]
        if finding["severity"] in {"warning", "error"}
    }


def test_a_switch_no_build_defines_guards_code_no_build_compiles(tmp_path, scan_json):
    _project(tmp_path, "'-O3'")
    found = _rules(scan_json, tmp_path)
    assert not {f for f in found if f[1] == "csrc/include/flashinfer/vec.cuh"}


def test_a_switch_the_build_defines_is_read_as_compiled(tmp_path, scan_json):
    _project(tmp_path, "'-O3', '-DFLASHINFER_ENABLE_FP8'")
    found = _rules(scan_json, tmp_path)
    assert ("ROC340", "csrc/include/flashinfer/vec.cuh", 3) in found


def test_only_opt_in_names_are_switches():
    assert is_switch("FLASHINFER_ENABLE_FP8") and is_switch("ENABLE_BF16")
    # detection macros a library header defines, and names that merely contain the letters
    assert not is_switch("CUTLASS_ARCH_MMA_SM80_ENABLED")
    assert not is_switch("ENABLED_FEATURES") and not is_switch("REENABLE")
