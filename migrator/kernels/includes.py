"""Which translation units the compile check may hand to the compiler: a unit whose includes
(its own and, transitively, those of the project headers it includes) could make the compiler
read a file outside the project is not compiled, since clang quotes what it reads in its
diagnostics and the report would carry a runner's files.

Read lexically and conservatively, never by running a preprocessor: every ``#include``,
``#include_next``, ``#import``, ``#embed`` and ``__has_include`` line of the file (comments removed, lines
spliced, digraphs and trigraphs read as ``#``, and also as the raw text shows it), resolved as
clang searches (the includer's folder for a quoted name, then each ``-I`` folder). A unit is
refused when a name is an absolute path; when any folder searched holds the name and it resolves
(after symlinks, and lexically) outside the private copy and the tool's own include folders;
when the project's own tree holds the name as a link that leaves the project; when a name found
in no known folder climbs with ``..`` (clang would try its system folders with it); when a
computed include (``#include MACRO``) does not resolve to a literal name through the object-like
macros of the files read; and when inline assembly uses ``.include`` or ``.incbin``."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from migrator.files.sources import read_project_bytes
from migrator.kernels.source import MAX_SOURCE_BYTES

#: Project files one unit may pull in before the check gives up (a unit is then not compiled).
MAX_FILES_PER_UNIT = 5000
#: Macro definitions followed from a computed include to its literal name.
_MAX_MACRO_DEPTH = 8
#: Blanks of a directive line, block comments on the line included (``#/**/include``).
_BLANK = r"(?:[ \t\f\v]|/\*(?:[^*\n]|\*+[^*/\n])*\*+/)*"
_DIRECTIVE = re.compile(
    rf"^{_BLANK}(?:#|%:){_BLANK}(?P<kind>include_next|include|import|embed)\b{_BLANK}(?P<rest>.*)$",
    re.M,
)
_HAS_INCLUDE = re.compile(
    r"__has_(?:include|include_next|embed)\s*\(\s*(?P<rest>\"[^\"\n]*\"|<[^>\n]*>)"
)
_DEFINE = re.compile(
    rf"^{_BLANK}(?:#|%:){_BLANK}define{_BLANK}(?P<name>[A-Za-z_]\w*)\b(?!\()(?P<value>.*)$", re.M
)
_LITERAL = re.compile(r"^(?:\"(?P<quoted>[^\"\n]*)\"|<(?P<angled>[^>\n]*)>)")
_NAME = re.compile(r"^[A-Za-z_]\w*")
_SPLICE = re.compile(r"\\[ \t\f\v]*\r?\n")
#: An assembler directive that reads a file (``asm(".incbin \\"/etc/passwd\\"")``); a method
#: called ``include`` is not one.
_ASM_INCLUDE = re.compile(r"\.inc(?:lude|bin)\b(?!\s*\()")
_RAW_STRING = re.compile(r'(?:u8|[uUL])?R"(?P<delimiter>[^()\\\s"]{0,16})\(')
_NUMBER_START = re.compile(r"[0-9]|\.[0-9]")


@dataclass(frozen=True, slots=True)
class _Include:
    """One include a file names: the name, whether it is quoted, and for a computed one the
    macro that names it (``name`` is then the macro's name)."""

    name: str
    quoted: bool
    macro: bool = False
    probe: bool = False  # __has_include: only tested for existence, never read


@dataclass(slots=True)
class _FileIncludes:
    includes: list[_Include] = field(default_factory=list)
    defines: dict[str, list[str]] = field(default_factory=dict)
    asm_include: bool = False


#: Outcomes of looking a name up in one folder (a real path otherwise, or ``!`` and a reason).
_ABSENT = ""
_NOT_A_FILE = "\0"


class _Refused(Exception):
    """The unit may not be compiled; the message is the one-line reason."""


def logical_views(text: str) -> list[str]:
    """The file as the preprocessor may read it: lines spliced, trigraphs and comments removed;
    and as it stands with lines spliced only. Both are searched, so that a lexing difference
    between this reading and clang's never hides a directive."""
    raw = _SPLICE.sub("", text.replace("\r\n", "\n"))
    cooked = text.replace("??=", "#").replace("??/", "\\").replace("\r\n", "\n")
    cooked = _without_comments(_SPLICE.sub("", cooked))
    return [cooked, raw]


def _without_comments(text: str) -> str:
    """``text`` with each comment replaced by one space (newlines of block comments kept);
    string, raw string and character literals are skipped whole and a digit separator
    (``1'000``) is not a quote, as the preprocessor reads them."""
    out: list[str] = []
    index, length = 0, len(text)
    while index < length:
        char = text[index]
        if char == "/" and text.startswith("//", index):
            end = text.find("\n", index)
            index = length if end < 0 else end
            out.append(" ")
        elif char == "/" and text.startswith("/*", index):
            end = text.find("*/", index + 2)
            stop = length if end < 0 else end + 2
            out.append(" " + "\n" * text.count("\n", index, stop))
            index = stop
        elif char == '"' and (raw := _raw_string_at(text, index)) is not None:
            out.append(text[index:raw])
            index = raw
        elif char == "'" and _in_number(text, index):
            out.append(char)
            index += 1
        elif char in "\"'":
            end = index + 1
            while end < length and text[end] not in (char, "\n"):
                end += 2 if text[end] == "\\" else 1
            out.append(text[index : end + 1])
            index = end + 1
        else:
            out.append(char)
            index += 1
    return "".join(out)


def _raw_string_at(text: str, quote: int) -> int | None:
    """Where the raw string literal whose opening quote is at ``quote`` ends, or None when
    the quote does not open one (``R"x(...)x"``, ``u8R"(...)"``)."""
    if quote == 0 or text[quote - 1] != "R":
        return None
    start = quote - 1
    if text.startswith("u8", start - 2):
        start -= 2
    elif start > 0 and text[start - 1] in "uUL":
        start -= 1
    if start > 0 and (text[start - 1].isalnum() or text[start - 1] == "_"):
        return None
    match = _RAW_STRING.match(text, start)
    if match is None:
        return None
    closing = text.find(")" + match.group("delimiter") + '"', match.end())
    return len(text) if closing < 0 else closing + len(match.group("delimiter")) + 2


def _in_number(text: str, quote: int) -> bool:
    """Whether the ``'`` at ``quote`` separates digits of a number (``1'000``, ``0x1'f``)."""
    start = quote
    while start > 0 and (text[start - 1].isalnum() or text[start - 1] in "_.'"):
        start -= 1
    return start < quote and _NUMBER_START.match(text, start) is not None


def file_includes(text: str) -> _FileIncludes:
    """Every include, ``__has_include`` probe and object-like macro definition of one file."""
    found = _FileIncludes()
    seen: set[_Include] = set()
    for view in logical_views(text):
        for match in _DIRECTIVE.finditer(view):
            include = _parse_argument(match.group("rest"))
            if match.group("kind") == "embed":  # its bytes become data: never read as source
                include = _Include(include.name, include.quoted, include.macro, probe=True)
            if include not in seen:
                seen.add(include)
                found.includes.append(include)
        for match in _HAS_INCLUDE.finditer(view):
            probe = _parse_argument(match.group("rest"))
            probe = _Include(probe.name, probe.quoted, probe.macro, probe=True)
            if probe not in seen:
                seen.add(probe)
                found.includes.append(probe)
        for match in _DEFINE.finditer(view):
            values = found.defines.setdefault(match.group("name"), [])
            value = match.group("value").strip()
            if value not in values:
                values.append(value)
        if _ASM_INCLUDE.search(view):
            found.asm_include = True
    return found


def _parse_argument(rest: str) -> _Include:
    """The include an ``#include`` line's argument names (a macro's name when computed)."""
    literal = _LITERAL.match(rest.strip())
    if literal is not None:
        quoted = literal.group("quoted")
        if quoted is not None:
            return _Include(quoted, True)
        return _Include(literal.group("angled") or "", False)
    name = _NAME.match(rest.strip())
    return _Include(name.group(0) if name else rest.strip()[:60], False, macro=True)


def _within(path: str, roots: Iterable[str]) -> bool:
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)


