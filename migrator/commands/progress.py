"""Progress on stderr for long commands: a rich bar or status line on a terminal, nothing when
stderr is not one (CI logs and pipes stay clean). One home for scan, report, fix, verify and pr."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

_T = TypeVar("_T")


def _console() -> Any:
    from rich.console import Console

    return Console(stderr=True)


def may_be_terminal() -> bool:
    """Whether rich could take stderr for a terminal (``Console.is_terminal``: a TTY, or
    ``TTY_COMPATIBLE=1`` or a non-empty ``FORCE_COLOR``): when not, no progress is shown and
    the command need not import rich to find that out."""
    if os.environ.get("TTY_COMPATIBLE") == "1" or os.environ.get("FORCE_COLOR"):
        return True
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def with_progress(
    console: Any,
    action: Callable[[Callable[[int], None] | None, Callable[[int], None] | None], _T],
    description: str = "scanning",
) -> _T:
    """Run ``action(advance, on_total)`` under a progress bar (``None, None`` off a terminal)."""
    if not console.is_terminal:
        return action(None, None)
    from rich.progress import Progress

    with Progress(console=console, transient=True) as progress:
        task = progress.add_task(description, total=None)

        def on_total(total: int) -> None:
            progress.update(task, total=total)

        def advance(count: int) -> None:
            progress.advance(task, count)

        return action(advance, on_total)


@contextmanager
def steps(console: Any | None = None) -> Iterator[Callable[[str], None]]:
    """A ``step(message)`` callback: on a terminal a spinner shows the current step with its
    elapsed time and each finished step stays as one line; elsewhere it does nothing. Messages
    name projects, so they are shown as plain text (``safe_text``, no rich markup)."""
    console = console if console is not None else _console()
    if not console.is_terminal:
        yield lambda message: None
        return
    from rich.markup import escape

    from migrator.output.escape import safe_text

    started: list[tuple[str, float]] = []

    def finish() -> None:
        if started:
            message, since = started.pop()
            console.print(f"[dim]{message} — {time.monotonic() - since:.1f}s[/dim]")

    with console.status("") as status:

        def step(message: str) -> None:  # names a project: no markup, no escape sequence
            finish()
            message = escape(safe_text(message))
            started.append((message, time.monotonic()))
            status.update(f"{message} …")

        try:
            yield step
        finally:
            finish()
