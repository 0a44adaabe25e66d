"""The temporary workspace of one verify run: two copies of the project and the injected files.

Layout (under a fresh temporary directory; the user's tree is only ever read)::

    original/            copy of the project, run as the baseline
    migrated/            copy of the project with the fixes applied
    pythonpath/          the probe and the ROCm emulation (sitecustomize.py and helpers)
    bin/                 ``python`` / ``python3`` shims for the chosen interpreter
    path-without-nvidia-smi/<n>/   PATH entries mirrored without nvidia-smi (rocm-sim only)
    runs/<tree>-<target>/          stdout, stderr, smoke output, probe files, emulation log
"""

from __future__ import annotations

import contextlib
import importlib
import itertools
import os
import shutil
import stat
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Protocol

COPY_IGNORE = (
    ".git",
    ".hg",
    ".svn",
    ".venv",
    "venv",
    "__pycache__",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".migrate_cache",
    ".tox",
    ".nox",
    "node_modules",
)


class _Finding(Protocol):
    rule: str


class _FileOutcome(Protocol):
    relative: str
    fixed: Sequence[_Finding]
    error: str | None


class _FixRun(Protocol):
    """``migrator.engine.runner.RootRun``: per-file outcomes in ``outcomes`` (``files`` also accepted)."""


FixFunction = Callable[[Path, bool], _FixRun]
"""``(tree, unsafe) -> run`` — applies fixes to ``tree`` in place."""


@dataclass(slots=True)
class FixSummary:
    """Which fixes were applied to the migrated copy."""

    level: str
    available: bool = True
    applied: dict[str, int] = field(default_factory=dict)
    files_changed: list[str] = field(default_factory=list)
    errors: dict[str, str] = field(default_factory=dict)
    note: str = ""

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "level": self.level,
            "engine_available": self.available,
            "applied": dict(sorted(self.applied.items())),
            "total": sum(self.applied.values()),
            "files_changed": sorted(self.files_changed),
            "errors": dict(sorted(self.errors.items())),
            "note": self.note,
        }


def default_fixer(tree: Path, unsafe: bool) -> _FixRun:
    """Call the project's fix engine, ``migrator.engine.runner.fix_tree`` (imported lazily)."""
    runner = importlib.import_module("migrator.engine.runner")
    model = importlib.import_module("migrator.model")
    level = model.Applicability.UNSAFE if unsafe else model.Applicability.SAFE
    run: _FixRun = runner.fix_tree(tree, level=level, write=True)
    return run


def apply_fixes(tree: Path, unsafe: bool, fixer: FixFunction | None = None) -> FixSummary:
    """Apply fixes to ``tree`` and count them per rule; an unavailable engine is recorded."""
    summary = FixSummary(level="unsafe" if unsafe else "safe")
    try:
        run = (fixer or default_fixer)(tree, unsafe)
    except ImportError as error:
        summary.available = False
        summary.note = (
            f"fix engine not importable ({error}); the migrated tree is an unchanged copy"
        )
        return summary
    counts: Counter[str] = Counter()
    found: Sequence[_FileOutcome] | None = getattr(run, "outcomes", None)
    outcomes: Sequence[_FileOutcome] = found if found is not None else getattr(run, "files", ())
    for outcome in outcomes:
        problem = outcome.error or getattr(outcome, "write_error", None)
        if problem:
            summary.errors[outcome.relative] = problem
            continue
        if outcome.fixed:
            summary.files_changed.append(outcome.relative)
            counts.update(finding.rule for finding in outcome.fixed)
    summary.applied = dict(counts)
    return summary


#: A file outside the project that a symlink points to is copied up to this size.
MAX_LINKED_FILE_BYTES = 64 * 1024 * 1024


#: Folders nested deeper than this below the project are left out of the copies, with a note:
#: a tree built deeper than the interpreter's recursion limit (or PATH_MAX) would stop every
#: recursive walk of the copy (the fixes, the smoke command's own, the clean-up).
MAX_COPY_DEPTH = 256


def copy_project(source: Path, destination: Path) -> list[str]:
    """Copy ``source`` to ``destination`` without VCS folders, virtualenvs and caches, so that
    nothing in the copy leads back to the user's files: a symlink that stays inside the project
    becomes a relative link inside the copy; one that leaves it is replaced by a copy of the file
    it points to (a folder, a missing target or a large file is left out); named pipes, sockets,
    devices and folders nested deeper than ``MAX_COPY_DEPTH`` are left out. The walk keeps its
    own stack (no recursion, however deep the tree). Returns one line per path left out."""
    notes: list[str] = []
    real_root = source.resolve()
    destination.mkdir(parents=True)
    # each entry: the folder's remaining entries, its copy, its path from the root, its depth
    stack = [(_entries(source, "", notes), destination, "", 0)]
    while stack:
        entries, target, relative, depth = stack[-1]
        entry = next(entries, None)
        if entry is None:
            stack.pop()
            continue
        if entry.name in COPY_IGNORE:
            continue
        name = f"{relative}/{entry.name}" if relative else entry.name
        copied = target / entry.name
        try:
            if entry.is_symlink():
                _copy_link(Path(entry.path), copied, real_root, destination, name, notes)
            elif entry.is_dir(follow_symlinks=False):
                if depth >= MAX_COPY_DEPTH:
                    notes.append(f"{name}: nested deeper than {MAX_COPY_DEPTH} folders; left out")
                    continue
                copied.mkdir()
                stack.append((_entries(Path(entry.path), name, notes), copied, name, depth + 1))
            elif entry.is_file(follow_symlinks=False):
                shutil.copy2(entry.path, copied, follow_symlinks=False)
            else:
                notes.append(f"{name}: not a regular file; left out")
        except OSError as error:
            notes.append(f"{name}: cannot copy ({error.strerror or error}); left out")
    return notes


def _entries(folder: Path, relative: str, notes: list[str]) -> Iterator[os.DirEntry[str]]:
    """The entries of ``folder`` by name; none, with a note, when it cannot be listed."""
    try:
        return iter(sorted(os.scandir(folder), key=lambda entry: entry.name))
    except OSError as error:
        notes.append(f"{relative or '.'}: cannot list folder ({error.strerror}); left out")
        return iter(())


def remove_tree(root: Path) -> None:
    """Delete the folder ``root`` and everything in it, however deep: every folder found is
    first moved up to sit directly in ``root`` (so no path is longer than two names, nothing
    recurses and two descriptors are open at a time); symlinks are removed, never followed;
    what cannot be removed is left."""
    try:
        top = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return
    moved = itertools.count()
    try:
        pending = _empty_folder(top, top, moved)
        while pending:
            name = pending.pop()
            try:
                folder = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=top)
            except OSError:
                continue
            try:
                pending.extend(_empty_folder(folder, top, moved))
            finally:
                os.close(folder)
            with contextlib.suppress(OSError):
                os.rmdir(name, dir_fd=top)
    finally:
        os.close(top)
    with contextlib.suppress(OSError):
        os.rmdir(root)


def _empty_folder(folder: int, top: int, moved: Iterator[int]) -> list[str]:
    """Remove the files and links of the open ``folder`` and move its folders into ``top``;
    their new names there."""
    found: list[str] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return found
    for entry in entries:
        try:
            if entry.is_dir(follow_symlinks=False) and folder == top:
                found.append(entry.name)
            elif entry.is_dir(follow_symlinks=False):
                new = f".migrate-removing-{next(moved)}"
                os.rename(entry.name, new, src_dir_fd=folder, dst_dir_fd=top)
                found.append(new)
            else:
                os.unlink(entry.name, dir_fd=folder)
        except OSError:
            continue
    return found


def _copy_link(
    link: Path, destination: Path, real_root: Path, copy_root: Path, name: str, notes: list[str]
) -> None:
    try:
        resolved = link.resolve(strict=True)
    except (OSError, RuntimeError):
        notes.append(f"{name}: broken or looping symlink; left out")
        return
    if resolved.is_relative_to(real_root):
        inside = copy_root / resolved.relative_to(real_root)
        destination.symlink_to(os.path.relpath(inside, destination.parent))
        return
    info = resolved.stat()
    if stat.S_ISREG(info.st_mode) and info.st_size <= MAX_LINKED_FILE_BYTES:
        shutil.copyfile(resolved, destination)
        notes.append(f"{name}: symlink out of the project; copied the file it points to")
        return
    notes.append(f"{name}: symlink out of the project to a folder or special file; left out")


def sim_source_dir() -> Path:
    """Where the packaged probe/emulation files are (``migrator/verify/sim``)."""
    return Path(str(resources.files("migrator.verify").joinpath("sim")))


def install_pythonpath(destination: Path) -> Path:
    """Copy the probe and emulation files to ``destination`` (put first on PYTHONPATH)."""
    destination.mkdir(parents=True, exist_ok=True)
    for path in sim_source_dir().glob("*.py"):
        shutil.copy2(path, destination / path.name)
    return destination


def write_python_shims(directory: Path, python: str) -> Path:
    """``python`` and ``python3`` scripts that exec ``python`` (kept out of venv detection)."""
    directory.mkdir(parents=True, exist_ok=True)
    resolved = shutil.which(python) or python
    for name in ("python", "python3"):
        shim = directory / name
        shim.write_text(f'#!/bin/sh\nexec "{resolved}" "$@"\n', encoding="utf-8")
        shim.chmod(shim.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return directory


def path_without(executable: str, path_value: str, mirror_root: Path) -> str:
    """``PATH`` where every entry holding ``executable`` is replaced by a mirror without it.

    The mirror holds symlinks to every other entry of that folder, so the rest of the folder
    (``/usr/bin`` for instance) stays reachable.
    """
    entries: list[str] = []
    for index, entry in enumerate(path_value.split(os.pathsep)):
        if not entry or not (Path(entry) / executable).exists():
            entries.append(entry)
            continue
        mirror = mirror_root / str(index)
        mirror.mkdir(parents=True, exist_ok=True)
        for child in Path(entry).iterdir():
            if child.name != executable and not (mirror / child.name).exists():
                (mirror / child.name).symlink_to(child)
        entries.append(str(mirror))
    return os.pathsep.join(entries)


@dataclass(frozen=True, slots=True)
class Workspace:
    """Paths of one verify run's temporary workspace."""

    root: Path
    copy_notes: list[str] = field(default_factory=list, compare=False)

    @property
    def original(self) -> Path:
        return self.root / "original"

    @property
    def migrated(self) -> Path:
        return self.root / "migrated"

    @property
    def pythonpath(self) -> Path:
        return self.root / "pythonpath"

    @property
    def bin(self) -> Path:
        return self.root / "bin"

    def run_dir(self, tree: str, target: str) -> Path:
        """A fresh folder for the logs and outputs of one run."""
        path = self.root / "runs" / f"{tree}-{target}"
        path.mkdir(parents=True, exist_ok=True)
        return path

    def tree(self, name: str) -> Path:
        """``original`` or ``migrated``."""
        return self.original if name == "original" else self.migrated

    @classmethod
    def create(cls, project: Path, python: str) -> Workspace:
        """Make the temporary folder, copy the project twice and install the injected files;
        nothing is left behind when any step fails."""
        workspace = cls(Path(tempfile.mkdtemp(prefix="migrate-verify-")).resolve())
        try:
            workspace.copy_notes.extend(copy_project(project, workspace.original))
            copy_project(project, workspace.migrated)
            install_pythonpath(workspace.pythonpath)
            write_python_shims(workspace.bin, python)
        except BaseException:
            workspace.remove()
            raise
        return workspace

    def remove(self) -> None:
        """Delete the workspace (errors ignored: a container may have left root-owned files;
        the smoke command may have made folders nested deeper than any recursion goes)."""
        remove_tree(self.root)
