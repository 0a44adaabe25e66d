"""Attack class: folders nested thousands deep (deeper than the interpreter's recursion limit,
longer than PATH_MAX). `verify` copied the project recursively and ended in an internal
RecursionError; now the copy leaves what is nested too deep out, with a one-line note, and
every command ends normally."""

from __future__ import annotations

import json
import os
from contextlib import contextmanager

from tests.attacks.conftest import migrate, write

DEPTH = 3000


@contextmanager
def _deep_chain(folder, depth=DEPTH):
    """``folder/d/d/…/d`` ``depth`` deep, made and removed through descriptors (its full path is
    longer than PATH_MAX, and pytest's recursive clean-up could not remove it)."""
    descriptors = [os.open(folder, os.O_RDONLY)]
    try:
        for _ in range(depth):
            os.mkdir("d", dir_fd=descriptors[-1])
            descriptors.append(os.open("d", os.O_RDONLY, dir_fd=descriptors[-1]))
        yield
    finally:
        while len(descriptors) > 1:
            os.close(descriptors.pop())
            os.rmdir("d", dir_fd=descriptors[-1])
        os.close(descriptors.pop())


def test_verify_copies_a_deep_tree_without_crashing(tmp_path):
    project = tmp_path / "project"
    write(project, "hello.py", "print('loss: 1.5')\n")
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    receipt = tmp_path / "receipt.json"
    with _deep_chain(project):
        result = migrate(
            "verify",
            project,
            "--smoke",
            "python hello.py",
            "--targets",
            "native",
            "--receipt",
            receipt,
            TMPDIR=str(temporary),
            timeout=300,
        )
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr
    assert result.returncode == 0, result.stderr
    notes = json.loads(receipt.read_text())["copy_notes"]
    assert len(notes) == 1 and "nested deeper than" in notes[0], notes
    assert os.listdir(temporary) == []  # the workspace was removed


def test_scan_and_fix_end_normally_on_a_deep_tree(tmp_path):
    write(tmp_path, "a.py", "x = 1\n")
    with _deep_chain(tmp_path):
        for command in ("scan", "fix"):
            result = migrate(command, tmp_path, cwd=tmp_path, timeout=300)
            assert "internal error" not in result.stderr and "Traceback" not in result.stderr
            assert result.returncode in (0, 1), result.stderr


DEEP_SMOKE = """\
import os

descriptor = os.open(".", os.O_RDONLY)
for _ in range(3000):
    os.mkdir("d", dir_fd=descriptor)
    descriptor = os.open("d", os.O_RDONLY, dir_fd=descriptor)
print("loss: 1.5")
"""


def test_verify_removes_a_deep_tree_its_smoke_command_made(tmp_path):
    """The smoke command runs in the copies by design; what it leaves there, however deep, is
    removed with the workspace."""
    project = tmp_path / "project"
    write(project, "deep.py", DEEP_SMOKE)
    temporary = tmp_path / "tmp"
    temporary.mkdir()

    result = migrate(
        "verify",
        project,
        "--smoke",
        "python deep.py",
        "--targets",
        "native",
        TMPDIR=str(temporary),
        timeout=300,
    )

    assert "internal error" not in result.stderr and "Traceback" not in result.stderr
    assert result.returncode == 0, result.stderr
    assert os.listdir(temporary) == []
    assert os.listdir(project) == ["deep.py"]
