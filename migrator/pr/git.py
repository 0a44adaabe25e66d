"""Git plumbing for ``migrate pr``: run git in one repository, check it can be worked on, and
turn a remote into web links."""

from __future__ import annotations

import re
import time
from pathlib import Path

from migrator.errors import MigrateError
from migrator.process.git import UnsafeRepository, check_repository, run_git
from migrator.process.helper import HelperError


class PrError(MigrateError):
    """A reason ``migrate pr`` cannot start or finish; printed on one line, exit 2."""


#: What git says when another git process holds a lock (an editor's ``git status``, a
#: concurrent fetch): transient, so the command is tried again.
_LOCKED = re.compile(
    r"index\.lock'?: File exists|Unable to create '[^']*\.lock'|cannot lock ref|"
    r"Another git process seems to be running"
)
#: Pauses between tries of a command that met a lock (about 6 s in all).
LOCK_WAITS = (0.05, 0.1, 0.2, 0.4, 0.8, 1.5, 3.0)
#: Seconds one git command may take (a push over a slow network included).
GIT_TIMEOUT = 600.0


class Git:
    """Runs ``git`` in one repository; failures become :class:`PrError` with git's last line. A
    command that meets another git process's lock is tried again for a few seconds."""

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd

    def run(self, *args: str, check: bool = True, stdin: str | None = None) -> str:
        """Stdout of ``git ARGS`` (stripped of its final newline)."""
        for wait in (*LOCK_WAITS, None):
            try:
                code, out, err = run_git(
                    self.cwd,
                    args,
                    timeout=GIT_TIMEOUT,
                    input=stdin.encode("utf-8") if stdin is not None else None,
                )
            except HelperError as error:
                raise PrError(str(error)) from None
            if code is None:
                raise PrError(f"git {args[0]} did not finish within {GIT_TIMEOUT} s")
            if code == 0 or wait is None or not _LOCKED.search(err):
                break
            time.sleep(wait)
        if check and code != 0:
            detail = (err.strip() or out.strip()).splitlines()
            # git's reason is its first fatal/error line (advice follows it), else its last line
            reasons = [line for line in detail if line.startswith(("fatal: ", "error: "))]
            last = reasons[0] if reasons else detail[-1] if detail else f"exit {code}"
            raise PrError(f"git {args[0]} failed: {last}")
        return out.rstrip("\n")

    def ok(self, *args: str) -> bool:
        """Whether ``git ARGS`` exits 0."""
        try:
            return run_git(self.cwd, args, timeout=GIT_TIMEOUT)[0] == 0
        except HelperError:
            return False


def repository(path: Path) -> tuple[Git, Path]:
    """A Git runner at the top of the work tree holding ``path``, and that top directory."""
    if not path.exists():
        raise PrError(f"path does not exist: {path}")
    directory = path if path.is_dir() else path.parent
    probe = Git(directory)
    if not probe.ok("rev-parse", "--is-inside-work-tree"):
        raise PrError(f"not inside a git repository: {path}")
    top = Path(probe.run("rev-parse", "--show-toplevel")).resolve()
    try:
        check_repository(top)
    except UnsafeRepository as error:
        raise PrError(str(error)) from None
    return Git(top), top


def check_clean(git: Git) -> None:
    """Refuse a work tree with uncommitted changes or an operation in progress."""
    status = git.run("status", "--porcelain", "--untracked-files=normal")
    if status:
        count = len(status.splitlines())
        raise PrError(
            f"working tree has uncommitted changes ({count} path{'s' if count != 1 else ''}); "
            "commit or stash them first"
        )
    for marker in ("MERGE_HEAD", "REBASE_HEAD", "CHERRY_PICK_HEAD"):
        if git.ok("rev-parse", "-q", "--verify", marker):
            raise PrError(
                f"a merge, rebase or cherry-pick is in progress ({marker}); finish it first"
            )


def dirty_paths(git: Git, untracked: bool | None = None) -> list[str]:
    """The paths ``git status`` shows as changed or untracked (only the untracked ones, or only
    the others, when ``untracked`` says which)."""
    status = git.run("status", "--porcelain", "--untracked-files=normal", check=False)
    return [
        line[3:]
        for line in status.splitlines()
        if len(line) > 3 and (untracked is None or untracked == line.startswith("??"))
    ]


