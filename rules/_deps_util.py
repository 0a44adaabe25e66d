"""Shared helpers of the dependency (ROC80x) and container (ROC86x) rules.

Requirement strings are found in every format that declares Python dependencies (requirements
files, ``pyproject.toml``, ``setup.cfg``, conda environment files, ``setup()`` calls in
``setup.py``) and in ``pip install`` commands of Dockerfiles, shell scripts and CI files. Each is
parsed into a :class:`Req` that knows where its name, extras and version specifier sit in the
file, so that a rule can rename a package, change its specifier or drop it while every other
character of the file (comments, markers, hashes, line continuations) stays as written.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import libcst as cst

from migrator.context import PythonContext, TextContext
from migrator.model import Applicability
from migrator.rule import PythonRule, TextRule
from migrator.ruledata import load_table


def packages() -> dict[str, Any]:
    return load_table("packages")


def normalize(name: str) -> str:
    """PEP 503 normalized project name."""
    return re.sub(r"[-_.]+", "-", name).lower()


# --------------------------------------------------------------------------------------------
# Versions and specifiers (a small PEP 440 subset: release numbers, the usual operators, ``.*``)

_VERSION_RE = re.compile(r"^\s*v?(\d+(?:\.\d+)*)")


def parse_version(text: str) -> tuple[int, ...] | None:
    """The release segment of a version (``2.3.1+cu121`` → ``(2, 3, 1)``), else None."""
    match = _VERSION_RE.match(text)
    if match is None:
        return None
    return tuple(int(part) for part in match.group(1).split("."))


def _cmp(left: tuple[int, ...], right: tuple[int, ...]) -> int:
    width = max(len(left), len(right))
    a = left + (0,) * (width - len(left))
    b = right + (0,) * (width - len(right))
    return (a > b) - (a < b)


_CLAUSE_RE = re.compile(r"^\s*(===|==|!=|~=|>=|<=|>|<)\s*(\S+?)\s*$")


def spec_admits(spec: str, version: str) -> bool | None:
    """Whether a PEP 440 specifier admits ``version``; None when the specifier is not understood."""
    spec = spec.strip().strip("()").strip()
    target = parse_version(version)
    if target is None:
        return None
    if not spec:
        return True
    for clause in spec.split(","):
        if not clause.strip():
            continue
        match = _CLAUSE_RE.match(clause)
        if match is None:
            return None
        op, text = match.groups()
        if "$" in text or "{" in text:
            return None
        wildcard = text.endswith(".*")
        bound = parse_version(text[:-2] if wildcard else text)
        if bound is None:
            return None
        if wildcard:
            head = target[: len(bound)] + (0,) * max(0, len(bound) - len(target))
            same = head == bound
            ok = same if op == "==" else not same if op == "!=" else None
            if ok is None:
                return None
        elif op in ("==", "==="):
            ok = _cmp(target, bound) == 0
        elif op == "!=":
            ok = _cmp(target, bound) != 0
        elif op == ">=":
            ok = _cmp(target, bound) >= 0
        elif op == "<=":
            ok = _cmp(target, bound) <= 0
        elif op == ">":
            ok = _cmp(target, bound) > 0
        elif op == "<":
            ok = _cmp(target, bound) < 0
        else:  # ~=
            if len(bound) < 2:
                return None
            prefix = bound[:-1]
            ok = _cmp(target, bound) >= 0 and target[: len(prefix)] == prefix
        if not ok:
            return False
    return True


def poetry_to_pep440(spec: str) -> str:
    """Poetry's ``^1.2``, ``~1.2``, bare ``1.2.3`` and ``*`` as a PEP 440 specifier."""
    out = []
    for clause in spec.split(","):
        clause = clause.strip()
        if not clause or clause == "*":
            continue
        if clause[0] in "^~" and not clause.startswith("~="):
            release = parse_version(clause[1:])
            if release is None:
                return clause
            if clause[0] == "^":
                index = next((i for i, part in enumerate(release) if part != 0), len(release) - 1)
            else:
                index = min(1, len(release) - 1) if len(release) > 1 else 0
            upper = list(release[: index + 1])
            upper[-1] += 1
            out.append(f">={'.'.join(map(str, release))},<{'.'.join(map(str, upper))}")
        elif clause[0].isdigit():
            out.append(f"=={clause}")
        else:
            out.append(clause)
    return ",".join(out)


# --------------------------------------------------------------------------------------------
# Environment markers: only the platform matters here (ROCm means Linux).

_MARKER_TOKEN = re.compile(
    r"\s*(?:(?P<lp>\()|(?P<rp>\))|(?P<op>===|==|!=|~=|>=|<=|<|>|not\s+in\b|in\b)"
    r"|(?P<kw>and\b|or\b)|(?P<str>'[^']*'|\"[^\"]*\")|(?P<name>[A-Za-z_][A-Za-z0-9_.]*))"
)
_LINUX = {"sys_platform": "linux", "platform_system": "Linux", "os_name": "posix"}


def marker_allows_linux(marker: str) -> bool:
    """False only when the marker certainly excludes Linux (``sys_platform == 'darwin'``)."""
    tokens: list[tuple[str, str]] = []
    position = 0
    while position < len(marker):
        match = _MARKER_TOKEN.match(marker, position)
        if match is None or match.end() == position:
            if marker[position:].strip():
                return True
            break
        position = match.end()
        kind = match.lastgroup or ""
        tokens.append((kind, match.group(kind)))

    index = 0

    def atom() -> bool | None:
        nonlocal index
        if index < len(tokens) and tokens[index][0] == "lp":
            index += 1
            value = disjunction()
            if index < len(tokens) and tokens[index][0] == "rp":
                index += 1
            return value
        if index + 2 >= len(tokens):
            index = len(tokens)
            return None
        left, op, right = tokens[index], tokens[index + 1], tokens[index + 2]
        index += 3
        if op[0] != "op":
            return None
        values = []
        for kind, text in (left, right):
            if kind == "str":
                values.append(text[1:-1])
            elif kind == "name" and text in _LINUX:
                values.append(_LINUX[text])
            else:
                return None
        operator = " ".join(op[1].split())
        if operator == "==":
            return values[0] == values[1]
        if operator == "!=":
            return values[0] != values[1]
        if operator == "in":
            return values[0] in values[1]
        if operator == "not in":
            return values[0] not in values[1]
        return None

    def conjunction() -> bool | None:
        nonlocal index
        value = atom()
        while index < len(tokens) and tokens[index] == ("kw", "and"):
            index += 1
            other = atom()
            if value is False or other is False:
                value = False
            elif value is None or other is None:
                value = None
        return value

    def disjunction() -> bool | None:
        nonlocal index
        value = conjunction()
        while index < len(tokens) and tokens[index] == ("kw", "or"):
            index += 1
            other = conjunction()
            if value is True or other is True:
                value = True
            elif value is None or other is None:
                value = None
        return value

    try:
        return disjunction() is not False
    except IndexError:
        return True


