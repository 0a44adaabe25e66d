"""Kernel files that no hipify step touches on their way to hipcc: those only CMake targets
compile, and the project headers only such files include.

PyTorch's ``cpp_extension`` hipifies every source of a ``CUDAExtension`` or JIT ``load()`` on
ROCm, renaming ``__CUDACC__`` to ``__HIPCC__``. A CMake build has no such step: ported to HIP
(``enable_language(HIP)``, hipcc on the ``.cu`` files) its sources reach hip-clang as they are,
and hip-clang does not define ``__CUDACC__`` (it defines ``__HIPCC__`` and ``__HIP__``). So an
``#ifdef __CUDACC__`` that holds a library's GPU path (``#include "gpu_impl.h"``) is false there
and the GPU code compiles out. ``.cpp``/``.cc`` units of a CMake target are left out (the host
compiler builds them on every platform, where ``__CUDACC__`` is never defined), unless a ``.cu``
the target compiles is a link to one."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from migrator.kernels.buildmodel import CMAKE, KERNEL_SUFFIXES, BuildModel, Extension

#: Suffixes of the files a CUDA (or HIP) compiler compiles: sources and the headers they pull.
_DEVICE_SUFFIXES = (".cu", ".cuh", ".h", ".hpp", ".hh", ".hxx", ".inl")
_HEADER_SUFFIXES = (".cuh", ".h", ".hpp", ".hh", ".hxx", ".inl")


def unhipified_files(
    root: Path,
    relatives: Sequence[str],
    model: BuildModel,
    texts: Mapping[str, bytes] | None = None,
) -> frozenset[str]:
    """The kernel files of ``relatives`` that only CMake targets of ``model`` compile (``.cu``
    sources), with the project headers every includer of which is one of them."""
    from migrator.kernels.builds import include_graph

    kernel_files = [r for r in relatives if r.lower().endswith(KERNEL_SUFFIXES)]
    by_cmake: set[str] = set()
    by_torch: set[str] = set()
    for extension in model.extensions:
        named = {r for r in kernel_files for p in extension.patterns if p.matches(r)}
        # a ``.cu`` that is a link to a ``.cpp`` of the project (one file built twice: by the
        # host compiler for a CPU library, by nvcc as CUDA): the scan reads the file it links
        # to, and the build's CUDA pass compiles that
        named |= _linked(root, extension)
        (by_cmake if extension.kind == CMAKE else by_torch).update(named)
    linked = {t for e in model.extensions if e.kind == CMAKE for t in _linked(root, e)}
    found = {r for r in by_cmake - by_torch if r.lower().endswith(_DEVICE_SUFFIXES) or r in linked}
    if not found:
        return frozenset()
    included_by = include_graph(root, kernel_files, texts)
    changed = True
    while changed:
        changed = False
        for header, includers in included_by.items():
            if header in found or header in by_torch or not includers:
                continue
            if header.lower().endswith(_HEADER_SUFFIXES) and includers <= found:
                found.add(header)
                changed = True
    return frozenset(found)


def _linked(root: Path, extension: Extension) -> set[str]:
    """The project files the ``.cu`` sources of ``extension`` are symbolic links to."""
    return {
        target
        for p in extension.patterns
        if p.glob.lower().endswith(".cu") and (target := _link_target(root, p.glob)) is not None
    }


def _link_target(root: Path, relative: str) -> str | None:
    """The project file ``relative`` is a symbolic link to, or None."""
    path = root / relative
    if not path.is_symlink():
        return None
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except (OSError, ValueError):
        return None  # a broken link, a loop, or a file outside the project


__all__ = ["unhipified_files"]
