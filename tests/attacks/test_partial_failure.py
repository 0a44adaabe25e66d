"""Attack class: unreadable and unwritable paths. Each is listed per file; the run goes on and
fix always ends with its summary."""

from __future__ import annotations

import json
import os

from tests.attacks.conftest import CUDA_CHECK, CUDA_CHECK_FIXED_MARK, migrate, write


def test_fix_with_a_read_only_folder_lists_it_and_finishes(tmp_path):
    first = write(tmp_path, "a.py", CUDA_CHECK)
    locked = write(tmp_path, "locked/b.py", CUDA_CHECK)
    last = write(tmp_path, "z.py", CUDA_CHECK)
    os.chmod(tmp_path / "locked", 0o555)
    try:
        result = migrate("fix", tmp_path, cwd=tmp_path, unprivileged=True)
    finally:
        os.chmod(tmp_path / "locked", 0o755)
    assert CUDA_CHECK_FIXED_MARK in first.read_text() and CUDA_CHECK_FIXED_MARK in last.read_text()
    assert locked.read_text() == CUDA_CHECK
    assert "not written locked/b.py: cannot write: Permission denied" in result.stderr
    assert "Fixed 2 findings." in result.stderr
    assert "1 findings remain:" in result.stderr
    assert "internal error" not in result.stderr
    assert result.returncode == 1


def test_scan_with_an_unreadable_folder_and_file_lists_them(tmp_path):
    write(tmp_path, "a.py", CUDA_CHECK)
    write(tmp_path, "closed/b.py", CUDA_CHECK)
    secret = write(tmp_path, "secret.py", CUDA_CHECK)
    os.chmod(tmp_path / "closed", 0o000)
    os.chmod(secret, 0o000)
    try:
        result = migrate(
            "scan",
            "--min-severity",
            "hygiene",
            "--no-cache",
            "--format",
            "json",
            tmp_path,
            cwd=tmp_path,
            unprivileged=True,
        )
    finally:
        os.chmod(tmp_path / "closed", 0o755)
        os.chmod(secret, 0o644)
    data = json.loads(result.stdout)
    failed = {entry["path"]: entry["reason"] for entry in data["files"]["failed"]}
    assert failed == {
        "closed": "cannot list directory: Permission denied",
        "secret.py": "cannot read: Permission denied",
    }
    assert [f["path"] for f in data["findings"]] == ["a.py"]
    assert result.returncode == 1
