"""The project's facts document (``docs/rocm-facts.md``, shipped as package data): parse it and
resolve a rule's ``§9 index-url row; [P17][K1]`` citation to the facts and sources it names."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import TypeVar

#: Where the document is published next to the rule pages (relative links from docs/rules/).
DOC_NAME = "rocm-facts.md"

_SECTION_RE = re.compile(r"^#{2,3} §(\d+[a-z]?) (.+)$")
_ANCHOR_RE = re.compile(r'<a id="([^"]+)"></a>')
_FACT_RE = re.compile(r'^- <a id="([^"]+)"></a>\*\*(.+?)\*\*')
_ITEM_RE = re.compile(r"^(\d+)\. ")
_SOURCE_RE = re.compile(r'^- <a id="src-([A-Z]+\d*)"></a>\*\*\[[A-Z]+\d*\]\*\* (.+)$')
_CITED_SECTION_RE = re.compile(r"§(\d+[a-z]?)(?:\.(\d+))?")
_CITED_SOURCE_RE = re.compile(r"\[([A-Z]+\d*)\]")
_URL_RE = re.compile(r"<(https?://[^>]+)>")
_T = TypeVar("_T")
_STOP_WORDS = frozenset({"row", "rows", "and", "the", "item", "first"})


@dataclass(frozen=True)
class Fact:
    """One bullet (or numbered item) of the document: its anchor, bold key and full text."""

    anchor: str
    key: str
    text: str


@dataclass(frozen=True)
class Section:
    """A ``§N`` heading with the facts listed under it."""

    number: str
    title: str
    anchor: str
    facts: tuple[Fact, ...]


@dataclass(frozen=True)
class Source:
    """An entry of §11: an id such as ``P17``, its description and its links."""

    ident: str
    text: str
    anchor: str

    @property
    def urls(self) -> list[str]:
        """The links of the entry, in order."""
        return _URL_RE.findall(self.text)


@dataclass
class Resolution:
    """What a citation names: the sections, the matching facts, the sources and anything unknown."""

    sections: list[Section] = field(default_factory=list)
    facts: list[Fact] = field(default_factory=list)
    sources: list[Source] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class FactsDocument:
    """The parsed document."""

    sections: dict[str, Section]
    sources: dict[str, Source]

    def resolve(self, citation: str) -> Resolution:
        """Resolve every ``§N[.M] descriptor`` and ``[ID]`` in a rule's citation."""
        result = Resolution()
        for number, item, descriptor in _section_references(citation):
            section = self.sections.get(number)
            if section is None:
                result.unknown.append(f"§{number}")
                continue
            _add(result.sections, section)
            if item is not None:
                fact = next(
                    (f for f in section.facts if f.anchor == f"{section.anchor}-{item}"), None
                )
                if fact is None:
                    result.unknown.append(f"§{number}.{item}")
                else:
                    _add(result.facts, fact)
                continue
            for part in _descriptor_parts(descriptor):
                matched = _match(section, part)
                if matched is None:
                    result.unknown.append(f"§{number} {part}")
                for fact in matched or ():
                    _add(result.facts, fact)
        for ident in _CITED_SOURCE_RE.findall(citation):
            source = self.sources.get(ident)
            if source is None:
                result.unknown.append(f"[{ident}]")
            else:
                _add(result.sources, source)
        return result


def _add(items: list[_T], item: _T) -> None:
    if item not in items:
        items.append(item)


def _section_references(citation: str) -> list[tuple[str, str | None, str]]:
    """Split ``§0; §1 name gates row; §10.1`` into (section, item, descriptor) triples."""
    found = list(_CITED_SECTION_RE.finditer(citation))
    references = []
    for index, match in enumerate(found):
        end = found[index + 1].start() if index + 1 < len(found) else len(citation)
        descriptor = citation[match.end() : end].split(";")[0]
        descriptor = re.sub(r"\([^)]*\)", "", descriptor).strip(" ,;")
        item = re.fullmatch(r"item (\d+)", descriptor)
        if item:
            references.append((match.group(1), item.group(1), ""))
        else:
            references.append((match.group(1), match.group(2), descriptor))
    return references


def _descriptor_parts(descriptor: str) -> list[str]:
    """``tensorrt, pycuda/cuda-python rows`` → the phrases that each name one fact."""
    parts = []
    for chunk in re.split(r",| and (?=\S)", descriptor):
        chunk = chunk.strip().strip("`")
        if _tokens(chunk):
            parts.append(chunk)
    return parts


