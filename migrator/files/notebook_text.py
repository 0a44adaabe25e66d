"""Rewrite cells of a notebook in its own JSON text: only the changed cells' ``source`` values
are replaced, so the file's layout (indentation, ``[{`` on one line, key order, escapes) stays
as its editor wrote it and the diff holds the rewritten lines only."""

from __future__ import annotations

import json
import re
from json.decoder import scanstring  # type: ignore[attr-defined]  # public, untyped in typeshed

_SPACE = re.compile(r"[ \t\n\r]*")


class _Layout(Exception):
    """The text is not the JSON shape this module can splice into."""


def _skip(text: str, at: int) -> int:
    match = _SPACE.match(text, at)
    return match.end() if match else at


def _value_end(text: str, at: int) -> int:
    """The index just past the JSON value starting at ``at``."""
    decoder = json.JSONDecoder()
    try:
        _, end = decoder.raw_decode(text, at)
    except json.JSONDecodeError as error:
        raise _Layout(str(error)) from error
    return end


def _object_members(text: str, at: int) -> dict[str, tuple[int, int]]:
    """The members of the object starting at ``at``: key -> (start, end) of its value."""
    if text[at : at + 1] != "{":
        raise _Layout("not an object")
    members: dict[str, tuple[int, int]] = {}
    position = _skip(text, at + 1)
    if text[position : position + 1] == "}":
        return members
    while True:
        if text[position : position + 1] != '"':
            raise _Layout("a key is not a string")
        key, position = scanstring(text, position + 1)
        position = _skip(text, position)
        if text[position : position + 1] != ":":
            raise _Layout("no colon after a key")
        start = _skip(text, position + 1)
        end = _value_end(text, start)
        members[key] = (start, end)
        position = _skip(text, end)
        if text[position : position + 1] == ",":
            position = _skip(text, position + 1)
            continue
        if text[position : position + 1] == "}":
            return members
        raise _Layout("an object is not closed")


def _array_items(text: str, at: int) -> list[tuple[int, int]]:
    if text[at : at + 1] != "[":
        raise _Layout("not an array")
    items: list[tuple[int, int]] = []
    position = _skip(text, at + 1)
    if text[position : position + 1] == "]":
        return items
    while True:
        end = _value_end(text, position)
        items.append((position, end))
        position = _skip(text, end)
        if text[position : position + 1] == ",":
            position = _skip(text, position + 1)
            continue
        if text[position : position + 1] == "]":
            return items
        raise _Layout("an array is not closed")


def _render_source(old: str, source: str) -> str:
    """``source`` as JSON in the layout of the value it replaces (``old``): a string stays a
    string, a list of lines keeps the whitespace around and between its items."""
    escape = old.isascii() and "\\u" in old  # the editor wrote non-ASCII as \\uXXXX
    if not old.startswith("["):
        return json.dumps(source, ensure_ascii=escape)
    rendered = [json.dumps(line, ensure_ascii=escape) for line in source.splitlines(True)]
    if not rendered:
        return "[]"
    first = re.match(r"\[(\s*)", old)
    last = re.search(r"(\s*)\]$", old)
    lead = first.group(1) if first else ""
    trail = last.group(1) if last else ""
    if old.strip("[] \t\r\n") == "":  # an empty list: one line
        lead, trail = "", ""
    separator = "," + lead if lead else (", " if '", "' in old else ",")
    return "[" + lead + separator.join(rendered) + trail + "]"


def splice_sources(text: str, new_sources: dict[int, str]) -> str | None:
    """``text`` with the ``source`` of cell *i* set to ``new_sources[i]``, everything else
    byte for byte as it was; None when the text cannot be read that way (the caller writes
    the whole document instead)."""
    try:
        start = _skip(text, 0)
        top = _object_members(text, start)
        if "cells" not in top:
            return None
        cells = _array_items(text, top["cells"][0])
        edits: list[tuple[int, int, str]] = []
        for index, source in new_sources.items():
            if index >= len(cells):
                return None
            members = _object_members(text, cells[index][0])
            if "source" not in members:
                return None
            begin, end = members["source"]
            old = text[begin:end]
            edits.append((begin, end, _render_source(old, source)))
    except _Layout:
        return None
    out = text
    for begin, end, replacement in sorted(edits, reverse=True):
        out = out[:begin] + replacement + out[end:]
    return out
