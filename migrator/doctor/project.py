"""Which GPU packages a project needs, by a plain text search of its requirements and imports."""

from __future__ import annotations

import os
import re
from pathlib import Path

from migrator.files.sources import read_project_text

PACKAGES = {
    "flash_attn": re.compile(r"(?m)^\s*(?:import\s+flash_attn|from\s+flash_attn)\b|flash[-_]attn"),
    "bitsandbytes": re.compile(r"bitsandbytes"),
}
"""Import name → pattern that shows the project needs it."""

_SKIP_DIRS = {
    ".git",
    ".venv",
    "venv",
    "node_modules",
    "__pycache__",
    ".tox",
    ".mypy_cache",
    "build",
    "dist",
    "site-packages",
}
_TEXT_NAMES = re.compile(
    r"(requirements.*\.(txt|in)|pyproject\.toml|setup\.(py|cfg)|environment\.ya?ml|"
    r"Pipfile|.*\.py)$"
)
MAX_FILES = 5000


def needed_packages(root: Path) -> dict[str, list[str]]:
    """``{import name: [files that mention it]}`` for the packages in :data:`PACKAGES`."""
    found: dict[str, list[str]] = {name: [] for name in PACKAGES}
    seen = 0
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = sorted(d for d in subdirs if d not in _SKIP_DIRS)
        for name in sorted(files):
            if not _TEXT_NAMES.fullmatch(name):
                continue
            seen += 1
            if seen > MAX_FILES:
                return {key: value for key, value in found.items() if value}
            path = Path(directory) / name
            text = read_project_text(path)
            if text is None:
                continue
            for package, pattern in PACKAGES.items():
                if pattern.search(text):
                    found[package].append(str(path.relative_to(root)))
    return {key: value for key, value in found.items() if value}