# --------------------------------------------------------------------------------------------
# Requirement strings


@dataclass(frozen=True, slots=True)
class ParsedRequirement:
    """A PEP 508 requirement string split into parts; spans are offsets into ``text``."""

    text: str
    name: str
    raw_name: str
    name_span: tuple[int, int]
    extras: tuple[str, ...]
    extras_span: tuple[int, int]  # empty span right after the name when there are no extras
    spec: str
    spec_span: tuple[int, int]
    marker: str
    url: str | None


_NAME_RE = re.compile(r"\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)")


def parse_requirement(text: str) -> ParsedRequirement | None:
    """Parse ``name[extras] spec ; marker`` or ``name[extras] @ url ; marker``; None otherwise."""
    match = _NAME_RE.match(text)
    if match is None:
        return None
    raw_name = match.group(1)
    name_span = match.span(1)
    position = match.end()
    rest = text[position:]
    if rest[:1] and not (rest[:1].isspace() or rest[:1] in "[(<>=!~;@,"):
        return None  # a path, a URL or something else
    extras: tuple[str, ...] = ()
    stripped = len(rest) - len(rest.lstrip())
    extras_span = (position, position)
    if rest.lstrip().startswith("["):
        start = position + stripped
        close = text.find("]", start)
        if close == -1:
            return None
        extras = tuple(
            normalize(part.strip()) for part in text[start + 1 : close].split(",") if part.strip()
        )
        extras_span = (start, close + 1)
        position = close + 1
    marker = ""
    semicolon = _marker_start(text, position)
    body_end = len(text) if semicolon is None else semicolon
    if semicolon is not None:
        marker = text[semicolon + 1 :].strip()
    body = text[position:body_end]
    url = None
    if body.lstrip().startswith("@"):
        url = body.strip()[1:].strip()
        spec_span = (position, position)
        spec = ""
    else:
        lead = len(body) - len(body.lstrip())
        trail = len(body.rstrip())
        spec_span = (position + lead, position + max(lead, trail))
        spec = text[spec_span[0] : spec_span[1]]
        if spec and not re.match(r"^\(?\s*(===|==|!=|~=|>=|<=|<|>)", spec):
            return None
    return ParsedRequirement(
        text=text,
        name=normalize(raw_name),
        raw_name=raw_name,
        name_span=name_span,
        extras=extras,
        extras_span=extras_span,
        spec=spec,
        spec_span=spec_span,
        marker=marker,
        url=url,
    )


def _marker_start(text: str, position: int) -> int | None:
    """Offset of the ``;`` that starts the marker (a URL requirement needs ``" ;"``)."""
    at = text.find("@", position)
    index = text.find(";", position)
    while index != -1:
        if at == -1 or at > index or text[index - 1 : index].isspace():
            return index
        index = text.find(";", index + 1)
    return None


# --------------------------------------------------------------------------------------------
# Requirements as found in a file


@dataclass(slots=True)
class Req:
    """One requirement found in a file.

    ``offset`` is where ``parsed.text`` starts in the file (None when the text cannot be edited in
    place, e.g. a string with escapes). ``remove`` is the span that drops the requirement with its
    line or array element (None when it cannot be dropped cleanly). Poetry tables keep the name in
    the key and the specifier in the value: ``name_span`` / ``spec_span`` then hold absolute
    spans and ``poetry`` is True.
    """

    parsed: ParsedRequirement
    # requirements | pyproject | poetry | setupcfg | conda | conda-pip | setup.py | command
    source: str
    offset: int | None
    remove: tuple[int, int] | None = None
    poetry_spans: tuple[tuple[int, int] | None, tuple[int, int] | None] | None = None
    node: cst.CSTNode | None = None  # setup.py: the string node
    element: cst.Element | None = None  # setup.py: the list element holding it
    container: cst.List | None = None  # setup.py: the list holding that element
    report_span: tuple[int, int] | None = None

    @property
    def name(self) -> str:
        return self.parsed.name

    @property
    def spec(self) -> str:
        if self.source == "poetry":
            return poetry_to_pep440(self.parsed.spec)
        return self.parsed.spec

    @property
    def on_linux(self) -> bool:
        return not self.parsed.marker or marker_allows_linux(self.parsed.marker)

    def span(self) -> tuple[int, int]:
        """The span a finding points at (the requirement text, or the poetry key)."""
        if self.report_span is not None:
            return self.report_span
        assert self.offset is not None
        return self.offset, self.offset + len(self.parsed.text.rstrip())


@dataclass(frozen=True, slots=True)
class Change:
    """What a rule wants done to a requirement: new name / extras / specifier text, or removal."""

    name: str | None = None
    extras: tuple[str, ...] | None = None
    spec: str | None = None
    remove: bool = False


def render(req: Req, change: Change) -> tuple[int, int, str] | None:
    """The text edit (relative to ``parsed.text``) that applies ``change``; None if unsupported."""
    parsed = req.parsed
    edits: list[tuple[int, int, str]] = []
    if change.name is not None:
        edits.append((*parsed.name_span, change.name))
    if change.extras is not None:
        start, end = parsed.extras_span
        edits.append((start, end, f"[{','.join(change.extras)}]" if change.extras else ""))
    if change.spec is not None:
        start, end = parsed.spec_span
        if start == end and parsed.url is not None:
            return None
        edits.append((start, end, change.spec))
    if not edits:
        return None
    edits.sort()
    # The edit starts at the name so that a finding points at the requirement, not its middle.
    start = min(edits[0][0], parsed.name_span[0])
    end = edits[-1][1]
    out = []
    cursor = start
    for s, e, new in edits:
        out.append(parsed.text[cursor:s])
        out.append(new)
        cursor = e
    return start, end, "".join(out)


