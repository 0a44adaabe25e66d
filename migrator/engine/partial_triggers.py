"""Where a rule's triggers sit in a file, for partial parsing (``migrator.engine.partial``): the
lines holding a trigger, a trigger paired with a required token in one statement, a call of a
declared shape, a word; and the top-level groups those lines fall in."""

from __future__ import annotations

import ast
import bisect
import re
import unicodedata
from collections.abc import Iterable, Sequence

from migrator.engine.partial_statements import _Group, _header_nodes, _holds, _innermost, _regions
from migrator.engine.rule_parts import CallShape
from migrator.syntax.imports import ImportTable


def _trigger_lines(text: str, triggers: Iterable[str], line_starts: list[int]) -> set[int]:
    """Lines holding an occurrence of one of ``triggers``."""
    lines: set[int] = set()
    for trigger in triggers:
        offset = text.find(trigger)
        while offset >= 0:
            lines.add(bisect.bisect_right(line_starts, offset))
            offset = text.find(trigger, offset + 1)
    return lines


def _paired_lines(
    text: str,
    body: list[ast.stmt],
    triggers: Iterable[str],
    needed: Iterable[str],
    line_starts: list[int],
) -> set[int]:
    """Lines holding one of ``triggers`` whose innermost statement (the header alone, for a
    compound statement) also holds one of ``needed``."""
    trigger_lines = _trigger_lines(text, triggers, line_starts)
    if not trigger_lines:
        return set()
    needed_lines = sorted(_token_lines(text, needed, line_starts))
    return {
        line
        for line in trigger_lines
        if any(_holds(needed_lines, first, last) for first, last in _regions(body, line))
    }


def _shaped_lines(
    body: list[ast.stmt], lines: Iterable[int], shapes: Sequence[CallShape], table: ImportTable
) -> set[int]:
    """The ``lines`` whose innermost statements (a compound statement's header alone, as in
    ``_regions``) hold a call of one of ``shapes``."""
    found: set[int] = set()
    for line in lines:
        for statement, header in _innermost(body, line):
            nodes = _header_nodes(statement) if header else [statement]
            if any(
                _matches(node, shapes, table)
                for top in nodes
                for node in ast.walk(top)
                if isinstance(node, ast.Call)
            ):
                found.add(line)
                break
    return found


def _matches(call: ast.Call, shapes: Sequence[CallShape], table: ImportTable) -> bool:
    """Whether ``call`` has one of ``shapes``."""
    qualified = table.resolve_ast(call.func) or ""
    last = qualified.rsplit(".", 1)[-1]
    attribute = call.func.attr if isinstance(call.func, ast.Attribute) else None
    keywords = {keyword.arg for keyword in call.keywords if keyword.arg is not None}
    for shape in shapes:
        if shape.keywords and shape.keywords.isdisjoint(keywords):
            continue
        if (
            last in shape.names
            or any(qualified.startswith(prefix) for prefix in shape.prefixes)
            or attribute in shape.attributes
        ):
            return True
    return False


def _token_lines(text: str, starts: Iterable[str], line_starts: list[int]) -> set[int]:
    """Lines where a token starts with one of ``starts``: an occurrence not preceded by a
    letter, digit, underscore or dot (``32`` in ``x * 32``, not in ``Int32`` or ``1.32``;
    ``import`` in ``from m import x``, not in ``__import__``)."""
    ordered = sorted(starts)
    if not ordered:
        return set()
    pattern = re.compile(r"(?<![\w.])(?:" + "|".join(map(re.escape, ordered)) + ")")
    return {bisect.bisect_right(line_starts, match.start()) for match in pattern.finditer(text)}


def _word_lines(text: str, words: Iterable[str], line_starts: list[int]) -> set[int]:
    """Lines holding one of ``words`` as a whole word."""
    words = sorted(words)
    if not words:
        return set()
    pattern = re.compile(r"(?<!\w)(?:" + "|".join(map(re.escape, words)) + r")(?!\w)")
    return {bisect.bisect_right(line_starts, match.start()) for match in pattern.finditer(text)}


def _at(groups: list[_Group], firsts: list[int], lines: Iterable[int]) -> set[int]:
    """Indices of the top-level groups spanning one of ``lines``."""
    found: set[int] = set()
    for line in lines:
        index = bisect.bisect_right(firsts, line) - 1
        if index >= 0 and groups[index].last >= line:
            found.add(index)
    return found


_WORD = re.compile(r"[^\W\d]\w*")


def _words(text: str, line_starts: list[int], spans: Iterable[tuple[int, int]]) -> set[str]:
    """The identifier-like words of the lines of ``spans`` (comments and strings included:
    keeping a statement too many never changes a finding), NFKC-normalised as Python reads
    names."""
    words: set[str] = set()
    for first, last in spans:
        start = line_starts[first - 1]
        end = line_starts[last] if last < len(line_starts) else len(text)
        words.update(_WORD.findall(text, start, end))
    if not text.isascii():
        words |= {unicodedata.normalize("NFKC", word) for word in words}
    return words
