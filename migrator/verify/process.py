"""Run one command in its own process group, with a timeout that kills the whole group."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from migrator.process.helper import KILL_GRACE_SECONDS, HelperError, find_program, kill_group
from migrator.process.helper import start as start_helper

TAIL_CHARS = 4000
POLL_SECONDS = 0.5
"""How often a waiting run calls ``on_poll`` (live progress reads the logs then)."""


@dataclass(frozen=True, slots=True)
class ProcessResult:
    """What one run did: exit code (None when it was killed at the timeout), time and output."""

    argv: tuple[str, ...]
    exit_code: int | None
    timed_out: bool
    wall_time_s: float
    stdout: str
    stderr: str
    error: str | None = None

    @property
    def ok(self) -> bool:
        """Exited by itself with status 0."""
        return self.exit_code == 0 and not self.timed_out and self.error is None


def tail(text: str, limit: int = TAIL_CHARS) -> str:
    """The last ``limit`` characters of ``text``, starting at a line boundary when possible."""
    if len(text) <= limit:
        return text
    cut = text[-limit:]
    newline = cut.find("\n")
    return cut[newline + 1 :] if 0 <= newline < limit // 2 else cut


def _wait(
    child: subprocess.Popen[bytes],
    deadline: float,
    stdout_path: Path,
    stderr_path: Path,
    on_poll: Callable[[Path, Path], None] | None,
) -> int:
    """``child.wait`` until ``deadline`` (TimeoutExpired after it), polling ``on_poll``."""
    if on_poll is None:
        return child.wait(timeout=max(0.0, deadline - time.monotonic()))
    while True:
        remaining = deadline - time.monotonic()
        try:
            return child.wait(timeout=max(0.0, min(POLL_SECONDS, remaining)))
        except subprocess.TimeoutExpired:
            if remaining <= POLL_SECONDS:
                raise
        on_poll(stdout_path, stderr_path)


def last_line(*paths: Path, limit: int = 4096) -> str:
    """The last non-empty line written to any of ``paths`` (the newest file first), read from
    the file's end only; carriage-return progress bars count as lines."""
    ordered = sorted(
        (path for path in paths if path.is_file()), key=lambda path: path.stat().st_mtime_ns
    )
    for path in reversed(ordered):
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - limit))
            text = handle.read().decode("utf-8", errors="replace")
        for line in reversed(text.replace("\r", "\n").split("\n")):
            if line.strip():
                return line.strip()
    return ""


def run_process(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout: float,
    log_dir: Path,
    on_timeout: Callable[[], None] | None = None,
    on_poll: Callable[[Path, Path], None] | None = None,
) -> ProcessResult:
    """Run ``argv`` with stdout/stderr in ``log_dir``; at ``timeout`` kill its process group.

    The child starts a new session, so everything it spawns shares its process group: a hung
    smoke test is stopped with SIGTERM, then SIGKILL after a short grace, children included.
    Leftover members of the group are killed after a normal exit too. ``on_timeout`` runs after
    the kill (the docker target uses it to stop the container). ``on_poll(stdout, stderr)`` is
    called about twice a second while the command runs, with the paths of its two logs.
    """
    log_dir.mkdir(parents=True, exist_ok=True)
    stdout_path = log_dir / "stdout.txt"
    stderr_path = log_dir / "stderr.txt"
    start = time.monotonic()
    timed_out = False
    exit_code: int | None = None
    error: str | None = None
    with open(stdout_path, "wb") as out, open(stderr_path, "wb") as err:
        program = argv[0] if os.path.isabs(argv[0]) else find_program(argv[0], env=env)
        child: subprocess.Popen[bytes] | None = None
        if program is None:
            error = f"could not start {argv[0]!r}: not found on PATH"
        else:
            try:
                child = start_helper([program, *argv[1:]], cwd=cwd, env=env, stdout=out, stderr=err)
            except HelperError as exc:
                error = f"could not start {argv[0]!r}: {exc}"
        if child is not None:
            try:
                exit_code = _wait(child, start + timeout, stdout_path, stderr_path, on_poll)
            except subprocess.TimeoutExpired:
                timed_out = True
                kill_group(child, KILL_GRACE_SECONDS)
                if on_timeout is not None:
                    on_timeout()
            kill_group(child)
    wall = time.monotonic() - start
    return ProcessResult(
        argv=tuple(argv),
        exit_code=None if timed_out else exit_code,
        timed_out=timed_out,
        wall_time_s=round(wall, 3),
        stdout=stdout_path.read_text(encoding="utf-8", errors="replace"),
        stderr=stderr_path.read_text(encoding="utf-8", errors="replace"),
        error=error,
    )
