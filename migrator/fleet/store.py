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
from migrator.files.sources import FailFile, SkipFile, read_regular
from migrator.files.writer import WriteRefused, private_folder, private_path, write_private_under

#: The file whose presence marks a complete result.
MARKER = "unit.json"
_SLUG = re.compile(r"[^A-Za-z0-9._+-]+")
#: A stored result file larger than this is not read (a report of a very large project).
_MAX_RESULT_BYTES = 256 * 1024 * 1024


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
    """A results folder on this machine (the driver writes; units only return their files).
    Every read, write and removal goes through the write policy's private-folder functions: a
    symlink at the folder, at a folder inside it or at a file is never followed."""

    root: Path

    def open(self) -> Store:
        """Create the results folder; WriteRefused (one line) when it, or a folder the tool
        makes inside it, is a symlink or not a folder."""
        private_folder(self.root)
        for folder in ("units", "failed"):
            private_folder(self.root, folder)
        return self

    def check(self, name: str, key: str) -> None:
        """WriteRefused (one line) when the result or failure record of unit ``key`` would be
        read or written through a symlink (checked before any unit runs)."""
        private_path(self.root, f"{self._folder(name, key)}/{MARKER}")
        private_path(self.root, self._failure(name, key))

    def folder(self, name: str, key: str) -> Path:
        """Where the result of unit ``key`` of repository ``name`` lives."""
        return self.root / self._folder(name, key)

    def failure_path(self, name: str, key: str) -> Path:
        """Where the last failure of unit ``key`` is recorded."""
        return self.root / self._failure(name, key)

    def _folder(self, name: str, key: str) -> str:
        return f"units/{slug(name)}/{key[:24]}"

    def _failure(self, name: str, key: str) -> str:
        return f"failed/{slug(name)}/{key[:24]}.json"

    def done(self, name: str, key: str) -> bool:
        """Whether a complete result of this unit exists."""
        return self._read(f"{self._folder(name, key)}/{MARKER}") is not None

    def meta(self, name: str, key: str) -> dict[str, Any] | None:
        """The unit record of a complete result, or None."""
        return _record(self._read(f"{self._folder(name, key)}/{MARKER}"))

    def failure(self, name: str, key: str) -> dict[str, Any] | None:
        """The last failure record of this unit, or None."""
        return _record(self._read(self._failure(name, key)))

    def read(self, name: str, key: str, file_name: str) -> str | None:
        """The text of one stored file of a unit's result, or None (missing, unreadable, or
        reached through a symlink)."""
        return self._read(f"{self._folder(name, key)}/{file_name}")

    def _read(self, relative: str) -> str | None:
        try:
            path = private_path(self.root, relative)
            return read_regular(str(path), _MAX_RESULT_BYTES).decode("utf-8")
        except (WriteRefused, SkipFile, FailFile, UnicodeDecodeError):
            return None

    def write(self, name: str, key: str, files: dict[str, str], meta: dict[str, Any]) -> Path:
        """Store a unit's files, then its record (the completion marker); a previous failure
        record of the unit is removed. WriteRefused (one line) for a symlink on the way."""
        folder = self._folder(name, key)
        for file_name, text in sorted(files.items()):
            if "/" in file_name or file_name in ("", ".", "..", MARKER):
                raise ValueError(f"bad result file name: {file_name!r}")
            write_private_under(
                self.root, f"{folder}/{file_name}", text.encode("utf-8", "surrogateescape")
            )
        write_private_under(self.root, f"{folder}/{MARKER}", _json(meta))
        private_path(self.root, self._failure(name, key)).unlink(missing_ok=True)
        return self.root / folder

    def write_failure(self, name: str, key: str, record: dict[str, Any]) -> None:
        """Record why a unit failed after its retries (read by the fleet report)."""
        write_private_under(self.root, self._failure(name, key), _json(record))


def _record(text: str | None) -> dict[str, Any] | None:
    try:
        data = json.loads(text) if text is not None else None
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _json(data: dict[str, Any]) -> bytes:
    return (json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()
