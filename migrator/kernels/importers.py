"""The Python side of an extension: every place that imports its compiled module, and how
(at module level, behind a ``try``, or lazily inside a function), read as text, never run."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

MODULE_LEVEL, GUARDED, LAZY = "module level", "guarded", "lazy"


@dataclass(frozen=True, slots=True)
class ImportSite:
    """One import of a compiled module: file, line and how it is imported."""

    path: str
    line: int
    how: str  # module level | guarded | lazy


def _patterns(module: str) -> re.Pattern[str]:
    last = re.escape(module.rsplit(".", 1)[-1])
    full = re.escape(module)
    return re.compile(
        rf"^(?P<indent>[ \t]*)(?:import[ \t]+(?:[\w.]+\.)?{last}\b|import[ \t]+{full}\b|"
        rf"from[ \t]+[\w.]+[ \t]+import[ \t]+(?:\([\w\s,]*|[\w \t,]*)\b{last}\b|from[ \t]+(?:[\w.]+\.)?{last}[ \t]+import\b|"
        rf".*import_module\(\s*['\"](?:[\w.]+\.)?{last}['\"])",
        re.M,
    )


def _how(lines: list[str], index: int) -> str:
    """How the import on 0-based line ``index`` runs: walk up to each enclosing block."""
    indent = len(lines[index]) - len(lines[index].lstrip())
    if indent == 0:
        return MODULE_LEVEL
    guarded = False
    for previous in range(index - 1, -1, -1):
        text = lines[previous]
        stripped = text.lstrip()
        if not stripped or stripped.startswith("#"):
            continue
        level = len(text) - len(stripped)
        if level >= indent:
            continue
        indent = level
        if stripped.startswith(("def ", "async def ", "lambda")):
            return LAZY
        if stripped.startswith("try:"):
            guarded = True
        if level == 0:
            break
    return GUARDED if guarded else MODULE_LEVEL


def import_sites(
    module: str,
    python_files: Mapping[str, str] | None,
    read: Callable[[str], str | None],
    paths: list[str],
) -> list[ImportSite]:
    """Every import of ``module`` (a dotted import name; its last part is matched) in the
    project's Python files."""
    pattern = _patterns(module)
    last = module.rsplit(".", 1)[-1]
    sites: list[ImportSite] = []
    for relative in paths:
        if not relative.endswith(".py"):
            continue
        text = (python_files or {}).get(relative)
        if text is None:
            text = read(relative)
        if not text or last not in text:
            continue
        lines = text.splitlines()
        for match in pattern.finditer(text):
            index = text.count("\n", 0, match.start())
            sites.append(ImportSite(relative, index + 1, _how(lines, index)))
    return sites
