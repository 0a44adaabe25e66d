"""Which top-level statements a kept statement needs for its names, for partial parsing
(``migrator.engine.partial``): the file's imports and the uses of their aliases, names
re-exported, and the closure of units (top-level statements, a class by its methods) connected
by module-level bindings."""

from __future__ import annotations

import ast
import bisect
import re
from collections.abc import Iterable, Sequence, Set
from dataclasses import dataclass, field

from migrator.engine.partial_statements import (
    _blocks,
    _first_line,
    _Group,
    _header_nodes,
    _holds,
    _span,
    _starts_line,
    _statements_in,
)
from migrator.engine.partial_triggers import _words
from migrator.syntax.imports import ImportTable

_Import = ast.Import | ast.ImportFrom


def _imports(statements: Sequence[ast.stmt], out: list[_Import]) -> list[_Import]:
    """Every import statement, at any depth (statements only: no expression holds one)."""
    for statement in statements:
        if isinstance(statement, (ast.Import, ast.ImportFrom)):
            out.append(statement)
        elif isinstance(statement, ast.Match):
            for case in statement.cases:
                _imports(case.body, out)
        else:
            for block in _blocks(statement):
                _imports(block, out)
    return out


def _alias_uses(
    text: str,
    imports: list[_Import],
    lines: set[int],
    line_starts: list[int],
    extra: Set[str] = frozenset(),
) -> set[int]:
    """Lines where a name bound by an import spanning one of ``lines`` (or one of ``extra``)
    occurs as a word (in code, strings or comments alike: keeping a line too many never
    changes a finding)."""
    names: set[str] = set(extra) if lines else set()
    for node in imports:
        last = node.end_lineno or node.lineno
        if any(line in lines for line in range(node.lineno, last + 1)):
            names.update(alias.asname or alias.name.split(".", 1)[0] for alias in node.names)
    names.discard("*")
    if not names:
        return set()
    pattern = re.compile(r"(?<![\w.])(?:" + "|".join(map(re.escape, sorted(names))) + r")\b")
    return {bisect.bisect_right(line_starts, match.start()) for match in pattern.finditer(text)}


def _inside_functions(lines: set[int], body: Sequence[ast.stmt], imports: list[_Import]) -> bool:
    """Whether every line of ``lines`` lies in an import statement or inside the body (signature
    included, decorators not) of a function."""
    covered: list[tuple[int, int]] = [_span(node) for node in imports]
    pending = list(body)
    while pending:
        statement = pending.pop()
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            covered.append((statement.lineno, statement.end_lineno or statement.lineno))
        elif isinstance(statement, ast.Match):
            for case in statement.cases:
                pending.extend(case.body)
        else:
            for block in _blocks(statement):
                pending.extend(block)
    covered.sort()
    firsts = [first for first, _ in covered]
    for line in lines:
        index = bisect.bisect_right(firsts, line) - 1
        # spans nest or are disjoint: the last span starting at or before the line may be an
        # inner one that ended, so look back through the earlier ones
        while index >= 0 and covered[index][1] < line:
            index -= 1
        if index < 0:
            return False
    return True


def _reexported(imports: list[_Import], table: ImportTable) -> set[str]:
    """Local names the import table binds differently from their import line (rewritten through
    a project module's re-export, or bound by a relative import)."""
    names: set[str] = set()
    for node in imports:
        for alias in node.names:
            local = alias.asname or alias.name.split(".", 1)[0]
            if isinstance(node, ast.Import):
                plain = alias.name if alias.asname else local
            elif node.level or node.module is None:
                plain = ""
            else:
                plain = f"{node.module}.{alias.name}"
            if local in table.bindings and table.bindings[local] != plain:
                names.add(local)
    return names


@dataclass(slots=True)
class _Unit:
    """What the ``names`` closure keeps or leaves: a top-level group, or, in a class whose header
    holds no trigger, the class's shell (its header and class-level statements: the class name
    is what it binds) or one of its members (a method or nested class, binding no module-level
    name but its ``global``s and trigger-holding imports)."""

    group: int
    spans: list[tuple[int, int]]
    statements: list[ast.stmt]
    words: set[str]
    #: a part of a split class (its shell or a member): kept by marking ``keep``, not whole
    split: bool = False
    #: for a member, the index of its class's shell unit
    shell: int | None = None
    #: for a shell, the class name (its binding)
    binds: str | None = None
    #: the lines marked to keep a member or shell (not a class header: a mark there keeps the
    #: whole class)
    keep: list[tuple[int, int]] = field(default_factory=list)


