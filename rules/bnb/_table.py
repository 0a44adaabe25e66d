"""The bitsandbytes table, ``rules/data/bitsandbytes.toml``."""

from __future__ import annotations

from typing import Any

from migrator.api import load_table


def _data() -> dict[str, Any]:
    data: dict[str, Any] = load_table("bitsandbytes")
    return data
