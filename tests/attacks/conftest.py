"""Helpers for the attack suite: run the real command line in a child process (a crash, a hang
or a signal must not take the test runner with it), optionally without root's permission
override so that read-only and unreadable paths behave as they do for every other user."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import write

__all__ = ["write"]

ROOT = Path(__file__).resolve().parents[2]

AMP = "import torch\nwith torch.cuda.amp.autocast():\n    pass\n"
AMP_FIXED_MARK = "torch.amp.autocast"
#: A finding above hygiene with a safe fix (``pr`` and ``report`` leave hygiene aside).
CUDA_CHECK = "import torch\nif torch.version.cuda:\n    pass\n"
CUDA_CHECK_FIXED_MARK = "torch.version.hip"

_PR_CAPBSET_DROP = 24
_CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH, _CAP_FOWNER = 1, 2, 3


def _without_permission_override() -> None:
    """In the child: root loses the capabilities that ignore file permissions."""
    if os.geteuid() != 0:
        return
    libc = ctypes.CDLL(None, use_errno=True)
    for capability in (_CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH, _CAP_FOWNER):
        if libc.prctl(_PR_CAPBSET_DROP, capability, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def command(*args: object) -> list[str]:
    """The argv that runs this checkout's ``migrate`` with this interpreter."""
    return [sys.executable, "-c", "from migrator.cli import main; main()", *map(str, args)]


def environment(**extra: str) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), **extra}
    env.pop("MIGRATE_DEBUG", None)
    return env


def migrate(
    *args: object,
    timeout: float = 180,
    unprivileged: bool = False,
    cwd: Path | None = None,
    **env: str,
) -> subprocess.CompletedProcess[str]:
    """Run ``migrate ARGS`` to completion (the test fails if it hangs past ``timeout``)."""
    return subprocess.run(
        command(*args),
        capture_output=True,
        text=True,
        timeout=timeout,
        env=environment(**env),
        cwd=cwd,
        preexec_fn=_without_permission_override if unprivileged else None,
        check=False,
    )


def start(*args: object, **env: str) -> subprocess.Popen[str]:
    """Start ``migrate ARGS`` without waiting (for signals and kills)."""
    return subprocess.Popen(
        command(*args),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment(**env),
        start_new_session=True,
    )


def one_line_error(stderr: str) -> bool:
    """A user error is one line, ``migrate...: ...``, and never a traceback."""
    lines = [line for line in stderr.splitlines() if line.strip()]
    return len(lines) == 1 and "Traceback" not in stderr and "internal error" not in stderr