def _climbs(name: str) -> bool:
    normal = os.path.normpath(name)
    return normal == ".." or normal.startswith("../")


def _shown(name: str) -> str:
    return name if len(name) <= 120 else name[:117] + "..."


class IncludeCheck:
    """The include check of one compile run: the private copy's ``source_dir`` (a mirror of the
    project ``root``), the ``-I`` folders in the compiler's order, and ``allowed``: folders the
    compiler may read from (the copy's work folder, the tool's own headers)."""

    def __init__(
        self, root: Path, source_dir: Path, search: Sequence[Path], allowed: Sequence[Path]
    ) -> None:
        # every folder as the kernel names it (a symlinked temporary folder, as on macOS)
        self.root = os.path.realpath(root)
        self.source_dir = os.path.realpath(source_dir)
        self.search = [os.path.realpath(folder) for folder in search]
        self.allowed = sorted(
            {os.path.realpath(folder) for folder in allowed}
            | {os.path.normpath(os.path.abspath(folder)) for folder in allowed}
        )
        self._files: dict[str, _FileIncludes] = {}
        self._looked: dict[tuple[str, str], str] = {}

    def reason(self, unit: Path) -> str | None:
        """Why the unit at ``unit`` (a file of the copy) must not be compiled, or None."""
        try:
            self._check(os.path.realpath(unit))
        except _Refused as refused:
            return f"not compiled: {refused}"
        return None

    def _read(self, path: str) -> _FileIncludes:
        cached = self._files.get(path)
        if cached is None:
            data = read_project_bytes(path, MAX_SOURCE_BYTES)
            text = "" if data is None else data.decode("utf-8", "surrogateescape")
            cached = self._files[path] = file_includes(text)
        return cached

    def _check(self, unit: str) -> None:
        queue, seen = [unit], {unit}
        computed: list[tuple[str, _Include]] = []
        defines: dict[str, list[str]] = {}
        while queue or computed:
            while queue:
                current = queue.pop()
                if len(seen) > MAX_FILES_PER_UNIT:
                    raise _Refused(f"includes more than {MAX_FILES_PER_UNIT} project files")
                read = self._read(current)
                if read.asm_include:
                    raise _Refused("inline assembly includes a file (.include or .incbin)")
                for name, values in read.defines.items():
                    defines.setdefault(name, []).extend(values)
                for include in read.includes:
                    if include.macro:
                        computed.append((current, include))
                        continue
                    found = self._resolve(current, include)
                    if found is not None and not include.probe and found not in seen:
                        seen.add(found)
                        queue.append(found)
            pending, computed = computed, []
            for includer, include in pending:
                for literal in _expand(include.name, defines):
                    if include.probe:
                        literal = _Include(literal.name, literal.quoted, probe=True)
                    found = self._resolve(includer, literal)
                    if found is not None and not literal.probe and found not in seen:
                        seen.add(found)
                        queue.append(found)

    def _resolve(self, includer: str, include: _Include) -> str | None:
        """The copy's file the include reads (to be read in turn), or None when it reads one
        of the tool's own headers or a system header; _Refused when it may read outside."""
        name = include.name
        if not name or os.path.isabs(name) or "\0" in name:
            raise _Refused(f"includes a file outside the project ({_shown(name)})")
        folders = ([os.path.dirname(includer)] if include.quoted else []) + self.search
        found: str | None = None
        anywhere = False
        for folder in folders:
            outcome = self._look(folder, name)
            if outcome == _ABSENT:
                continue
            if outcome.startswith("!"):
                raise _Refused(outcome[1:])
            anywhere = True
            if found is None and outcome != _NOT_A_FILE:
                found = outcome
        if not anywhere and _climbs(name):
            # clang goes on to its system folders, from which the name climbs out
            twin = os.path.join(self._twin(os.path.dirname(includer)) or self.root, name)
            if os.path.isfile(twin):
                raise _Refused(f"includes a project file the check does not copy ({_shown(name)})")
            raise _Refused(
                "includes a file the project does not have, by a name that climbs out of the "
                f"compiler's folders ({_shown(name)})"
            )
        return found if found and _within(found, [self.source_dir]) else None

    def _look(self, folder: str, name: str) -> str:
        """What clang finds for ``name`` in ``folder``: ``_ABSENT``, ``_NOT_A_FILE``, the
        file's real path, or ``!`` and the reason it may not be read (remembered)."""
        key = (folder, name)
        known = self._looked.get(key)
        if known is None:
            known = self._looked[key] = self._outcome(folder, name)
        return known

    def _outcome(self, folder: str, name: str) -> str:
        outside = f"!includes a file outside the project ({_shown(name)})"
        twin_folder = self._twin(folder)
        if twin_folder is not None:
            # the project's own tree: a symlink the copy left out, or ``..`` past the root
            twin = os.path.join(twin_folder, name)
            if os.path.exists(twin) and not _within(os.path.realpath(twin), [self.root]):
                return outside
        candidate = os.path.join(folder, name)
        lexical = os.path.normpath(candidate)
        # the kernel resolves ``..`` after links; a compiler may drop it lexically first
        if not (os.path.exists(candidate) or os.path.exists(lexical)):
            return _ABSENT
        real = os.path.realpath(candidate)
        if not (_within(real, self.allowed) and _within(lexical, self.allowed)):
            return outside
        return real if os.path.isfile(real) else _NOT_A_FILE

    def _twin(self, folder: str) -> str | None:
        """The project folder a folder of the copy mirrors, or None."""
        if not _within(folder, [self.source_dir]):
            return None
        return os.path.normpath(os.path.join(self.root, os.path.relpath(folder, self.source_dir)))


