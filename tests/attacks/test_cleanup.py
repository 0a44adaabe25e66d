"""Attack class: kill the tool. Temporary workspaces are removed on every exit path (signals
included) and worker processes exit when their parent dies."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from tests.attacks.conftest import AMP, migrate, start, write


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(child) for child in text.split()]


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _wait_for(condition, timeout: float = 90.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return False


def test_workers_exit_when_a_parallel_fix_is_killed(tmp_path):
    for index in range(30):
        write(tmp_path, f"m{index:02d}.py", AMP)
    # slow files keep the workers busy long enough to kill their parent under them
    for index in range(2):
        write(tmp_path, f"slow{index}.py", "import torch.cuda.amp\nx = " + "+".join(["a"] * 6000))
    process = start("fix", "-j", "2", tmp_path)
    assert _wait_for(lambda: len(_children(process.pid)) >= 2), "workers never started"
    workers = _children(process.pid)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    assert _wait_for(lambda: not any(_alive(pid) for pid in workers), timeout=30)


def test_verify_workspace_is_removed_on_sigterm(tmp_path):
    project = tmp_path / "project"
    write(project, "main.py", AMP)
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    process = start("verify", project, "--smoke", "sleep 600", TMPDIR=str(temporary))
    assert _wait_for(lambda: any(temporary.glob("migrate-verify-*/runs"))), "never started"
    os.kill(process.pid, signal.SIGTERM)
    process.wait(timeout=60)
    assert _wait_for(lambda: not any(temporary.glob("migrate-verify-*")), timeout=30)


def test_verify_workspace_is_removed_when_the_copy_fails(tmp_path):
    project = tmp_path / "project"
    write(project, "main.py", AMP)
    os.mkfifo(project / "pipe.py")
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    result = migrate("verify", project, "--smoke", "python main.py", TMPDIR=str(temporary))
    assert "Traceback" not in result.stderr
    assert list(temporary.iterdir()) == []
