"""The dependency table: each declared package or image with its ROCm status."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from migrator.knowledge.packages import package_info
from migrator.model import Finding
from migrator.reporting.readiness.scoring import FIX_CLASSES, Item

#: Finding categories that describe declared dependencies, images or package indexes.
DEPENDENCY_CATEGORIES = frozenset({"dependency", "container"})
#: File kinds (see ``migrator.files.discovery.file_kind``) that declare dependencies or images.
DEPENDENCY_FILE_KINDS = frozenset({"requirements", "pyproject", "setupcfg", "conda"})


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
    from migrator.files.discovery import file_kind

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
    from migrator.files.discovery import file_kind

    return (
        finding.category.lower() in DEPENDENCY_CATEGORIES
        or file_kind(finding.path) in DEPENDENCY_FILE_KINDS
    )


def text_of(value: object) -> str:
    """A receipt or package-table value as one line of text (lists and tables flattened)."""
    if isinstance(value, (list, tuple)):
        return ", ".join(text_of(part) for part in value)
    if isinstance(value, dict):
        return ", ".join(f"{key}: {text_of(part)}" for key, part in value.items())
    return "" if value is None else str(value)


def dependency_rows(items: Sequence[Item]) -> list[DependencyRow]:
    """Dependency findings merged per item, with the ROCm counterpart and first ROCm version."""
    rows: dict[tuple[str, str], DependencyRow] = {}
    for item in items:
        finding = item.finding
        if not is_dependency(finding):
            continue
        name, kind = dependency_item(finding)
        row = rows.get((name, kind))
        if row is None:
            info = package_info(name)
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
