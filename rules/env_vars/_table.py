"""The environment-variable table, ``rules/data/env_vars.toml``."""

from __future__ import annotations

from typing import Any

from migrator.ruledata import load_table


def _table() -> dict[str, Any]:
    return load_table("env_vars")
