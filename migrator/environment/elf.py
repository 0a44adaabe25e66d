"""What an ELF file says about the GPU code it carries, read with pyelftools (never ``ldd``, which
may run the file's code): the libraries its dynamic section needs (``DT_NEEDED``), its section
names (fat binaries of device code) and its machine (a device code object)."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass

#: ELF files larger than this are not read (pyelftools reads only headers, but a file this large
#: in a site-packages folder is not one we need to see twice).
MAX_ELF_BYTES = 4 << 30
#: At most this many dynamic tags and sections are read per file.
MAX_ENTRIES = 65536
_MAGIC = b"\x7fELF"


@dataclass(frozen=True, slots=True)
class ElfFacts:
    """The libraries an ELF file needs, its section names and its ``e_machine`` number."""

    needed: tuple[str, ...]
    sections: frozenset[str]
    machine: int


class NotReadable(Exception):
    """A file that looks like ELF but could not be read (its one-line reason)."""


def is_elf(path: str) -> bool:
    """Whether ``path`` is a regular file that starts with the ELF magic number."""
    try:
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return False
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            return False
        return os.read(descriptor, 4) == _MAGIC
    except OSError:
        return False
    finally:
        os.close(descriptor)


def read_elf(path: str) -> ElfFacts:
    """The facts of the ELF file at ``path`` (a regular file, checked again on open)."""
    from elftools.elf.dynamic import DynamicSection
    from elftools.elf.elffile import ELFFile

    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed below
    except OSError as error:
        raise NotReadable(f"cannot read: {error.strerror}") from None
    try:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise NotReadable("not a regular file")
        if info.st_size > MAX_ELF_BYTES:
            raise NotReadable(f"larger than {MAX_ELF_BYTES >> 30} GiB: not read")
        elf = ELFFile(handle)
        machine = elf["e_machine"]
        number = machine if isinstance(machine, int) else _machine_number(str(machine))
        sections: set[str] = set()
        needed: list[str] = []
        for count, section in enumerate(elf.iter_sections()):
            if count >= MAX_ENTRIES:
                break
            sections.add(section.name)
            if isinstance(section, DynamicSection):
                for position, tag in enumerate(section.iter_tags()):
                    if position >= MAX_ENTRIES:
                        break
                    if tag.entry.d_tag == "DT_NEEDED":
                        needed.append(str(getattr(tag, "needed", "")))
        return ElfFacts(tuple(needed), frozenset(sections), number)
    except NotReadable:
        raise
    except Exception as error:  # pyelftools raises many kinds on a malformed file
        raise NotReadable(f"not a readable ELF file ({type(error).__name__})") from None
    finally:
        handle.close()


def _machine_number(name: str) -> int:
    """pyelftools names machines (``EM_CUDA``); the tables use the numbers."""
    from elftools.elf.enums import ENUM_E_MACHINE

    value = ENUM_E_MACHINE.get(name)
    return value if isinstance(value, int) else -1
