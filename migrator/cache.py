"""Per-root result cache keyed by file content, rule catalog and tool version.

Lives outside the scanned tree (``$MIGRATE_CACHE_DIR`` or ``~/.cache/migrate``) so a scan never
writes into the user's project. Loading it must not import libcst: a warm rescan stays fast.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
from pathlib import Path
from typing import Any

import migrator
from migrator.model import FileResult

_FINGERPRINT: str | None = None


def cache_dir() -> Path:
    configured = os.environ.get("MIGRATE_CACHE_DIR")
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "migrate"


def catalog_fingerprint() -> str:
    """Hash of the tool version and every source and data file of the engine and catalog."""
    global _FINGERPRINT
    if _FINGERPRINT is None:
        digest = hashlib.blake2b(migrator.__version__.encode(), digest_size=16)
        package = Path(migrator.__file__).parent
        rules_dir = _rules_dir(package)
        for directory in (package, rules_dir, rules_dir / "data"):
            for path in sorted(directory.glob("*")):
                if path.suffix in {".py", ".toml"} and path.is_file():
                    digest.update(path.name.encode())
                    digest.update(path.read_bytes())
        _FINGERPRINT = digest.hexdigest()
    return _FINGERPRINT


def _rules_dir(package: Path) -> Path:
    installed = package / "rules"
    if installed.is_dir():
        return installed
    return package.parent / "rules"


def content_key(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


class ResultCache:
    """Maps a relative path to (content key, kind, FileResult) for one scanned root."""

    def __init__(self, root: Path) -> None:
        name = hashlib.blake2b(str(root.resolve()).encode(), digest_size=12).hexdigest()
        self.path = cache_dir() / f"{name}.pickle"
        self.fingerprint = catalog_fingerprint()
        self.entries: dict[str, tuple[str, str, FileResult]] = {}
        self.catalog: list[dict[str, Any]] = []
        self.dirty = False
        try:
            with self.path.open("rb") as handle:
                stored = pickle.load(handle)
            if stored.get("fingerprint") == self.fingerprint:
                self.entries = stored["entries"]
                self.catalog = stored.get("catalog", [])
        except Exception:  # a missing, stale or corrupt cache is simply rebuilt
            self.entries = {}

    def get(self, relative: str, key: str, kind: str) -> FileResult | None:
        entry = self.entries.get(relative)
        if entry is not None and entry[0] == key and entry[1] == kind:
            return entry[2]
        return None

    def put(self, relative: str, key: str, kind: str, result: FileResult) -> None:
        self.entries[relative] = (key, kind, result)
        self.dirty = True

    def save(self, keep: set[str]) -> None:
        if set(self.entries) - keep:
            self.entries = {path: entry for path, entry in self.entries.items() if path in keep}
            self.dirty = True
        if not self.dirty:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            payload = {
                "fingerprint": self.fingerprint,
                "entries": self.entries,
                "catalog": self.catalog,
            }
            handle = tempfile.NamedTemporaryFile(dir=self.path.parent, delete=False)
            with handle:
                pickle.dump(payload, handle, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(handle.name, self.path)
        except OSError:
            pass  # caching is an optimisation; a read-only home must not fail the scan
