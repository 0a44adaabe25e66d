"""The compile check certifies only what it checked (issue #48): a unit compiles with the
include folders and macros its build gives it (a project header under ``include/``), every
missing header of a unit is shown, a unit outside any extension is reported in text, JSON and
SARIF, the command exits 1 when any unit fails, the device library is linked where it is
installed, and an error is "not checkable" only for a named gap of the installed ROCm. Runs
the real command line with Debian's hipcc (scripts/test.sh installs it)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from migrator.kernels.cmake import read_cmake
from migrator.kernels.compile import compile_units, find_compiler, translation_units
from migrator.kernels.compile_env import gap_of, has_device_library
from migrator.kernels.compile_paths import missing_headers, project_include_folders
from migrator.kernels.hipify import run_hipify

SETUP = """\
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

setup(
    name="mylib",
    ext_modules=[
        CUDAExtension(
            "mylib._ops",
            ["csrc/scale.cu", "csrc/two_missing.cu"],
            include_dirs=["include"],
            define_macros=[("MYLIB_SCALE", "2")],
        )
    ],
    cmdclass={"build_ext": BuildExtension},
)
"""
FILES = {
    "setup.py": SETUP,
    "mylib/__init__.py": "from mylib import _ops\n",
    "include/mylib/scale.h": (
        '#pragma once\n#ifndef MYLIB_SCALE\n#error "the build defines MYLIB_SCALE"\n#endif\n'
        "__device__ inline float scaled(float x) { return x * MYLIB_SCALE; }\n"
    ),
    # sinf and the work-item ids come from the device library: linked, not -nogpulib
    "csrc/scale.cu": (
        '#include <cuda_runtime.h>\n#include "mylib/scale.h"\n\n'
        "__global__ void scale_kernel(float* x, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (i < n) x[i] = scaled(sinf(x[i]));\n}\n"
    ),
    "csrc/two_missing.cu": (
        '#include <cuda_runtime.h>\n#include "generated/config.h"\n#include <vendor_lib/api.h>\n'
        '#error "needs the generated configuration"\n'
        "__global__ void copy_kernel(float* x) { x[threadIdx.x] = 1.f; }\n"
    ),
    "tools/loose.cu": (
        "#include <cuda_runtime.h>\n"
        "__global__ void loose_kernel(float* x) { x[threadIdx.x] = undefined_name; }\n"
    ),
}


def _project(root: Path) -> Path:
    for relative, text in FILES.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def _kernels(root: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "migrator", "kernels", str(root), "--compile", "-j", "2"]
        + ["--target", "gfx1030", *extra],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _project(tmp_path_factory.mktemp("mylib"))


@pytest.fixture(scope="module")
def report(project: Path) -> tuple[int, dict, str]:
    done = _kernels(project, "--format", "json")
    return done.returncode, json.loads(done.stdout), done.stderr


def _results(report: dict) -> dict[str, dict]:
    rows = [r for ext in report["extensions"] for r in ext["compile"]]
    return {r["path"]: r for r in rows + report["unassigned"].get("compile", [])}


def test_a_unit_including_a_project_header_from_include_compiles_with_the_builds_macros(report):
    _, data, _ = report
    unit = _results(data)["csrc/scale.cu"]
    assert (unit["status"], unit["diagnostics"]) == ("pass", [])


def test_every_missing_header_of_a_unit_is_shown_and_the_errors_past_them(report):
    _, data, _ = report
    unit = _results(data)["csrc/two_missing.cu"]
    assert unit["status"] == "fail"
    assert [(d["path"], d["line"], d["message"]) for d in unit["diagnostics"]] == [
        ("csrc/two_missing.cu", 2, "'generated/config.h' file not found"),
        ("csrc/two_missing.cu", 3, "'vendor_lib/api.h' file not found"),
        ("csrc/two_missing.cu", 4, '"needs the generated configuration"'),
    ]


def test_a_unit_outside_any_extension_is_reported_and_the_command_exits_1(report):
    code, data, stderr = report
    assert code == 1
    (loose,) = data["unassigned"]["compile"]
    assert (loose["path"], loose["status"]) == ("tools/loose.cu", "fail")
    assert loose["diagnostics"][0]["line"] == 2
    assert "undefined_name" in loose["diagnostics"][0]["message"]
    assert "about" in stderr and "s left" in stderr  # progress with an estimate


def test_the_report_names_the_compiler_targets_and_what_it_could_not_check(report):
    _, data, _ = report
    compiler = data["compiler"]
    assert compiler["path"].endswith("hipcc") and compiler["hip_version"]
    assert compiler["targets"] == ["gfx1030"]
    assert "linking with the host" in compiler["not_checked"]
    assert compiler["device_libraries"]  # Debian's rocm-device-libs
    assert "-nogpulib" not in compiler["not_checked"]


def test_text_and_sarif_carry_every_error_of_every_unit(project: Path):
    text = _kernels(project)
    assert text.returncode == 1
    assert "csrc/two_missing.cu:2: 'generated/config.h' file not found" in text.stdout
    assert "csrc/two_missing.cu:3: 'vendor_lib/api.h' file not found" in text.stdout
    assert "tools/loose.cu:2: use of undeclared identifier 'undefined_name'" in text.stdout
    sarif = _kernels(project, "--format", "sarif")
    assert sarif.returncode == 1
    results = json.loads(sarif.stdout)["runs"][0]["results"]
    located = {
        (
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            r["locations"][0]["physicalLocation"]["region"]["startLine"],
        )
        for r in results
        if r["ruleId"] == "compile/fail"
    }
    assert {("csrc/two_missing.cu", 2), ("csrc/two_missing.cu", 3), ("tools/loose.cu", 2)} <= (
        located
    )


def test_the_device_library_is_found_for_an_rdna_target():
    assert has_device_library("gfx1030") and has_device_library("gfx90a")
    assert not has_device_library("gfx9999")


def test_not_checkable_names_the_gap_and_the_rocm_that_has_it():
    gap = gap_of("use of undeclared identifier '__shfl_xor_sync'", "5.2.21153-0")
    assert gap == (
        "HIP 5.2.21153-0 lacks the warp-synchronous builtin `__shfl_xor_sync`; "
        "ROCm 6.3 (6.2 with HIP_ENABLE_WARP_SYNC_BUILTINS) has it"
    )
    assert "hipCUB" in (gap_of("'hipcub/hipcub.hpp' file not found", "5.2") or "")
    assert gap_of("use of undeclared identifier 'foo'", "5.2") is None
    assert gap_of("'mylib/api.h' file not found", "5.2") is None


def test_missing_headers_are_read_from_the_dependency_list(tmp_path):
    (tmp_path / "a.h").write_text("")
    listing = "x.o: a.h \\\n  /usr/include/stdio.h gen/config.h \\\n  vendor/api.h\n"
    assert missing_headers(listing, tmp_path) == ["gen/config.h", "vendor/api.h"]


def test_project_include_roots_are_where_an_include_resolves(tmp_path):
    _project(tmp_path)
    folders = project_include_folders(
        tmp_path, ["csrc/scale.cu", "include/mylib/scale.h", "csrc/two_missing.cu"]
    )
    assert folders == [tmp_path / "include"]


def test_cmake_include_folders_and_definitions_belong_to_the_target():
    model = read_cmake(
        "include_directories(${CMAKE_CURRENT_SOURCE_DIR}/include)\n"
        "add_library(ops SHARED src/a.cu)\n"
        "target_include_directories(ops PRIVATE third/cub ${CUDA_INCLUDE_DIRS})\n"
        "target_compile_definitions(ops PRIVATE WITH_OPS=1 -DFAST)\n",
        "native",
        "native/CMakeLists.txt",
    )
    (ops,) = model.extensions
    assert ops.include_dirs == ["native/include", "native/third/cub"]
    assert ops.defines == ["WITH_OPS=1", "FAST"]


def _sleeping_hipcc(folder: Path) -> tuple[Path, Path]:
    """A fake hipcc that answers ``--version`` and otherwise starts a long sleep, writing its pid
    to the second path returned: a compile that never ends, with a child of its own."""
    pids = folder / "pids"
    fake = folder / "hipcc"
    fake.write_text(
        "#!/bin/sh\ncase \"$*\" in *--version*) echo 'HIP version: 0.0-fake'; exit 0;; esac\n"
        f"sleep 120 & echo $! >> {pids}\nwait\n"
    )
    fake.chmod(0o755)
    return fake, pids


def _ended(pids: Path) -> bool:
    """Whether every process whose pid ``pids`` lists is gone (or a zombie)."""
    for pid in pids.read_text().split():
        stat = Path(f"/proc/{pid}/stat")
        if stat.exists() and stat.read_text().rsplit(")", 1)[1].split()[0] != "Z":
            return False
    return True


def test_a_timed_out_compiler_is_killed_with_everything_it_started(tmp_path):
    project = _project(tmp_path / "p")
    fake, pids = _sleeping_hipcc(tmp_path)
    os.environ["HIPCC"] = str(fake)
    try:
        compiler = find_compiler()
    finally:
        os.environ.pop("HIPCC", None)
    assert compiler is not None
    files = sorted(p.relative_to(project).as_posix() for p in project.rglob("*") if p.is_file())
    run = run_hipify(project, files, keep=tmp_path / "work")
    (result,) = compile_units(
        compiler, run, project, translation_units(run)[:1], ["gfx90a"], timeout=2
    )
    assert result.status == "timeout"
    time.sleep(0.5)
    assert _ended(pids)


def test_torch_through_a_project_header_compiles_on_the_prelude_and_errors_stay_the_units(
    tmp_path,
):
    """torch's headers are prepared when only a project header includes them, the units are
    compiled on the precompiled prelude, and a unit's error is reported at its own line."""
    root = tmp_path / "tops"
    files = {
        "setup.py": SETUP.replace('"csrc/scale.cu", "csrc/two_missing.cu"', '"csrc/good.cu"'),
        "csrc/ops.h": "#pragma once\n#include <torch/extension.h>\n",
        "csrc/good.cu": (
            '#include "ops.h"\n'
            "__global__ void twice(float* x) { x[threadIdx.x] *= 2.f; }\n"
            "torch::Tensor run(torch::Tensor x) {\n"
            "  twice<<<1, 32>>>(x.data_ptr<float>());\n  return x;\n}\n"
        ),
        "csrc/bad.cu": (
            "#include <torch/extension.h>\n"
            "__global__ void broken(float* x) { x[threadIdx.x] = not_declared; }\n"
        ),
    }
    for relative, text in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text)
    done = subprocess.run(
        [sys.executable, "-m", "migrator", "kernels", str(root), "--compile", "-j", "2"]
        # torch's headers take minutes to compile on a loaded two-core machine
        + ["--target", "gfx90a", "--format", "json", "--timeout", "900"],
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    data = json.loads(done.stdout)
    results = _results(data)
    assert results["csrc/good.cu"]["status"] == "pass", results["csrc/good.cu"]
    bad = results["csrc/bad.cu"]
    assert bad["status"] == "fail"
    assert [(d["path"], d["line"]) for d in bad["diagnostics"]] == [("csrc/bad.cu", 2)]
    assert "not_declared" in bad["diagnostics"][0]["message"]
    assert "precompiled once per target" in data["compiler"]["torch_headers"]
    assert done.returncode == 1


def test_an_error_on_the_line_of_a_named_gap_follows_from_it():
    from migrator.kernels.compile import Diagnostic, _with_gaps

    found = _with_gaps(
        [
            Diagnostic("a.cu", 9, "use of undeclared identifier '__syncwarp' (HIP lacks)", False),
            Diagnostic("a.cu", 9, "too few arguments to function call, expected at least 1"),
            Diagnostic("a.cu", 12, "no matching function for call to 'LogAdd'"),
        ]
    )
    assert [d.checkable for d in found] == [False, False, True]
    assert found[1].message.endswith("(follows from the gap on this line)")


def test_a_macro_whose_value_the_build_computes_is_not_defined_empty():
    import ast

    from migrator.kernels.build_flags import build_flags

    call = (
        ast.parse(
            "CUDAExtension('m', ['a.cu'], define_macros=[('WITH_OPS', '1')], extra_compile_args="
            "{'nvcc': ['-O3', f'-DCUDA_ARCH={cuda_arch}', '-DFAST']})"
        )
        .body[0]
        .value
    )
    arguments = {k.arg: k.value for k in call.keywords}
    assert build_flags(lambda node: None, arguments, True) == ([], ["FAST", "WITH_OPS=1"])


def test_hipify_rewrites_the_include_of_a_project_header_from_an_include_folder(tmp_path):
    """A unit includes ``"cuda_utils.h"`` from the build's ``include/`` folder: hipify is told
    of that folder, so the unit includes the hipified header, not the CUDA original."""
    root = tmp_path / "p"
    (root / "src").mkdir(parents=True)
    (root / "include").mkdir()
    (root / "include" / "cuda_utils.h").write_text(
        "#pragma once\n#include <ATen/cuda/CUDAContext.h>\n"
    )
    (root / "src" / "op.cu").write_text('#include "cuda_utils.h"\n__global__ void k() {}\n')
    run = run_hipify(root, ["include/cuda_utils.h", "src/op.cu"], keep=tmp_path / "work")
    assert run.error is None
    unit = run.hipified["src/op.cu"].read_text()
    header = run.hipified["include/cuda_utils.h"].read_text()
    assert '#include "cuda_utils.h"' not in unit
    assert "ATen/cuda/CUDAContext.h" not in header


def test_an_error_directive_under_a_macro_the_build_computes_is_not_checkable(tmp_path):
    from migrator.kernels.compile import Diagnostic, _unknown_branches

    (tmp_path / "a.cu").write_text(
        '#if CUDA_ARCH >= 800\nint x;\n#else\n#error "Unsupported cuda arch"\n#endif\n'
        "int y = undefined;\n"
    )
    found = _unknown_branches(
        [
            Diagnostic("a.cu", 4, '"Unsupported cuda arch"'),
            Diagnostic("a.cu", 6, "use of undeclared identifier 'undefined'"),
        ],
        tmp_path,
        ["CUDA_ARCH"],
    )
    assert [d.checkable for d in found] == [False, True]
    assert "`CUDA_ARCH`, which the build computes when it runs" in found[0].message


def test_a_stopped_run_ends_the_compilers_it_started(tmp_path):
    """SIGTERM to ``migrate kernels --compile`` ends the compiler groups it started (they run in
    sessions of their own, which the signal to migrate does not reach)."""
    project = _project(tmp_path / "p")
    fake, pids = _sleeping_hipcc(tmp_path)
    migrate = subprocess.Popen(
        [sys.executable, "-m", "migrator", "kernels", str(project), "--compile", "-j", "1"]
        + ["--target", "gfx90a"],
        env={**os.environ, "HIPCC": str(fake)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 600
        while not (pids.exists() and pids.read_text().split()) and time.monotonic() < deadline:
            assert migrate.poll() is None, "migrate ended before starting the compiler"
            time.sleep(0.2)
        started = pids.read_text().split()
        assert started
        migrate.send_signal(signal.SIGTERM)
        assert migrate.wait(timeout=60) == 128 + signal.SIGTERM
    finally:
        if migrate.poll() is None:
            migrate.kill()
    time.sleep(0.5)
    assert _ended(pids)
