"""The include folders a compile of the private copy searches besides the build's own: every
project folder from which a name a file includes resolves (``include/`` in ``#include
"mylib/ops.h"``), so that a project header is found as the project's build finds it, and the
missing headers of a unit, every one of them (clang stops at the first)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from migrator.files.sources import read_project_bytes
from migrator.kernels.includes import file_includes
from migrator.kernels.source import MAX_SOURCE_BYTES

_DEPENDENCY_SPLIT = re.compile(r"(?<!\\)\s+")


def project_include_folders(source_dir: Path, relatives: Iterable[str]) -> list[Path]:
    """Folders of the copy (``source_dir``) under which a name some copied file includes, and
    that does not resolve beside that file, is a copied file: the project's include roots, in
    the order first needed."""
    files = sorted(set(relatives))
    by_base: dict[str, list[str]] = {}
    for relative in files:
        by_base.setdefault(relative.rsplit("/", 1)[-1], []).append(relative)
    present = set(files)
    found: list[str] = []
    for relative in files:
        data = read_project_bytes(source_dir / relative, MAX_SOURCE_BYTES)
        if not data or b"include" not in data:
            continue
        here = relative.rsplit("/", 1)[0] if "/" in relative else ""
        for include in file_includes(data.decode("utf-8", "surrogateescape")).includes:
            name = os.path.normpath(include.name) if include.name else ""
            if include.macro or not name or name.startswith(("/", "..")):
                continue
            beside = os.path.normpath(f"{here}/{name}") if here else name
            if beside in present:
                continue
            for candidate in by_base.get(name.rsplit("/", 1)[-1], []):
                if candidate == name:
                    prefix = ""
                elif candidate.endswith("/" + name):
                    prefix = candidate[: -len(name) - 1]
                else:
                    continue
                if prefix not in found:
                    found.append(prefix)
    return [source_dir / prefix if prefix else source_dir for prefix in found]


def missing_headers(dependencies: str, workdir: Path) -> list[str]:
    """The names a ``-M -MG`` dependency list holds that are no file (the headers not found,
    each once, in include order)."""
    text = dependencies.replace("\\\n", " ")
    _, _, rest = text.partition(": ")
    out: list[str] = []
    for word in _DEPENDENCY_SPLIT.split(rest.strip()):
        name = word.replace("\\ ", " ")
        if not name:
            continue
        path = Path(name) if os.path.isabs(name) else workdir / name
        if not path.exists() and name not in out:
            out.append(name)
    return out


def include_line(
    name: str, files: Sequence[Path], maps: Mapping[Path, tuple[str, list[int]]]
) -> tuple[str, int] | None:
    """The original file and line of the first ``#include`` of ``name`` among ``files`` (a unit
    and its project headers in the copy), or None."""
    pattern = re.compile(
        rb"^[ \t]*#[ \t]*include[ \t]*[<\"]" + re.escape(name.encode()) + rb"[>\"]", re.M
    )
    for path in files:
        data = read_project_bytes(path, MAX_SOURCE_BYTES)
        match = pattern.search(data or b"")
        if data is None or match is None:
            continue
        line = data.count(b"\n", 0, match.start()) + 1
        mapped = maps.get(path.resolve())
        if mapped is None:
            continue
        relative, mapping = mapped
        return relative, mapping[line - 1] if 0 < line <= len(mapping) else line
    return None


__all__ = ["include_line", "missing_headers", "project_include_folders"]
