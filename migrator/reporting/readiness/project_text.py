"""Reading a project file as text, cut at a size limit: the one reader of the layout analysis
(roles, imports, entry points, AMD evidence), which never imports or runs a file."""

from __future__ import annotations

from pathlib import Path

from migrator.files.sources import read_project_text


def read_text(path: Path, limit: int = 2_000_000) -> str:
    """The text of ``path`` (empty when it cannot be read), at most ``limit`` characters."""
    return (read_project_text(path) or "")[:limit]
