"""Attack class: named pipes, sockets and devices named like source files; reading one could
block forever. They are skipped with a reason by scan, fix and verify."""

from __future__ import annotations

import json
import os
import socket

from tests.attacks.conftest import AMP, AMP_FIXED_MARK, migrate, write


def _specials(root):
    os.mkfifo(root / "pipe.py")
    os.symlink("/dev/zero", root / "zero.py")  # an endless device behind a source name
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(root / "sock.py"))
    return server


def test_scan_skips_pipes_sockets_and_devices(tmp_path):
    write(tmp_path, "a.py", AMP)
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
    good = write(tmp_path, "a.py", AMP)
    server = _specials(tmp_path)
    try:
        result = migrate("fix", tmp_path, timeout=60)
    finally:
        server.close()
    assert AMP_FIXED_MARK in good.read_text()
    assert result.returncode == 0, result.stderr


def test_verify_workspace_leaves_them_out(tmp_path):
    from migrator.verify.workspace import Workspace

    project = tmp_path / "project"
    write(project, "a.py", AMP)
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
    write(tmp_path, "a.py", AMP)
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
