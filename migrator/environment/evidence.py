"""Whether one installed distribution's native code is a CUDA build, a ROCm build, CPU-only or
absent, from its files: shared objects' needed libraries and fat-binary sections, device-code
files, Python files that load a CUDA library by name, and the requirements it always installs
(the markers are ``rules/data/native.toml``)."""

from __future__ import annotations

import functools
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from migrator.environment.distributions import Distribution
from migrator.environment.elf import NotReadable, is_elf, read_elf
from migrator.environment.locate import Environment

#: Per distribution, at most this many ELF files and Python files are read.
MAX_ELF_FILES = 400
MAX_PYTHON_FILES = 2000
#: Of each Python file, the first bytes read for a library loaded by name.
PYTHON_BYTES = 256 << 10
#: Evidence lines kept per vendor.
MAX_EVIDENCE = 3
#: A Python file that loads a shared library itself (ctypes, cffi, dlopen).
_LOADER = re.compile(rb"\bctypes\b|\bcffi\b|\bCDLL\b|\bdlopen\b|\bLoadLibrary\b")
_NATIVE = re.compile(r"\.(so(\.\d+)*|pyd|dylib)$", re.IGNORECASE)


@dataclass(slots=True)
class Reading:
    """What the files of one distribution showed."""

    status: str
    cuda: list[str] = field(default_factory=list)
    rocm: list[str] = field(default_factory=list)
    native: int = 0
    unread: list[str] = field(default_factory=list)

    @property
    def evidence(self) -> tuple[str, ...]:
        return tuple(self.cuda[:MAX_EVIDENCE] + self.rocm[:MAX_EVIDENCE] + self.unread[:1])


@dataclass(frozen=True, slots=True)
class _Markers:
    libraries: dict[str, tuple[str, ...]]
    sections: dict[str, frozenset[str]]
    machines: dict[str, frozenset[int]]
    device_files: dict[str, tuple[str, ...]]
    requires: dict[str, re.Pattern[str]]
    python_loads: dict[str, re.Pattern[bytes]]


@functools.cache
def markers() -> _Markers:
    """The vendor markers of ``rules/data/native.toml``."""
    from migrator.knowledge.tables import load_table

    table: dict[str, Any] = load_table("native")
    vendors = ("cuda", "rocm")
    return _Markers(
        {v: tuple(table["libraries"][v]) for v in vendors},
        {v: frozenset(table["sections"][v]) for v in vendors},
        {v: frozenset(table["machines"][v]) for v in vendors},
        {v: tuple(table["device_files"][v]) for v in vendors},
        {v: re.compile(table["requires"][v]) for v in vendors},
        {v: re.compile(table["python_loads"][v].encode()) for v in vendors},
    )


def _head(path: str) -> bytes:
    """The first ``PYTHON_BYTES`` of a regular file (empty for anything else)."""
    try:
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return b""
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            return b""
        return os.read(descriptor, PYTHON_BYTES)
    except OSError:
        return b""
    finally:
        os.close(descriptor)


def _library_vendor(name: str) -> str:
    for vendor, prefixes in markers().libraries.items():
        if name.startswith(prefixes):
            return vendor
    return ""


def _inside(env: Environment, site: Path, relative: str) -> Path | None:
    """The file ``relative`` of a distribution, or None when it lies (or links) outside the
    environment's site-packages folders."""
    if relative.startswith("/") or ".." in relative.split("/"):
        return None
    path = site / relative
    return path if env.contains(path) else None


def _elf_evidence(path: Path, relative: str, reading: Reading) -> None:
    try:
        facts = read_elf(str(path))
    except NotReadable as error:
        reading.unread.append(f"`{relative}`: {error}")
        return
    reading.native += 1
    found = markers()
    for needed in facts.needed:
        vendor = _library_vendor(needed)
        if vendor:
            getattr(reading, vendor).append(f"`{relative}` needs {needed}")
    for vendor in ("cuda", "rocm"):
        sections = sorted(facts.sections & found.sections[vendor])
        if sections:
            getattr(reading, vendor).append(
                f"`{relative}` embeds {vendor.upper() if vendor == 'cuda' else 'HIP'} device "
                f"code ({', '.join(sections)})"
            )
        if facts.machine in found.machines[vendor]:
            getattr(reading, vendor).append(f"`{relative}` is a device code object")


def read_distribution(dist: Distribution, env: Environment) -> Reading:
    """Read ``dist``'s files within the caps and say what its native code is built for."""
    found = markers()
    reading = Reading("pure-python")
    elf_files = python_files = 0
    loads: dict[str, list[str]] = {"cuda": [], "rocm": []}
    for relative in dist.files:
        lowered = relative.lower()
        path = _inside(env, dist.site, relative)
        if path is None:
            if _NATIVE.search(lowered) and ".." not in relative.split("/"):
                reading.unread.append(f"`{relative}` links out of the environment: not read")
            continue
        for vendor in ("cuda", "rocm"):
            if lowered.endswith(found.device_files[vendor]):
                getattr(reading, vendor).append(f"`{relative}` is a device code file")
        if lowered.endswith(".py") and python_files < MAX_PYTHON_FILES:
            python_files += 1
            head = _head(str(path))
            if not _LOADER.search(head):
                continue
            for vendor in ("cuda", "rocm"):
                match = found.python_loads[vendor].search(head)
                if match:
                    name = match.group(0).decode("ascii", "replace")
                    loads[vendor].append(f"`{relative}` loads {name} by name (ctypes)")
            continue
        native = _NATIVE.search(lowered) is not None or lowered.endswith((".cubin", ".hsaco"))
        if native and elf_files < MAX_ELF_FILES and is_elf(str(path)):
            elf_files += 1
            _elf_evidence(path, relative, reading)
        elif native and not lowered.endswith((".cubin", ".hsaco")):
            reading.native += 1  # a Mach-O or PE library: native, read no further
    if not reading.native:
        # a library named in Python code is how a package with no native code of its own
        # reaches the GPU; beside shared objects, the shared objects say what was built
        reading.cuda += loads["cuda"]
        reading.rocm += loads["rocm"]
    if elf_files >= MAX_ELF_FILES:
        reading.unread.append(f"more than {MAX_ELF_FILES} shared objects: the rest not read")
    for requirement in dist.requires:
        for vendor in ("cuda", "rocm"):
            if found.requires[vendor].search(requirement):
                getattr(reading, vendor).append(f"requires {requirement}")
    if reading.cuda and reading.rocm:
        reading.status = "cuda-and-rocm"
    elif reading.cuda:
        reading.status = "cuda-only"
    elif reading.rocm:
        reading.status = "rocm"
    elif reading.native:
        reading.status = "native-cpu"
    elif reading.unread:
        reading.status = "unknown"  # native code it could not read: not shown pure Python
    return reading
