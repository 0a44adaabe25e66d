"""Live progress for ``migrate verify`` on stderr: the phase, the time so far, and the last line
the running command printed, so that a 75-second compiled smoke test is not silence.

On a terminal a single status line is redrawn in place and each finished phase stays as one
line; with ``--progress`` off a terminal (a CI log), plain lines are written at each phase and
every ``interval`` seconds. stdout is never touched: the summary and ``--receipt -`` stay clean.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

from migrator.commands.progress import may_be_terminal

LINE_WIDTH = 100
"""The last printed line is cut to this many characters."""


def _clock(seconds: float) -> str:
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes}:{rest:02d}"


def _printable(text: str) -> str:
    clean = "".join(char if char.isprintable() else " " for char in text).strip()
    return clean if len(clean) <= LINE_WIDTH else clean[: LINE_WIDTH - 1] + "…"


class LiveProgress:
    """Receives ``step(phase)`` and ``output(last line)`` from :func:`migrator.verify.core.verify`."""

    def __init__(self, stream: TextIO, status: Any | None = None, interval: float = 5.0) -> None:
        self.stream = stream
        self.status = status
        self.interval = interval
        self.started = time.monotonic()
        self.phase = ""
        self.phase_started = self.started
        self.last = ""
        self._written = 0.0

    def step(self, message: str) -> None:
        """A new phase begins: the previous one is closed with its duration."""
        now = time.monotonic()
        self._finish(now)
        self.phase, self.phase_started, self.last = message, now, ""
        self._show(now, force=True)

    def output(self, line: str) -> None:
        """The running command's last printed line (called about twice a second)."""
        if line:
            self.last = _printable(line)
        self._show(time.monotonic())

    def close(self) -> None:
        """Close the last phase."""
        self._finish(time.monotonic())
        self.phase = ""

    def text(self, now: float) -> str:
        """``[1:15] baseline run 1: original tree, native — 42s — step 12/100 loss: 3.2``."""
        text = f"[{_clock(now - self.started)}] {self.phase} — {now - self.phase_started:.0f}s"
        return f"{text} — {self.last}" if self.last else text

    def _finish(self, now: float) -> None:
        if not self.phase:
            return
        line = f"{self.phase} — done in {now - self.phase_started:.1f}s"
        if self.last:
            line += f" — last line: {self.last}"
        if self.status is not None:
            self.status.console.print(f"[dim]{_escape(line)}[/dim]")
        else:
            self.stream.write(f"verify: {line}\n")
            self.stream.flush()

    def _show(self, now: float, force: bool = False) -> None:
        if not self.phase:
            return
        if self.status is not None:
            self.status.update(_escape(self.text(now)))
            return
        if force or now - self._written >= self.interval:
            self._written = now
            self.stream.write(f"verify: {self.text(now)}\n")
            self.stream.flush()


def _escape(text: str) -> str:
    from rich.markup import escape

    return escape(text)


@contextmanager
def live_progress(asked: bool | None) -> Iterator[LiveProgress | None]:
    """A :class:`LiveProgress` on stderr when asked (True), or when stderr is a terminal and
    nobody said no (None); otherwise None."""
    terminal = may_be_terminal()
    if asked is False or (asked is None and not terminal):
        yield None
        return
    console: Any = None
    if terminal:
        from rich.console import Console

        console = Console(stderr=True)
    if console is None or not console.is_terminal:
        plain = LiveProgress(sys.stderr)
        try:
            yield plain
        finally:
            plain.close()
        return
    with console.status("") as status:
        live = LiveProgress(sys.stderr, status)
        try:
            yield live
        finally:
            live.close()
