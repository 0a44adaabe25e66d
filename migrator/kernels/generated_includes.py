"""Quoted includes of an extension's sources that name a file the project does not hold: a
kernel file a script writes before the build (fairseq's ``lightconv_cuda_kernel.cu`` includes
``lightconv_cuda_forward.cu``, which ``cuda_function_gen.py`` writes from string templates). Such
a file was not read, and the reading says so: "generated at build time, not read" when one of
the project's Python files names it, "not in the project, not read" otherwise; never "not
compiled for AMD"."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable, Sequence

from migrator.kernels.buildmodel import GENERATED, UNREAD, BuildNote

_QUOTED = re.compile(r'(?m)^[ \t]*#[ \t]*include[ \t]*"([^"\n]+)"')
#: At most this many notes per extension (a project whose every include is missing is a
#: checkout without its submodules; a few lines say it).
_MAX_NOTES = 8


def missing_includes(
    files: Iterable[str],
    paths: frozenset[str],
    read: Callable[[str], str | None],
    python_paths: Sequence[str],
    extension: str,
) -> list[BuildNote]:
    """Notes for the quoted includes of ``files`` that resolve to no file of ``paths`` (next to
    the including file or from the root) and look like the project's own kernel files."""
    notes: list[BuildNote] = []
    writers: dict[str, str | None] = {}
    for relative in sorted(files):
        text = read(relative)
        if not text or "#include" not in text:
            continue
        folder = posixpath.dirname(relative)
        for match in _QUOTED.finditer(text):
            name = match.group(1)
            if name.startswith("/") or not name.endswith((".cu", ".cuh", ".inc", ".inl")):
                continue  # a header may come from an include path; a .cu include is the project's
            beside = posixpath.normpath(posixpath.join(folder, name))
            if beside in paths or posixpath.normpath(name) in paths:
                continue
            if name not in writers:
                writers[name] = _writer(posixpath.basename(name), python_paths, read)
            line = text.count("\n", 0, match.start()) + 1
            writer = writers[name]
            if writer is not None:
                message = (
                    f"`{name}` is not in the project: `{writer}` "
                    "writes it before the build: generated at build time, not read"
                )
                notes.append(BuildNote(relative, line, GENERATED, message, extension))
            else:
                message = f"`{name}` is not in the project: not read"
                notes.append(BuildNote(relative, line, UNREAD, message, extension))
            if len(notes) >= _MAX_NOTES:
                return notes
    return notes


def _writer(
    name: str, python_paths: Sequence[str], read: Callable[[str], str | None]
) -> str | None:
    """The first Python file of the project that names ``name`` in a string (a generator)."""
    needle = re.compile(r"[\"']" + re.escape(name) + r"[\"']")
    for relative in python_paths:
        text = read(relative)
        if text and name in text and needle.search(text):
            return relative
    return None


__all__ = ["missing_includes"]
