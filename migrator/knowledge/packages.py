"""The ROCm side of a package, image or package index, from the one package table
(``rules/data/packages.toml``, its ``[[rocm]]`` entries), for reports and anyone outside the rule
catalog: the counterpart, the first version that works on ROCm and the facts' sources."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class PackageInfo:
    """The ROCm side of one CUDA-specific package, image or index ("" where unknown)."""

    rocm: str
    min_version: str
    source: str


@dataclass(frozen=True, slots=True)
class _Matcher:
    """One ``[[rocm]]`` entry that matches more than exact names."""

    pattern: re.Pattern[str] | None
    prefix: str
    within: str
    info: PackageInfo

    def matches(self, name: str, item: str) -> bool:
        if self.pattern is not None:
            return self.pattern.search(name) is not None
        if self.prefix:
            return name.startswith(self.prefix)
        return bool(self.within) and self.within in item.lower() and ("/" in item or ":" in item)


def normalize(name: str) -> str:
    """A PEP 503 normalised package name."""
    return re.sub(r"[-_.]+", "-", name.strip().lower())


def no_equivalent(name: str) -> str | None:
    """Why a package with no ROCm build fails and what to use instead (``[no_equivalent]``; an
    entry ``{ imports = KEY }`` takes the ``alternative`` of ``[imports.KEY]``, so ROC811, ROC90x
    and the report say the same), None for another package."""
    from migrator.knowledge.tables import load_table

    table = load_table("packages")
    value = table["no_equivalent"].get(name)
    if isinstance(value, dict):
        return f"no ROCm build; use {table['imports'][value['imports']]['alternative']}"
    return None if value is None else str(value)


@functools.cache
def _table() -> tuple[dict[str, PackageInfo], tuple[_Matcher, ...]]:
    from migrator.knowledge.tables import load_table

    table = load_table("packages")
    names: dict[str, PackageInfo] = {}
    matchers: list[_Matcher] = []
    entry: dict[str, Any]
    for entry in table["rocm"]:
        # ``names_of``: the names (and counterpart) of another section (``[nvml]``)
        section: dict[str, Any] = table[entry["names_of"]] if "names_of" in entry else {}
        for name in entry.get("names", section.get("names", [])):
            rocm = entry.get("rocm") or section.get("rocm") or no_equivalent(name) or ""
            info = PackageInfo(rocm, entry.get("min_version", ""), entry.get("source", ""))
            names.setdefault(name, info)
        if "names" not in entry and "names_of" not in entry:
            info = PackageInfo(
                entry.get("rocm", ""), entry.get("min_version", ""), entry.get("source", "")
            )
            pattern = re.compile(entry["pattern"]) if "pattern" in entry else None
            matchers.append(
                _Matcher(pattern, entry.get("prefix", ""), entry.get("within", ""), info)
            )
    return names, tuple(matchers)


def package_info(item: str) -> PackageInfo | None:
    """The ROCm side of a package (extras allowed), image or URL: an exact name first, else the
    first entry whose pattern, prefix or image/URL part matches; None when the table has none."""
    names, matchers = _table()
    name = normalize(item.split("[", 1)[0])
    if name in names:
        return names[name]
    return next((matcher.info for matcher in matchers if matcher.matches(name, item)), None)
