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
        rf"from[ \t]+[\w.]+[ \t]+import[ \t]+(?:\([\w\s,]*|[\w \t,]*)\b{last}\b|from[ \t]+\.*(?:[\w.]+\.)?{last}[ \t]+import\b|"
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
        if not stripped or stripped.startswith(("#", ")", "]", "}")):
            continue  # a comment, or the closing line of a bracket (a signature's ``) -> T:``)
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
        folder = relative.rsplit("/", 1)[0] if "/" in relative else ""
        for match in pattern.finditer(text):
            index = text.count("\n", 0, match.start())
            if "." in module and not _imports_dotted(lines[index], folder, module):
                continue  # ``from .defaults import _C``: another ``_C`` than ``pkg._C``
            sites.append(ImportSite(relative, index + 1, _how(lines, index)))
    return sites


def _imports_dotted(line: str, folder: str, module: str) -> bool:
    """Whether the import on ``line`` (in a file of ``folder``) can load the dotted module
    ``module`` (``pkg._C``): ``from pkg import _C``, ``from . import _C`` inside ``pkg``,
    ``import pkg._C``; a dynamic ``import_module`` counts."""
    match = _IMPORT_LINE.match(line)
    if match is None:
        return True
    target = module.replace(".", "/")
    for candidate in _candidates(match, folder):
        path = candidate.lstrip("\x00")
        if path == target or path.endswith(f"/{target}") or target.endswith(f"/{path}"):
            if candidate.startswith("\x00") or "/" in path or path == target:
                return True
    return False


_IMPORT_LINE = re.compile(
    r"^(?P<indent>[ \t]*)(?:from[ \t]+(?P<dots>\.*)(?P<module>[\w.]*)[ \t]+import[ \t]+\(?"
    r"(?P<names>[\w \t,.]*)|import[ \t]+(?P<plain>[\w., \t]+))",
    re.M,
)


def module_importers(
    target: str,
    python_files: Mapping[str, str] | None,
    read: Callable[[str], str | None],
    paths: list[str],
) -> list[ImportSite]:
    """Every import of the project module at ``target`` (``pkg/backend.py``): ``from .backend
    import x`` in its package, ``import pkg.backend``, ``from pkg import backend``, resolved
    against each importer's folder, never by the name alone (many packages have a
    ``backend``)."""
    module = target[:-3] if target.endswith(".py") else target
    if module.endswith("/__init__"):
        module = module[: -len("/__init__")]
    stem = module.rsplit("/", 1)[-1]
    sites: list[ImportSite] = []
    for relative in paths:
        if not relative.endswith(".py") or relative == target:
            continue
        text = (python_files or {}).get(relative)
        if text is None:
            text = read(relative)
        if not text or stem not in text:
            continue
        folder = relative.rsplit("/", 1)[0] if "/" in relative else ""
        lines: list[str] | None = None
        for match in _IMPORT_LINE.finditer(text):
            if not any(_names_module(c, module) for c in _candidates(match, folder)):
                continue
            if lines is None:
                lines = text.splitlines()
            index = text.count("\n", 0, match.start())
            sites.append(ImportSite(relative, index + 1, _how(lines, index)))
    return sites


def _candidates(match: re.Match[str], folder: str) -> list[str]:
    """The module paths (``a/b``) an import statement may load, relative ones resolved from the
    importer's folder and absolute ones as written."""
    if match.group("plain"):
        return [
            part.split(" as ")[0].strip().replace(".", "/")
            for part in match.group("plain").split(",")
            if part.strip()
        ]
    dots = len(match.group("dots") or "")
    base = (match.group("module") or "").replace(".", "/")
    if dots:
        parts = folder.split("/") if folder else []
        if dots - 1 > len(parts):
            return []
        parts = parts[: len(parts) - (dots - 1)]
        base = "/".join([*parts, base] if base else parts)
        prefix = "\x00"  # resolved: compare whole paths
    else:
        prefix = ""
    names = [
        part.split(" as ")[0].strip()
        for part in (match.group("names") or "").split(",")
        if part.strip()
    ]
    out = [prefix + base] if base else []
    out.extend(
        prefix + (f"{base}/{name}" if base else name) for name in names if name.isidentifier()
    )
    return out


def _names_module(candidate: str, module: str) -> bool:
    if candidate.startswith("\x00"):
        return candidate[1:] == module
    return bool(candidate) and (module == candidate or module.endswith(f"/{candidate}"))
