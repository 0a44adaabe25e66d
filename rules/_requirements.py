"""A requirement and where it sits in its file: parsed strings (:class:`ParsedRequirement`), found
requirements (:class:`Req`) and the edits that rename, re-pin or drop one (:class:`Change`)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import libcst as cst

from migrator.api import load_table
from migrator.api.knowledge import marker_allows_linux, poetry_to_pep440


def packages() -> dict[str, Any]:
    return load_table("packages")


def normalize(name: str) -> str:
    """PEP 503 normalized project name."""
    return re.sub(r"[-_.]+", "-", name).lower()


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
