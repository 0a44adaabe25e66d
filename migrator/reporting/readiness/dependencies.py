"""The dependency table: each declared package or image with its ROCm status."""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from migrator.model import Finding
from migrator.reporting.readiness.scoring import FIX_CLASSES, Item

#: Finding categories that describe declared dependencies, images or package indexes.
DEPENDENCY_CATEGORIES = frozenset({"dependency", "container"})
#: File kinds (see ``migrator.discovery.file_kind``) that declare dependencies or images.
DEPENDENCY_FILE_KINDS = frozenset({"requirements", "pyproject", "setupcfg", "conda"})


@dataclass(frozen=True, slots=True)
class PackageInfo:
    """The ROCm side of one CUDA-specific package, image or index."""

    rocm: str
    min_version: str
    source: str


def _fallback_packages() -> dict[str, PackageInfo]:
    from migrator.ruledata import load_table

    return {
        key: PackageInfo(entry["rocm"], entry["min_version"], entry["source"])
        for key, entry in load_table("package_status").items()
    }


#: Used only for names that ``packages.toml`` does not describe: ``rules/data/package_status.toml``.
FALLBACK_PACKAGES: dict[str, PackageInfo] = _fallback_packages()


@dataclass(slots=True)
class DependencyRow:
    """One CUDA-specific package, image or index URL, wherever it is declared."""

    item: str
    kind: str
    locations: list[tuple[str, int]]
    rules: list[str]
    fix_class: str
    rocm: str
    min_version: str
    source: str
    message: str


_FROM = re.compile(r"^\s*FROM\s+(?:--platform=\S+\s+)?(\S+)", re.IGNORECASE)
_IMAGE = re.compile(r"\bimage:\s*['\"]?([^\s'\"]+)")
_URL = re.compile(r"https?://[^\s'\",;)\]]+")
_REQUIREMENT = re.compile(
    r"^\s*['\"]?([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?\s*(?:[=<>!~@;,'\"]|$)"
)


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name.strip().lower())


_BACKTICK = re.compile(r"`([^`]+)`")
_PACKAGE = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?\s*(?:[=<>!~@;]|$)")
_QUOTED = re.compile(r"[\"']([^\"']+)[\"']")
_NOT_PACKAGES = frozenset(
    {"run", "env", "pip", "pip3", "from", "arg", "python", "apt-get", "conda"}
)


def _package(text: str) -> str | None:
    match = _PACKAGE.match(text.strip())
    if not match or match.group(1).lower() in _NOT_PACKAGES:
        return None
    return _normalize(match.group(1)) + (match.group(2) or "")


def dependency_item(finding: Finding) -> tuple[str, str]:
    """``(item, kind)``: the package, image, index URL or setting a dependency finding is about.

    Tried in order: a ``FROM``/``image:`` reference, a URL, the first package named in
    backticks in the message, a quoted requirement on the line, a requirement at the start of
    the line; otherwise the line itself (a container setting) or the rule name.
    """
    line = finding.source_line.strip()
    match = _FROM.match(line) or _IMAGE.search(line)
    if match:
        return match.group(1), "image"
    url = _URL.search(line)
    if url:
        return url.group(0), "index"
    from migrator.discovery import file_kind

    candidates = list(_BACKTICK.findall(finding.message))
    start = [] if "--index-url" in line else [line.split("#", 1)[0]]
    quoted = _QUOTED.findall(line)
    toml = file_kind(finding.path) in {"pyproject", "conda"} or line.startswith(("'", '"'))
    candidates += quoted + start if toml else start + quoted
    for candidate in candidates:
        name = _package(candidate)
        if name and (candidate in finding.source_line or name.split("[")[0] in _normalize(line)):
            return name, "package"
    if line:
        return (line if len(line) <= 60 else line[:57] + "..."), "setting"
    return finding.name, "other"


def is_dependency(finding: Finding) -> bool:
    """Whether a finding is about a declared package, container image or package index."""
    from migrator.discovery import file_kind

    return (
        finding.category.lower() in DEPENDENCY_CATEGORIES
        or file_kind(finding.path) in DEPENDENCY_FILE_KINDS
    )


_ROCM_KEYS = (
    "rocm",
    "rocm_equivalent",
    "equivalent",
    "counterpart",
    "replacement",
    "rocm_package",
    "rocm_name",
    "alternative",
    "rocm_side",
    "to",
    "by_major",
)
_VERSION_KEYS = (
    "min_version",
    "rocm_min_version",
    "min_rocm_version",
    "minimum_version",
    "first_rocm",
    "first_rocm_version",
    "rocm_since",
    "since",
    "min_rocm",
)
_OFFICIAL_KEYS = ("official", "official_version", "stable")
_SOURCE_KEYS = ("source", "sources", "reference", "references", "fact", "url", "link")
_NAME_KEYS = ("name", "package", "names", "aliases", "packages")
_PATTERN_KEYS = ("pattern", "patterns", "match", "regex")


def text_of(value: object) -> str:
    """A receipt or package-table value as one line of text (lists and tables flattened)."""
    if isinstance(value, (list, tuple)):
        return ", ".join(text_of(part) for part in value)
    if isinstance(value, dict):
        return ", ".join(f"{key}: {text_of(part)}" for key, part in value.items())
    return "" if value is None else str(value)


def _first(entry: dict[str, object], keys: Sequence[str]) -> str:
    for key in keys:
        if key in entry and entry[key] not in (None, ""):
            return text_of(entry[key])
    return ""