# --------------------------------------------------------------------------------------------
# Line helpers


def line_bounds(text: str, offset: int) -> tuple[int, int]:
    """Start of the line holding ``offset`` and the offset after its newline."""
    start = text.rfind("\n", 0, offset) + 1
    end = text.find("\n", offset)
    return start, len(text) if end == -1 else end + 1


def comment_start(line: str) -> int:
    """Offset of a ``#`` comment in a line (start of line or after whitespace), else len(line)."""
    for match in re.finditer(r"#", line):
        index = match.start()
        if index == 0 or line[index - 1].isspace():
            return index
    return len(line)


# --------------------------------------------------------------------------------------------
# requirements.txt


@dataclass(frozen=True, slots=True)
class OptionValue:
    """A ``--index-url URL`` style option value found in a file, with its absolute span."""

    option: str
    value: str
    start: int
    end: int


def _logical_lines(text: str) -> Iterator[tuple[int, int, list[tuple[int, int]]]]:
    """(start, end, physical line spans without comments) for each ``\\``-continued line."""
    position = 0
    pieces: list[tuple[int, int]] = []
    first = 0
    while position < len(text):
        newline = text.find("\n", position)
        end = len(text) if newline == -1 else newline
        line = text[position:end]
        cut = comment_start(line)
        content_end = position + cut
        stripped = text[position:content_end].rstrip()
        if not pieces:
            first = position
        if stripped.endswith("\\") and cut == len(line):
            pieces.append((position, position + len(stripped) - 1))
            position = end + 1
            continue
        pieces.append((position, content_end))
        yield first, min(len(text), end + 1), pieces
        pieces = []
        position = end + 1
    if pieces:
        yield first, len(text), pieces


_REQ_OPTION = re.compile(r"^(-i|--index-url|--extra-index-url|-f|--find-links)(?:\s*=\s*|\s+)(\S+)")


def requirements_file(text: str) -> tuple[list[Req], list[OptionValue]]:
    """Requirements and index options of a requirements/constraints file."""
    reqs: list[Req] = []
    options: list[OptionValue] = []
    logical = list(_logical_lines(text))
    for number, (start, end, pieces) in enumerate(logical):
        # A continued line (``pkg \\`` + ``--hash=...``) is edited within its first line only.
        first_start, first_end = pieces[0]
        content = text[first_start:first_end]
        lead = len(content) - len(content.lstrip())
        body_start = first_start + lead
        body = content.strip()
        if not body:
            continue
        if body.startswith("-"):
            match = _REQ_OPTION.match(body)
            if match is not None:
                options.append(
                    OptionValue(
                        match.group(1),
                        match.group(2),
                        body_start + match.start(2),
                        body_start + match.end(2),
                    )
                )
            continue
        cut = re.search(r"\s--?[a-zA-Z]", body)
        requirement = body[: cut.start()] if cut else body
        parsed = parse_requirement(requirement.rstrip())
        if parsed is None:
            continue
        remove_end = end
        # pip-compile annotations ("    # via torch") that follow belong to this line.
        for later_start, later_end, _pieces in logical[number + 1 :]:
            line = text[later_start:later_end]
            if re.match(r"^[ \t]+#", line):
                remove_end = later_end
                continue
            break
        reqs.append(Req(parsed, "requirements", body_start, remove=(start, remove_end)))
    return reqs, options


# --------------------------------------------------------------------------------------------
# A small TOML scanner that keeps positions (pyproject.toml)


@dataclass(slots=True)
class TomlValue:
    start: int
    end: int
    kind: str  # string | array | table | other
    path: tuple[str, ...]
    string: str | None = None
    editable: bool = False  # string content maps 1:1 to the text between the quotes
    elements: list[TomlValue] = field(default_factory=list)
    commas: list[int | None] = field(default_factory=list)  # comma after each element
    key_span: tuple[int, int] | None = None
    entries: list[TomlValue] = field(default_factory=list)  # table members (inline tables)


