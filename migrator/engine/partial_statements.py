"""The statement tree as partial parsing reads it (``migrator.engine.partial``): line spans,
the blocks of a compound statement, the innermost statements at a line, block headers, the
statements that guard what follows, top-level groups (a decorated definition with its
decorators), and the text with the dropped statements blanked."""

from __future__ import annotations

import ast
import bisect
import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass

_NEWLINE = re.compile(r"\r\n|\r|\n")


_TRY = (ast.Try, getattr(ast, "TryStar", ast.Try))


_EXIT_CALLS = frozenset({"exit", "skip", "skipTest", "_exit"})


@dataclass(slots=True)
class _Group:
    """Top-level statements sharing lines (``a = 1; b = 2``), kept or dropped together."""

    first: int
    last: int
    statements: list[ast.stmt]


def _first_indent(text: str, tree: ast.Module, line_starts: list[int]) -> str:
    """Leading whitespace of the file's first indented line (where the tokenizer emits its first
    INDENT: the first statement, in source order, of a block on lines of its own), else
    libcst's default."""
    for statement in tree.body:
        for block in _blocks(statement):
            first = _span(block[0])[0]
            start = line_starts[first - 1]
            end = start
            while end < len(text) and text[end] in " \t\f":
                end += 1
            if end > start and _starts_line(text, line_starts, block[0]):
                return text[start:end]
    return "    "


def _groups(body: Sequence[ast.stmt]) -> list[_Group]:
    groups: list[_Group] = []
    for statement in body:
        first, last = _span(statement)
        if groups and first <= groups[-1].last:
            groups[-1].last = max(groups[-1].last, last)
            groups[-1].statements.append(statement)
        else:
            groups.append(_Group(first, last, [statement]))
    return groups


def _line_starts(text: str) -> list[int]:
    """Offset of each line's first character (lines end as Python's tokenizer ends them)."""
    if "\r" in text:
        return [0, *(match.end() for match in _NEWLINE.finditer(text))]
    # "\n" alone: each line's start is the running sum of the lengths before it, newline
    # included (all in C: most files have no carriage return)
    lines = text.split("\n")
    return list(itertools.accumulate(map((1).__add__, map(len, lines[:-1])), initial=0))


def _innermost(body: list[ast.stmt], line: int) -> list[tuple[ast.stmt, bool]]:
    """The innermost statements at ``line``, each with whether its header alone is meant (the
    line lies in a compound statement's header, through the first line of its blocks), or the
    whole compound statement when the line lies outside both (an ``except`` line)."""
    found: list[tuple[ast.stmt, bool]] = []
    pending = _containing(body, line)
    while pending:
        statement = pending.pop()
        inner = [child for block in _blocks(statement) for child in block]
        if not inner:
            found.append((statement, False))
            continue
        header_last = _first_line(inner[0])
        if line <= header_last:
            found.append((statement, True))
        if line >= header_last:
            children = _containing(inner, line)
            if children:
                pending.extend(children)
            elif line > header_last:
                found.append((statement, False))
    return found


def _header_nodes(statement: ast.stmt, handlers: bool = True) -> list[ast.AST]:
    """What a compound statement holds outside its blocks (test, target, items, decorators,
    bases, and the types of its ``except`` clauses unless ``handlers`` is false)."""
    nodes: list[ast.AST] = []
    for name, value in ast.iter_fields(statement):
        if name in ("body", "orelse", "finalbody"):
            continue
        if name == "handlers":
            if handlers:
                nodes.extend(handler.type for handler in value if handler.type is not None)
            continue
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, ast.AST):
                nodes.append(item)
    return nodes


def _regions(body: list[ast.stmt], line: int) -> list[tuple[int, int]]:
    """The line spans of the innermost statements at ``line`` (``_innermost``): a simple
    statement's span, a compound statement's header through the first line of its blocks (or
    its whole span when the line lies outside both, on an ``except`` line). Statements sharing
    the line all count: a span too many only keeps a statement too many."""
    regions: list[tuple[int, int]] = []
    for statement, header in _innermost(body, line):
        first, last = _span(statement)
        if header:
            last = _first_line(next(child for block in _blocks(statement) for child in block))
        regions.append((first, last))
    return regions


