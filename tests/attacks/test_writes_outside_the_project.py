"""Attack class: make fix / pr / verify write through a symlink, outside the project or into
the user's own tree."""

from __future__ import annotations

import os
import subprocess

from tests.attacks.conftest import (
    CUDA_CHECK,
    CUDA_CHECK_FIXED_MARK,
    migrate,
    write,
)


def test_fix_never_writes_through_symlinks_and_keeps_them(tmp_path):
    outside = write(tmp_path, "outside/o.py", CUDA_CHECK)
    project = tmp_path / "project"
    write(project, "a.py", CUDA_CHECK)
    os.symlink(outside.parent, project / "linked")  # a folder that leaves the project
    os.symlink(outside, project / "flink.py")  # a file that leaves the project

    result = migrate("fix", project, cwd=project)

    assert outside.read_text() == CUDA_CHECK  # the file outside the project is untouched
    assert (project / "flink.py").is_symlink()  # a symlink stays a symlink
    assert os.readlink(project / "flink.py") == str(outside)
    assert CUDA_CHECK_FIXED_MARK in (project / "a.py").read_text()  # the project itself is fixed
    # neither link is followed (test_discovery_stays_in_the_root): nothing behind them is read
    assert "skipped linked: symlink to a folder outside the project" in result.stderr
    assert "skipped flink.py: symlink to a file outside the project" in result.stderr
    assert result.returncode == 0, result.stderr


def test_fix_never_writes_through_a_link_inside_the_project(tmp_path):
    """A file linked inside the project is fixed once, at its real path; the link stays."""
    project = tmp_path / "project"
    real = write(project, "pkg/real.py", CUDA_CHECK)
    os.symlink(real, project / "flink.py")

    result = migrate("fix", project, cwd=project)

    assert CUDA_CHECK_FIXED_MARK in real.read_text()
    assert (project / "flink.py").is_symlink()
    assert result.returncode == 0, result.stderr


def test_pr_never_writes_outside_the_repository(tmp_path):
    outside = write(tmp_path, "outside/o.py", CUDA_CHECK)
    repo = tmp_path / "repo"
    write(repo, "a.py", CUDA_CHECK)
    os.symlink(outside.parent, repo / "linked")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "-C", str(repo), "add", "-A"], check=True)
    subprocess.run([*git, "-C", str(repo), "commit", "-qm", "init"], check=True)

    result = migrate(
        "pr",
        repo,
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@t",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@t",
    )

    assert result.returncode == 0, result.stderr
    assert outside.read_text() == CUDA_CHECK
    log = subprocess.run(
        ["git", "-C", str(repo), "show", "--stat", "--format=", "migrate/rocm"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "a.py" in log and "linked" not in log


def test_verify_copies_never_lead_back_to_the_users_tree(tmp_path):
    from migrator.verify.workspace import Workspace, apply_fixes

    outside = write(tmp_path, "outside/o.py", CUDA_CHECK)
    project = tmp_path / "project"
    main = write(project, "main.py", CUDA_CHECK)
    os.symlink(main, project / "absolute_self.py")  # absolute link into the project
    os.symlink(outside, project / "absolute_out.py")  # absolute link out of the project
    os.symlink(outside.parent, project / "out_dir")  # a folder out of the project

    workspace = Workspace.create(project, "python3")
    try:
        summary = apply_fixes(workspace.migrated, unsafe=False)
        copied = workspace.migrated
        assert CUDA_CHECK_FIXED_MARK in (copied / "main.py").read_text()
        assert CUDA_CHECK_FIXED_MARK in (copied / "absolute_out.py").read_text()  # a copy, fixed
        assert (copied / "absolute_self.py").resolve() == (copied / "main.py").resolve()
        assert not (copied / "out_dir").exists()
        assert any(
            note.startswith("out_dir: symlink out of the project") for note in workspace.copy_notes
        )
        assert sorted(summary.files_changed) == ["absolute_out.py", "main.py"]
    finally:
        workspace.remove()
    assert main.read_text() == CUDA_CHECK  # the user's tree and the outside file are untouched
    assert outside.read_text() == CUDA_CHECK
    assert not workspace.root.exists()


def test_verify_receipt_names_what_the_copy_left_out(tmp_path):
    from migrator.verify import receipt_format
    from migrator.verify.core import verify
    from migrator.verify.options import VerifyOptions
    from migrator.verify.receipt import summary

    outside = write(tmp_path, "outside/data.txt", "42\n")
    project = tmp_path / "project"
    write(project, "hello.py", "print('loss: 1.5')\n")
    os.symlink(outside.parent, project / "data_dir")  # a folder out of the project: left out

    options = VerifyOptions(root=project, smoke="python hello.py", targets=("native",), timeout=60)
    receipt = verify(options, fixer=_no_fixes)
    data = receipt.as_dict()
    assert data["copy_notes"] == [
        "data_dir: symlink out of the project to a folder or special file; left out"
    ]
    assert "copy: data_dir: symlink out of the project" in summary(receipt)
    schema = receipt_format.json_schema()
    assert "copy_notes" in schema["properties"]


def _no_fixes(tree, unsafe):
    """A fixer that changes nothing (the copy is what is under test)."""

    class Run:
        outcomes: list[object] = []

    return Run()