class TomlScanner:
    """Walks a TOML document and records every key/value with its span and dotted path."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.values: list[TomlValue] = []

    def error(self) -> None:
        raise ValueError(f"TOML scan error at offset {self.pos}")

    def skip_ws(self, newlines: bool = False) -> None:
        text = self.text
        while self.pos < len(text):
            char = text[self.pos]
            if char in " \t\r" or (newlines and char == "\n"):
                self.pos += 1
            elif char == "#" and newlines:
                end = text.find("\n", self.pos)
                self.pos = len(text) if end == -1 else end
            else:
                break

    def scan(self) -> list[TomlValue]:
        table: tuple[str, ...] = ()
        text = self.text
        while True:
            self.skip_ws(newlines=True)
            if self.pos >= len(text):
                break
            if text[self.pos] == "[":
                double = text.startswith("[[", self.pos)
                self.pos += 2 if double else 1
                self.skip_ws()
                table = self.key()
                self.skip_ws()
                closing = "]]" if double else "]"
                if not text.startswith(closing, self.pos):
                    self.error()
                self.pos += len(closing)
                continue
            key_start = self.pos
            path = table + self.key()
            key_end = self.pos
            self.skip_ws()
            if not text.startswith("=", self.pos):
                self.error()
            self.pos += 1
            self.skip_ws()
            value = self.value(path)
            value.key_span = (key_start, key_end)
            self.values.append(value)
        return self.values

    def key(self) -> tuple[str, ...]:
        parts = []
        text = self.text
        while True:
            self.skip_ws()
            if self.pos < len(text) and text[self.pos] in "\"'":
                value = self.string(())
                parts.append(value.string or "")
            else:
                match = re.compile(r"[A-Za-z0-9_-]+").match(text, self.pos)
                if match is None:
                    self.error()
                    raise AssertionError
                parts.append(match.group())
                self.pos = match.end()
            self.skip_ws()
            if self.pos < len(text) and text[self.pos] == ".":
                self.pos += 1
                continue
            return tuple(parts)

    def string(self, path: tuple[str, ...]) -> TomlValue:
        text = self.text
        start = self.pos
        for quote in ('"""', "'''", '"', "'"):
            if text.startswith(quote, start):
                break
        content_start = start + len(quote)
        if len(quote) == 3:
            end = text.find(quote, content_start)
            if end == -1:
                self.error()
            while text.startswith(quote[0], end + 3):
                end += 1
            self.pos = end + 3
            raw = text[content_start:end]
            return TomlValue(start, self.pos, "string", path, string=raw, editable=False)
        index = content_start
        while index < len(text):
            char = text[index]
            if char == "\\" and quote == '"':
                index += 2
                continue
            if char == quote:
                break
            if char == "\n":
                self.error()
            index += 1
        else:
            self.error()
        raw = text[content_start:index]
        self.pos = index + 1
        value = raw
        editable = "\\" not in raw or quote == "'"
        if quote == '"' and "\\" in raw:
            try:
                value = raw.encode("latin-1", "backslashreplace").decode("unicode_escape")
            except UnicodeDecodeError:
                value = raw
        return TomlValue(start, self.pos, "string", path, string=value, editable=editable)

    def value(self, path: tuple[str, ...]) -> TomlValue:
        text = self.text
        if self.pos >= len(text):
            self.error()
        char = text[self.pos]
        if char in "\"'":
            return self.string(path)
        if char == "[":
            return self.array(path)
        if char == "{":
            return self.inline_table(path)
        match = re.compile(r"[^,\]\}\s#]+(?:[ T][0-9:.+-Z]+)?").match(text, self.pos)
        if match is None:
            self.error()
            raise AssertionError
        self.pos = match.end()
        return TomlValue(match.start(), match.end(), "other", path)

    def array(self, path: tuple[str, ...]) -> TomlValue:
        start = self.pos
        self.pos += 1
        node = TomlValue(start, start, "array", path)
        text = self.text
        while True:
            self.skip_ws(newlines=True)
            if self.pos >= len(text):
                self.error()
            if text[self.pos] == "]":
                self.pos += 1
                break
            element = self.value(path)
            node.elements.append(element)
            self.skip_ws(newlines=True)
            if self.pos < len(text) and text[self.pos] == ",":
                node.commas.append(self.pos)
                self.pos += 1
            else:
                node.commas.append(None)
        node.end = self.pos
        return node

    def inline_table(self, path: tuple[str, ...]) -> TomlValue:
        start = self.pos
        self.pos += 1
        node = TomlValue(start, start, "table", path)
        text = self.text
        while True:
            self.skip_ws(newlines=True)
            if self.pos >= len(text):
                self.error()
            if text[self.pos] == "}":
                self.pos += 1
                break
            if text[self.pos] == ",":
                self.pos += 1
                continue
            key_start = self.pos
            sub = path + self.key()
            key_end = self.pos
            self.skip_ws()
            if not text.startswith("=", self.pos):
                self.error()
            self.pos += 1
            self.skip_ws()
            member = self.value(sub)
            member.key_span = (key_start, key_end)
            node.entries.append(member)
        node.end = self.pos
        return node


def scan_toml(text: str) -> list[TomlValue] | None:
    try:
        return TomlScanner(text).scan()
    except (ValueError, IndexError, AssertionError):
        return None


def walk_toml(values: Sequence[TomlValue]) -> Iterator[TomlValue]:
    for value in values:
        yield value
        yield from walk_toml(value.elements)
        yield from walk_toml(value.entries)


def element_removal(text: str, array: TomlValue, index: int) -> tuple[int, int]:
    """The span that removes element ``index`` of a TOML array, keeping the rest as written."""
    element = array.elements[index]
    comma = array.commas[index]
    line_start, line_end = line_bounds(text, element.start)
    after = element.end if comma is None else comma + 1
    tail = text[after:line_end]
    alone_before = not text[line_start : element.start].strip()
    if alone_before and not tail[: comment_start(tail)].strip():
        # The element has its own line: drop the line (a trailing comma left on the previous
        # element is valid TOML).
        return line_start, line_end
    if comma is not None:
        end = comma + 1
        while end < len(text) and text[end] in " \t":
            end += 1
        return element.start, end
    if index > 0:
        previous = array.elements[index - 1]
        return previous.end, element.end
    return element.start, element.end


_REQ_ARRAYS = (
    ("project", "dependencies"),
    ("project", "optional-dependencies", "*"),
    ("dependency-groups", "*"),
    ("build-system", "requires"),
    ("tool", "uv", "dev-dependencies"),
    ("tool", "uv", "constraint-dependencies"),
    ("tool", "uv", "override-dependencies"),
    ("tool", "pdm", "dev-dependencies", "*"),
)


def _path_matches(path: tuple[str, ...], pattern: tuple[str, ...]) -> bool:
    return len(path) == len(pattern) and all(
        p == "*" or p == q for p, q in zip(pattern, path, strict=True)
    )


def _poetry_table(path: tuple[str, ...]) -> bool:
    return (
        _path_matches(path, ("tool", "poetry", "dependencies", "*"))
        or _path_matches(path, ("tool", "poetry", "dev-dependencies", "*"))
        or _path_matches(path, ("tool", "poetry", "group", "*", "dependencies", "*"))
    )