def _tokens(text: str) -> list[str]:
    words = re.findall(r"[\w.*+\-/]+", text.lower().replace("`", ""))
    return [w for w in words if w not in _STOP_WORDS and len(w) > 1]


def _match(section: Section, part: str) -> list[Fact] | None:
    """The facts of a section a descriptor names, the whole section when it names the title."""
    hits = _facts_naming(section, part)
    if hits is None and "/" in part:
        pieces = [_facts_naming(section, piece) for piece in part.split("/")]
        if all(piece is not None for piece in pieces):
            hits = [fact for piece in pieces for fact in piece or ()]
    return hits


def _facts_naming(section: Section, phrase: str) -> list[Fact] | None:
    tokens = _tokens(phrase)
    if not tokens:
        return None
    hits = [f for f in section.facts if all(t in _haystack(f) for t in tokens)]
    if hits:
        return hits
    if all(t.rstrip("s") in section.title.lower() for t in tokens):
        return []
    return None


def _haystack(fact: Fact) -> str:
    return (fact.key + " " + fact.anchor.replace("-", " ")).lower().replace("`", "")


def parse(text: str) -> FactsDocument:
    """Parse the document's sections, facts (bullets and numbered items) and sources."""
    headings: list[tuple[str, str, str]] = []
    entries: dict[str, list[tuple[str | None, str]]] = {}
    anchor: str | None = None
    entry: list[str] = []
    entry_anchor: str | None = None

    def close_entry() -> None:
        nonlocal entry_anchor
        if entry and headings:
            body = " ".join(line.strip() for line in entry)
            entries[headings[-1][0]].append((entry_anchor, body))
        entry.clear()
        entry_anchor = None

    for line in text.splitlines():
        heading = _SECTION_RE.match(line)
        anchor_only = _ANCHOR_RE.fullmatch(line.strip())
        if heading:
            close_entry()
            number = heading.group(1)
            headings.append((number, heading.group(2), anchor or f"s{number}"))
            entries[number] = []
            anchor = None
        elif anchor_only:
            close_entry()
            anchor = anchor_only.group(1)
        elif line.startswith("- ") or _ITEM_RE.match(line):
            close_entry()
            entry.append(line)
            entry_anchor, anchor = anchor, None
        elif entry and line.startswith(" ") and line.strip():
            entry.append(line)
        else:
            close_entry()
    close_entry()
    sections: dict[str, Section] = {}
    sources: dict[str, Source] = {}
    for number, title, section_anchor in headings:
        facts = []
        for item_anchor, body in entries[number]:
            source = _SOURCE_RE.match(body)
            fact = _FACT_RE.match(body)
            if source:
                ident = source.group(1)
                sources[ident] = Source(ident, source.group(2), f"src-{ident}")
            elif fact:
                facts.append(Fact(fact.group(1), fact.group(2), _strip_anchor(body)))
            elif item_anchor and _ITEM_RE.match(body):
                facts.append(Fact(item_anchor, _ITEM_RE.sub("", body), _ITEM_RE.sub("", body)))
        sections[number] = Section(number, title, section_anchor, tuple(facts))
    return FactsDocument(sections, sources)


def _strip_anchor(text: str) -> str:
    return _ANCHOR_RE.sub("", text[2:] if text.startswith("- ") else text).strip()


@lru_cache(maxsize=1)
def load() -> FactsDocument:
    """The document shipped with the package."""
    return parse(document_text())


def document_text() -> str:
    """The text of the shipped document."""
    return resources.files("migrator").joinpath("data", DOC_NAME).read_text(encoding="utf-8")


def quote(citation: str, link_base: str = "") -> str:
    """Markdown quoting the facts and sources a citation names, for ``explain`` and rule pages."""
    resolution = load().resolve(citation)
    lines: list[str] = []
    for fact in resolution.facts:
        lines.append(
            f"- {fact.text} ([{DOC_NAME}#{fact.anchor}]({link_base}{DOC_NAME}#{fact.anchor}))"
        )
    named = {f.anchor.split("-")[0] for f in resolution.facts}
    for section in resolution.sections:
        if section.anchor not in named:
            lines.append(
                f"- §{section.number} {section.title} "
                f"([{DOC_NAME}#{section.anchor}]({link_base}{DOC_NAME}#{section.anchor}))"
            )
    if resolution.sources:
        lines += ["", "Sources:", ""]
        for source in resolution.sources:
            lines.append(f"- [{source.ident}] {source.text}")
    return "\n".join(lines)
