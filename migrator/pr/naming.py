"""The project's own name for the pull request: what its packaging metadata declares
(``pyproject.toml`` ``[project] name``, ``setup.cfg`` ``[metadata] name``, a literal
``name=`` in ``setup.py``, read without running it), else its folder's name."""

from __future__ import annotations

import ast
import configparser
import re
from pathlib import Path

from migrator.files.sources import read_project_text

#: A distribution name as PEP 508 allows it (anything else is not a name to put in a title).
_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,98}[A-Za-z0-9])?")


def project_name(root: Path, fallback: str) -> str:
    """The name ``root``'s metadata declares, or ``fallback`` (its folder's name)."""
    for reader in (_pyproject, _setup_cfg, _setup_py):
        name = reader(root)
        if name is not None and _NAME.fullmatch(name):
            return name
    return fallback


def _pyproject(root: Path) -> str | None:
    from migrator.files.tomlcompat import parse_toml, tomllib

    text = read_project_text(root / "pyproject.toml", strict=True)
    if text is None:
        return None
    try:
        data = parse_toml(text)
    except tomllib.TOMLDecodeError:
        return None
    tool = data.get("tool")
    for table in (data.get("project"), tool.get("poetry") if isinstance(tool, dict) else None):
        if isinstance(table, dict) and isinstance(table.get("name"), str):
            return str(table["name"])
    return None


def _setup_cfg(root: Path) -> str | None:
    text = read_project_text(root / "setup.cfg")
    if text is None:
        return None
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        return None
    return parser.get("metadata", "name", fallback=None)


def _setup_py(root: Path) -> str | None:
    """The string literal passed as ``name=`` to a ``setup(...)`` call."""
    text = read_project_text(root / "setup.py")
    if text is None:
        return None
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        function = node.func
        called = function.attr if isinstance(function, ast.Attribute) else None
        called = function.id if isinstance(function, ast.Name) else called
        if called != "setup":
            continue
        for keyword in node.keywords:
            if keyword.arg == "name" and isinstance(keyword.value, ast.Constant):
                value = keyword.value.value
                return value if isinstance(value, str) else None
    return None
