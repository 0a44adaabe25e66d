"""Running git in a repository migrate did not write without running that repository's code:
hooks off, file-system monitors off, signing off, and a refusal of
repositories whose own configuration names programs git would run (a filter driver, a diff
command, an ssh command...). A cloned repository never carries its configuration; a folder
handed over as it is (a tarball, a shared disk) can."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from migrator.process.helper import HelperError, find_program, helper_environment, run

#: Options that keep git from running anything the repository names.
SAFE_OPTIONS = (
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "commit.gpgSign=false",
    "-c",
    "tag.gpgSign=false",
    "-c",
    "core.pager=cat",
    "-c",
    "protocol.ext.allow=never",
)
#: Keys of a repository's own configuration whose values are programs git runs (matched
#: case-insensitively against ``git config --local --list --includes``).
_COMMAND_KEYS = re.compile(
    r"^(core\.(fsmonitor|sshcommand|askpass|gitproxy|worktree)"
    r"|diff\.external|diff\.[^=]*\.(command|textconv)|merge\.[^=]*\.driver"
    r"|filter\.[^=]*\.(clean|smudge|process)|gpg(\.[^=]*)?\.program"
    r"|credential(\.[^=]*)?\.helper|remote\.[^=]*\.(uploadpack|receivepack|vcs)"
    r"|uploadpack\.packobjectshook)=",
    re.IGNORECASE,
)
#: Values the keys above may safely hold: a monitor switched off, git-lfs's own filter (what
#: ``git lfs install --local`` writes; the program is the user's, found on their PATH).
_HARMLESS = re.compile(
    r"^(core\.fsmonitor=(false|0|no|off)?"
    r"|filter\.lfs\.(clean=git-lfs clean -- %f|smudge=git-lfs smudge -- %f"
    r"|process=git-lfs filter-process))$",
    re.IGNORECASE,
)


class UnsafeRepository(Exception):
    """The repository's own configuration would make git run a program; the message says
    which key."""


def git_program() -> str:
    """git's absolute path (never from the project); HelperError when it is not installed."""
    program = find_program("git")
    if program is None:
        raise HelperError("git is not installed")
    return program


def git_command(*args: str) -> list[str]:
    """``git`` with the options that keep it from running the repository's programs."""
    return [git_program(), *SAFE_OPTIONS, *args]


def environment(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """An environment in which git never prompts and never runs LFS filters."""
    return helper_environment(
        {"GIT_TERMINAL_PROMPT": "0", "GIT_LFS_SKIP_SMUDGE": "1", **(extra or {})}
    )


def unsafe_settings(repository: Path, timeout: float = 60.0) -> list[str]:
    """The keys of ``repository``'s own configuration (``.git/config`` and what it includes)
    that would make git run a program; reading them runs nothing."""
    done = run(
        git_command("config", "--local", "--list", "--includes"),
        cwd=repository,
        env=environment(),
        timeout=timeout,
    )
    if done.returncode != 0:
        return []
    found: list[str] = []
    for line in done.out.splitlines():
        if _COMMAND_KEYS.match(line) and not _HARMLESS.match(line):
            found.append(line.partition("=")[0])
    return found


def check_repository(repository: Path) -> None:
    """Raise UnsafeRepository when ``repository``'s own configuration names a program git
    would run."""
    keys = unsafe_settings(repository)
    if keys:
        listed = ", ".join(sorted(set(keys))[:5])
        raise UnsafeRepository(
            f"the repository's .git/config sets {listed}, which would make git run a program "
            "named by the repository; remove the setting or work on a fresh clone"
        )


def run_git(
    repository: Path | None,
    args: Sequence[str],
    *,
    timeout: float,
    input: bytes | None = None,
    env: Mapping[str, str] | None = None,
) -> tuple[int | None, str, str]:
    """(exit status or None at the timeout, stdout, stderr) of ``git ARGS`` in ``repository``
    (a private folder when None)."""
    done = run(
        git_command(*args),
        cwd=repository,
        env=environment(env),
        timeout=timeout,
        input=input,
    )
    return done.returncode, done.out, done.err