def pyproject_file(text: str) -> tuple[list[Req], list[TomlValue]]:
    """Requirements of a pyproject.toml and every string value (for index URLs)."""
    values = scan_toml(text)
    if values is None:
        return [], []
    reqs: list[Req] = []
    for value in values:
        if value.kind == "array" and any(_path_matches(value.path, p) for p in _REQ_ARRAYS):
            for index, element in enumerate(value.elements):
                if element.kind != "string" or element.string is None:
                    continue
                parsed = parse_requirement(element.string)
                if parsed is None:
                    continue
                offset = element.start + 1 if element.editable else None
                reqs.append(
                    Req(
                        parsed,
                        "pyproject",
                        offset,
                        remove=element_removal(text, value, index),
                        report_span=(element.start + 1, element.end - 1),
                    )
                )
        elif _poetry_table(value.path) and value.key_span is not None:
            name = value.path[-1]
            if normalize(name) == "python":
                continue
            spec_span = None
            spec = ""
            if value.kind == "string" and value.string is not None:
                spec = value.string
                if value.editable:
                    spec_span = (value.start + 1, value.end - 1)
            elif value.kind == "table":
                for entry in value.entries:
                    if entry.path[-1] == "version" and entry.kind == "string":
                        spec = entry.string or ""
                        if entry.editable:
                            spec_span = (entry.start + 1, entry.end - 1)
            key_text = text[value.key_span[0] : value.key_span[1]].rstrip()
            name_span = (
                (value.key_span[0], value.key_span[0] + len(key_text))
                if re.fullmatch(r"[A-Za-z0-9_.-]+", key_text)
                else None
            )
            parsed = ParsedRequirement(
                text=name,
                name=normalize(name),
                raw_name=name,
                name_span=(0, len(name)),
                extras=(),
                extras_span=(len(name), len(name)),
                spec=spec,
                spec_span=(0, 0),
                marker="",
                url=None,
            )
            line_start, line_end = line_bounds(text, value.key_span[0])
            single_line = text.find("\n", value.key_span[0], value.end) == -1
            reqs.append(
                Req(
                    parsed,
                    "poetry",
                    None,
                    remove=(line_start, line_end) if single_line else None,
                    poetry_spans=(name_span, spec_span),
                    report_span=(value.key_span[0], value.key_span[0] + len(key_text)),
                )
            )
    strings = [v for v in walk_toml(values) if v.kind == "string"]
    return reqs, strings


# --------------------------------------------------------------------------------------------
# setup.cfg

_CFG_KEYS = {"install_requires", "setup_requires", "tests_require"}


def setupcfg_file(text: str) -> list[Req]:
    reqs: list[Req] = []
    section = ""
    active = False
    position = 0
    for line in text.splitlines(keepends=True):
        start = position
        position += len(line)
        bare = line.rstrip("\r\n")
        stripped = bare.strip()
        if stripped.startswith("[") and stripped.endswith("]"):
            section = stripped[1:-1].strip().lower()
            active = False
            continue
        if not stripped or stripped.startswith(("#", ";")):
            continue
        value_offset = None
        if not bare[:1].isspace():
            key, sep, value = bare.partition("=")
            if not sep:
                key, sep, value = bare.partition(":")
            key = key.strip().lower()
            active = (section == "options" and key in _CFG_KEYS) or (
                section == "options.extras_require" and bool(sep)
            )
            if not active or not value.strip():
                continue
            value_offset = start + len(bare) - len(value) + (len(value) - len(value.lstrip()))
            content = value.strip()
            own_line = False
        else:
            if not active:
                continue
            value_offset = start + len(bare) - len(bare.lstrip())
            content = stripped
            own_line = True
        cut = comment_start(content)
        content = content[:cut].rstrip()
        parsed = parse_requirement(content)
        if parsed is None:
            continue
        remove = (start, position) if own_line else (value_offset, value_offset + len(content))
        reqs.append(Req(parsed, "setupcfg", value_offset, remove=remove))
    return reqs


# --------------------------------------------------------------------------------------------
# conda environment.yml


@dataclass(frozen=True, slots=True)
class CondaEntry:
    value: str
    start: int
    end: int
    editable: bool
    section: str  # dependencies | pip | channels


def conda_entries(text: str) -> list[CondaEntry]:
    import yaml

    try:
        root = yaml.compose(text)
    except yaml.YAMLError:
        return []
    if not isinstance(root, yaml.MappingNode):
        return []
    out: list[CondaEntry] = []

    def scalar(node: yaml.Node, section: str) -> None:
        if not isinstance(node, yaml.ScalarNode):
            return
        start, end = node.start_mark.index, node.end_mark.index
        raw = text[start:end]
        editable = node.style in (None, "") and raw == node.value
        if node.style in ("'", '"') and raw[1:-1] == node.value:
            start, end, editable = start + 1, end - 1, True
        out.append(CondaEntry(node.value, start, end, editable, section))

    for key, value in root.value:
        if not isinstance(key, yaml.ScalarNode) or not isinstance(value, yaml.SequenceNode):
            continue
        if key.value == "channels":
            for item in value.value:
                scalar(item, "channels")
        if key.value != "dependencies":
            continue
        for item in value.value:
            if isinstance(item, yaml.MappingNode):
                for sub_key, sub_value in item.value:
                    if (
                        isinstance(sub_key, yaml.ScalarNode)
                        and sub_key.value == "pip"
                        and isinstance(sub_value, yaml.SequenceNode)
                    ):
                        for pip_item in sub_value.value:
                            scalar(pip_item, "pip")
            else:
                scalar(item, "dependencies")
    return out


def _yaml_item_removal(text: str, start: int, end: int) -> tuple[int, int] | None:
    line_start, line_end = line_bounds(text, start)
    before = text[line_start:start]
    after = text[end:line_end]
    rest = after[: comment_start(after)].strip(" \t\r\n'\"")
    if re.fullmatch(r"\s*-\s*['\"]?", before) and not rest:
        return line_start, line_end
    return None


_CONDA_SPEC = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)")


def conda_file(text: str) -> tuple[list[Req], list[CondaEntry]]:
    reqs: list[Req] = []
    entries = conda_entries(text)
    for entry in entries:
        if entry.section == "pip":
            if entry.value.lstrip().startswith("-"):
                continue
            parsed = parse_requirement(entry.value)
            if parsed is None:
                continue
            reqs.append(
                Req(
                    parsed,
                    "conda-pip",
                    entry.start if entry.editable else None,
                    remove=_yaml_item_removal(text, entry.start, entry.end),
                    report_span=(entry.start, entry.end),
                )
            )
        elif entry.section == "dependencies":
            value = entry.value.split("::")[-1]
            match = _CONDA_SPEC.match(value)
            if match is None:
                continue
            name = match.group(1)
            parsed = ParsedRequirement(
                text=name,
                name=normalize(name),
                raw_name=name,
                name_span=(0, len(name)),
                extras=(),
                extras_span=(len(name), len(name)),
                spec=value[len(name) :].strip(),
                spec_span=(0, 0),
                marker="",
                url=None,
            )
            reqs.append(
                Req(
                    parsed,
                    "conda",
                    None,
                    remove=_yaml_item_removal(text, entry.start, entry.end),
                    report_span=(entry.start, entry.end),
                )
            )
    return reqs, entries


