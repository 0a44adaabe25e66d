"""Version numbers and specifiers of requirements (PEP 440 through ``packaging``; Poetry
constraints translated)."""

from __future__ import annotations

import functools
import re

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

_VERSION_RE = re.compile(r"^\s*v?(\d+(?:\.\d+)*)")


def parse_version(text: str) -> tuple[int, ...] | None:
    """The release numbers a version-like text starts with (``2.3.1+cu121`` → ``(2, 3, 1)``,
    ``v2.3rc1`` → ``(2, 3)``), else None; tolerant of what follows, unlike ``packaging``."""
    match = _VERSION_RE.match(text)
    if match is None:
        return None
    return tuple(int(part) for part in match.group(1).split("."))


_LOCAL_LABEL = re.compile(r"\+[A-Za-z0-9.]+")


def spec_admits(spec: str, version: str) -> bool | None:
    """Whether a PEP 440 specifier admits the release of ``version``; None when the specifier
    is not understood (a ``$VARIABLE``, a Poetry constraint). Local labels (``+cu121``) and
    pre-release markers of ``version`` are ignored, as are local labels in the specifier."""
    spec = spec.strip().strip("()").strip()
    release = parse_version(version)
    if release is None:
        return None
    if not spec:
        return True
    if "$" in spec or "{" in spec:
        return None
    specifiers = _specifier_set(spec)
    if specifiers is None:
        return None
    return specifiers.contains(_release_version(release), prereleases=True)


@functools.lru_cache(maxsize=4096)
def _specifier_set(spec: str) -> SpecifierSet | None:
    try:
        return SpecifierSet(_LOCAL_LABEL.sub("", spec))
    except InvalidSpecifier:
        return None


@functools.lru_cache(maxsize=4096)
def _release_version(release: tuple[int, ...]) -> Version:
    return Version(".".join(map(str, release)))


def poetry_to_pep440(spec: str) -> str:
    """Poetry's ``^1.2``, ``~1.2``, bare ``1.2.3`` and ``*`` as a PEP 440 specifier."""
    out = []
    for clause in spec.split(","):
        clause = clause.strip()
        if not clause or clause == "*":
            continue
        if clause[0] in "^~" and not clause.startswith("~="):
            release = parse_version(clause[1:])
            if release is None:
                return clause
            if clause[0] == "^":
                index = next((i for i, part in enumerate(release) if part != 0), len(release) - 1)
            else:
                index = min(1, len(release) - 1) if len(release) > 1 else 0
            upper = list(release[: index + 1])
            upper[-1] += 1
            out.append(f">={'.'.join(map(str, release))},<{'.'.join(map(str, upper))}")
        elif clause[0].isdigit():
            out.append(f"=={clause}")
        else:
            out.append(clause)
    return ",".join(out)
