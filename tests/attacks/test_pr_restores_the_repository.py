"""Attack class: make ``pr`` fail half-way (git cannot store the commit) or reach into a
submodule; the branch, index and working tree, submodules included, end as they were. A
repository's hooks never run (``pr`` is not the project's code to run)."""

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


def test_a_commit_that_fails_half_way_leaves_the_repository_as_it_was(tmp_path):
    repo = _repo(tmp_path / "repo")
    # the branch can be made (refs are writable), the commit cannot (no object can be stored)
    for folder in (repo / ".git" / "objects").rglob("*"):
        if folder.is_dir():
            folder.chmod(0o555)
    (repo / ".git" / "objects").chmod(0o555)

    result = migrate("pr", repo, unprivileged=True, **IDENTITY)

    assert result.returncode == 2, result.stderr
    assert git(repo, "branch", "--show-current") == "main"
    assert git(repo, "branch", "--list", "migrate/rocm") == ""
    assert git(repo, "status", "--porcelain") == ""
    assert (repo / "a.py").read_text() == CUDA_CHECK


def test_the_repositorys_hooks_never_run(tmp_path):
    repo = _repo(tmp_path / "repo")
    canary = tmp_path / "canary"
    for name in (
        "pre-commit",
        "commit-msg",
        "post-commit",
        "post-checkout",
        "reference-transaction",
    ):
        hook = repo / ".git" / "hooks" / name
        hook.write_text(f"#!/bin/sh\necho {name} >> {canary}\n")
        hook.chmod(0o755)

    result = migrate("pr", repo, **IDENTITY)

    assert result.returncode == 0, result.stderr
    assert not canary.exists()
    assert git(repo, "diff", "--name-only", "main", "migrate/rocm") == "a.py"


def test_a_repository_configured_to_run_programs_is_refused(tmp_path):
    repo = _repo(tmp_path / "repo")
    canary = tmp_path / "canary"
    for key in ("core.fsmonitor", "filter.x.clean", "diff.external", "core.sshCommand"):
        git(repo, "config", key, f"touch {canary}; true")
        result = migrate("pr", repo, **IDENTITY)
        assert result.returncode == 2
        assert key.lower() in result.stderr.lower() and "run a program" in result.stderr
        git(repo, "config", "--unset", key)
    assert not canary.exists()
    assert git(repo, "branch", "--list", "migrate/rocm") == ""


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
