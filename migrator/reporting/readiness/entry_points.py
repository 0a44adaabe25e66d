"""Where users start a project: console scripts, the commands its README and docs tell them to
run, public package modules, and the container files the docs point to."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from migrator.files.sources import read_project_text
from migrator.files.tomlcompat import parse_toml, tomllib
from migrator.reporting.readiness.project_text import read_text

_DOC_COMMAND = re.compile(
    r"(?:python3?|torchrun|accelerate[ \t]+launch|deepspeed|uv[ \t]+run)(?:[ \t]+--?[\w.=-]+)*"
    r"[ \t]+(?:-m[ \t]+(?P<module>[\w.]+)|(?P<script>[\w./-]+\.py))"
)
_CONSOLE_SCRIPT = re.compile(r"[\"']?[\w.-]+[\"']?\s*=\s*[\"']?(?P<target>[\w.]+)\s*:\s*[\w.]+")


def console_targets(root: Path) -> list[str]:
    """Modules named by console-script entry points (pyproject, setup.cfg, setup.py)."""
    targets: list[str] = []
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        try:
            data = parse_toml(read_project_text(pyproject) or "")
        except tomllib.TOMLDecodeError:
            data = {}
        project = data.get("project", {})
        if isinstance(project, dict):
            for key in ("scripts", "gui-scripts"):
                table = project.get(key, {})
                if isinstance(table, dict):
                    targets.extend(
                        str(value).split(":")[0].strip()
                        for value in table.values()
                        if isinstance(value, str)
                    )
        poetry = (
            data.get("tool", {}).get("poetry", {}) if isinstance(data.get("tool"), dict) else {}
        )
        if isinstance(poetry, dict) and isinstance(poetry.get("scripts"), dict):
            targets.extend(
                str(value).split(":")[0].strip()
                for value in poetry["scripts"].values()
                if isinstance(value, str)
            )
    for name in ("setup.py", "setup.cfg"):
        path = root / name
        if not path.is_file():
            continue
        text = read_text(path)
        if "console_scripts" not in text and "entry_points" not in text:
            continue
        targets.extend(match.group("target") for match in _CONSOLE_SCRIPT.finditer(text))
    return targets


def documented_commands(root: Path, docs: Iterable[str]) -> tuple[list[str], list[str], str]:
    """Modules (``python -m``) and scripts (``python x.py``) the README and docs tell users to
    run, and the docs' text (to see which container files they point users to)."""
    modules: list[str] = []
    scripts: list[str] = []
    texts: list[str] = []
    for relative in docs:
        text = read_text(root / relative, 400_000)
        texts.append(text)
        for match in _DOC_COMMAND.finditer(text):
            if match.group("module"):
                modules.append(match.group("module"))
            elif match.group("script"):
                scripts.append(match.group("script").lstrip("./"))
    return modules, scripts, "\n".join(texts)


def is_deployed(relative: str, docs_text: str) -> bool:
    """Whether a container file is a path users deploy through: at the root, or its file or
    folder named in the README or docs (else it is the project's own build or CI tooling)."""
    if "/" not in relative:
        return True
    folder = relative.rsplit("/", 1)[0]
    return relative in docs_text or f"{folder}/" in docs_text or f"{folder}`" in docs_text


def doc_files(root: Path, limit: int = 400) -> list[str]:
    """README files at the root and Markdown pages under ``docs/`` (the documented commands)."""
    found = []
    try:
        found = sorted(
            entry.name
            for entry in root.iterdir()
            if entry.is_file() and entry.name.lower().startswith("readme")
        )
    except OSError:
        return []
    for folder in ("docs", "doc"):
        base = root / folder
        if not base.is_dir() or base.is_symlink():
            continue
        for path in sorted(base.rglob("*")):
            if len(found) >= limit:
                break
            if path.suffix.lower() in (".md", ".rst", ".qmd", ".mdx") and not path.is_symlink():
                found.append(path.relative_to(root).as_posix())
    return found


def is_public_package_module(relative: str, init_dirs: set[str]) -> bool:
    """A module of an importable package (top level or under ``src/``) with no private part."""
    parts = relative.split("/")
    if (
        len(parts) < 2
        or parts[0] not in init_dirs
        and not (parts[0] == "src" and len(parts) > 2 and f"src/{parts[1]}" in init_dirs)
    ):
        return False
    folder = relative.rsplit("/", 1)[0]
    if folder not in init_dirs:
        return False
    inner = parts[1:] if parts[0] != "src" else parts[2:]
    return not any(
        part.startswith("_") and part not in ("__init__.py", "__main__.py") for part in inner
    )