def _listed(entry: dict[str, object], keys: Sequence[str]) -> list[str]:
    out: list[str] = []
    for key in keys:
        value = entry.get(key)
        for part in value if isinstance(value, list) else [value]:
            if isinstance(part, str) and part:
                out.append(part)
    return out


@dataclass(frozen=True, slots=True)
class PackageTable:
    """``packages.toml`` as exact names and regular expressions, each with its ROCm side."""

    names: dict[str, PackageInfo] = field(default_factory=dict)
    patterns: tuple[tuple[re.Pattern[str], PackageInfo], ...] = ()

    def get(self, name: str) -> PackageInfo | None:
        """The entry for a normalised package name, exact names first."""
        if name in self.names:
            return self.names[name]
        for pattern, info in self.patterns:
            if pattern.search(name):
                return info
        return None


def _info(entry: dict[str, object]) -> PackageInfo:
    version = _first(entry, _VERSION_KEYS)
    official = _first(entry, _OFFICIAL_KEYS)
    if official and official != version:
        version = f"{version} (official {official})" if version else f"official {official}"
    return PackageInfo(_first(entry, _ROCM_KEYS), version, _first(entry, _SOURCE_KEYS))


def _collect(
    data: object,
    key: str,
    names: dict[str, PackageInfo],
    patterns: list[tuple[re.Pattern[str], PackageInfo]],
) -> None:
    """Walk the TOML: described tables, ``name = "description"`` tables, nested tables."""
    if isinstance(data, list):
        for element in data:
            _collect(element, key, names, patterns)
        return
    if not isinstance(data, dict):
        return
    if any(k in data for k in _ROCM_KEYS + _VERSION_KEYS):
        info = _info(data)
        listed = _listed(data, _NAME_KEYS) or (
            [key] if key and not _listed(data, _PATTERN_KEYS) else []
        )
        for name in listed:
            names.setdefault(_normalize(name), info)
        for raw in _listed(data, _PATTERN_KEYS):
            try:
                patterns.append((re.compile(raw), info))
            except re.error:
                continue
        return
    strings = {k: v for k, v in data.items() if isinstance(v, str)}
    if strings and len(strings) == len(data) and not set(strings) & set(_PATTERN_KEYS + _NAME_KEYS):
        for name, description in strings.items():
            names.setdefault(_normalize(name), PackageInfo(description, "", ""))
        return
    for child_key, child in data.items():
        _collect(child, str(child_key), names, patterns)


@functools.cache
def package_table(path: str | None = None) -> PackageTable:
    """The rules' ``packages.toml`` (or the TOML file at ``path``, read tolerantly: empty when
    absent or broken)."""
    from migrator.tomlcompat import tomllib

    if path is None:
        from migrator.ruledata import load_table

        data: dict[str, object] = load_table("packages")
    else:
        try:
            data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            return PackageTable()
    names: dict[str, PackageInfo] = {}
    patterns: list[tuple[re.Pattern[str], PackageInfo]] = []
    _collect(data, "", names, patterns)
    return PackageTable(names, tuple(patterns))


def _fallback(item: str) -> PackageInfo | None:
    lowered = item.lower()
    name = _normalize(item.split("[", 1)[0])
    if name in FALLBACK_PACKAGES:
        return FALLBACK_PACKAGES[name]
    for key, info in FALLBACK_PACKAGES.items():
        if key.endswith("*") and name.startswith(key[:-1]):
            return info
        if ("/" in key or "." in key) and key in lowered and ("/" in item or ":" in item):
            return info
    return None


def package_info(item: str, table: PackageTable | None = None) -> PackageInfo | None:
    """The ROCm side of a package, image or URL: ``packages.toml`` first, field by field
    completed from the fallback table (keys there match exactly, as ``prefix*`` globs, or as a
    substring of an image name or URL)."""
    lookup = package_table() if table is None else table
    declared = lookup.get(_normalize(item.split("[", 1)[0]))
    fallback = _fallback(item)
    if declared is None or fallback is None:
        return declared or fallback
    return PackageInfo(
        declared.rocm or fallback.rocm,
        declared.min_version or fallback.min_version,
        declared.source or fallback.source,
    )


def dependency_rows(
    items: Sequence[Item], table: PackageTable | None = None
) -> list[DependencyRow]:
    """Dependency findings merged per item, with the ROCm counterpart and first ROCm version."""
    rows: dict[tuple[str, str], DependencyRow] = {}
    for item in items:
        finding = item.finding
        if not is_dependency(finding):
            continue
        name, kind = dependency_item(finding)
        row = rows.get((name, kind))
        if row is None:
            info = package_info(name, table)
            fallback_fix = finding.fix.description if finding.fix else item.meta.fix_title
            row = rows[(name, kind)] = DependencyRow(
                item=name,
                kind=kind,
                locations=[],
                rules=[],
                fix_class=item.fix_class,
                rocm=(info.rocm if info and info.rocm else fallback_fix or finding.message),
                min_version=(info.min_version if info and info.min_version else "unknown"),
                source=(info.source if info and info.source else item.meta.fact),
                message=finding.message,
            )
        row.locations.append((finding.path, finding.line))
        if finding.rule not in row.rules:
            row.rules.append(finding.rule)
        if FIX_CLASSES.index(item.fix_class) < FIX_CLASSES.index(row.fix_class):
            row.fix_class = item.fix_class
    order = {"index": 0, "image": 1, "package": 2, "setting": 3, "other": 4}
    return sorted(
        rows.values(), key=lambda row: (FIX_CLASSES.index(row.fix_class), order[row.kind], row.item)
    )
