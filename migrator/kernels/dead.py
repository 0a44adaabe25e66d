"""Kernel code the project defines but never uses: a macro or a function whose name occurs in
the project's C/C++/CUDA sources only where it is defined. Nothing compiles a use of it, so what
it holds (a 32-bit lane mask, a warp-size constant) changes nothing on ROCm.

Read statically from the sources' text: identifiers are counted once over every kernel file;
a name that token pasting (``name##_kernel``) could build is never taken for unused."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

#: ``#define NAME`` (object- or function-like).
_DEFINE = re.compile(rb"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)", re.MULTILINE)
#: The start of a function definition: a name, its parameter list, then the body's brace.
_FUNCTION = re.compile(
    rb"\b([A-Za-z_]\w*)\s*\((?:[^;{}()]|\([^;{}()]*\))*\)"
    # one comment at a time: a lazy ``/\*.*?\*/`` stretched over every later ``*/`` of a header
    # of documented declarations (600 KB of cuda_runtime_api.h: minutes)
    rb"(?:\s|//[^\n]*\n|/\*(?:[^*]|\*+[^*/])*\*+/)*(?:const\s*)?(?:noexcept\s*)?\{",
    re.DOTALL,
)
#: Words before a function's name that keep an unused definition out of the object code: a
#: template is compiled only where instantiated, an inline or internal function only where used.
_NOT_EMITTED = re.compile(rb"\b(?:template|inline|__inline__|__forceinline__|static)\b")
_IDENTIFIER = re.compile(rb"[A-Za-z_]\w*")
#: Python that loads compiled kernels by their name (the name is a string there, not a use the
#: C/C++ sources show).
_LOADS_BY_NAME = re.compile(
    r"RawModule|RawKernel|ElementwiseKernel|get_function|load_inline|nvrtc|cuModuleGetFunction"
    r"|ctypes"
)
_PASTE = re.compile(rb"(\w*)\s*##\s*(\w*)")
_KEYWORDS = frozenset(
    {b"if", b"for", b"while", b"switch", b"catch", b"return", b"sizeof", b"defined", b"main"}
)


@dataclass(frozen=True, slots=True)
class DeadSpan:
    """Lines ``first``..``last`` (1-based) of one file: the definition of ``name``."""

    name: str
    first: int
    last: int
    #: Whether the compiler still emits it (a plain function or kernel: its code is built, so
    #: assembly in it must assemble for AMD, though nothing runs it); a macro, template, inline
    #: or static function is not.
    emitted: bool = False


def dead_definitions(
    files: Mapping[str, bytes], other_texts: Iterable[str] = ()
) -> dict[str, tuple[DeadSpan, ...]]:
    """For each kernel file, the definitions in it whose name nothing in ``files`` uses, nor
    any of ``other_texts`` that loads kernels by name names (the project's Python: a kernel a
    ``RawModule`` or ``load_inline(functions=[...])`` loads is used)."""
    counts: Counter[bytes] = Counter()
    fragments: set[bytes] = set()
    defined: Counter[bytes] = Counter()
    starts: dict[str, list[tuple[bytes, re.Match[bytes]]]] = {}
    for relative, data in files.items():
        counts.update(_IDENTIFIER.findall(data))
        if b"##" in data:
            for left, right in _PASTE.findall(data):
                fragments.update(part for part in (left, right) if len(part) > 1)
        for name, match in _definition_starts(data):
            defined[name] += 1
            starts.setdefault(relative, []).append((name, match))
    unused = {
        name
        for name, times in defined.items()
        if counts[name] == times and not _pasted(name, fragments)
    }
    if unused:  # a kernel the project's Python loads by name (NVRTC, cupy, ctypes) is used
        python = "\n".join(text for text in other_texts if _LOADS_BY_NAME.search(text))
        unused = {
            name
            for name in unused
            if name.decode("ascii", "replace") not in python
            or not re.search(rf"\b{re.escape(name.decode('ascii', 'replace'))}\b", python)
        }
    out: dict[str, tuple[DeadSpan, ...]] = {}
    for relative, found in starts.items():
        data = files[relative]
        dead = tuple(
            DeadSpan(
                name.decode("ascii", "replace"),
                data.count(b"\n", 0, span[0]) + 1,
                data.count(b"\n", 0, span[1]) + 1,
                span[2],
            )
            for name, match in found
            if name in unused and (span := _span(data, match)) is not None
        )
        if dead:
            out[relative] = dead
    return out


def _pasted(name: bytes, fragments: Iterable[bytes]) -> bool:
    """Whether token pasting could build ``name`` (it starts or ends with a pasted part)."""
    return any(name.startswith(part) or name.endswith(part) for part in fragments)


def _definition_starts(data: bytes) -> list[tuple[bytes, re.Match[bytes]]]:
    """The name and match of each macro and function definition of one file (cheap: the
    extent of a definition is found only for the names that turn out unused)."""
    out = [(match.group(1), match) for match in _DEFINE.finditer(data)]
    for match in _FUNCTION.finditer(data):
        name = match.group(1)
        if name not in _KEYWORDS and not _in_directive(data, match.start()):
            out.append((name, match))
    return out


def _span(data: bytes, match: re.Match[bytes]) -> tuple[int, int, bool] | None:
    """``(start, end, emitted)`` of the definition ``match`` begins; None when its body never
    closes."""
    if match.re is _DEFINE:
        end = match.end()
        while True:  # a definition continued with backslashes
            newline = data.find(b"\n", end)
            if newline < 0:
                return match.start(), len(data), False
            if data[newline - 1 : newline] == b"\\" or data[newline - 2 : newline] == b"\\\r":
                end = newline + 1
                continue
            return match.start(), newline, False
    close = _closing_brace(data, match.end() - 1)
    if close is None:
        return None
    head = data[_declaration_start(data, match.start()) : match.start()]
    return match.start(), close, not _NOT_EMITTED.search(head)


def _declaration_start(data: bytes, offset: int) -> int:
    """Where the declaration ending in a function's name begins: after the previous ``;``,
    ``}`` or ``{``, or the previous preprocessor line."""
    start = max(data.rfind(mark, 0, offset) for mark in (b";", b"}", b"{")) + 1
    directive = data.rfind(b"\n#", start, offset)
    if directive >= 0:
        start = data.find(b"\n", directive + 1) + 1 or offset
    return start


def _in_directive(data: bytes, offset: int) -> bool:
    line_start = data.rfind(b"\n", 0, offset) + 1
    return data[line_start:offset].lstrip().startswith(b"#")


def _closing_brace(data: bytes, opening: int) -> int | None:
    """The offset of the brace that closes the one at ``opening`` (comments and string literals
    skipped); None when the file ends first."""
    depth = 0
    index = opening
    size = len(data)
    while index < size:
        char = data[index]
        if char == 0x7B:  # {
            depth += 1
        elif char == 0x7D:  # }
            depth -= 1
            if depth == 0:
                return index
        elif char == 0x2F and data[index + 1 : index + 2] == b"/":  # // comment
            newline = data.find(b"\n", index)
            index = size if newline < 0 else newline
            continue
        elif char == 0x2F and data[index + 1 : index + 2] == b"*":  # /* comment */
            close = data.find(b"*/", index + 2)
            index = size if close < 0 else close + 2
            continue
        elif char in (0x22, 0x27):  # a string or character literal
            index += 1
            while index < size and data[index] != char:
                index += 2 if data[index] == 0x5C else 1
        index += 1
    return None


__all__ = ["DeadSpan", "dead_definitions"]
