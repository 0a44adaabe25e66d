"""``migrate scan --watch``: scan, then scan again whenever a scannable file under the watched
paths is added, removed or modified. With the ``watch`` extra (watchfiles), the operating
system's notifications wake it (inotify, FSEvents, ReadDirectoryChangesW: no work while idle);
without it, or with ``MIGRATE_WATCH_POLL=1``, it polls the tree every half second."""

from __future__ import annotations

import os
import queue
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from migrator.files.discovery import SourceFile, discover, file_kind

POLL_SECONDS = 0.5
#: Set to 1 to poll even where notifications are available.
POLL_VARIABLE = "MIGRATE_WATCH_POLL"
#: Folders whose changes never matter (version control, caches, environments).
_IGNORED_PARTS = frozenset(
    {".git", ".hg", ".svn", "__pycache__", ".mypy_cache", ".ruff_cache", ".venv", "node_modules"}
)


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


def _relevant(path: str) -> bool:
    """Whether a change of ``path`` can change a scan: a file of a kind migrate reads (or the
    configuration), outside version control and caches."""
    parts = Path(path).parts
    if _IGNORED_PARTS.intersection(parts):
        return False
    return file_kind(Path(path).name) is not None or Path(path).name == "pyproject.toml"


def _polled_changes(paths: Sequence[Path]) -> Iterator[None]:
    """Changes found by comparing snapshots; the first is taken now, so that a change made
    while the first scan runs is seen."""
    before = snapshot(paths)

    def changes() -> Iterator[None]:
        nonlocal before
        while True:
            time.sleep(POLL_SECONDS)
            now = snapshot(paths)
            if now != before:
                before = now
                yield None

    return changes()


def _notified_changes(paths: Sequence[Path]) -> Iterator[None] | None:
    """Changes from the operating system's notifications (watched from now on, in a thread, so
    that a change made while a scan runs is seen), or None without watchfiles."""
    if os.environ.get(POLL_VARIABLE) == "1":
        return None
    try:
        import watchfiles
    except ImportError:
        return None
    events: queue.Queue[None] = queue.Queue()
    stop = threading.Event()

    def run() -> None:
        for _ in watchfiles.watch(
            *paths,
            watch_filter=lambda change, path: _relevant(path),
            stop_event=stop,
            raise_interrupt=False,
        ):
            events.put(None)

    threading.Thread(target=run, name="migrate-watch", daemon=True).start()

    def changes() -> Iterator[None]:
        try:
            while True:
                try:
                    events.get(timeout=0.2)  # short waits keep Ctrl-C prompt
                except queue.Empty:
                    continue
                while not events.empty():  # one rescan for a burst of events
                    events.get_nowait()
                yield None
        finally:
            stop.set()

    return changes()


def watch_paths(
    paths: Sequence[Path],
    scan_once: Callable[[], int],
    *,
    rounds: int | None = None,
) -> None:
    """Run ``scan_once`` now and after every change, until Ctrl-C (or ``rounds`` scans)."""
    done = 0
    try:
        changes = _notified_changes(paths)
        how = "notifications"
        if changes is None:
            changes, how = _polled_changes(paths), "polling"
        scan_once()
        done += 1
        while rounds is None or done < rounds:
            print(
                f"migrate: watching for changes ({how}; Ctrl-C stops)", file=sys.stderr, flush=True
            )
            next(changes)
            print("migrate: change detected, scanning again", file=sys.stderr, flush=True)
            scan_once()
            done += 1
    except KeyboardInterrupt:
        return
