"""The torch floor a project states in its README or its install guide, one of the places
``migrator.knowledge.stated_versions`` reads, so that a fix does not emit an API the project
says it supports without.

Three forms are read as "this torch is supported" (so the floor is at most that version):

- a minimum: "PyTorch 2.2 and above", "torch>=2.3", "PyTorch >= 1.7";
- an install command or pin: ``conda install pytorch==1.8.0``, ``pip install torch==2.1.1``,
  ``pytorch=1.11`` (a version the guide installs is one the project runs on);
- a requirement sentence: "developed with ... PyTorch version 1.7.1", "Python 3.7 and PyTorch
  1.7.1 ... install", "tested with PyTorch 1.9": a version named on a line that says the code
  was developed, tested or is installed or required with it.

A bare mention ("the profiling runs with PyTorch 2.0.1") states nothing."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from packaging.version import InvalidVersion, Version

from migrator.files.sources import read_project_text
from migrator.knowledge.versions import Floor

_NUMBER = r"(\d+\.\d+(?:\.\d+)?)"
_STATED = (
    re.compile(rf"\b(?:py)?torch\s*(?:version\s*)?(?:>=|≥)\s*{_NUMBER}", re.IGNORECASE),
    re.compile(
        rf"\bpytorch\s+{_NUMBER}\s*(?:\+|(?:and|or)\s+(?:above|later|newer|higher))",
        re.IGNORECASE,
    ),
    # an install pin: pip `torch==2.1.1`, conda `pytorch==1.8.0` / `pytorch=1.11.0`, `~=`
    re.compile(rf"(?<![\w.-])(?:py)?torch\s*(?:==|~=|=)\s*v?{_NUMBER}", re.IGNORECASE),
)
#: "PyTorch 1.7.1", "PyTorch version 1.7.1", "torch v1.9": counted only on a requirement line.
_NAMED = re.compile(rf"\b(?:py)?torch\s+(?:version\s+)?v?{_NUMBER}(?!\w|\.\d)", re.IGNORECASE)
_REQUIREMENT_LINE = re.compile(
    r"\b(?:requir\w*|develop\w*|tested|install\w*|depend\w*|needs?|prerequisites?)\b",
    re.IGNORECASE,
)
_README_NAMES = ("README.md", "README.rst", "README.txt", "README")
#: Install guides at the top or in ``docs/``: INSTALL.md, docs/installation.rst,
#: get_started.md, GETTING_STARTED.md (matched without case, any of .md/.rst/.txt).
_GUIDE = re.compile(r"(?:install(?:ation|ing)?|get(?:ting)?[_-]started)\.(?:md|rst|txt)")
_GUIDE_FOLDERS = (".", "docs", "doc")
_LIMIT = 200_000


def stated_torch_floors(root: Path) -> list[Floor]:
    """Per document (the README, each install guide) at ``root``, the lowest torch version it
    states as supported, with the file and line it was read from."""
    floors: list[Floor] = []
    for path in _documents(root):
        read = read_project_text(path)
        if read is None:
            continue
        found = list(_statements(read[:_LIMIT]))
        if found:
            version, line = min(found)
            floors.append(
                Floor(version, f"{path.relative_to(root).as_posix()}:{line} torch {version}")
            )
    return floors


def _documents(root: Path) -> Iterator[Path]:
    """The first README at ``root`` and every install guide at ``root``, ``docs/``, ``doc/``
    (regular files inside ``root``; no link is followed)."""
    for name in _README_NAMES:
        path = root / name
        if path.is_file() and not path.is_symlink():
            yield path
            break
    for folder in _GUIDE_FOLDERS:
        directory = root / folder
        if directory.is_symlink() or not directory.is_dir():
            continue
        for path in sorted(directory.iterdir()):
            if _GUIDE.fullmatch(path.name.lower()) and path.is_file() and not path.is_symlink():
                yield path


def _statements(text: str) -> Iterator[tuple[Version, int]]:
    """(version, line) for every torch version ``text`` states as supported."""
    for number, line in enumerate(text.splitlines(), start=1):
        matches = [match for pattern in _STATED for match in pattern.finditer(line)]
        if _REQUIREMENT_LINE.search(line):
            matches += list(_NAMED.finditer(line))
        for match in matches:
            try:
                yield Version(match.group(1)), number
            except InvalidVersion:
                continue
