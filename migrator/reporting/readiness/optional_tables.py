"""The optional dependency tables of a ``pyproject.toml`` or ``setup.cfg`` (extras, dependency
groups), by line range: a finding there is an optional extra, not the core install."""

from __future__ import annotations

import re

_TABLE = re.compile(r"^\s*\[+\s*([^\]]+?)\s*\]+\s*(?:#.*)?$")
_OPTIONAL_TABLES = re.compile(
    r"^(?:project\.optional-dependencies|dependency-groups|tool\.poetry\.extras"
    r"|tool\.poetry\.group\..*|tool\.pdm\.dev-dependencies|options\.extras_require)$"
)


def optional_tables(text: str) -> list[tuple[int, int]]:
    """1-based line ranges of the optional dependency tables of a ``pyproject.toml`` or
    ``setup.cfg`` (extras and dependency groups), read line by line."""
    ranges: list[tuple[int, int]] = []
    start: int | None = None
    lines = text.splitlines()
    for number, line in enumerate(lines, start=1):
        match = _TABLE.match(line)
        if not match:
            continue
        if start is not None:
            ranges.append((start, number - 1))
            start = None
        if _OPTIONAL_TABLES.match(match.group(1).strip()):
            start = number
    if start is not None:
        ranges.append((start, len(lines)))
    return ranges
