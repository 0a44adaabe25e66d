"""Lane masks as the whole project defines them. Mask macros a project defines once as the 32-lane full mask (``#define SHFL_MASK
0xffffffff`` in one header, used as ``__shfl_xor_sync(SHFL_MASK, ...)`` in another source): a
file's own ``#define`` list cannot know the value of a macro from a header it includes, so the
names are read once per scan over every C/C++ source and set in the project facts. So are the
warp intrinsics the project redefines for ROCm (``intrinsic_shims``)."""

from __future__ import annotations

import re
from collections.abc import Iterable

#: ``#define NAME <full 32-bit mask>`` and any ``#define NAME``.
_FULL = re.compile(
    rb"^[ \t]*#[ \t]*define[ \t]+(\w+)[ \t]+\(?[ \t]*(?:0[xX][fF]{8}[uU]?[lL]{0,2}|~0[uU]?|"
    rb"4294967295[uU]?|\(unsigned\)[ \t]*-1)[ \t]*\)?[ \t]*(?://[^\n]*)?$",
    re.M,
)
_ANY = re.compile(rb"^[ \t]*#[ \t]*define[ \t]+(\w+)", re.M)


def full_mask_macros(sources: Iterable[bytes]) -> frozenset[str]:
    """Names every definition of which, across ``sources``, is the same 32-bit full mask (a name
    also defined otherwise, say 64-bit or with another suffix in a ROCm branch, is left out: the
    project chose)."""
    full: set[str] = set()
    other: set[str] = set()
    values: dict[str, set[bytes]] = {}
    for data in sources:
        if b"define" not in data:
            continue
        for match in _ANY.finditer(data):
            name = match.group(1).decode("ascii", "replace")
            line_start = data.rfind(b"\n", 0, match.start()) + 1
            line_end = data.find(b"\n", match.end())
            values.setdefault(name, set()).add(
                b"".join(data[match.end() : len(data) if line_end < 0 else line_end].split())
            )
            (full if _FULL.match(data, line_start) else other).add(name)
    # defined more than one way (``0xffffffffull`` for HIP, ``0xffffffffu`` for CUDA): the
    # project chose per platform
    other |= {name for name, texts in values.items() if len(texts) > 1}
    return frozenset(full - other)


#: ``#define __shfl_xor_sync(mask, var, laneMask) __shfl_xor(var, laneMask)``: a project's own
#: definition of a warp intrinsic, which drops or widens the mask.
_SHIM = re.compile(rb"^[ \t]*#[ \t]*define[ \t]+(__\w+_sync)[ \t]*\(", re.M)


def intrinsic_shims(sources: Iterable[bytes]) -> frozenset[str]:
    """The ``*_sync`` warp intrinsics the project redefines as macros where a HIP build compiles
    the definition (a ROCm compatibility header under ``#if defined(USE_ROCM)``): their mask
    argument is the project's business on ROCm, not a 32-bit mask hipcc sees."""
    from migrator.kernels.macros import defines_on_hip

    found: set[str] = set()
    for data in sources:
        names = {m.group(1).decode("ascii", "replace") for m in _SHIM.finditer(data)}
        if names:
            _, compiled = defines_on_hip(data)
            found |= names & compiled
    return frozenset(found)


__all__ = ["full_mask_macros", "intrinsic_shims"]
