"""Run one command in its own process group, with a timeout that kills the whole group."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

TAIL_CHARS = 4000
KILL_GRACE_SECONDS = 2.0


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


def _kill_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def run_process(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout: float,
    log_dir: Path,
    on_timeout: Callable[[], None] | None = None,
) -> ProcessResult:
    """Run ``argv`` with stdout/stderr in ``log_dir``; at ``timeout`` kill its process group.

    The child starts a new session, so everything it spawns shares its process group: a hung
    smoke test is stopped with SIGTERM, then SIGKILL after a short grace, children included.
    Leftover members of the group are killed after a normal exit too. ``on_timeout`` runs after
    the kill (the docker target uses it to stop the container).
    """
    log_dir.mkdir(parents=True, exist_ok=True)
    stdout_path = log_dir / "stdout.txt"
    stderr_path = log_dir / "stderr.txt"
    start = time.monotonic()
    timed_out = False
    exit_code: int | None = None
    error: str | None = None
    with open(stdout_path, "wb") as out, open(stderr_path, "wb") as err:
        try:
            child = subprocess.Popen(
                list(argv),
                cwd=cwd,
                env=dict(env),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                start_new_session=True,
            )
        except OSError as exc:
            error = f"could not start {argv[0]!r}: {exc}"
            child = None
        if child is not None:
            try:
                exit_code = child.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                timed_out = True
                _kill_group(child.pid, signal.SIGTERM)
                try:
                    child.wait(timeout=KILL_GRACE_SECONDS)
                except subprocess.TimeoutExpired:
                    pass
                _kill_group(child.pid, signal.SIGKILL)
                child.wait()
                if on_timeout is not None:
                    on_timeout()
            _kill_group(child.pid, signal.SIGKILL)
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
