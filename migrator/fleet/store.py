"""The results folder: one folder per unit of work, keyed by repository, commit, tool version,
rules digest and options, so that an unchanged unit is found and not run again. Every file is
written atomically through the write policy, and ``unit.json`` is written last: a result without
it is incomplete and is run again, so a half-written result is never read."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import migrator
from migrator.files.writer import write_private

#: The file whose presence marks a complete result.
MARKER = "unit.json"
_SLUG = re.compile(r"[^A-Za-z0-9._+-]+")


def result_key(source: str, commit: str, stage: str, options: dict[str, Any]) -> str:
    """sha256 of what decides a unit's result: where the code comes from, its commit (or
    content digest), the stage, the tool version, the rules digest and the unit's options."""
    from migrator.files.cache import catalog_fingerprint

    payload = {
        "source": source,
        "commit": commit,
        "stage": stage,
        "tool": migrator.__version__,
        "rules": catalog_fingerprint(),
        "options": options,
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def slug(name: str) -> str:
    """A file-name-safe form of a repository name."""
    return _SLUG.sub("_", name).strip("._") or "repo"


@dataclass(frozen=True, slots=True)
class Store:
    """A results folder on this machine (the driver writes; units only return their files)."""

    root: Path

    def folder(self, name: str, key: str) -> Path:
        """Where the result of unit ``key`` of repository ``name`` lives."""
        return self.root / "units" / slug(name) / key[:24]

    def failure_path(self, name: str, key: str) -> Path:
        """Where the last failure of unit ``key`` is recorded."""
        return self.root / "failed" / slug(name) / f"{key[:24]}.json"

    def done(self, name: str, key: str) -> bool:
        """Whether a complete result of this unit exists."""
        return (self.folder(name, key) / MARKER).is_file()

    def meta(self, name: str, key: str) -> dict[str, Any] | None:
        """The unit record of a complete result, or None."""
        try:
            data = json.loads((self.folder(name, key) / MARKER).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def failure(self, name: str, key: str) -> dict[str, Any] | None:
        """The last failure record of this unit, or None."""
        try:
            data = json.loads(self.failure_path(name, key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def write(self, name: str, key: str, files: dict[str, str], meta: dict[str, Any]) -> Path:
        """Store a unit's files, then its record (the completion marker); a previous failure
        record of the unit is removed."""
        folder = self.folder(name, key)
        folder.mkdir(parents=True, exist_ok=True)
        for file_name, text in sorted(files.items()):
            if "/" in file_name or file_name in ("", ".", "..", MARKER):
                raise ValueError(f"bad result file name: {file_name!r}")
            write_private(folder / file_name, text.encode("utf-8", "surrogateescape"))
        write_private(folder / MARKER, _json(meta))
        self.failure_path(name, key).unlink(missing_ok=True)
        return folder

    def write_failure(self, name: str, key: str, record: dict[str, Any]) -> None:
        """Record why a unit failed after its retries (read by the fleet report)."""
        path = self.failure_path(name, key)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_private(path, _json(record))


def _json(data: dict[str, Any]) -> bytes:
    return (json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()