# --------------------------------------------------------------------------------------------
# setup.py: string literals reaching setup(install_requires=..., extras_require=...)

_SETUP_KEYWORDS = {"install_requires", "extras_require", "setup_requires", "tests_require"}
_SETUP_CALLS = {"setuptools.setup", "distutils.core.setup", "skbuild.setup"}


def is_setup_call(ctx: PythonContext, node: cst.Call) -> bool:
    return ctx.call_name(node) in _SETUP_CALLS


def _module_statements(body: Sequence[cst.CSTNode]) -> Iterator[cst.BaseSmallStatement]:
    for statement in body:
        if isinstance(statement, cst.SimpleStatementLine):
            yield from statement.body
        elif isinstance(statement, (cst.If, cst.Try, cst.With)):
            yield from _module_statements(statement.body.body)
            orelse = getattr(statement, "orelse", None)
            while orelse is not None:
                yield from _module_statements(orelse.body.body)
                orelse = getattr(orelse, "orelse", None)


def _assigned(module: cst.Module, name: str) -> list[cst.BaseExpression]:
    """Expressions assigned or added to ``name`` at module level (``x = [...]``, ``x[k] = [...]``,
    ``x += [...]``, ``x.append(...)``, ``x.extend(...)``)."""
    out: list[cst.BaseExpression] = []
    for small in _module_statements(module.body):
        if isinstance(small, cst.Assign):
            for target in small.targets:
                head: cst.BaseExpression = target.target
                if isinstance(head, cst.Subscript):
                    head = head.value
                if isinstance(head, cst.Name) and head.value == name:
                    out.append(small.value)
        elif isinstance(small, cst.AnnAssign) and small.value is not None:
            if isinstance(small.target, cst.Name) and small.target.value == name:
                out.append(small.value)
        elif isinstance(small, cst.AugAssign):
            if isinstance(small.target, cst.Name) and small.target.value == name:
                out.append(small.value)
        elif isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
            func = small.value.func
            if (
                isinstance(func, cst.Attribute)
                and isinstance(func.value, cst.Name)
                and func.value.value == name
                and func.attr.value in {"append", "extend"}
            ):
                out.extend(argument.value for argument in small.value.args)
    return out


Found = tuple[cst.SimpleString, "cst.Element | None", "cst.List | None"]


def setup_strings(module: cst.Module, call: cst.Call) -> list[Found]:
    """Requirement string literals reaching a ``setup()`` call, with their list element and list."""
    found: list[Found] = []
    seen: set[int] = set()
    names_seen: set[str] = set()

    def visit(
        expression: cst.BaseExpression,
        element: cst.Element | None,
        container: cst.List | None,
        depth: int,
    ) -> None:
        if depth > 6 or id(expression) in seen:
            return
        seen.add(id(expression))
        if isinstance(expression, cst.SimpleString):
            found.append((expression, element, container))
        elif isinstance(expression, (cst.List, cst.Tuple, cst.Set)):
            is_list = isinstance(expression, cst.List)
            for item in expression.elements:
                if isinstance(item, cst.Element):
                    visit(
                        item.value,
                        item if is_list else None,
                        expression if isinstance(expression, cst.List) else None,
                        depth + 1,
                    )
        elif isinstance(expression, cst.Dict):
            for entry in expression.elements:
                if isinstance(entry, cst.DictElement):
                    visit(entry.value, None, None, depth + 1)
        elif isinstance(expression, cst.BinaryOperation) and isinstance(
            expression.operator, cst.Add
        ):
            visit(expression.left, None, None, depth + 1)
            visit(expression.right, None, None, depth + 1)
        elif isinstance(expression, cst.Name) and expression.value not in names_seen:
            names_seen.add(expression.value)
            for value in _assigned(module, expression.value):
                visit(value, None, None, depth + 1)

    for argument in call.args:
        if argument.keyword is not None and argument.keyword.value in _SETUP_KEYWORDS:
            visit(argument.value, None, None, 0)
    return found


def python_string_req(node: cst.SimpleString) -> ParsedRequirement | None:
    value = node.evaluated_value
    if not isinstance(value, str):
        return None
    return parse_requirement(value)


def python_string_editable(node: cst.SimpleString) -> bool:
    """Whether the literal's text between the quotes is exactly its value (no escapes)."""
    quote = node.quote
    raw = node.value[len(node.prefix) + len(quote) : -len(quote)]
    return raw == node.evaluated_value and "b" not in node.prefix.lower()


def replace_string(node: cst.SimpleString, new_value: str) -> cst.SimpleString:
    quote = node.quote
    return node.with_changes(value=f"{node.prefix}{quote}{new_value}{quote}")


# --------------------------------------------------------------------------------------------
# Commands: pip install ... in Dockerfiles, shell scripts, CI files


@dataclass(frozen=True, slots=True)
class Token:
    value: str
    start: int
    end: int
    quoted: bool


_OPERATORS = ("&&", "||", ";", "|", "&", "(", ")", "`", "$(")


