"""The kernel checks that need PyTorch's own hipify (torch, on the default Python only, like
every torch-dependent file; scripts/test-pythons.sh leaves this file out by name) and the
distribution's hipcc, which scripts/test.sh installs: nothing here is mocked or skipped."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from migrator.kernels.compile import compile_units, find_compiler, translation_units
from migrator.kernels.hipify import run_hipify
from tests.conftest import FIXTURES

FIXTURE = FIXTURES / "quant_kernels"


def _files(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


def test_hipify_runs_on_a_copy_and_reports_what_it_left(tmp_path):
    copy = tmp_path / "project"
    shutil.copytree(FIXTURE, copy)
    before = {p: p.read_bytes() for p in copy.rglob("*") if p.is_file()}
    run = run_hipify(copy, _files(copy))
    assert run.error is None
    assert {p: p.read_bytes() for p in copy.rglob("*") if p.is_file()} == before
    assert [(r.path, r.line, r.kind) for r in run.residue] == [
        ("csrc/lane_ptx.cu", 6, "asm"),
        ("csrc/mma_gemm.cu", 9, "asm"),
    ]


def test_compile_check_passes_the_clean_kernel_and_fails_the_ptx_line(tmp_path):
    compiler = find_compiler()
    assert compiler is not None, "scripts/test.sh installs hipcc (Debian: hipcc, libamdhip64-dev)"
    run = run_hipify(FIXTURE, _files(FIXTURE), keep=tmp_path / "work")
    units = translation_units(run)
    assert units == ["csrc/dequant.cu", "csrc/lane_ptx.cu", "csrc/mma_gemm.cu"]
    results = {r.path: r for r in compile_units(compiler, run, FIXTURE, units, ["gfx90a"])}
    assert results["csrc/dequant.cu"].status == "pass"
    failed = results["csrc/lane_ptx.cu"]
    assert failed.status == "fail"
    assert [(d.path, d.line) for d in failed.diagnostics] == [("csrc/lane_ptx.cu", 6)]


def test_kernels_command_end_to_end_with_progress(tmp_path):
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "migrator",
            "kernels",
            str(FIXTURE),
            "--compile",
            "--target",
            "gfx90a",
            "--format",
            "json",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    labels = {ext["name"]: ext["label"] for ext in report["extensions"]}
    assert labels == {
        "quant_kernels._dequant": "ports mechanically",
        "quant_kernels._lane": "blocked",
        "quant_kernels._mma": "blocked",
    }
    assert "[3/3]" in done.stderr and "compile check finished in" in done.stderr
    assert report["compiler"]["hip_version"] and report["compiler"]["targets"] == ["gfx90a"]


def test_compile_does_not_pass_a_unit_whose_kernel_compiles_to_nothing():
    """hipcc compiles the tensor-core tile without an error (its body is the ``#pragma
    message`` branch); the compile check says the unit failed, at the kernel, and why."""
    done = subprocess.run(
        [sys.executable, "-m", "migrator", "kernels", str(FIXTURE), "--compile"]
        + ["--target", "gfx90a", "--format", "json"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    extensions = {e["name"]: e for e in json.loads(done.stdout)["extensions"]}
    (unit,) = extensions["quant_kernels._mma"]["compile"]
    assert (unit["path"], unit["status"]) == ("csrc/mma_gemm.cu", "fail")
    (diagnostic,) = unit["diagnostics"]
    assert (diagnostic["path"], diagnostic["line"]) == ("csrc/mma_gemm.cu", 6)
    assert "`mma_tile` compiled to nothing" in diagnostic["message"]
    assert "csrc/mma_gemm.cu gfx90a: fail" in done.stderr  # the progress line says so too
    (clean,) = extensions["quant_kernels._dequant"]["compile"]
    assert clean["status"] == "pass"


def test_no_compiler_is_one_line_and_exit_2(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "HIPCC"}
    env["PATH"] = str(tmp_path)  # nothing on it
    done = subprocess.run(
        [sys.executable, "-m", "migrator", "kernels", str(FIXTURE), "--compile"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env=env,
    )
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "hipcc" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_compiler_that_hangs_or_crashes_is_reported_per_unit(tmp_path):
    fake = tmp_path / "bin"
    fake.mkdir()
    hang = fake / "hipcc"
    hang.write_text(
        "#!/bin/sh\ncase \"$*\" in *--version*) echo 'HIP version: 0.0-fake'; exit 0;; esac\n"
        'case "$*" in *dequant*) exec sleep 30;; *) kill -SEGV $$;; esac\n'
    )
    hang.chmod(0o755)
    env_before = os.environ.get("HIPCC")
    os.environ["HIPCC"] = str(hang)
    try:
        compiler = find_compiler()
    finally:
        if env_before is None:
            os.environ.pop("HIPCC", None)
        else:
            os.environ["HIPCC"] = env_before
    assert compiler is not None and compiler.hip_version == "0.0-fake"
    run = run_hipify(FIXTURE, _files(FIXTURE), keep=tmp_path / "work")
    results = {
        r.path: r
        for r in compile_units(
            compiler, run, FIXTURE, translation_units(run), ["gfx90a"], timeout=2
        )
    }
    assert results["csrc/dequant.cu"].status == "timeout"
    assert results["csrc/lane_ptx.cu"].status == "crash"
