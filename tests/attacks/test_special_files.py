"""Attack class: named pipes, sockets and devices named like source files; reading one could
block forever. They are skipped with a reason by scan, fix and verify."""

from __future__ import annotations

import json
import os
import socket

from tests.attacks.conftest import CUDA_CHECK, CUDA_CHECK_FIXED_MARK, migrate, write


def _specials(root):
    os.mkfifo(root / "pipe.py")
    os.symlink("/dev/zero", root / "zero.py")  # an endless device behind a source name
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(root / "sock.py"))
    return server


def test_scan_skips_pipes_sockets_and_devices(tmp_path):
    write(tmp_path, "a.py", CUDA_CHECK)
    server = _specials(tmp_path)
    try:
        result = migrate(
            "scan",
            "--min-severity",
            "hygiene",
            "--fail-on",
            "info",
            "--format",
            "json",
            tmp_path,
            cwd=tmp_path,
            timeout=60,
        )
    finally:
        server.close()
    data = json.loads(result.stdout)
    skipped = {entry["path"]: entry["reason"] for entry in data["files"]["skipped"]}
    assert skipped == {
        "pipe.py": "not a regular file (named pipe)",
        "sock.py": "not a regular file (socket)",
        "zero.py": "not a regular file (device)",
    }
    assert [f["path"] for f in data["findings"]] == ["a.py"]
    assert result.returncode == 1


def test_fix_skips_them_and_fixes_the_rest(tmp_path):
    good = write(tmp_path, "a.py", CUDA_CHECK)
    server = _specials(tmp_path)
    try:
        result = migrate("fix", tmp_path, timeout=60)
    finally:
        server.close()
    assert CUDA_CHECK_FIXED_MARK in good.read_text()
    assert result.returncode == 0, result.stderr


def test_verify_workspace_leaves_them_out(tmp_path):
    from migrator.verify.workspace import Workspace

    project = tmp_path / "project"
    write(project, "a.py", CUDA_CHECK)
    server = _specials(project)
    try:
        workspace = Workspace.create(project, "python3")
    finally:
        server.close()
    try:
        assert sorted(os.listdir(workspace.original)) == ["a.py"]
        assert sorted(workspace.copy_notes) == [
            "pipe.py: not a regular file; left out",
            "sock.py: not a regular file; left out",
            "zero.py: symlink out of the project to a folder or special file; left out",
        ]
    finally:
        workspace.remove()


def test_pipes_named_like_project_files_block_nothing(tmp_path):
    write(tmp_path, "a.py", CUDA_CHECK)
    for name in (".gitignore", "pyproject.toml", "requirements.txt", "setup.py", "setup.cfg"):
        os.mkfifo(tmp_path / name)
    scanned = migrate(
        "scan", "--format", "json", "--min-severity", "hygiene", tmp_path, cwd=tmp_path, timeout=60
    )
    assert [f["path"] for f in json.loads(scanned.stdout)["findings"]] == ["a.py"]
    reported = migrate(
        "report", tmp_path, "--format", "json", "-o", tmp_path / "r.json", timeout=120
    )
    assert reported.returncode in (0, 1), reported.stderr
    assert json.loads((tmp_path / "r.json").read_text())


_SETUP = (
    "from setuptools import setup\n"
    "from torch.utils.cpp_extension import CUDAExtension\n"
    'setup(ext_modules=[CUDAExtension("k", ["csrc/k.cu", "csrc/pipe.cu", "csrc/zero.cu"])])\n'
)
_KERNEL = '#include "pipe.cuh"\n#include "zero.cuh"\n__global__ void k(int* x) { x[0] = 1; }\n'


def test_pipes_and_devices_among_kernel_sources_and_readmes_block_nothing(tmp_path):
    """The class of reads outside the scan's own: include graphs, build files, the README's
    stated versions, the kernels command. A source, header or README that is a pipe or an
    endless device is passed over and every command finishes."""
    write(tmp_path, "setup.py", _SETUP)
    write(tmp_path, "csrc/k.cu", _KERNEL)
    for name in ("csrc/pipe.cu", "csrc/pipe.cuh", "README.md", "CMakeLists.txt"):
        os.mkfifo(tmp_path / name)
    for name in ("csrc/zero.cu", "csrc/zero.cuh", "README.rst"):
        os.symlink("/dev/zero", tmp_path / name)
    scanned = migrate("scan", "--format", "json", tmp_path, cwd=tmp_path, timeout=60)
    data = json.loads(scanned.stdout)
    assert {f["rule"] for f in data["findings"]} == {"ROC600"}
    assert {entry["path"] for entry in data["files"]["skipped"]} == {
        "CMakeLists.txt",  # a build file the scan reads (its CUDA gates)
        "README.md",  # documentation the scan reads (its shell blocks)
        "csrc/pipe.cu",
        "csrc/pipe.cuh",
        "csrc/zero.cu",
        "csrc/zero.cuh",
    }
    reported = migrate("report", tmp_path, "--format", "json", "-o", tmp_path / "r.json")
    assert reported.returncode in (0, 1), reported.stderr
    assert json.loads((tmp_path / "r.json").read_text())["projects"][0]["extensions"]
    kernels = migrate("kernels", tmp_path, "--format", "json", timeout=120)
    assert kernels.returncode in (0, 1), kernels.stderr
    assert "csrc/k.cu" in kernels.stdout
    fixed = migrate("fix", "--diff", tmp_path, cwd=tmp_path, timeout=60)
    assert fixed.returncode in (0, 1), fixed.stderr


def test_a_repository_list_or_manifest_that_is_a_pipe_is_refused_at_once(tmp_path):
    os.mkfifo(tmp_path / "repos.txt")
    os.mkfifo(tmp_path / "fleet.toml")
    listed = migrate("report", "--repos", tmp_path / "repos.txt", timeout=30)
    assert listed.returncode == 2
    assert "not a regular file (named pipe)" in listed.stderr
    assert "Traceback" not in listed.stderr
    fleet = migrate("fleet", tmp_path / "fleet.toml", "-o", tmp_path / "out.json", timeout=30)
    assert fleet.returncode == 2
    assert "not a regular file (named pipe)" in fleet.stderr
    assert "Traceback" not in fleet.stderr