def command_segments(text: str) -> Iterator[list[Token]]:
    """Simple commands of shell-like text (continuations joined, comments dropped)."""
    position = 0
    current: list[Token] = []
    length = len(text)
    while position < length:
        char = text[position]
        if char == "\\" and text.startswith("\\\n", position):
            position += 2
            continue
        if char in " \t\r":
            position += 1
            continue
        if char == "\n":
            if current:
                yield current
                current = []
            position += 1
            continue
        if char == "#" and (position == 0 or text[position - 1] in " \t\n;&|("):
            end = text.find("\n", position)
            position = length if end == -1 else end
            continue
        operator = next((op for op in _OPERATORS if text.startswith(op, position)), None)
        if operator is not None:
            if current:
                yield current
                current = []
            position += len(operator)
            continue
        start = position
        value = []
        quoted = False
        while position < length:
            char = text[position]
            if char in " \t\r\n;&|()`":
                break
            if char in "\"'":
                end = text.find(char, position + 1)
                if end == -1:
                    end = length
                value.append(text[position + 1 : end])
                quoted = True
                position = min(length, end + 1)
                continue
            if char == "\\" and position + 1 < length:
                if text[position + 1] == "\n":
                    break
                value.append(text[position + 1])
                position += 2
                continue
            value.append(char)
            position += 1
        if position == start:  # a character no rule above consumed: skip it
            position += 1
            continue
        current.append(Token("".join(value), start, position, quoted))
    if current:
        yield current


_PIP_VALUE_OPTIONS = {
    "-i",
    "--index-url",
    "--extra-index-url",
    "-f",
    "--find-links",
    "-r",
    "--requirement",
    "-c",
    "--constraint",
    "-t",
    "--target",
    "--prefix",
    "--root",
    "--upgrade-strategy",
    "--python",
    "-p",
    "--platform",
    "--python-version",
    "--implementation",
    "--abi",
    "--config-settings",
    "-C",
    "--cache-dir",
    "--src",
    "--trusted-host",
    "--progress-bar",
    "--root-user-action",
    "--only-binary",
    "--no-binary",
    "-e",
    "--editable",
    "--index",
    "--default-index",
    "--index-strategy",
    "--torch-backend",
    "--extra",
    "--group",
}


def _is_pip(token: str) -> bool:
    base = token.rsplit("/", 1)[-1]
    return re.fullmatch(r"pip(3(\.\d+)?)?", base) is not None


def pip_install_args(segment: list[Token]) -> list[Token] | None:
    """Argument tokens after ``pip install``, ``uv pip install`` or ``python -m pip install``."""
    values = [token.value for token in segment]
    for index, value in enumerate(values):
        if index + 1 < len(values) and values[index + 1] == "install":
            if _is_pip(value) or (
                value == "pip" and index > 0 and values[index - 1] in {"uv", "-m"}
            ):
                return segment[index + 2 :]
    return None


def pip_requirements(text: str) -> list[Req]:
    """Requirement tokens of the pip install commands in shell-like text."""
    reqs: list[Req] = []
    for segment in command_segments(text):
        args = pip_install_args(segment)
        if args is None:
            continue
        skip = False
        for token in args:
            if skip:
                skip = False
                continue
            if token.value.startswith("-"):
                if token.value in _PIP_VALUE_OPTIONS:
                    skip = True
                continue
            parsed = parse_requirement(token.value)
            if parsed is None or "$" in parsed.raw_name:
                continue
            raw = text[token.start : token.end]
            if not token.quoted and raw == token.value:
                offset: int | None = token.start
            elif raw[1:-1] == token.value and raw[:1] in "\"'":
                offset = token.start + 1
            else:
                offset = None
            reqs.append(Req(parsed, "command", offset, report_span=(token.start, token.end)))
    return reqs


def code_lines(text: str) -> Iterator[tuple[int, str]]:
    """(offset, text) of the code part of each line (shell-style ``#`` comments removed)."""
    position = 0
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        yield position, body[: comment_start(body)]
        position += len(line)


# --------------------------------------------------------------------------------------------
# PyTorch CUDA builds: index URLs, local versions, the ROCm a file's torch pin maps to

CUDA_INDEX_RE = re.compile(
    r"https?://download\.pytorch\.org/whl/(?P<nightly>nightly/|test/)?(?P<cuda>cu\d{2,3})(?![\w.])"
)
LOCAL_CUDA_RE = re.compile(r"\+cu\d{2,3}")


def torch_table() -> dict[str, str]:
    table: dict[str, str] = load_table("torch_rocm")["torch"]
    return table


def _minor_key(minor: str) -> tuple[int, ...]:
    return tuple(int(part) for part in minor.split("."))


def rocm_for_torch_version(version: str) -> str | None:
    """ROCm version of the PyTorch release ``version`` (``2.3.1`` → ``6.0``)."""
    release = parse_version(version)
    if release is None or len(release) < 2:
        return None
    return torch_table().get(f"{release[0]}.{release[1]}")


def rocm_for_specs(specs: Sequence[str]) -> tuple[str, str] | None:
    """(torch minor, ROCm) of the newest table entry every specifier admits; None if none does.

    Local version labels (``+cu121``) are ignored; a specifier that cannot be read (``$VAR``)
    admits everything.
    """
    cleaned = [re.sub(r"\+[A-Za-z0-9.]+", "", spec) for spec in specs]
    for minor in sorted(torch_table(), key=_minor_key, reverse=True):
        candidates = [f"{minor}.{patch}" for patch in range(10)]
        if all(any(spec_admits(spec, c) is not False for c in candidates) for spec in cleaned):
            return minor, torch_table()[minor]
    return None


def companion_torch_version(package: str, version: str) -> str | None:
    """The torch version a torchvision/torchaudio version pairs with."""
    if package == "torch":
        return version
    offsets: dict[str, int] = load_table("torch_rocm")["companions"]
    release = parse_version(version)
    if package not in offsets or release is None or len(release) < 2:
        return None
    offset = offsets[package]
    if offset == 0:
        return ".".join(map(str, release))
    if release[0] != 0:
        return None
    return f"2.{release[1] - offset}"


def index_url_for(rocm: str, nightly: str | None = None) -> str:
    base: str = load_table("torch_rocm")["index_base"]
    return f"{base}{nightly or ''}rocm{rocm}"


# --------------------------------------------------------------------------------------------
# The base class of the dependency rules: one examine() per requirement, any file format


@dataclass(frozen=True, slots=True)
class Verdict:
    message: str
    change: Change | None = None
    applicability: Applicability | None = None


