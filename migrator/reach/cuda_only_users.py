"""Files that exist only to serve a CUDA-only component (``migrator.reach.cuda_only``), so they never
run on a ROCm build either: the ``conftest.py`` of a folder of CUDA-only tests, the package
manifest (``pyproject.toml``, ``requirements*.txt``) inside a CUDA-only folder, a container
image whose only project content is a CUDA-only folder, and a standalone script (imported by
nothing) whose code names mostly CUDA-only project files (a CI driver or tuning script of the
component: ``DEFAULT_TEST_TARGET = "tests/cute/test_flash_attn.py"``).

A CUDA-only folder is one whose every Python file (besides its ``conftest.py``) is CUDA-only,
at least two of them. Everything is read from the texts the scan already has; nothing runs."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import replace

from migrator.reach.cuda_only import Cause, _importers, _Lines, _test_like
from migrator.syntax.reexports import ProjectIndex

#: Files that configure the tests of their folder, never imported by name.
_CONFTEST = "conftest.py"
#: A quoted project path in code: ``"tests/cute/test_flash_attn.py"``, ``'flash_attn/cute'``.
_QUOTED_PATH = re.compile(r"""["']([A-Za-z0-9_.][A-Za-z0-9_./-]*/[A-Za-z0-9_./-]*)["']""")
#: A module docstring (after comments and blank lines).
_DOCSTRING = re.compile(r"""\A(?:[ \t]*(?:#[^\n]*)?\n)*[ \t]*[rRuU]?(\"\"\"|\'\'\')(?s:.*?)\1""")
#: NVIDIA's GPU debugging and profiling command-line tools.
_NVIDIA_TOOL = re.compile(r"(?<![\w-])(compute-sanitizer|cuda-gdb|cuda-memcheck|ncu|nsys)(?![\w-])")
#: A container instruction that copies project files in (``COPY --chown=x src dst``).
_COPY = re.compile(r"^[ \t]*(?:COPY|ADD)[ \t]+(.+)$", re.MULTILINE | re.IGNORECASE)


def _manifest(name: str) -> bool:
    return name in {"pyproject.toml", "setup.cfg"} or (
        name.startswith("requirements") and name.endswith(".txt")
    )


def cuda_only_folders(found: Mapping[str, Cause], paths: Iterable[str]) -> dict[str, Cause]:
    """Folders whose every Python file (but ``conftest.py``) is CUDA-only, at least two,
    outermost first, each with the cause of its first module."""
    python: dict[str, list[str]] = {}
    for path in paths:
        if not path.endswith(".py") or path.rsplit("/", 1)[-1] == _CONFTEST:
            continue
        parts = path.split("/")
        for end in range(1, len(parts)):
            python.setdefault("/".join(parts[:end]), []).append(path)
    out: dict[str, Cause] = {}
    for folder in sorted(python, key=lambda name: (name.count("/"), name)):
        files = python[folder]
        if any(folder.startswith(done + "/") for done in out):
            continue
        if len(files) >= 2 and all(path in found for path in files):
            first = found[min(files)]
            out[folder] = first
    return out


def _inside(path: str, folders: Mapping[str, Cause]) -> str:
    """The CUDA-only folder holding ``path`` (or being it), "" when none."""
    for folder in folders:
        if path == folder or path.startswith(folder + "/"):
            return folder
    return ""


def _note(what: str, cause: Cause) -> Cause:
    return replace(cause, line=0, imported="", via="", note=what)


def cuda_only_users(
    found: Mapping[str, Cause],
    index: ProjectIndex,
    paths: Iterable[str],
    containers: Mapping[str, str],
) -> dict[str, Cause]:
    """Files outside ``found`` that only serve CUDA-only code, each with its cause."""
    paths = list(paths)
    folders = cuda_only_folders(found, paths)
    if not folders:
        return {}
    out: dict[str, Cause] = {}
    for path in paths:
        if path in found:
            continue
        folder, _, name = path.rpartition("/")
        holder = _inside(folder, folders)
        if not holder:
            continue
        toolkit = folders[holder].toolkit
        if name == _CONFTEST:
            why = f"it configures only the tests of `{holder}`, which need `{toolkit}`"
            out[path] = _note(why, folders[holder])
        elif _manifest(name):
            why = f"it packages `{holder}`, whose modules need `{toolkit}`"
            out[path] = _note(why, folders[holder])
    for path, text in containers.items():
        copied = _copied(text)
        holders = {_inside(source, folders) for source in copied}
        if copied and "" not in holders:
            holder = min(holders)
            why = f"the image is built for `{holder}`, which needs `{folders[holder].toolkit}`"
            out[path] = _note(why, folders[holder])
    out.update(_drivers(found, folders, index, set(paths)))
    return out


def _debug_aids(found: Mapping[str, Cause], index: ProjectIndex) -> dict[str, Cause]:
    """Standalone scripts on the toolkit whose docstring runs them under an NVIDIA developer
    tool (``compute-sanitizer --tool=racecheck python AI/repro.py``): reproducers for that
    tool, nothing a ROCm user runs; their own ROC902 finding is guarded too."""
    importers, lazy = _importers(index)
    out: dict[str, Cause] = {}
    for relative, cause in found.items():
        if cause.via or relative in importers or relative in lazy or _test_like(relative):
            continue
        docstring = _DOCSTRING.match(index.sources.get(relative, ""))
        if docstring is None or relative.rsplit("/", 1)[-1] not in docstring.group(0):
            continue
        tool = _NVIDIA_TOOL.search(docstring.group(0))
        if tool is not None:
            why = (
                f"a reproducer for `{tool.group(0)}` (its docstring runs it under that NVIDIA tool)"
            )
            out[relative] = replace(cause, note=why)
    return out


def _copied(text: str) -> list[str]:
    """The project paths a container file copies in (not from another stage or a URL)."""
    sources: list[str] = []
    for match in _COPY.finditer(text):
        words = [word for word in match.group(1).split() if not word.startswith("--")]
        if "--from" in match.group(1) or len(words) < 2 or words[0].startswith("["):
            return [""]  # another stage's files, or a form not read here: not decided
        for word in words[:-1]:
            if "://" in word or word.startswith("$"):
                return [""]
            sources.append(word.rstrip("/").removeprefix("./"))
    return sources


def _drivers(
    found: Mapping[str, Cause],
    folders: Mapping[str, Cause],
    index: ProjectIndex,
    paths: set[str],
) -> dict[str, Cause]:
    """Standalone scripts whose code names mostly CUDA-only project files."""
    importers, lazy = _importers(index)
    lines = _Lines(index.sources)
    out: dict[str, Cause] = {}
    for relative, text in index.sources.items():
        if relative in found or relative in importers or relative in lazy:
            continue
        if relative.endswith("__init__.py") or "/" not in text:
            continue
        named: dict[str, Cause | None] = {}
        for match in _QUOTED_PATH.finditer(text):
            target = match.group(1).rstrip("/")
            line = text.count("\n", 0, match.start()) + 1
            if not lines.confirmed(relative, line):
                continue
            holder = _inside(target, folders)
            if holder:
                named[target] = folders[holder]
            elif target in paths:
                named[target] = found.get(target)
        cuda = [target for target, cause in named.items() if cause is not None]
        if cuda and 2 * len(cuda) > len(named):
            cause = named[cuda[0]]
            assert cause is not None
            why = f"it runs or edits `{cuda[0]}` (CUDA-only), which needs `{cause.toolkit}`"
            out[relative] = _note(why, cause)
    return out


def cuda_only_files(index: ProjectIndex, paths: Iterable[str]) -> dict[str, Cause]:
    """Every file of the project that never runs on ROCm because of a CUDA-only kernel
    toolkit: the modules written on it (``migrator.reach.cuda_only``) and the files serving them."""
    from migrator.reach.cuda_only import cuda_only_modules

    found = cuda_only_modules(index)
    if not found:
        return found
    users = cuda_only_users(found, index, paths, index.containers)
    return {**found, **users, **_debug_aids(found, index)}
