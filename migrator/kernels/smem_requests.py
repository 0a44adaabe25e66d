"""Dynamic shared-memory requests of a CUDA source: every ``cudaFuncSetAttribute(kernel,
cudaFuncAttributeMaxDynamicSharedMemorySize, bytes)`` call, in code or in a macro body, with the
byte count read from the text as the compiler would see it at that point.

The size is often not a literal: a local constant (``int shared = 16 * (2 * 256 * 8 + 32 * 9);``),
a file-level constant (``const int SHARED_MEM = 96 * 1024;``) or a ``constexpr`` computed inside a
launch macro from constants each expansion site defines (``constexpr int CTA_M = 128; ...
KERNEL_LAUNCH_CODE``). A name takes the value of its last definition before the point of use; a
call inside a macro body is read at each place the macro is expanded, and the largest size wins.
Template parameters and run-time values are not known: such a request has no size (None)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

#: A call setting a function attribute (``cudaFuncSetAttribute``, ``hipFuncSetAttribute``).
_CALL = re.compile(r"\b\w*FuncSetAttribute\s*\(")
#: ``#define NAME`` (object-like or function-like), its body running over continuation lines.
_DEFINE = re.compile(r"(?m)^[ \t]*#[ \t]*define[ \t]+(\w+)(\([^)\n]*\))?")
#: Types (and qualifiers) a size constant is declared with.
_DECL = (
    r"(?:\b(?:static|const|constexpr|inline|unsigned|signed|long|short|int|size_t|uint32_t|"
    r"int32_t|uint64_t|int64_t|auto|std::size_t)\s+)+"
)
#: At most this many expansion sites of one macro are read.
_MAX_SITES = 64
#: Longest argument list read (bytes).
_MAX_ARGUMENTS = 2000


@dataclass(frozen=True, slots=True)
class SmemRequest:
    """One dynamic shared-memory request: where the call is, the size in bytes (None when not
    known) and where that size is chosen (the size constant's own definition, when it is a
    statement of its own outside any macro; else the call)."""

    call_start: int
    call_end: int
    size: int | None
    anchor_start: int
    anchor_end: int


def requests(
    data: bytes, evaluate: Callable[[str, Callable[[str], str | None]], int | None]
) -> list[SmemRequest]:
    """The dynamic shared-memory requests of ``data``; ``evaluate(expression, lookup)`` computes an
    expression, ``lookup(name)`` giving the text a name stands for."""
    # one byte per character and continuation lines joined in place: offsets stay byte offsets
    text = data.decode("latin-1").replace("\\\n", "  ").replace("\\\r\n", "   ")
    macros = list(_macro_spans(text))
    found: list[SmemRequest] = []
    for match in _CALL.finditer(text):
        arguments, end = _arguments(text, match.end())
        # the kernel may be a template instance whose commas split it: the last two arguments
        if arguments is None or len(arguments) < 3:
            continue
        if not arguments[-2].strip().endswith("MaxDynamicSharedMemorySize"):
            continue
        size_text = arguments[-1].strip()
        macro = next((m for m in macros if m[1] <= match.start() < m[2]), None)
        contexts = [match.start()] if macro is None else list(_expansions(text, macro))
        sizes: list[int] = []
        for point in contexts:
            prefix = (
                text[:point]
                if macro is None
                else text[:point] + "\n" + text[macro[1] : match.start()]
            )
            size = evaluate(size_text, _lookup(prefix, text))
            if size is not None:
                sizes.append(size)
        size = max(sizes) if sizes else None
        anchor = _definition(text, size_text, match.start(), macros)
        start, stop = anchor if anchor is not None else (match.start(), end)
        found.append(SmemRequest(match.start(), end, size, start, stop))
    return found


def _arguments(text: str, start: int) -> tuple[list[str] | None, int]:
    """The top-level comma-separated arguments after an opening parenthesis at ``start - 1``."""
    depth, position, pieces, piece_start = 0, start, [], start
    limit = min(len(text), start + _MAX_ARGUMENTS)
    while position < limit:
        char = text[position]
        if char in "([{":
            depth += 1
        elif char in ")]}":
            if depth == 0:
                pieces.append(text[piece_start:position])
                return pieces, position + 1
            depth -= 1
        elif char == "," and depth == 0:
            pieces.append(text[piece_start:position])
            piece_start = position + 1
        elif char == ";":
            return None, position
        position += 1
    return None, position


def _macro_spans(text: str) -> Iterator[tuple[str, int, int]]:
    """(name, body start, body end) of each ``#define`` (continuations already joined)."""
    for match in _DEFINE.finditer(text):
        end = text.find("\n", match.end())
        yield match.group(1), match.end(), len(text) if end < 0 else end


def _expansions(text: str, macro: tuple[str, int, int]) -> Iterator[int]:
    """Where the macro ``macro`` is used outside its own definition (at most ``_MAX_SITES``)."""
    name, body_start, body_end = macro
    count = 0
    for use in re.finditer(rf"\b{re.escape(name)}\b", text):
        if body_start - len(name) - 16 <= use.start() < body_end:
            continue  # the definition itself
        line_start = text.rfind("\n", 0, use.start()) + 1
        if re.match(r"[ \t]*#", text[line_start : use.start()]):
            continue  # another directive naming it (#ifdef, #undef)
        yield use.start()
        count += 1
        if count >= _MAX_SITES:
            return


def _lookup(prefix: str, text: str) -> Callable[[str], str | None]:
    """A name's text at the end of ``prefix``: its last constant definition there, else its
    ``#define`` in the file."""

    def find(name: str) -> str | None:
        statement = _last(
            re.finditer(rf"{_DECL}{re.escape(name)}\s*=\s*([^;{{}}]{{1,400}});", prefix)
        )
        if statement is not None:
            return statement.group(1)
        define = re.search(
            rf"(?m)^[ \t]*#[ \t]*define[ \t]+{re.escape(name)}[ \t]+([^\n]{{1,400}})", text
        )
        return None if define is None else re.sub(r"//.*|/\*.*?\*/", "", define.group(1)).strip()

    return find


def _definition(
    text: str, size_text: str, before: int, macros: list[tuple[str, int, int]]
) -> tuple[int, int] | None:
    """The span of the statement defining a bare size name (its last definition before the call),
    when it is a statement of its own outside any macro body."""
    if not re.fullmatch(r"[A-Za-z_]\w*", size_text):
        return None
    pattern = rf"{_DECL}{re.escape(size_text)}\s*=\s*[^;{{}}]{{1,400}};"
    statement = _last(re.finditer(pattern, text[:before]))
    if statement is None or any(m[1] <= statement.start() < m[2] for m in macros):
        return None
    return statement.start(), statement.end()


def _last(matches: Iterator[re.Match[str]]) -> re.Match[str] | None:
    """The last of ``matches``, or None."""
    found = None
    for found in matches:  # noqa: B007 - the last one is wanted
        pass
    return found


__all__ = ["SmemRequest", "requests"]
