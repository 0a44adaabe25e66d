"""Which modules a project's entry points reach over static imports, read as text with a regex
pass over import lines: the reachability the file roles are built on."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path

from migrator.reporting.readiness.project_text import read_text

_IMPORT = re.compile(
    r"^[ \t]*(?:from[ \t]+(?P<base>\.*[\w.]*)[ \t]+import[ \t]+(?P<names>\([^)]*\)|[^\n#]+)"
    r"|import[ \t]+(?P<modules>[^\n#]+))",
    re.MULTILINE,
)


def module_names(relative: str, init_dirs: set[str]) -> list[str]:
    """Dotted names a Python file can be imported by (from the root, from ``src/``, and from
    the first folder above its package)."""
    parts = relative[:-3].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    names = []
    if parts:
        names.append(".".join(parts))
    if parts and parts[0] == "src" and len(parts) > 1:
        names.append(".".join(parts[1:]))
    # The package root: climb while the folder has an __init__.py.
    folder = relative.rsplit("/", 1)[0] if "/" in relative else ""
    start = len(folder.split("/")) if folder else 0
    while folder and folder in init_dirs:
        folder = folder.rsplit("/", 1)[0] if "/" in folder else ""
        start -= 1
    if 0 < start < len(parts):
        names.append(".".join(parts[start:]))
    return list(dict.fromkeys(names))


def imported_names(
    text: str, module: str, is_package: bool, *, top_level: bool = False
) -> Iterable[str]:
    """Dotted names imported by one module's source (absolute, relative resolved); with
    ``top_level``, only the unindented imports that run when the module is imported."""
    package = module if is_package else module.rpartition(".")[0]
    for match in _IMPORT.finditer(text):
        if top_level and match.group(0)[:1] in (" ", "\t"):
            continue
        if match.group("modules"):
            for part in match.group("modules").split(","):
                name = part.strip().split(" ")[0]
                if name:
                    yield name
            continue
        base = match.group("base") or ""
        dots = len(base) - len(base.lstrip("."))
        if dots:
            anchor = package.split(".") if package else []
            if dots > 1:
                anchor = anchor[: len(anchor) - (dots - 1)]
            rest = base[dots:]
            base = ".".join([*anchor, rest] if rest else anchor)
        if not base:
            continue
        yield base
        names = match.group("names").strip("() \t\n")
        for part in names.split(","):
            name = part.strip().split(" ")[0]
            if name and name != "*":
                yield f"{base}.{name}"


def import_closure(
    root: Path,
    starts: Iterable[str],
    done: set[str],
    texts: dict[str, str],
    names_of: Mapping[str, list[str]],
    by_name: Mapping[str, str],
    init_dirs: set[str],
    *,
    top_level: bool = False,
) -> set[str]:
    """Modules reached from ``starts`` over static imports (each module's package ``__init__``
    included; with ``top_level`` only over imports that run at import time), leaving out those
    in ``done``; their texts are kept in ``texts``."""
    reached: set[str] = set()
    queue = [start for start in starts if start not in done]
    while queue:
        relative = queue.pop()
        if relative in reached or relative in done:
            continue
        reached.add(relative)
        text = texts.get(relative)
        if text is None:
            text = texts[relative] = read_text(root / relative)
        module = names_of[relative][0] if names_of.get(relative) else ""
        is_package = relative.endswith("__init__.py")
        for name in imported_names(text, module, is_package, top_level=top_level):
            for candidate in (name, name.rpartition(".")[0]):
                found = by_name.get(candidate)
                if found is not None:
                    queue.append(found)
                    break
        folder = relative.rsplit("/", 1)[0] if "/" in relative else ""
        if folder in init_dirs:
            queue.append(f"{folder}/__init__.py")
    return reached
