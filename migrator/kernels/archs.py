"""The NVIDIA architectures a project builds its kernels for, read from its build files: nvcc's
``-gencode arch=compute_80,code=sm_80``/``-arch=sm_90``, ``TORCH_CUDA_ARCH_LIST="8.0;9.0+PTX"``
and CMake's ``CUDA_ARCHITECTURES 80 90``. Differential preprocessing reads each kernel as nvcc's
device pass does for these (``__CUDA_ARCH__`` 800, 900); with none named, sm_80 and sm_90.

Read statically from the text: a list built at run time (a loop over versions) is not followed,
and then the defaults stand."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from migrator.files.sources import read_project_text

#: ``__CUDA_ARCH__`` values read when the build names no architecture (sm_80 and sm_90).
DEFAULT_ARCHS: tuple[int, ...] = (800, 900)
#: Build files read, by name, at most this many bytes each.
_BUILD_NAMES = ("setup.py", "CMakeLists.txt")
_MAX_BUILD_BYTES = 2 * 1024 * 1024
#: At most this many architectures are read (each costs a reading of every kernel).
_MAX_ARCHS = 8

_CODE = re.compile(r"(?:code|arch)\s*=\s*[\"']?(?:sm|compute)_(\d{2,3})[a-z]?\b")
_ARCH_FLAG = re.compile(r"(?:-arch|--gpu-architecture|-gpu-name)[= ]\s*[\"']?sm_(\d{2,3})[a-z]?\b")
_TORCH_LIST = re.compile(r"TORCH_CUDA_ARCH_LIST[\"']?[\s\]:=,)]*[\"']([^\"'\n]{1,200})[\"']")
_TORCH_ENTRY = re.compile(r"(\d{1,2})\.(\d)[a-z]?")
_CMAKE_LIST = re.compile(r"CUDA_ARCHITECTURES\b[\s\"]+([0-9a-z;\- \"]{1,200})")
_CMAKE_ENTRY = re.compile(r"\b(\d{2,3})[a-z]?(?:-real|-virtual)?\b")


def archs_in(texts: Iterable[str]) -> tuple[int, ...]:
    """The ``__CUDA_ARCH__`` values the build texts name, sorted; empty when they name none."""
    found: set[int] = set()
    for text in texts:
        for match in (*_CODE.finditer(text), *_ARCH_FLAG.finditer(text)):
            found.add(int(match.group(1)) * 10)
        for listing in _TORCH_LIST.finditer(text):
            for major, minor in _TORCH_ENTRY.findall(listing.group(1)):
                found.add(int(major) * 100 + int(minor) * 10)
        for listing in _CMAKE_LIST.finditer(text):
            found.update(int(value) * 10 for value in _CMAKE_ENTRY.findall(listing.group(1)))
    usable = sorted(arch for arch in found if 300 <= arch <= 1500)
    return tuple(usable[-_MAX_ARCHS:])


def project_archs(root: Path, paths: Sequence[str]) -> tuple[int, ...]:
    """The architectures the project's build files (``setup.py`` and ``CMakeLists.txt`` among
    ``paths``, and the root's) name; ``DEFAULT_ARCHS`` when none."""
    names = {p for p in paths if p.rsplit("/", 1)[-1] in _BUILD_NAMES} | set(_BUILD_NAMES)
    texts = []
    for relative in sorted(names):
        path = root / relative
        if path.is_symlink():
            continue
        text = read_project_text(path, limit=_MAX_BUILD_BYTES)
        if text is not None:
            texts.append(text)
    return archs_in(texts) or DEFAULT_ARCHS


def built_archs(root: Path, paths: Sequence[str]) -> tuple[int, ...]:
    """The architectures the build names, or () when it names none (the defaults then stand;
    the project facts, part of every cache key, stay as they were)."""
    archs = project_archs(root, paths)
    return () if archs == DEFAULT_ARCHS else archs


__all__ = ["DEFAULT_ARCHS", "archs_in", "built_archs", "project_archs"]
