"""A small TOML scanner that keeps the position of every value (to edit ``pyproject.toml`` in
place)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from ._lines import comment_start, line_bounds


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
    """The values of a TOML text with their positions; None when it cannot be read (bad
    syntax, or arrays nested deeper than the scanner's recursion allows: a seed of the fuzzing
    harness, ``tests/test_fuzz_parsers.py``)."""
    try:
        return TomlScanner(text).scan()
    except (ValueError, IndexError, AssertionError, RecursionError):
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
