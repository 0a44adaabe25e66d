"""The package table (``data/packages.toml``) and the name spellings that prefilter files."""

from __future__ import annotations

from typing import Any

from .._requirements import packages


def _table(section: str) -> Any:
    return packages()[section]


def _cases(*words: str) -> tuple[str, ...]:
    """Prefilter triggers for case-insensitive package names: lower, Title and UPPER spellings
    (plus any mixed spelling given explicitly)."""
    out: list[str] = []
    for word in words:
        for variant in (word, word.lower(), word.title(), word.upper()):
            if variant not in out:
                out.append(variant)
    return tuple(out)
