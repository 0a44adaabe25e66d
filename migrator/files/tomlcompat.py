"""``tomllib`` on Python 3.11 and newer, its backport ``tomli`` on 3.10: the one place that chooses."""

from __future__ import annotations

import sys

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10 only
    import tomli as tomllib

from typing import Any

#: Deeper bracket nesting than this is refused as bad input of that file alone: tomllib
#: recurses per level and would exhaust the interpreter's stack (a 50,000-deep array).
MAX_TOML_NESTING = 200


def parse_toml(text: str) -> dict[str, Any]:
    """Parse TOML from a scanned project (untrusted): ``tomllib.TOMLDecodeError`` for bad
    syntax and for nesting deeper than ``MAX_TOML_NESTING``, never a RecursionError."""
    depth = deepest = 0
    for char in text:
        if char in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > MAX_TOML_NESTING:
                    break
        elif char in "]}":
            depth = max(0, depth - 1)
    if deepest > MAX_TOML_NESTING:
        # brackets inside strings count too: only a pathological file reaches this bound
        try:
            return _loads(text)
        except RecursionError:
            raise tomllib.TOMLDecodeError(
                f"nested more than {MAX_TOML_NESTING} levels deep"
            ) from None
    return _loads(text)


def _loads(text: str) -> dict[str, Any]:
    data: dict[str, Any] = tomllib.loads(text)
    return data


__all__ = ["tomllib", "parse_toml", "MAX_TOML_NESTING"]
