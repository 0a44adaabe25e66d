"""Opening the pull request on the forge: ``gh pr create`` for GitHub, ``glab mr create`` for
GitLab, or the command line to run when the tool is missing."""

from __future__ import annotations

import shlex

from migrator.pr.git import Git, remote_url
from migrator.pr.options import PrResult
from migrator.process.helper import HelperError, find_program
from migrator.process.helper import run as run_helper

#: Seconds ``gh``/``glab`` may take to open a pull request.
HOSTING_TIMEOUT = 300.0


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


def _run(git: Git, command: list[str]) -> tuple[int | None, str, str]:
    """(exit status, stdout, the reason text) of the hosting tool run in the repository."""
    try:
        done = run_helper(command, cwd=git.cwd, timeout=HOSTING_TIMEOUT)
    except HelperError as error:
        return 1, "", str(error)
    if done.timed_out:
        return None, "", f"did not finish within {HOSTING_TIMEOUT:g} s"
    return done.returncode, done.out, (done.err or done.out).strip()


def open_pr(git: Git, result: PrResult, remote: str | None) -> tuple[bool, str]:
    """Run ``gh``/``glab`` when installed; (opened, message). Never raises for a tool failure."""
    command = open_command(git, result, remote)
    shown = (
        shlex.join(command)
        if command[0] == "gh"
        else shlex.join([*command[:5], f'"$(cat {result.body_path})"', *command[7:]])
    )
    program = find_program(command[0], avoid=[git.cwd])
    if program is None:
        return False, f"{command[0]} is not installed; open the pull request with:\n  {shown}"
    code, out, error = _run(git, [program, *command[1:]])
    if code == 0:
        return True, out.strip() or f"opened with {command[0]}"
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
        edited, out, error = _run(git, [program, *edit[1:]])
        if edited == 0:
            return True, out.strip() or "updated the existing pull request"
    last = error.splitlines()[-1] if error else f"exit {code}"
    return False, f"{command[0]} failed: {last}\n  run it yourself: {shown}"
