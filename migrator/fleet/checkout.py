"""Getting a repository's code: resolve a git ref to its commit, clone it shallow at that commit
into a private folder (no hooks, no tags, no submodules unless asked, within a size limit), or
digest a local folder's content so that an unchanged folder is recognised."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from migrator.files.sources import FailFile, NotRegular, SkipFile, read_regular
from migrator.process.git import environment, git_command
from migrator.process.helper import HelperError, kill_group, run, start

_SHA = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")
#: Folders that never change a scan's result and are skipped by the content digest.
_SKIP_DIRS = frozenset({".git", "__pycache__", ".venv", "venv", "node_modules", ".tox"})


class CheckoutError(Exception):
    """The repository could not be fetched; the message is the one-line reason."""


def git_env() -> dict[str, str]:
    """An environment in which git never prompts, never runs LFS filters and reads no hooks."""
    return environment(
        {
            "GIT_ASKPASS": "true",
            "SSH_ASKPASS": "true",
            "GIT_SSH_COMMAND": os.environ.get("GIT_SSH_COMMAND", "ssh -o BatchMode=yes"),
        }
    )


def _command(args: list[str]) -> list[str]:
    try:
        return git_command("-c", "advice.detachedHead=false", *args)
    except HelperError as error:
        raise CheckoutError(str(error)) from None


def _why(stderr: str, code: int) -> str:
    """git's own one-line reason (its first ``fatal:`` line), or its exit status."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    fatal = [line for line in lines if line.startswith(("fatal:", "error:"))]
    return (fatal or lines or [f"exit status {code}"])[0]


def _git(args: list[str], cwd: Path | None, timeout: float) -> str:
    try:
        done = run(_command(args), cwd=cwd, env=git_env(), timeout=timeout)
    except HelperError as error:
        raise CheckoutError(f"cannot run git: {error}") from None
    if done.returncode is None:
        raise CheckoutError(f"git {args[0]} took longer than {timeout:.0f} s")
    if done.returncode != 0:
        raise CheckoutError(f"git {args[0]} failed: {_why(done.err, done.returncode)}")
    return done.out


def resolve_commit(url: str, ref: str, timeout: float = 60.0) -> str:
    """The commit ``ref`` names at ``url`` (a full commit id is taken as it is)."""
    if _SHA.match(ref):
        return ref
    out = _git(["ls-remote", "--", url, ref, f"{ref}^{{}}"], None, timeout)
    found: dict[str, str] = {}
    for line in out.splitlines():
        sha, _, name = line.partition("\t")
        found[name] = sha
    for name in (f"refs/tags/{ref}^{{}}", f"refs/tags/{ref}", f"refs/heads/{ref}", ref):
        if name in found:
            return found[name]
    if found:
        return next(iter(found.values()))
    raise CheckoutError(f"ref {ref!r} not found at {url}")


def tree_size(root: Path) -> int:
    """Bytes of the regular files under ``root`` (links not followed)."""
    total = 0
    for folder, _, files in os.walk(root):
        for name in files:
            try:
                total += os.lstat(os.path.join(folder, name)).st_size
            except OSError:
                pass
    return total


def _bounded(args: list[str], cwd: Path, timeout: float, max_bytes: int) -> None:
    """Run git, killing it when it outlives ``timeout`` or ``cwd`` grows past ``max_bytes``."""
    try:
        process = start(_command(args), cwd=cwd, env=git_env(), stdout=subprocess.DEVNULL)
    except HelperError as error:
        raise CheckoutError(f"cannot run git: {error}") from None
    deadline = time.monotonic() + timeout
    err: bytes | None = None
    try:
        while True:
            try:
                _, err = process.communicate(timeout=0.5)
                break
            except subprocess.TimeoutExpired:
                if time.monotonic() > deadline:
                    raise CheckoutError(f"git {args[0]} took longer than {timeout:.0f} s") from None
                if tree_size(cwd) > max_bytes:
                    raise CheckoutError(
                        f"repository exceeds the size limit ({max_bytes // 2**20} MiB)"
                    ) from None
    finally:
        kill_group(process)
    if process.returncode != 0:
        message = (err or b"").decode("utf-8", "replace")
        raise CheckoutError(f"git {args[0]} failed: {_why(message, process.returncode)}")


def clone(
    url: str,
    commit: str,
    *,
    submodules: bool = False,
    max_bytes: int = 500 * 2**20,
    timeout: float = 300.0,
) -> Path:
    """A shallow checkout of ``commit`` from ``url`` in a new private temporary folder (the
    caller removes it with ``remove``); CheckoutError with the reason when it cannot be made."""
    folder = Path(tempfile.mkdtemp(prefix="migrate-fleet-"))
    try:
        _git(["init", "-q", "--template=", str(folder)], None, timeout)
        _git(["remote", "add", "origin", url], folder, timeout)
        _bounded(
            ["fetch", "-q", "--depth", "1", "--no-tags", "origin", commit],
            folder,
            timeout,
            max_bytes,
        )
        _git(["checkout", "-q", "FETCH_HEAD"], folder, timeout)
        if submodules:
            _bounded(
                ["submodule", "update", "-q", "--init", "--recursive", "--depth", "1"],
                folder,
                timeout,
                max_bytes,
            )
        if tree_size(folder) > max_bytes:
            raise CheckoutError(f"repository exceeds the size limit ({max_bytes // 2**20} MiB)")
        head = _git(["rev-parse", "HEAD"], folder, timeout).strip()
        if not head.startswith(commit) and not commit.startswith(head):
            raise CheckoutError(f"fetched {head[:12]}, expected {commit[:12]}")
    except BaseException:
        remove(folder)
        raise
    return folder


def remove(folder: Path) -> None:
    """Remove a checkout (what cannot be removed is left to the system's temporary cleaner)."""
    shutil.rmtree(folder, ignore_errors=True)


def content_digest(root: Path, max_bytes: int = 500 * 2**20) -> str:
    """A digest of a local folder's files (relative paths, modes and bytes), so that a folder
    whose content is unchanged gets the same result key; CheckoutError past ``max_bytes``."""
    digest = hashlib.sha256()
    total = 0
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(name for name in dirs if name not in _SKIP_DIRS)
        for name in sorted(files):
            path = Path(folder, name)
            if path.is_symlink() or not path.is_file():
                continue
            try:
                data = read_regular(str(path), max(1, max_bytes - total))
            except NotRegular:
                continue  # replaced by a pipe or device since it was listed
            except FailFile as error:
                raise CheckoutError(f"{path.relative_to(root).as_posix()}: {error}") from None
            except SkipFile:  # larger than what is left of the budget
                raise CheckoutError(
                    f"folder exceeds the size limit ({max_bytes // 2**20} MiB)"
                ) from None
            total += len(data)
            if total > max_bytes:
                raise CheckoutError(f"folder exceeds the size limit ({max_bytes // 2**20} MiB)")
            digest.update(path.relative_to(root).as_posix().encode("utf-8", "surrogateescape"))
            digest.update(b"\0%d\0" % len(data))
            digest.update(data)
    return "content:" + digest.hexdigest()
