"""The xformers section of the attention-library mapping table, ``rules/data/attention.toml``."""

from __future__ import annotations

from typing import Any

from migrator.api import load_table


def _data() -> dict[str, Any]:
    data: dict[str, Any] = load_table("attention")["xformers"]
    return data
