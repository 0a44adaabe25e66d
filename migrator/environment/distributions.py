"""The distributions installed in a site-packages folder, read from their metadata folders
(``*.dist-info``: ``METADATA``, ``RECORD``, ``top_level.txt``; ``*.egg-info`` likewise): name,
version, the import names each provides, its files and the requirements it always installs."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from packaging.utils import canonicalize_name

from migrator.files.sources import FailFile, SkipFile, read_regular

#: At most this many metadata folders are read per site-packages folder.
MAX_DISTRIBUTIONS = 5000
#: A metadata file (``RECORD``, ``METADATA``) larger than this is not read.
MAX_METADATA_BYTES = 8 << 20
_EXTENSION = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(?:\.[^./]+)*\.(?:so|pyd|dylib)$")
_REQUIRES = re.compile(r"^Requires-Dist:\s*([A-Za-z0-9][A-Za-z0-9._-]*)([^;\n]*)(;.*)?$", re.M)
_EXTRA = re.compile(r"\bextra\s*==")


@dataclass(slots=True)
class Distribution:
    """One installed distribution: its files are relative to ``site`` (``RECORD`` order)."""

    name: str
    version: str
    site: Path
    imports: set[str] = field(default_factory=set)
    files: list[str] = field(default_factory=list)
    requires: list[str] = field(default_factory=list)


def _read(path: Path) -> str:
    try:
        return read_regular(str(path), MAX_METADATA_BYTES).decode("utf-8", "replace")
    except (SkipFile, FailFile):
        return ""


def _header(metadata: str, key: str) -> str:
    match = re.search(rf"^{key}:\s*(.+)$", metadata, re.M)
    return match.group(1).strip() if match else ""


def _record_paths(record: str) -> list[str]:
    """The paths a ``RECORD`` lists (its first CSV column; a quoted path keeps its commas)."""
    out: list[str] = []
    for line in record.splitlines():
        if not line:
            continue
        if line.startswith('"'):
            end = line.find('"', 1)
            out.append(line[1:end] if end > 0 else line[1:])
        else:
            out.append(line.split(",", 1)[0])
    return out


def _import_name(path: str) -> str:
    """The top-level import name a file installs (``pkg/x.py`` -> ``pkg``, ``mod.py`` -> ``mod``,
    ``_C.cpython-312-x86_64-linux-gnu.so`` -> ``_C``), or "" for metadata, scripts and data."""
    head, _, rest = path.partition("/")
    if head in ("", "..", "__pycache__") or head.endswith((".dist-info", ".egg-info", ".data")):
        return ""
    if rest:
        return head if head.isidentifier() else ""
    if head.endswith(".py"):
        return head[:-3] if head[:-3].isidentifier() else ""
    match = _EXTENSION.match(head)
    return match.group(1) if match else ""


def _walk(site: Path, top: str, limit: int) -> list[str]:
    """Files of an import name with no ``RECORD`` (an egg-info install): its folder walked
    without following links, or its single module file."""
    out: list[str] = []
    folder = site / top
    if folder.is_dir() and not folder.is_symlink():
        stack = [folder]
        while stack and len(out) < limit:
            current = stack.pop()
            try:
                entries = sorted(current.iterdir())
            except OSError:
                continue
            for entry in entries:
                if entry.is_symlink():
                    continue
                if entry.is_dir():
                    stack.append(entry)
                elif entry.is_file():
                    out.append(entry.relative_to(site).as_posix())
        return out
    try:
        return [entry.name for entry in site.glob(f"{top}.*") if entry.is_file()][:limit]
    except OSError:
        return []


def _requires(metadata: str) -> list[str]:
    """The requirements installed with the distribution itself (not only with an extra)."""
    return [
        canonicalize_name(match.group(1))
        for match in _REQUIRES.finditer(metadata)
        if not (match.group(3) and _EXTRA.search(match.group(3)))
    ]


def _metadata_folders(site: Path) -> Iterator[Path]:
    try:
        entries = sorted(site.iterdir())
    except OSError:
        return
    count = 0
    for entry in entries:
        if entry.name.endswith((".dist-info", ".egg-info")) and entry.is_dir():
            count += 1
            if count > MAX_DISTRIBUTIONS:
                return
            yield entry


def read_site(site: Path, file_limit: int = 20000) -> list[Distribution]:
    """Every distribution installed in ``site``."""
    out: list[Distribution] = []
    for folder in _metadata_folders(site):
        egg = folder.name.endswith(".egg-info")
        metadata = _read(folder / ("PKG-INFO" if egg else "METADATA"))
        name = _header(metadata, "Name") or folder.name.split("-")[0]
        dist = Distribution(canonicalize_name(name), _header(metadata, "Version"), site)
        dist.requires = _requires(metadata)
        if egg:
            requires = _read(folder / "requires.txt")
            head = requires.split("\n[", 1)[0]  # sections after the first are extras
            dist.requires += [
                canonicalize_name(m.group(0))
                for line in head.splitlines()
                if (m := re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", line.strip()))
            ]
        record = "" if egg else _read(folder / "RECORD")
        dist.files = _record_paths(record)[:file_limit]
        tops = {
            line.strip().replace("/", ".").split(".")[0]
            for line in _read(folder / "top_level.txt").splitlines()
            if line.strip()
        }
        tops |= {top for path in dist.files if (top := _import_name(path))}
        dist.imports = {top for top in tops if top.isidentifier()}
        if not dist.files:
            for top in sorted(dist.imports):
                dist.files += _walk(site, top, file_limit)
        out.append(dist)
    return out


def by_import(sites: tuple[Path, ...]) -> dict[str, Distribution]:
    """Import name -> the distribution that provides it (the first site-packages folder wins,
    as on ``sys.path``)."""
    out: dict[str, Distribution] = {}
    for site in sites:
        for dist in read_site(site):
            for name in dist.imports:
                out.setdefault(name, dist)
    return out
