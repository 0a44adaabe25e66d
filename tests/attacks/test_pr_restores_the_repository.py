"""Attack class: make ``pr`` fail half-way (a failing git hook) or reach into a submodule; the
branch, index and working tree, submodules included, end as they were."""

from __future__ import annotations

import subprocess

from tests.attacks.conftest import CUDA_CHECK, migrate, write

IDENTITY = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@t",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@t",
    "GIT_ALLOW_PROTOCOL": "file",
}


def git(repo, *args):
    return subprocess.run(
        ["git", "-C", str(repo), "-c", "protocol.file.allow=always", *args],
        capture_output=True,
        text=True,
        check=True,
        env={**__import__("os").environ, **IDENTITY},
    ).stdout.strip()


def _repo(path):
    write(path, "a.py", CUDA_CHECK)
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
    git(path, "add", "-A")
    git(path, "commit", "-qm", "init")
    return path


def test_a_failing_hook_leaves_the_repository_as_it_was(tmp_path):
    repo = _repo(tmp_path / "repo")
    hook = repo / ".git" / "hooks" / "post-checkout"
    hook.write_text("#!/bin/sh\nexit 1\n")
    hook.chmod(0o755)

    result = migrate("pr", repo, **IDENTITY)

    assert result.returncode == 2
    assert git(repo, "branch", "--show-current") == "main"
    assert git(repo, "branch", "--list", "migrate/rocm") == ""
    assert git(repo, "status", "--porcelain") == ""
    assert (repo / "a.py").read_text() == CUDA_CHECK


def test_a_submodule_is_never_modified(tmp_path):
    library = _repo(tmp_path / "library")
    repo = _repo(tmp_path / "repo")
    git(repo, "submodule", "add", "-q", str(library), "vendor/library")
    git(repo, "commit", "-qm", "add submodule")

    result = migrate("pr", repo, **IDENTITY)

    assert result.returncode == 0, result.stderr
    assert (repo / "vendor" / "library" / "a.py").read_text() == CUDA_CHECK
    assert git(repo / "vendor" / "library", "status", "--porcelain") == ""
    assert git(repo, "status", "--porcelain") == ""
    changed = git(repo, "diff", "--name-only", "main", "migrate/rocm")
    assert changed == "a.py"
