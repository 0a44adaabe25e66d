"""Per-root result cache keyed by file content, rule catalog and tool version.

Lives outside the scanned tree (``$MIGRATE_CACHE_DIR`` or ``~/.cache/migrate``) so a scan never
writes into the user's project. Loading it must not import libcst: a warm rescan stays fast.
Every cache file is JSON, validated on load and rebuilt when it does not validate: a planted or
corrupt cache can hide nothing from the catalog and can never run code.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from dataclasses import astuple, fields
from pathlib import Path
from typing import Any

import migrator
from migrator.model import Applicability, FileResult, Finding, FixInfo, Related, Severity, Status

_FINGERPRINT: str | None = None

#: Set (by ``scan --no-cache``) to keep every cache read and write out of this process.
NO_CACHE_VARIABLE = "MIGRATE_NO_CACHE"


def cache_dir() -> Path:
    configured = os.environ.get("MIGRATE_CACHE_DIR")
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "migrate"


def catalog_fingerprint() -> str:
    """Hash of the tool version and every source and data file of the engine and of the catalog
    (its family packages and data included)."""
    global _FINGERPRINT
    if _FINGERPRINT is None:
        digest = hashlib.blake2b(migrator.__version__.encode(), digest_size=16)
        package = Path(migrator.__file__).parent
        rules_dir = _rules_dir(package)
        for root, files in ((package, package.glob("*")), (rules_dir, rules_dir.rglob("*"))):
            for path in sorted(files):
                if path.suffix in {".py", ".toml"} and path.is_file():
                    digest.update(path.relative_to(root).as_posix().encode())
                    digest.update(path.read_bytes())
        _FINGERPRINT = digest.hexdigest()
    return _FINGERPRINT


def _rules_dir(package: Path) -> Path:
    installed = package / "rules"
    if installed.is_dir():
        return installed
    return package.parent / "rules"


class CacheInvalid(Exception):
    """A cache file that does not match the expected shape; it is discarded and rebuilt."""


def _require(condition: bool, what: str) -> None:
    if not condition:
        raise CacheInvalid(what)


def _encode_finding(finding: Finding) -> dict[str, Any]:
    data: dict[str, Any] = {}
    for item in fields(Finding):
        value = getattr(finding, item.name)
        if isinstance(value, Severity):
            value = int(value)
        elif isinstance(value, FixInfo):
            value = {"applicability": value.applicability.value, "description": value.description}
        elif item.name == "related":
            value = [list(astuple(site)) for site in value]
        data[item.name] = value
    return data


_FINDING_TYPES: dict[str, tuple[type, ...]] = {
    "rule": (str,),
    "name": (str,),
    "category": (str,),
    "path": (str,),
    "line": (int,),
    "column": (int,),
    "end_line": (int,),
    "end_column": (int,),
    "message": (str,),
    "cell": (int, type(None)),
    "source_line": (str,),
}


def _decode_finding(data: Any) -> Finding:
    _require(isinstance(data, dict), "finding is not an object")
    names = {item.name for item in fields(Finding)}
    _require(set(data) == names, "finding fields differ")
    values: dict[str, Any] = {}
    for name, value in data.items():
        if name == "severity":
            _require(type(value) is int, "severity")
            values[name] = Severity(value)
        elif name == "fix":
            if value is None:
                values[name] = None
                continue
            _require(
                isinstance(value, dict) and set(value) == {"applicability", "description"}, "fix"
            )
            _require(isinstance(value["description"], str), "fix description")
            values[name] = FixInfo(Applicability(value["applicability"]), value["description"])
        elif name == "related":
            _require(isinstance(value, list), "related")
            sites = []
            for site in value:
                _require(
                    isinstance(site, list)
                    and len(site) == 7
                    and type(site[0]) is str
                    and all(type(part) is int for part in site[1:5])
                    and type(site[5]) in (int, type(None))
                    and type(site[6]) is str,
                    "related site",
                )
                sites.append(Related(*site))
            values[name] = tuple(sites)
        else:
            expected = _FINDING_TYPES.get(name, (str, int, float, bool, type(None)))
            _require(type(value) in expected, f"finding field {name}")
            values[name] = value
    return Finding(**values)


def _encode_result(result: FileResult) -> dict[str, Any]:
    return {
        "path": result.path,
        "status": result.status.value,
        "findings": [_encode_finding(finding) for finding in result.findings],
        "reason": result.reason,
        "unused_suppressions": [[line, code] for line, code in result.unused_suppressions],
    }


def _decode_result(data: Any) -> FileResult:
    _require(isinstance(data, dict), "result is not an object")
    _require(isinstance(data.get("path"), str) and isinstance(data.get("reason"), str), "result")
    findings = data.get("findings")
    unused = data.get("unused_suppressions")
    _require(isinstance(findings, list) and isinstance(unused, list), "result lists")
    pairs = []
    for item in unused:
        _require(
            isinstance(item, list)
            and len(item) == 2
            and type(item[0]) is int
            and isinstance(item[1], str),
            "unused suppression",
        )
        pairs.append((item[0], item[1]))
    decoded = tuple(_decode_finding(finding) for finding in findings)
    _require(all(finding.path == data["path"] for finding in decoded), "finding path")
    return FileResult(
        data["path"],
        Status(data["status"]),
        findings=decoded,
        reason=data["reason"],
        unused_suppressions=tuple(pairs),
    )


def _owned_by_us(path: Path) -> bool:
    """Whether ``path`` is a regular file owned by this user and writable by no one else (a
    cache in a shared folder must not be planted by another account)."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    if not stat.S_ISREG(info.st_mode) or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return False
    return not hasattr(os, "getuid") or info.st_uid == os.getuid()


