"""The one loader of the rule catalog's TOML files (``rules/data/<name>.toml``, the code table),
for the registry, rules and reports alike, read as package resources of ``migrator.rules``
(never by path)."""

from __future__ import annotations

import functools
import importlib.resources
from typing import Any

from migrator.files.tomlcompat import tomllib


@functools.cache
def load_catalog_toml(*parts: str) -> dict[str, Any]:
    """The parsed ``rules/<parts...>`` (loaded once per process; do not mutate it)."""
    resource = importlib.resources.files("migrator.rules")
    for part in parts:
        resource = resource.joinpath(part)
    return tomllib.loads(resource.read_text(encoding="utf-8"))


def load_table(name: str) -> dict[str, Any]:
    """The parsed data table ``rules/data/<name>.toml``."""
    return load_catalog_toml("data", f"{name}.toml")