def all_requirements(ctx: TextContext) -> list[Req]:
    if ctx.kind == "requirements":
        return requirements_file(ctx.text)[0]
    if ctx.kind == "pyproject":
        return pyproject_file(ctx.text)[0]
    if ctx.kind == "setupcfg":
        return setupcfg_file(ctx.text)
    if ctx.kind == "conda":
        return conda_file(ctx.text)[0]
    if ctx.kind in {"dockerfile", "shell", "ci-yaml"}:
        return pip_requirements(ctx.text)
    return []


def _element_removal(container: cst.List, element: cst.Element) -> tuple[cst.CSTNode, Any]:
    """The node to report and its replacement that drop ``element`` from a list literal.

    A middle element is removed with its comma. The last element is removed from the list node
    (so that the previous element can take over its comma and the closing bracket's layout).
    """
    elements = list(container.elements)
    index = next(i for i, item in enumerate(elements) if item is element)
    if index < len(elements) - 1:
        return element, lambda: cst.RemovalSentinel.REMOVE
    if index == 0:
        return container, container.with_changes(
            elements=[],
            lbracket=cst.LeftSquareBracket(),
            rbracket=cst.RightSquareBracket(),
        )
    previous = elements[index - 1]
    if isinstance(previous, cst.Element):
        previous = previous.with_changes(comma=element.comma)
    return container, container.with_changes(elements=[*elements[: index - 1], previous])


class RequirementRule(PythonRule, TextRule):
    """A rule over declared Python dependencies, in every format that declares them.

    Subclasses implement :meth:`examine`; this class finds the requirements, reports each
    verdict on the right span and turns its :class:`Change` into a text edit (or, in
    ``setup.py``, a string-literal replacement or list-element removal).
    """

    abstract = True
    file_kinds: ClassVar[frozenset[str]] = frozenset(
        {"python", "requirements", "pyproject", "setupcfg", "conda"}
    )

    ctx: Any  # a PythonContext in setup.py, a TextContext elsewhere
    #: In Python files only ``setup()`` calls are read, and those need setuptools or distutils.
    kind_triggers: ClassVar[dict[str, tuple[str, ...]]] = {"python": ("setuptools", "distutils")}

    def __init__(self, ctx: Any) -> None:
        self.ctx = ctx
        self._torch_specs: list[str] | None = None
        self._setup_reqs: list[Req] = []

    def report(self, *args: Any, **kwargs: Any) -> None:
        """Report through the file's context, a Python or a text one (spans or nodes)."""
        self.ctx.report(self, *args, **kwargs)

    # -- to override ----------------------------------------------------------------------

    def examine(self, req: Req) -> Verdict | None:
        raise NotImplementedError

    # -- helpers for subclasses -------------------------------------------------------------

    def torch_specs(self) -> list[str]:
        """Specifiers of the torch requirements declared in this file."""
        if self._torch_specs is None:
            self._torch_specs = [req.spec for req in self._requirements() if req.name == "torch"]
        return self._torch_specs

    def file_rocm(self) -> str | None:
        """ROCm version matching the torch this file asks for (newest table entry if unpinned)."""
        specs = [spec for spec in self.torch_specs() if spec]
        found = rocm_for_specs(specs)
        return None if found is None else found[1]

    # -- machinery ---------------------------------------------------------------------------

    def _requirements(self) -> list[Req]:
        if isinstance(self.ctx, TextContext):
            return all_requirements(self.ctx)
        return self._setup_reqs

    def check(self) -> None:
        ctx: TextContext = self.ctx
        for req in all_requirements(ctx):
            if req.source == "command" or not req.on_linux:
                continue
            verdict = self.examine(req)
            if verdict is not None:
                self._report_text(req, verdict)

    def _report_text(self, req: Req, verdict: Verdict) -> None:
        ctx: TextContext = self.ctx
        start, end = req.span()
        replacement = None
        if verdict.change is not None and verdict.change.remove:
            if req.remove is not None:
                start, end = req.remove
                replacement = ""
        elif verdict.change is not None:
            edit = self._text_edit(req, verdict.change)
            if edit is not None:
                start, end, replacement = edit
        ctx.report(
            self,
            start,
            end,
            message=verdict.message,
            replacement=replacement,
            applicability=verdict.applicability,
        )

    def _text_edit(self, req: Req, change: Change) -> tuple[int, int, str] | None:
        if req.source == "poetry":
            assert req.poetry_spans is not None
            name_span, spec_span = req.poetry_spans
            if change.extras is not None:
                return None
            if change.name is not None and change.spec is None and name_span is not None:
                return name_span[0], name_span[1], change.name
            if change.spec is not None and change.name is None and spec_span is not None:
                return spec_span[0], spec_span[1], change.spec
            return None
        if req.offset is None:
            return None
        edit = render(req, change)
        if edit is None:
            return None
        start, end, new = edit
        return req.offset + start, req.offset + end, new

    def visit_Call(self, node: cst.Call) -> None:
        ctx: PythonContext = self.ctx
        if not is_setup_call(ctx, node):
            return
        reqs = []
        for string, element, container in setup_strings(ctx.module, node):
            parsed = python_string_req(string)
            if parsed is None:
                continue
            reqs.append(
                Req(parsed, "setup.py", None, node=string, element=element, container=container)
            )
        self._setup_reqs = reqs
        self._torch_specs = None
        for req in reqs:
            if not req.on_linux:
                continue
            verdict = self.examine(req)
            if verdict is not None:
                self._report_python(req, verdict)

    def _report_python(self, req: Req, verdict: Verdict) -> None:
        ctx: PythonContext = self.ctx
        string = req.node
        assert isinstance(string, cst.SimpleString)
        change = verdict.change
        if change is not None and change.remove:
            if req.element is not None and req.container is not None:
                node, replacement = _element_removal(req.container, req.element)
                ctx.report(
                    self,
                    node,
                    message=verdict.message,
                    replacement=replacement,
                    applicability=verdict.applicability,
                )
                return
            change = None
        replacement = None
        if change is not None and python_string_editable(string):
            edit = render(req, change)
            if edit is not None:
                start, end, new = edit
                text = req.parsed.text
                replacement = replace_string(string, text[:start] + new + text[end:])
        ctx.report(
            self,
            string,
            message=verdict.message,
            replacement=replacement,
            applicability=verdict.applicability,
        )
