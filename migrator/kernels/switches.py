"""Opt-in switches nothing in the project turns on: a macro named like a build option
(``FLASHINFER_ENABLE_FP8``, ``ENABLE_BF16``) that the project's C/C++ sources only test, never
``#define``, and that no build file, script or Python module of the project names (no
``-DFLASHINFER_ENABLE_FP8``, no ``define_macros``). The project's own builds never compile what
such a switch guards, on NVIDIA or AMD: a vendored library's optional FP8 path is not code the
port has to change (issue #48, fresh round 4: a vendored flashinfer's ``<cuda_fp8.h>`` and a
hundred ``__nv_fp8_e4m3`` sites under ``#ifdef FLASHINFER_ENABLE_FP8``).

A user may still pass the macro by hand (``CFLAGS``); the scan reads what the project builds."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path

from migrator.files.sources import read_project_bytes

#: A conditional directive's line (its condition is where switches are tested).
_CONDITION = re.compile(rb"(?m)^[ \t]*#[ \t]*(?:ifdef|ifndef|if|elif)\b[^\n]*")
_NAME = re.compile(rb"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*\b")
#: ``#define NAME`` / ``#undef NAME``: the project sets the macro itself somewhere.
_DEFINE = re.compile(rb"(?m)^[ \t]*#[ \t]*(?:define|undef)[ \t]+([A-Za-z_]\w*)")
#: Files that can hand a macro to a compiler: build files, scripts, Python (``load()`` flags).
_BUILD_SUFFIXES = (
    ".py",
    ".cmake",
    ".txt",
    ".sh",
    ".bash",
    ".toml",
    ".cfg",
    ".mk",
    ".bzl",
    ".bazel",
    ".json",
    ".yaml",
    ".yml",
    ".ninja",
    ".in",
)
_BUILD_NAMES = ("makefile", "dockerfile", "build", "workspace", "setup.cfg")
#: Read at most this many bytes of one build file.
_MAX_BUILD_BYTES = 2 * 1024 * 1024


def is_switch(name: str) -> bool:
    """Whether ``name`` reads as an opt-in build option: ``ENABLE`` is one of its words, not
    the ``_ENABLED``/``_AVAILABLE`` of a detection macro a library header defines."""
    words = name.split("_")
    return "ENABLE" in words and not name.endswith(("_ENABLED", "_AVAILABLE", "_SUPPORTED"))


def unset_switches(
    kernel_texts: Mapping[str, bytes], root: Path | None, others: Iterable[str]
) -> frozenset[str]:
    """The switches the C/C++ sources of ``kernel_texts`` test and nothing of the project
    defines; ``others``: the project's other files (relative to ``root``), read for the names."""
    tested: set[str] = set()
    defined: set[str] = set()
    for data in kernel_texts.values():
        if b"ENABLE" not in data:
            continue
        for line in _CONDITION.findall(data):
            tested.update(n.decode() for n in _NAME.findall(line) if is_switch(n.decode()))
        defined.update(m.decode() for m in _DEFINE.findall(data))
    left = tested - defined
    if not left or root is None:
        return frozenset(left)
    for relative in others:
        lowered = relative.lower().rsplit("/", 1)[-1]
        if not (lowered.endswith(_BUILD_SUFFIXES) or lowered.startswith(_BUILD_NAMES)):
            continue
        content = read_project_bytes(root / relative, _MAX_BUILD_BYTES)
        if content is None:
            continue
        left = {name for name in left if name.encode() not in content}
        if not left:
            break
    return frozenset(left)


__all__ = ["is_switch", "unset_switches"]
