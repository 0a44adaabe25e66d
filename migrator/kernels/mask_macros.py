"""Lane-mask macros a project defines once as the 32-lane full mask (``#define SHFL_MASK
0xffffffff`` in one header, used as ``__shfl_xor_sync(SHFL_MASK, ...)`` in another source): a
file's own ``#define`` list cannot know the value of a macro from a header it includes, so the
names are read once per scan over every C/C++ source and set in the project facts."""

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
    """Names every definition of which, across ``sources``, is the 32-bit full mask (a name
    also defined otherwise, say 64-bit in a ROCm branch, is left out: the project chose)."""
    full: set[str] = set()
    other: set[str] = set()
    for data in sources:
        if b"define" not in data:
            continue
        for match in _ANY.finditer(data):
            name = match.group(1).decode("ascii", "replace")
            line_start = data.rfind(b"\n", 0, match.start()) + 1
            (full if _FULL.match(data, line_start) else other).add(name)
    return frozenset(full - other)


__all__ = ["full_mask_macros"]