def load_json(path: Path) -> Any:
    """The JSON in a cache file we own; CacheInvalid when it is missing, foreign or malformed."""
    if not _owned_by_us(path):
        raise CacheInvalid("missing or not ours")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise CacheInvalid(str(error)) from None


def save_json(path: Path, payload: Any) -> None:
    """Write a cache file under the write policy (atomic, never through a link), readable and
    writable by this user only."""
    from migrator.files.writer import WriteRefused, write_private

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_private(path, json.dumps(payload, separators=(",", ":")).encode("utf-8"))
    except (OSError, WriteRefused):
        pass  # caching is an optimisation; a read-only home must not fail the scan


class ResultCache:
    """Maps a relative path to (content key, kind, FileResult) for one scanned root. Stored as
    JSON (data only, never code), checked field by field on load; a file that does not check
    out is discarded and rebuilt."""

    def __init__(self, root: Path) -> None:
        name = hashlib.blake2b(str(root.resolve()).encode(), digest_size=12).hexdigest()
        self.path = cache_dir() / f"{name}.json"
        self.fingerprint = catalog_fingerprint()
        self.entries: dict[str, tuple[str, str, FileResult]] = {}
        self.dirty = False
        try:
            self.entries = self._load()
        except (CacheInvalid, ValueError, TypeError, KeyError):
            self.entries = {}
            self.dirty = True

    def _load(self) -> dict[str, tuple[str, str, FileResult]]:
        stored = load_json(self.path)
        _require(isinstance(stored, dict), "not an object")
        if stored.get("fingerprint") != self.fingerprint:
            return {}
        raw = stored.get("entries")
        _require(isinstance(raw, dict), "entries")
        entries: dict[str, tuple[str, str, FileResult]] = {}
        for relative, entry in raw.items():
            _require(isinstance(entry, list) and len(entry) == 3, "entry")
            key, kind, result = entry
            _require(isinstance(key, str) and isinstance(kind, str), "entry key")
            decoded = _decode_result(result)
            _require(decoded.path == relative, "entry path")
            entries[relative] = (key, kind, decoded)
        return entries

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
        payload = {
            "fingerprint": self.fingerprint,
            "entries": {
                path: [key, kind, _encode_result(result)]
                for path, (key, kind, result) in self.entries.items()
            },
        }
        save_json(self.path, payload)