def _units(
    text: str, line_starts: list[int], groups: list[_Group], trigger_lines: Set[int]
) -> list[_Unit]:
    """The closure's units: each top-level group, a class split into its shell and members
    (so a 20,000-line class is not kept whole for one method); a class keeps its shell's
    statements (class attributes) and the members that hold a trigger or use a followed name."""
    units: list[_Unit] = []
    ordered = sorted(trigger_lines)
    for index, group in enumerate(groups):
        statement = group.statements[0]
        body = statement.body if isinstance(statement, ast.ClassDef) else []
        header = (_span(statement)[0], _first_line(body[0]) - 1) if body else None
        if (
            len(group.statements) != 1
            or header is None
            or header[1] < header[0]
            or not _starts_line(text, line_starts, body[0])
            or _holds(ordered, *header)
        ):
            spans = [(group.first, group.last)]
            units.append(_Unit(index, spans, group.statements, _words(text, line_starts, spans)))
            continue
        members = [s for s in body if isinstance(s, _DEFINITIONS)]
        attributes = [_span(s) for s in body if not isinstance(s, _DEFINITIONS)]
        shell_spans = [header, *attributes]
        shell = len(units)
        assert isinstance(statement, ast.ClassDef)
        units.append(
            _Unit(
                index,
                shell_spans,
                [s for s in body if not isinstance(s, _DEFINITIONS)],
                _words(text, line_starts, shell_spans),
                split=True,
                binds=statement.name,
                # its class-level statements, else its first member: the class must keep one
                keep=attributes or [_span(body[0])],
            )
        )
        for member in members:
            spans = [_span(member)]
            words = _words(text, line_starts, spans)
            units.append(_Unit(index, spans, [member], words, split=True, shell=shell, keep=spans))
    return units


_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _closure(
    text: str, line_starts: list[int], units: list[_Unit], trigger_lines: Set[int]
) -> list[_Unit]:
    """The units holding a trigger and every unit using a followed name: one that holds it as a
    word (a load, a store, an attribute, a keyword or a parameter of that spelling alike, as
    rules following a name may read any of them). A name is followed where a kept unit binds it
    from lines holding a trigger or a name followed as a value (``_bindings``): only such a
    binding can carry what a trigger reaches, and a rule reads a name's other bindings through
    the units using it. A function is followed as a value where its ``return``s are such lines,
    else as a site where its body is: its callers are kept (a rule asks where it runs), but
    they carry nothing from it. A kept member keeps its class's shell."""
    users: dict[str, list[int]] = {}
    for index, unit in enumerate(units):
        for name in unit.words:
            users.setdefault(name, []).append(index)
    ordered = sorted(trigger_lines)
    named = [
        index
        for index, unit in enumerate(units)
        if any(_holds(ordered, first, last) for first, last in unit.spans)
    ]
    kept = set(named)
    read: set[int] = set()  # the units whose bindings were read: kept for what they hold
    values: set[str] = set()
    sites: set[str] = set()
    #: a word -> the bindings waiting for it to be followed as a value
    waiting: dict[str, list[_Binding]] = {}
    names: list[tuple[str, str]] = []
    pending = list(named)
    while pending or names:
        if pending:
            index = pending.pop()
            if index in read:
                continue
            read.add(index)
            unit = units[index]
            if unit.shell is not None:
                # the class must stay around its member; a shell kept for that alone binds
                # nothing a trigger reaches (it holds none and uses no followed name)
                kept.add(unit.shell)
            for binding in _unit_bindings(text, line_starts, unit, trigger_lines):
                bound, spans, kind = binding
                if any(_holds(ordered, first, last) for first, last in spans):
                    names.extend((name, kind) for name in bound)
                    continue
                source = _words(text, line_starts, spans)
                if source & values:
                    names.extend((name, kind) for name in bound)
                    continue
                for word in source:
                    waiting.setdefault(word, []).append(binding)
            continue
        name, kind = names.pop()
        if name in values or (kind == SITE and name in sites):
            continue
        (values if kind == VALUE else sites).add(name)
        if kind == VALUE:
            for bound, _, waiting_kind in waiting.pop(name, ()):
                names.extend((other, waiting_kind) for other in bound)
        for user in users.get(name, ()):
            kept.add(user)
            if user not in read:
                pending.append(user)
    return [units[index] for index in sorted(kept)]


