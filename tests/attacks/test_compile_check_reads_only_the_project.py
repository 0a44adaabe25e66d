"""Attack class: make ``kernels --compile`` read a file outside the project, so that clang's
diagnostics copy its text into the report (a CI artifact): an absolute include, one that climbs
out with ``..``, a project symlink that leaves the project, a computed include, a project header
that does any of these, and an ``.include`` in inline assembly spelled so no reading finds it.
Needs torch's hipify and hipcc, as tests/test_kernels_hip.py (scripts/test.sh installs hipcc;
scripts/test-pythons.sh leaves this file out by name on the Pythons without torch)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.attacks.conftest import migrate, write

TOKEN = "CANARY_TOKEN_7f3a"
KERNEL = "__global__ void k(float* x) { x[0] = 1; }\n"
OUTSIDE = "not compiled: includes a file outside the project"


def _project(tmp_path: Path) -> tuple[Path, Path]:
    secret = write(tmp_path, "runner/secret.txt", f"{TOKEN} = hunter2 password;\nroot:x:0:0\n")
    climb = "../" * 40 + str(secret).lstrip("/")
    units = {
        "clean.cu": KERNEL,
        "absolute.cu": f'#include "{secret}"\n{KERNEL}',
        "climbs.cu": f'#include "{climb}"\n{KERNEL}',
        "angled.cu": f"#include <{climb}>\n{KERNEL}",
        "linked.cu": f'#include "linked.h"\n{KERNEL}',
        "macro.cu": f'#define SECRET "{secret}"\n#include SECRET\n{KERNEL}',
        "computed.cu": f"#include SECRET_FROM_THE_COMMAND_LINE\n{KERNEL}",
        "hidden.cu": f'#/**/include "{secret}"\n{KERNEL}',
        "via_header.cu": f'#include "helper.cuh"\n{KERNEL}',
        "assembler.cu": (
            "#include <hip/hip_runtime.h>\n"
            f'__global__ void k(float* x) {{ asm volatile(".inc" "lude \\"{secret}\\""); x[0] = 1; }}\n'
        ),
    }
    project = tmp_path / "project"
    for name, text in units.items():
        write(project, f"csrc/{name}", text)
    write(project, "csrc/helper.cuh", f'#pragma once\n#include "{secret}"\n')
    os.symlink(secret, project / "csrc" / "linked.h")
    sources = ", ".join(f'"csrc/{name}"' for name in units)
    write(
        project,
        "setup.py",
        "from setuptools import setup\nfrom torch.utils.cpp_extension import CUDAExtension\n"
        f'setup(name="p", ext_modules=[CUDAExtension("p._k", sources=[{sources}])])\n',
    )
    return project, secret


def test_no_file_outside_the_project_reaches_the_compile_report(tmp_path):
    project, secret = _project(tmp_path)

    result = migrate(
        "kernels", project, "--compile", "--target", "gfx90a", "--format", "json", timeout=600
    )

    assert TOKEN not in result.stdout and TOKEN not in result.stderr
    assert "hunter2" not in result.stdout and "'root'" not in result.stdout
    assert result.returncode == 1, result.stderr  # units not compiled: the check is incomplete
    report = json.loads(result.stdout)
    compiled = {r["path"]: r for r in report["extensions"][0]["compile"]}
    assert compiled["csrc/clean.cu"]["status"] == "pass"
    for unit, name in [
        ("absolute.cu", str(secret)),
        ("climbs.cu", "../../"),
        ("angled.cu", "../../"),
        ("linked.cu", "linked.h"),
        ("macro.cu", str(secret)),
        ("hidden.cu", str(secret)),
        ("via_header.cu", str(secret)),
    ]:
        result_of = compiled[f"csrc/{unit}"]
        assert result_of["status"] == "not checked", (unit, result_of)
        assert result_of["note"].startswith(f"{OUTSIDE} ("), (unit, result_of)
        assert name in result_of["note"], (unit, result_of)
    computed = compiled["csrc/computed.cu"]
    assert computed["status"] == "not checked"
    assert "computed include (#include SECRET_FROM_THE_COMMAND_LINE)" in computed["note"]
    listed = {u["path"] for u in report["compiler"]["not_checked_units"]}
    assert listed == set(compiled) - {"csrc/clean.cu", "csrc/assembler.cu"}


def test_an_assembler_include_no_reading_finds_is_never_quoted(tmp_path):
    """Defence in depth: the text of a diagnostic located in a file outside the project, and
    the source lines clang quotes from it, never reach the report (text or JSON)."""
    project, secret = _project(tmp_path)

    text = migrate("kernels", project, "--compile", "--target", "gfx90a", timeout=600)

    assert TOKEN not in text.stdout and TOKEN not in text.stderr
    assert "hunter2" not in text.stdout and "'root'" not in text.stdout
    assert "csrc/assembler.cu fail" in text.stdout
    assert f"{secret}:1: a diagnostic in a file outside the project (its text is not shown)" in (
        text.stdout
    )
