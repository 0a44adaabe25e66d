"""``migrate scan --watch``: scan, then scan again whenever a scannable file under the watched
paths is added, removed or modified (polling: no extra dependency, works on every platform)."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from migrator.files.discovery import SourceFile, discover

POLL_SECONDS = 0.5


def snapshot(paths: Sequence[Path]) -> dict[str, tuple[int, int]]:
    """Modification time and size of every scannable file under ``paths``."""
    state: dict[str, tuple[int, int]] = {}
    for root in paths:
        for item in discover(root):
            if isinstance(item, SourceFile):
                try:
                    stat = item.path.stat()
                except OSError:
                    continue
                state[str(item.path)] = (stat.st_mtime_ns, stat.st_size)
    return state


def watch_paths(
    paths: Sequence[Path],
    scan_once: Callable[[], int],
    *,
    rounds: int | None = None,
) -> None:
    """Run ``scan_once`` now and after every change, until Ctrl-C (or ``rounds`` scans)."""
    done = 0
    try:
        while rounds is None or done < rounds:
            before = snapshot(paths)
            scan_once()
            done += 1
            print("migrate: watching for changes (Ctrl-C stops)", file=sys.stderr, flush=True)
            while snapshot(paths) == before:
                time.sleep(POLL_SECONDS)
            print("migrate: change detected, scanning again", file=sys.stderr, flush=True)
    except KeyboardInterrupt:
        return
