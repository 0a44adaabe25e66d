"""``tomllib`` on Python 3.11 and newer, its backport ``tomli`` on 3.10: the one place that chooses."""

from __future__ import annotations

import sys

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10 only
    import tomli as tomllib

__all__ = ["tomllib"]