def _unit_bindings(
    text: str, line_starts: list[int], unit: _Unit, trigger_lines: Set[int]
) -> list[_Binding]:
    """What a unit binds at module level, binding by binding (``_bindings``). A shell binds its
    class name from its header (decorators, bases), and its class-level statements bind like
    module-level ones (rules read a class body as the module's scope); a member binds its
    ``global`` names and trigger-holding imports from its whole span."""
    if unit.binds is not None:
        out: list[_Binding] = [({unit.binds}, unit.spans[:1], VALUE)]
        for statement in unit.statements:
            out.extend(_bindings(text, line_starts, statement, trigger_lines))
        return out
    if unit.split:
        inner = [s for top in unit.statements for s in (top, *_statements_in(top))]
        return [(_inner_bindings(inner, trigger_lines), unit.spans, VALUE)]
    out = []
    for statement in unit.statements:
        out.extend(_bindings(text, line_starts, statement, trigger_lines))
    return out


#: What a binding makes of the names it binds, where its lines hold a trigger or a followed
#: value: ``VALUE`` (they carry it: their uses are kept and what those bind from them is
#: followed in turn) or ``SITE`` (a function running it: its uses are kept, being where it runs,
#: but carry nothing further).
VALUE, SITE = "value", "site"

_Binding = tuple[set[str], list[tuple[int, int]], str]


def _bindings(
    text: str, line_starts: list[int], statement: ast.stmt, trigger_lines: Set[int]
) -> list[_Binding]:
    """The module-level bindings of a statement, each with the lines it binds from: a function
    binds its name as a value from its decorators and ``return`` statements (its whole span
    when it yields), and as a site from its whole span; a class binds its name from its header
    (rules give class names no values) and its class-level statements bind as module-level
    ones do; a definition's ``global`` names and trigger-holding imports come from its whole
    span; a compound statement's header binds its targets (``for x in``, ``with ... as x``,
    ``except E as x``, a walrus) from the header, its blocks bind as statements do; a simple
    statement binds its targets and imports from its own lines."""
    out: list[_Binding] = []
    pending = [statement]
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            span = _span(node)
            inner = _statements_in(node)
            out.append(
                (
                    _inner_bindings(inner, trigger_lines) | _stores(node.decorator_list),
                    [span],
                    VALUE,
                )
            )
            decorators = [(span[0], node.lineno - 1)] if span[0] < node.lineno else []
            if isinstance(node, ast.ClassDef):
                header_last = max(node.lineno, _first_line(node.body[0]) - 1)
                out.append(({node.name}, [*decorators, (node.lineno, header_last)], VALUE))
                pending.extend(node.body)  # class-level statements bind at module level
                continue
            start = line_starts[span[0] - 1]
            stop = line_starts[span[1]] if span[1] < len(line_starts) else len(text)
            if "yield" in text[start:stop]:
                values = [span]
            else:
                values = decorators + [_span(s) for s in inner if isinstance(s, ast.Return)]
            out.append(({node.name}, values, VALUE))
            out.append(({node.name}, [span], SITE))
            continue
        blocks = _blocks(node)
        if not blocks:
            out.append((_stores([node]), [_span(node)], VALUE))
            continue
        expressions = _header_nodes(node, handlers=False)
        last: int = max(
            (
                line
                for item in expressions
                for inner_node in ast.walk(item)
                if (line := getattr(inner_node, "end_lineno", None)) is not None
            ),
            default=node.lineno,
        )
        out.append((_stores(expressions), [(node.lineno, max(last, node.lineno))], VALUE))
        for handler in getattr(node, "handlers", ()):
            if handler.name:
                type_end = handler.type.end_lineno if handler.type is not None else None
                out.append(({handler.name}, [(handler.lineno, type_end or handler.lineno)], VALUE))
        for block in blocks:
            pending.extend(block)
    return [binding for binding in out if binding[0]]


def _stores(nodes: Iterable[ast.AST]) -> set[str]:
    """Names the nodes bind (stored names, imports, ``except`` names), lambdas left out."""
    names: set[str] = set()
    stack: list[ast.AST] = list(nodes)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Lambda):
            continue
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            names.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                names.add(alias.asname or alias.name.split(".", 1)[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        stack.extend(ast.iter_child_nodes(node))
    return names


def _inner_bindings(statements: Iterable[ast.stmt], trigger_lines: Set[int]) -> set[str]:
    """What statements inside a definition bind at module level: ``global`` names and, as the
    import table is one flat table per file, the names of the imports holding a trigger
    (``_closure`` follows names for the values a trigger reaches, and an import without one binds no such value; resolution itself comes from the whole file's imports)."""
    names: set[str] = set()
    for inner in statements:
        if isinstance(inner, ast.Global):
            names.update(inner.names)
        elif isinstance(inner, (ast.Import, ast.ImportFrom)) and not trigger_lines.isdisjoint(
            range(inner.lineno, (inner.end_lineno or inner.lineno) + 1)
        ):
            names.update(alias.asname or alias.name.split(".", 1)[0] for alias in inner.names)
    return names
