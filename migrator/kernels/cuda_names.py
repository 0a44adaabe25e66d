"""The CUDA-named identifiers and headers that are a project's own, read once per scan from its
C/C++ sources: a ``CUDA_CHECK`` macro its header defines, a ``cuda_utils.h`` it ships. Neither
is a CUDA name hipify leaves behind, though both are named like one."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from migrator.kernels.hipify_map import CANDIDATE, unmapped_cuda_name
from migrator.knowledge.tables import load_table

#: The longest include name taken for a CUDA toolkit header.
_MAX_HEADER = 256


def cuda_header(header: str) -> bool:
    """Whether an ``#include`` names one of the CUDA toolkit's headers (the hand fact of
    ``rules/data/kernel_constructs.toml`` ``[cuda_headers]``)."""
    if len(header) > _MAX_HEADER:
        return False  # no toolkit header is named so long (and hipify's regex is not run on it)
    table = load_table("kernel_constructs")["cuda_headers"]
    return header in table["names"] or header.startswith(tuple(table["prefixes"]))


def _suffixes(relative: str) -> Iterable[str]:
    """``a/b/c.h`` -> ``c.h``, ``b/c.h``, ``a/b/c.h``: the names an include may reach it by."""
    parts = relative.split("/")
    for start in range(len(parts) - 1, -1, -1):
        yield "/".join(parts[start:])


def cuda_names_in(data: bytes) -> set[str]:
    """The words of ``data`` that may be CUDA names (code, comments and strings alike)."""
    return {match.group().decode("ascii", "replace") for match in CANDIDATE.finditer(data)}


def declared_unmapped(data: bytes) -> set[str]:
    """The CUDA-named identifiers hipify does not map that ``data`` (one source) declares: a
    macro, a function, a type, a variable, an enumerator of its own."""
    wanted = {name for name in cuda_names_in(data) if unmapped_cuda_name(name)}
    if not wanted:
        return set()
    from migrator.kernels.declared import declared_names

    return wanted & declared_names(data)


def project_cuda_names(texts: Mapping[str, bytes]) -> tuple[frozenset[str], frozenset[str]]:
    """(CUDA-named identifiers hipify does not map that the project declares, the include
    names by which its own files are reachable that are named like CUDA headers)."""
    names: set[str] = set()
    for data in texts.values():
        names |= declared_unmapped(data)
    headers = {
        suffix for relative in texts for suffix in _suffixes(relative) if cuda_header(suffix)
    }
    return frozenset(names), frozenset(headers)


__all__ = ["cuda_header", "cuda_names_in", "declared_unmapped", "project_cuda_names"]