def named_paths(paths: list[str], limit: int = 5) -> str:
    """The first ``limit`` paths, comma-separated, and how many more."""
    more = f" and {len(paths) - limit} more" if len(paths) > limit else ""
    return ", ".join(paths[:limit]) + more


def check_full_checkout(git: Git) -> None:
    """Refuse a sparse checkout (or files marked skip-worktree): only part of the project is on
    disk, so ``pr`` would migrate that part and report it as the whole. A partial clone with a
    full checkout is fine: every file it scans and fixes is on disk."""
    sparse = git.run("config", "--bool", "core.sparseCheckout", check=False) == "true"
    skipped = [
        line[2:] for line in git.run("ls-files", "-t", check=False).splitlines() if line[:2] == "S "
    ]
    if sparse or skipped:
        what = f"{len(skipped)} tracked files not on disk" if skipped else "a sparse checkout"
        raise PrError(
            f"a sparse checkout ({what}): `pr` would migrate only the checked-out part and "
            "report it as the whole project; run `git sparse-checkout disable` first"
        )


class NothingToApply(MigrateError):
    """No fix applies at the chosen level: no branch is created (exit 0, with this message)."""


#: Names git reads as something else than a branch (``@`` is HEAD, ``-x`` an option).
_SPECIAL_REFS = frozenset(
    {"@", "HEAD", "FETCH_HEAD", "ORIG_HEAD", "MERGE_HEAD", "CHERRY_PICK_HEAD"}
)


def check_branch_name(git: Git, branch: str) -> None:
    """Refuse a name git would not accept for a branch, or would read as another ref
    (``@``, ``HEAD``, ``@{-1}``, a leading ``-``, a full ``refs/...`` name, the name of a tag or
    remote-tracking branch): the branch made would be a second ref of the same name."""
    if (
        branch in _SPECIAL_REFS
        or branch.startswith("-")
        or "@{" in branch
        or not git.ok("check-ref-format", f"refs/heads/{branch}")
        or not git.ok("check-ref-format", "--branch", branch)
    ):
        raise PrError(f"invalid branch name: {branch!r} (git reads it as something else)")
    if branch.startswith("refs/"):
        raise PrError(
            f"invalid branch name: {branch!r} (a full ref name would make the branch "
            f"refs/heads/{branch}; pass the short name)"
        )
    for ref in _shadowed_refs(branch):
        if git.ok("show-ref", "--verify", "--quiet", ref):
            raise PrError(
                f"invalid branch name: {branch!r} (git already reads it as {ref}; "
                "a branch of that name would be ambiguous)"
            )


def _shadowed_refs(branch: str) -> tuple[str, ...]:
    """The refs other than ``refs/heads/BRANCH`` that git tries for the name ``BRANCH``
    (gitrevisions: refs/NAME, refs/tags/NAME, refs/remotes/NAME, refs/remotes/NAME/HEAD)."""
    return (
        f"refs/{branch}",
        f"refs/tags/{branch}",
        f"refs/remotes/{branch}",
        f"refs/remotes/{branch}/HEAD",
    )


def remote_url(git: Git, remote: str | None) -> str:
    """The URL of ``remote`` (``origin`` by default), or ``""`` when there is none."""
    name = remote or "origin"
    return git.run("remote", "get-url", name, check=False)


_WEB_REMOTE = re.compile(
    r"^(?:https?://|ssh://)?(?:[^@/]+@)?(github\.com|gitlab\.com)[:/](.+?)(?:\.git)?/?$"
)


def link_base(url: str, commit: str) -> str:
    """``https://github.com/o/r/blob/<commit>/`` for GitHub/GitLab remotes, else ``""``."""
    match = _WEB_REMOTE.match(url.strip())
    if not match:
        return ""
    host, project = match.groups()
    separator = "/-/blob/" if host == "gitlab.com" else "/blob/"
    return f"https://{host}/{project}{separator}{commit}/"
