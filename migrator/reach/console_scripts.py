"""The console scripts a project declares, read from the text of its packaging files.

``[project.scripts]`` / ``[project.gui-scripts]`` and Poetry's ``[tool.poetry.scripts]`` in
``pyproject.toml``, ``console_scripts`` / ``gui_scripts`` entry points in ``setup.cfg`` and
``setup.py``. Each names a command and the module it runs: that module is code every run of
the command loads, the way a package's ``__init__`` is for every import of the package. Read
as text (TOML parsed, ``setup.py`` by pattern), never run.
"""

from __future__ import annotations

import re

from migrator.files.tomlcompat import parse_toml, tomllib

#: ``name = module.path:function`` (setup.cfg lines, setup.py strings ``"name=module:func"``)
_SCRIPT = re.compile(
    r"[\"']?(?P<name>[A-Za-z0-9][\w.-]*)[\"']?\s*=\s*[\"']?(?P<target>[A-Za-z_][\w.]*)\s*:\s*[\w.]+"
)


def _module(value: object) -> str | None:
    if not isinstance(value, str) or ":" not in value:
        return None
    module = value.split(":", 1)[0].strip()
    return module or None


def pyproject_scripts(text: str) -> dict[str, str]:
    """``command -> module`` of a ``pyproject.toml`` (PEP 621 and Poetry tables)."""
    try:
        data = parse_toml(text)
    except tomllib.TOMLDecodeError:
        return {}
    tables: list[object] = []
    project = data.get("project")
    if isinstance(project, dict):
        tables += [project.get("scripts"), project.get("gui-scripts")]
    tool = data.get("tool")
    poetry = tool.get("poetry") if isinstance(tool, dict) else None
    if isinstance(poetry, dict):
        tables.append(poetry.get("scripts"))
    out: dict[str, str] = {}
    for table in tables:
        if isinstance(table, dict):
            for name, value in table.items():
                module = _module(value)
                if module is not None:
                    out[str(name)] = module
    return out


def setup_scripts(text: str) -> dict[str, str]:
    """``command -> module`` of a ``setup.py`` or ``setup.cfg`` that declares entry points."""
    if "console_scripts" not in text and "gui_scripts" not in text:
        return {}
    return {match.group("name"): match.group("target") for match in _SCRIPT.finditer(text)}


def console_scripts(texts: dict[str, str]) -> dict[str, str]:
    """``command -> module`` over the root packaging files given as ``file name -> text``."""
    out: dict[str, str] = {}
    for name, text in sorted(texts.items()):
        if name == "pyproject.toml":
            out.update(pyproject_scripts(text))
        elif name in ("setup.py", "setup.cfg"):
            out.update(setup_scripts(text))
    return out
