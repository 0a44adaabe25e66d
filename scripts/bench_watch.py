"""CPU used by an idle `migrate scan --watch`, with file-system notifications and with polling:
starts the watch on PATH, waits for its first scan to end, then reads the process's CPU time
over ``--seconds`` of idleness (Linux: /proc). Prints the share of one core for each mode.

    python scripts/bench_watch.py PATH [--seconds 20]
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from pathlib import Path


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def idle_share(path: str, seconds: float, poll: bool) -> float:
    process = subprocess.Popen(
        [sys.executable, "-m", "migrator", "scan", path, "--watch", "-q", "--no-cache"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "MIGRATE_WATCH_POLL": "1" if poll else "0"},
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert process.stderr is not None
    for line in process.stderr:
        if "watching for changes" in line:
            break
    start = _cpu_seconds(process.pid)
    time.sleep(seconds)
    used = _cpu_seconds(process.pid) - start
    process.send_signal(signal.SIGINT)
    process.wait(timeout=30)
    return used / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("path")
    parser.add_argument("--seconds", type=float, default=20.0)
    args = parser.parse_args()
    files = sum(1 for _ in Path(args.path).rglob("*") if _.is_file())
    for poll in (False, True):
        share = idle_share(args.path, args.seconds, poll)
        mode = "polling" if poll else "notifications"
        print(f"{mode}: {share:.1%} of a core while idle ({files} files, {args.seconds:g} s)")


if __name__ == "__main__":
    main()
