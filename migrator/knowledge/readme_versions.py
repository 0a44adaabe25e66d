"""The torch floor a project states in its README ("PyTorch 2.2 and above", "torch>=2.3"), one
of the places ``migrator.knowledge.stated_versions`` reads, so that a fix does not emit an API
the project says it supports without."""

from __future__ import annotations

import re
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
)
_README_NAMES = ("README.md", "README.rst", "README.txt", "README")


def stated_torch_floor(root: Path) -> Floor | None:
    """The lowest torch version the README at ``root`` states as the minimum, or None."""
    for name in _README_NAMES:
        path = root / name
        if not path.is_file() or path.is_symlink():
            continue
        read = read_project_text(path)
        if read is None:
            return None
        text = read[:200_000]
        found = []
        for pattern in _STATED:
            for match in pattern.finditer(text):
                try:
                    found.append(Version(match.group(1)))
                except InvalidVersion:
                    continue
        return Floor(min(found), f"{name} torch {min(found)}") if found else None
    return None
