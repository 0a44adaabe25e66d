"""Macros a project defines only for NVIDIA builds: every ``#define`` of the name in the
project's own C/C++ sources sits in a branch a HIP build skips (``#else`` of ``#ifdef
__HIP_PLATFORM_AMD__``, ``#if __CUDA_ARCH__ >= 800``). A file that tests such a macro
(``#ifdef PTX_AVAILABLE``) compiles its other branch on ROCm, though the definition lives in a
header the file includes: one file's preprocessor reading cannot know that alone."""

from __future__ import annotations

import re
from collections.abc import Iterable

from migrator.kernels import preproc
from migrator.kernels.source import parse

#: Bytes a source must hold to define a macro under a vendor or architecture condition.
_DEFINE = re.compile(rb"^\s*#\s*define\s+\w", re.M)
_VENDOR = re.compile(rb"__HIP_PLATFORM_AMD__|__HIPCC__|USE_ROCM|__CUDA_ARCH__|__HIP__|__NVCC__")


def defines_on_hip(data: bytes) -> tuple[set[str], set[str]]:
    """(names defined only in branches HIP skips, names defined where HIP may compile them)."""
    source = parse(data)
    skipped = [
        (branch.start, branch.end)
        for _, chain in preproc.all_branches(source)
        for branch in chain
        if branch.on_hip == 0
    ]
    only_nvidia: set[str] = set()
    compiled: set[str] = set()
    for node in source.nodes("preproc_def", "preproc_function_def"):
        name = node.child_by_field_name("name")
        if name is None:
            continue
        word = source.text(name.start_byte, name.end_byte)
        if any(start <= node.start_byte < end for start, end in skipped):
            only_nvidia.add(word)
        else:
            compiled.add(word)
    return only_nvidia, compiled


def nvidia_only_macros(sources: Iterable[bytes]) -> frozenset[str]:
    """Names every definition of which, across ``sources``, a HIP build skips."""
    only_nvidia: set[str] = set()
    compiled: set[str] = set()
    for data in sources:
        if not (_DEFINE.search(data) and _VENDOR.search(data)):
            compiled.update(m.decode() for m in re.findall(rb"^\s*#\s*define\s+(\w+)", data, re.M))
            continue
        skipped, anywhere = defines_on_hip(data)
        only_nvidia |= skipped
        compiled |= anywhere
    return frozenset(only_nvidia - compiled - preproc.HIP_DEFINED)
