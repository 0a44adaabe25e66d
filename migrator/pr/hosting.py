"""Opening the pull request on the forge: ``gh pr create`` for GitHub, ``glab mr create`` for
GitLab, or the command line to run when the tool is missing."""

from __future__ import annotations

import shlex
import shutil
import subprocess

from migrator.pr.git import Git, remote_url
from migrator.pr.options import PrResult


def open_command(git: Git, result: PrResult, remote: str | None) -> list[str]:
    """The ``gh pr create`` (or ``glab mr create`` for GitLab remotes) command line."""
    url = remote_url(git, remote)
    if "gitlab" in url:
        return [
            "glab",
            "mr",
            "create",
            "--title",
            result.title,
            "--description",
            result.body,
            "--source-branch",
            result.branch,
            "--target-branch",
            result.base,
            "--yes",
        ]
    return [
        "gh",
        "pr",
        "create",
        "--title",
        result.title,
        "--body-file",
        str(result.body_path),
        "--base",
        result.base,
        "--head",
        result.branch,
    ]


def open_pr(git: Git, result: PrResult, remote: str | None) -> tuple[bool, str]:
    """Run ``gh``/``glab`` when installed; (opened, message). Never raises for a tool failure."""
    command = open_command(git, result, remote)
    shown = (
        shlex.join(command)
        if command[0] == "gh"
        else shlex.join([*command[:5], f'"$(cat {result.body_path})"', *command[7:]])
    )
    if shutil.which(command[0]) is None:
        return False, f"{command[0]} is not installed; open the pull request with:\n  {shown}"
    completed = subprocess.run(command, cwd=git.cwd, capture_output=True, text=True, check=False)
    if completed.returncode == 0:
        return True, completed.stdout.strip() or f"opened with {command[0]}"
    error = (completed.stderr or completed.stdout).strip()
    if command[0] == "gh" and "already exists" in error:
        edit = [
            "gh",
            "pr",
            "edit",
            result.branch,
            "--title",
            result.title,
            "--body-file",
            str(result.body_path),
        ]
        edited = subprocess.run(edit, cwd=git.cwd, capture_output=True, text=True, check=False)
        if edited.returncode == 0:
            return True, edited.stdout.strip() or "updated the existing pull request"
        error = (edited.stderr or edited.stdout).strip()
    last = error.splitlines()[-1] if error else f"exit {completed.returncode}"
    return False, f"{command[0]} failed: {last}\n  run it yourself: {shown}"