def _containing(block: list[ast.stmt], line: int) -> list[ast.stmt]:
    """The statements of ``block`` spanning ``line`` (several only when they share it)."""
    found: list[ast.stmt] = []
    index = bisect.bisect_right(block, line, key=_first_line) - 1
    # a statement ends at or before the next one's first line: look back while they share it
    while index >= 0 and _span(block[index])[1] >= line:
        found.append(block[index])
        index -= 1
    return found


def _holds(lines: list[int], first: int, last: int) -> bool:
    """Whether the sorted ``lines`` hold one in ``first..last``."""
    index = bisect.bisect_left(lines, first)
    return index < len(lines) and lines[index] <= last


def _first_line(statement: ast.stmt) -> int:
    return _span(statement)[0]


def _hides_following(statement: ast.stmt) -> bool:
    """An ``assert`` or an ``if`` that may leave the module (``migrator.reach.guards`` then marks every
    later statement); generous on purpose, as keeping a statement never changes a finding."""
    if isinstance(statement, ast.Assert):
        return True
    if not isinstance(statement, ast.If):
        return False
    for inner in statement.body:
        if isinstance(inner, (ast.Return, ast.Raise, ast.Continue, ast.Break)):
            return True
        if isinstance(inner, ast.Expr) and isinstance(inner.value, ast.Call):
            function = inner.value.func
            name = function.attr if isinstance(function, ast.Attribute) else None
            if isinstance(function, ast.Name):
                name = function.id
            if name in _EXIT_CALLS:
                return True
    return False


def _statements_in(statement: ast.stmt) -> list[ast.stmt]:
    """Every statement inside ``statement``, at any depth (nested definitions and ``match``
    cases included)."""
    out: list[ast.stmt] = []
    pending = [statement]
    while pending:
        current = pending.pop()
        if isinstance(current, ast.Match):
            for case in current.cases:
                out.extend(case.body)
                pending.extend(case.body)
            continue
        blocks = _blocks(current)
        for block in blocks:
            out.extend(block)
            pending.extend(block)
    return out


def _blank(text: str, dropped: Sequence[tuple[int, int]], line_starts: list[int]) -> str:
    """``text`` with the lines of the ``dropped`` ranges emptied, every line ending kept."""
    if not dropped:
        return text
    out: list[str] = []
    position = 0
    for first, last in sorted(dropped):
        start = line_starts[first - 1]
        end = line_starts[last] if last < len(line_starts) else len(text)
        if start < position:  # nested in a range already emptied
            start = position
        out.append(text[position:start])
        segment = text[start:end]
        out.append(
            "\n" * segment.count("\n")
            if "\r" not in segment
            else "".join(_NEWLINE.findall(segment))
        )
        position = max(position, end)
    out.append(text[position:])
    return "".join(out)


def _starts_line(text: str, line_starts: list[int], statement: ast.stmt) -> bool:
    """Whether ``statement`` starts its line (only whitespace before it, or its decorator)."""
    first = _span(statement)[0]
    column = statement.col_offset
    decorators = getattr(statement, "decorator_list", ())
    if decorators:
        column = min(decorator.col_offset for decorator in decorators) - 1
    start = line_starts[first - 1]
    end = line_starts[first] if first < len(line_starts) else len(text)
    return not text[start:end].encode("utf-8")[: max(column, 0)].strip()


def _span(statement: ast.stmt) -> tuple[int, int]:
    first = statement.lineno
    decorators = getattr(statement, "decorator_list", ())
    if decorators:
        first = min(first, *(decorator.lineno for decorator in decorators))
    return first, statement.end_lineno or statement.lineno


def _blocks(statement: ast.stmt) -> list[list[ast.stmt]]:
    """The statement blocks of a compound statement, in source order ([] for simple ones and
    ``match``, which are kept whole)."""
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [statement.body]
    if isinstance(statement, (ast.With, ast.AsyncWith)):
        return [statement.body]
    if isinstance(statement, (ast.If, ast.For, ast.AsyncFor, ast.While)):
        return [block for block in (statement.body, statement.orelse) if block]
    if isinstance(statement, _TRY):
        handlers = [handler.body for handler in statement.handlers]
        return [
            block
            for block in (statement.body, *handlers, statement.orelse, statement.finalbody)
            if block
        ]
    return []


def _guarding(statement: ast.stmt) -> bool:
    """Statements the guard facility reads around a kept one (``migrator.reach.guards``)."""
    return isinstance(statement, (ast.Import, ast.ImportFrom)) or _hides_following(statement)
