"""The extensions a project builds and, for each CUDA source, whether a ROCm build compiles it.

Read statically, never run: every ``setup.py`` and Python module that builds an extension
(``CUDAExtension``, ``torch.utils.cpp_extension.load`` anywhere, through the project's own
wrapper functions: ``migrator.kernels.pybuild``) and every CMake file (``migrator.kernels.cmake``).
Each source pattern carries the branch it entered the build in: ``cuda`` (a branch for CUDA
builds only, the ``else`` of a ROCm test, ``if not ROCM_VERSION``), ``rocm`` or ``both``, and a
gate where the build compiles it only when it finds CUDA and has no ROCm branch. A kernel file
that only ``cuda`` patterns name is never compiled for AMD; a header only such files include is
not either. A gated file is compiled only with CUDA: still the project's GPU code, which a
ROCm build leaves out (the build note says so). What static reading cannot resolve counts as
compiled, and is a note."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from migrator.files.sources import read_project_bytes, read_project_text
from migrator.kernels.buildmodel import (
    KERNEL_SUFFIXES,
    BuildModel,
    BuildNote,
    Extension,
    Pattern,
)

#: Build files larger than this are not read.
_MAX_BUILD_BYTES = 2 * 1024 * 1024
_CMAKE_NAMES = ("CMakeLists.txt",)


def _cmake_file(relative: str) -> bool:
    name = relative.rsplit("/", 1)[-1]
    return name in _CMAKE_NAMES or name.lower().endswith(".cmake")


_LAST: list[tuple[tuple[str, tuple[str, ...]], tuple[tuple[str, int, int], ...], BuildModel]] = []


def read_builds(
    root: Path, relatives: Sequence[str], python_texts: Mapping[str, str] | None = None
) -> BuildModel:
    """Every build of the project read into one model (computed once for the same root, files
    and build-file contents; ``python_texts`` only saves reads). A file that cannot be read or
    parsed adds nothing."""
    key = (str(root), tuple(relatives))
    watched = [r for r in relatives if r.endswith(".py") or _cmake_file(r)]
    if _LAST and _LAST[0][0] == key and _LAST[0][1] == _stamps(root, watched):
        return _copy(_LAST[0][2])
    model = _read_builds(root, relatives, python_texts)
    _LAST[:] = [(key, _stamps(root, watched), model)]
    return _copy(model)


def _stamps(root: Path, files: Sequence[str]) -> tuple[tuple[str, int, int], ...]:
    out = []
    for relative in files:
        try:
            info = (root / relative).stat()
        except OSError:
            out.append((relative, -1, -1))
            continue
        out.append((relative, info.st_size, info.st_mtime_ns))
    return tuple(out)


def _copy(model: BuildModel) -> BuildModel:
    """A copy whose lists the caller may change (extension views set ``sources``)."""
    from dataclasses import replace

    return BuildModel(
        extensions=[
            replace(
                e,
                patterns=list(e.patterns),
                sources=list(e.sources),
                links=list(e.links),
                also=list(e.also),
                also_names=list(e.also_names),
                also_builds=list(e.also_builds),
                also_kinds=list(e.also_kinds),
            )
            for e in model.extensions
        ],
        patterns=list(model.patterns),
        rocm_branch=list(model.rocm_branch),
        cuda_macros=dict(model.cuda_macros),
        rocm_macros=set(model.rocm_macros),
        notes=list(model.notes),
        template_includes=set(model.template_includes),
        read=list(model.read),
        calls=model.calls,
    )


def _read_builds(
    root: Path, relatives: Sequence[str], python_texts: Mapping[str, str] | None
) -> BuildModel:
    from migrator.files.paths import submodule_paths, vendored
    from migrator.kernels import cmake
    from migrator.kernels.pybuild import read_python_builds

    submodules = submodule_paths(root)
    relatives = [r for r in relatives if not vendored(r, submodules)]

    def read_text(relative: str) -> str | None:
        if python_texts is not None and relative in python_texts:
            return python_texts[relative]
        return _read(root / relative)

    python = read_python_builds(relatives, read_text)
    model = BuildModel()
    for extension in python.model.extensions:
        model.extensions.append(extension)
    model.patterns.extend(
        Pattern(p.glob, p.context, e.build, p.gate)
        for e in python.model.extensions
        for p in e.patterns
    )
    model.rocm_branch.extend(python.model.rocm_branch)
    model.cuda_macros.update(python.model.cuda_macros)
    model.notes.extend(python.model.notes)
    model.template_includes |= python.model.template_includes
    model.read.extend(python.files)
    model.calls = python.calls
    candidates = [r for r in relatives if _cmake_file(r)]
    listed = set(candidates)
    folders = {
        r.rsplit("/", 1)[0] if "/" in r else ""
        for r in relatives
        if r.lower().endswith(KERNEL_SUFFIXES)
    }
    ancestors: set[str] = set()
    for folder in folders:
        parts = folder.split("/") if folder else []
        for depth in range(len(parts) + 1):
            ancestors.add("/".join(parts[:depth]))
    for folder in sorted(ancestors):
        name = f"{folder}/CMakeLists.txt" if folder else "CMakeLists.txt"
        if name not in listed and (root / name).is_file() and not (root / name).is_symlink():
            candidates.append(name)
    cmake_files: list[str] = []
    for relative in candidates:
        folder = relative.rsplit("/", 1)[0] if "/" in relative else ""
        text = _read(root / relative)
        if text is None:
            continue
        try:
            part = cmake.read_cmake(text, folder, relative)
        except (ValueError, RecursionError, MemoryError):
            continue
        cmake_files.append(relative)
        model.merge(part, relative)
    model.read.extend(cmake_files)
    cmake.settle(model, cmake_files)
    # a macro a Python build also defines for ROCm (``define_macros += [('WITH_CUDA', None)]``
    # outside a CUDA-only branch) is not one that only CUDA builds see
    for macro in python.model.rocm_macros:
        model.cuda_macros.pop(macro, None)
    return model


def _read(path: Path) -> str | None:
    if path.is_symlink():
        return None
    return read_project_text(path, limit=_MAX_BUILD_BYTES)


_HEADER_SUFFIXES = (".cuh", ".h", ".hpp", ".hh", ".hxx", ".inl")
_INCLUDE = re.compile(rb'^[ \t]*#[ \t]*include[ \t]*[<"]([^>"\n]+)[>"]', re.M)
_MAX_KERNEL_BYTES = 8 * 1024 * 1024


def include_graph(
    root: Path, kernel_files: Sequence[str], texts: Mapping[str, bytes] | None = None
) -> dict[str, set[str]]:
    """header -> the project files that include it (resolved against the includer's folder,
    then by path suffix among the project's files); ``texts`` holds sources already read."""
    by_name: dict[str, list[str]] = {}
    for relative in kernel_files:
        by_name.setdefault(relative.rsplit("/", 1)[-1], []).append(relative)
    known = set(kernel_files)
    included_by: dict[str, set[str]] = {}
    for relative in kernel_files:
        data = texts.get(relative) if texts is not None else None
        if data is None:
            data = read_project_bytes(root / relative, _MAX_KERNEL_BYTES)
        if data is None:
            continue
        folder = relative.rsplit("/", 1)[0] if "/" in relative else ""
        for match in _INCLUDE.finditer(data):
            header = match.group(1).decode("utf-8", "replace").strip()
            near = os.path.normpath(f"{folder}/{header}" if folder else header)
            if near in known:
                included_by.setdefault(near, set()).add(relative)
                continue
            candidates = [
                c for c in by_name.get(header.rsplit("/", 1)[-1], []) if c.endswith(header)
            ]
            if len(candidates) == 1:
                included_by.setdefault(candidates[0], set()).add(relative)
    return included_by


def cuda_only_sources(
    root: Path,
    relatives: Sequence[str],
    texts: Mapping[str, bytes] | None = None,
    python_texts: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """Kernel files no ROCm build compiles, each with the reason: sources that only a CUDA-only
    branch of a build file names, and headers that only such files include (``texts`` and
    ``python_texts``: sources already read). A source a build compiles only where it finds CUDA
    (no ROCm branch at all) is not one: it is the GPU code a ROCm build must be given."""
    kernel_files = [r for r in relatives if r.lower().endswith(KERNEL_SUFFIXES)]
    if not kernel_files:
        return {}
    model = read_builds(root, relatives, python_texts)
    if not model.patterns:
        return {}
    out: dict[str, str] = {}
    for relative in kernel_files:
        build = model.cuda_only(relative)
        if build is not None:
            out[relative] = f"only the CUDA build in {build} compiles it"
    included_by = include_graph(root, kernel_files, texts)
    # a header beside an extension's sources that no file of the project includes and no build
    # names is compiled by nothing (a leftover of an older kernel)
    source_folders = {
        relative.rsplit("/", 1)[0]
        for relative in kernel_files
        if model.names(relative) and "/" in relative
    }
    for relative in kernel_files:
        if _templated(relative, model.template_includes):
            continue  # a generator's template includes it: compiled in the generated sources
        if (
            relative.lower().endswith(_HEADER_SUFFIXES)
            and relative not in included_by
            and relative not in out
            and not model.names(relative)
            and any(relative.startswith(f"{folder}/") for folder in source_folders)
        ):
            out[relative] = "no source of the project includes it"
    changed = True
    while changed:
        changed = False
        for header, includers in included_by.items():
            if header in out or not includers:
                continue
            if all(includer in out for includer in includers) and model.cuda_only(header) is None:
                if model.names(header) or _templated(header, model.template_includes):
                    continue  # a source a ROCm build names itself
                out[header] = "only sources that no ROCm build compiles include it"
                changed = True
    return out


def _templated(relative: str, templates: set[str]) -> bool:
    """Whether a kernel-source template in a Python string includes ``relative``."""
    return any(relative == t or relative.endswith(f"/{t}") for t in templates)


def extensions(root: Path, relatives: Sequence[str]) -> list[Extension]:
    """The extensions of the project with their existing sources resolved."""
    model = read_builds(root, relatives)
    kernel_files = [r for r in relatives if r.lower().endswith(KERNEL_SUFFIXES)]
    for extension in model.extensions:
        extension.sources = sorted(
            {r for r in kernel_files for p in extension.patterns if p.matches(r)}
        )
    return model.extensions


__all__: Sequence[str] = [
    "KERNEL_SUFFIXES",
    "BuildModel",
    "BuildNote",
    "Extension",
    "Pattern",
    "cuda_only_sources",
    "extensions",
    "include_graph",
    "read_builds",
]
