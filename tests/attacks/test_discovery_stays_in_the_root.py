"""Attack class: make discovery leave the scanned root. A link to ``/`` had `scan` and `fix`
walk the whole file system; a link to a file outside had its text read (it could be a key or
``/etc/shadow``). Folder links that leave the root are not followed, file links that leave it
are never read; both are listed as skipped. Links inside the root are scanned once, at their
real path."""

from __future__ import annotations

import json
import os

from tests.attacks.conftest import CUDA_CHECK, CUDA_CHECK_FIXED_MARK, migrate, write

OUT_FOLDER = "symlink to a folder outside the project; not followed"
OUT_FILE = "symlink to a file outside the project; not read"
IN_FOLDER = "symlink to a folder inside the project; scanned at its real path"


def _project(tmp_path):
    secret = write(tmp_path, "outside/secret.py", CUDA_CHECK)  # stands for a key or /etc/shadow
    project = tmp_path / "project"
    write(project, "a.py", CUDA_CHECK)
    write(project, "pkg/inner.py", CUDA_CHECK)
    os.symlink("/", project / "root")  # the whole file system
    os.symlink(secret.parent, project / "linked")  # a folder outside
    os.symlink(secret, project / "flink.py")  # a file outside
    os.symlink(project / "pkg", project / "alias")  # a folder inside: scanned at pkg/
    return project, secret


def test_scan_never_leaves_the_root(tmp_path):
    project, _ = _project(tmp_path)

    result = migrate(
        "scan", "--min-severity", "hygiene", "--format", "json", project, cwd=project, timeout=60
    )

    data = json.loads(result.stdout)
    skipped = {entry["path"]: entry["reason"] for entry in data["files"]["skipped"]}
    assert skipped == {
        "alias": IN_FOLDER,
        "flink.py": OUT_FILE,
        "linked": OUT_FOLDER,
        "root": OUT_FOLDER,
    }
    assert sorted({finding["path"] for finding in data["findings"]}) == ["a.py", "pkg/inner.py"]
    assert data["files"]["failed"] == []
    # findings (exit 1), but a link left out is no unread code: nothing is listed as failed
    assert result.returncode == 1, result.stderr


def test_fix_never_leaves_the_root(tmp_path):
    project, secret = _project(tmp_path)

    result = migrate("fix", project, cwd=project, timeout=60)

    assert CUDA_CHECK_FIXED_MARK in (project / "a.py").read_text()
    assert CUDA_CHECK_FIXED_MARK in (project / "pkg" / "inner.py").read_text()
    assert secret.read_text() == CUDA_CHECK
    assert f"skipped root: {OUT_FOLDER}" in result.stderr
    assert f"skipped flink.py: {OUT_FILE}" in result.stderr
    assert result.returncode == 0, result.stderr
