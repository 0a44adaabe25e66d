"""Whether a compiled translation unit kept its kernels' bodies: hipcc compiles a kernel whose
code sits under ``#if __CUDA_ARCH__ >= 750`` with a ``#pragma message`` ``#else`` without a
word, and the empty kernel launches on AMD and writes nothing (issue #48). The compile check
passes a unit only if no ``__global__``/``__device__`` function of it, or of the project headers
it includes, compiles to nothing on AMD (``migrator.kernels.differential``: our preprocessor
reading of nvcc's and hipcc's branches)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from migrator.files.sources import read_project_bytes
from migrator.kernels.archs import project_archs
from migrator.kernels.builds import include_graph
from migrator.kernels.differential import READER, arch_names, empty_on_amd
from migrator.kernels.source import MAX_SOURCE_BYTES, parse


@dataclass(frozen=True, slots=True)
class EmptyFunction:
    """A function of a unit that compiles to nothing on AMD, where it is defined."""

    path: str
    line: int
    message: str


def empty_functions(
    root: Path, units: Sequence[str], files: Sequence[str]
) -> dict[str, list[EmptyFunction]]:
    """unit -> the functions in it and in the project headers it includes (among ``files``, the
    project's kernel files; transitively) that have code under nvcc, for the architectures the
    project's build names, and none under hipcc."""
    texts: dict[str, bytes] = {}
    for relative in files:
        path = root / relative
        if path.is_symlink():
            continue  # the compile check's copy never holds a file through a symlink
        data = read_project_bytes(path, MAX_SOURCE_BYTES)
        if data is not None:
            texts[relative] = data
    includes: dict[str, set[str]] = {}
    for header, includers in include_graph(root, sorted(texts), texts).items():
        for includer in includers:
            includes.setdefault(includer, set()).add(header)
    archs = project_archs(root, files)
    found: dict[str, list[EmptyFunction]] = {}
    per_file: dict[str, list[EmptyFunction]] = {}
    for unit in units:
        for relative in _closure(unit, includes):
            if relative not in per_file:
                per_file[relative] = _empty_in(relative, texts.get(relative), archs)
            found.setdefault(unit, []).extend(per_file[relative])
    return {unit: empty for unit, empty in found.items() if empty}


def _closure(unit: str, includes: Mapping[str, set[str]]) -> list[str]:
    """The unit and the project headers it includes, transitively, in a stable order."""
    seen = {unit}
    order = [unit]
    frontier = [unit]
    while frontier:
        current = frontier.pop()
        for header in sorted(includes.get(current, ())):
            if header not in seen:
                seen.add(header)
                order.append(header)
                frontier.append(header)
    return order


def _empty_in(relative: str, data: bytes | None, archs: Sequence[int]) -> list[EmptyFunction]:
    if data is None or (b"__global__" not in data and b"__device__" not in data):
        return []
    source = parse(data)
    return [
        EmptyFunction(
            relative,
            source.line_of(empty.start),
            f"{'kernel' if empty.kernel else 'device function'} `{empty.name}` compiled to "
            f"nothing: it has code for NVIDIA ({arch_names(empty.archs)}) and none for AMD"
            + (f" (`{empty.guard}` is false under hipcc)" if empty.guard else "")
            + f"; {READER}",
        )
        for empty in empty_on_amd(source, archs)
    ]


__all__ = ["EmptyFunction", "empty_functions"]
