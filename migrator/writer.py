"""Atomic in-place writes that keep encoding, BOM, line endings and permissions."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path


def write_atomic(path: Path, text: str, encoding: str) -> None:
    """Write ``text`` to ``path`` through a temporary file and a rename, so an interrupted run
    leaves either the old or the new file, never half of one. Newlines are written as they are
    in ``text`` (the engine preserves the file's own line endings)."""
    data = text.encode(encoding)
    mode = stat.S_IMODE(os.stat(path).st_mode)
    directory = path.parent
    descriptor, temporary = tempfile.mkstemp(
        prefix=f".{path.name}.", suffix=".migrate", dir=directory
    )
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise
