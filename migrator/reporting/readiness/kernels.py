"""CUDA kernel sources in a project's core locations: GPU code the project builds itself, which
runs on ROCm only through a HIP build of it."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from migrator.reporting.readiness.roles import CORE, path_role, plugin_module

#: CUDA kernel source suffixes: code a ROCm build must hipify and compile.
_KERNEL_SUFFIXES = (".cu", ".cuh")
#: At most this many directory entries are looked at for kernel sources.
_KERNEL_WALK_LIMIT = 200_000


def find_kernel_sources(root: Path, nested: Iterable[str]) -> tuple[str, ...]:
    """CUDA kernel sources in core locations: not in tests, examples, benchmarks, docs or tooling
    (by path), not in a nested sub-project, not in a plugin folder; hidden, excluded and build
    folders are not entered and symlinks are not followed."""
    from migrator.files.discovery import DEFAULT_EXCLUDED_DIRS

    subprojects = tuple(f"{folder}/" for folder in nested)
    found: list[str] = []
    seen = 0
    for directory, folders, files in os.walk(root):
        folders[:] = sorted(
            name
            for name in folders
            if not name.startswith(".") and name not in DEFAULT_EXCLUDED_DIRS
        )
        seen += len(folders) + len(files)
        if seen > _KERNEL_WALK_LIMIT:
            break
        base = Path(directory).relative_to(root).as_posix()
        for name in files:
            if not name.lower().endswith(_KERNEL_SUFFIXES):
                continue
            relative = name if base == "." else f"{base}/{name}"
            if (
                path_role(relative) == CORE
                and not relative.startswith(subprojects)
                and not plugin_module(relative)
            ):
                found.append(relative)
    return tuple(sorted(found))