def _expand(macro: str, defines: Mapping[str, list[str]], depth: int = 0) -> list[_Include]:
    """The literal names a computed include's macro may stand for; _Refused when one of its
    definitions is not a literal name or another such macro (or it has none)."""
    values = defines.get(macro)
    if not values or depth > _MAX_MACRO_DEPTH:
        raise _Refused(f"a computed include (#include {_shown(macro)}) cannot be checked")
    out: list[_Include] = []
    for value in values:
        literal = _LITERAL.fullmatch(value)
        if literal is not None:
            quoted = literal.group("quoted")
            out.append(
                _Include(quoted, True)
                if quoted is not None
                else _Include(literal.group("angled") or "", False)
            )
        elif _NAME.fullmatch(value):
            out.extend(_expand(value, defines, depth + 1))
        else:
            raise _Refused(f"a computed include (#include {_shown(macro)}) cannot be checked")
    return out


def unchecked_units(
    root: Path,
    source_dir: Path,
    units: Mapping[str, Path],
    search: Sequence[Path],
    allowed: Sequence[Path],
) -> dict[str, str]:
    """Units (project-relative name -> its file in the copy) the compile check must not
    compile, each with its one-line reason ("not compiled: includes a file outside the
    project (NAME)")."""
    check = IncludeCheck(root, source_dir, search, allowed)
    refused: dict[str, str] = {}
    for relative, path in units.items():
        reason = check.reason(path)
        if reason is not None:
            refused[relative] = reason
    return refused


__all__ = ["IncludeCheck", "MAX_FILES_PER_UNIT", "file_includes", "unchecked_units"]
