"""Parse only the statements that can matter to the active rules.

libcst costs far more than the rules on most files that pass the prefilter, yet a rule reports
inside the statements holding its triggers (or using a name their imports bind). ``ast`` (a C
parser) gives every statement's line span cheaply; the statements no active rule can see are
left out: the blanked text empties their lines, and libcst parses it without them
(``PartialSource.compacted``: an empty line costs libcst a node), every kept line whole, so
columns are the file's and lines map back by a table. Each rule declares what it must see
(``Rule.parse_scope``): the innermost statements (``statement``), their whole top-level statement
(``definition``), the top-level statements connected by module-level names (``names``; a
class by its methods, with its header and class attributes) or the whole file (``module``, the
default); a ``statement`` rule may also say what else the statement of a finding holds
(``statement_requires``: ``import``, a literal's spellings; ``statement_calls``: the calls it
reports), and then keeps only the statements holding both. Around every kept statement stay
the blocks' headers and what the guard facility reads (an ``if`` that leaves, an ``assert``,
the imports of a block, each block's last statement). Name resolution comes from the whole file's imports, read from the same
``ast`` tree (``migrator.syntax.imports.imports_from_ast``). Fixes and notebooks parse whole files;
``tests/test_partial_parse.py`` proves the findings identical.
"""

from __future__ import annotations

import ast
import bisect
import itertools
import re
import unicodedata
from collections.abc import Iterable, Sequence, Set
from dataclasses import dataclass, field

from migrator.engine.rule import CallShape
from migrator.syntax.imports import ImportTable, imports_from_ast
from migrator.syntax.parse import parse_ast
from migrator.syntax.reexports import ExportSlice

#: Below this share of the file's lines the blanked text is worth parsing instead of the file.
WORTHWHILE = 0.85

_NEWLINE = re.compile(r"\r\n|\r|\n")
_TRY = (ast.Try, getattr(ast, "TryStar", ast.Try))
_EXIT_CALLS = frozenset({"exit", "skip", "skipTest", "_exit"})


@dataclass(frozen=True, slots=True)
class PartialSource:
    """The text libcst parses (dropped statements blanked) and the file's imports."""

    text: str
    #: The file's ``ast``, left whole (``blanked_tree`` cuts it to the kept statements).
    tree: ast.Module
    imports: ImportTable
    #: The indentation libcst infers for the whole file (its first indented line's): the
    #: blanked text's module must infer the same, as rules print nodes with it.
    indent: str
    kept_lines: int
    total_lines: int
    #: Whether a statement some rule can report in is kept (one holding what its scope reads):
    #: when none is, the rest is skeleton (imports, blocks' first and last statements) in which
    #: no active rule reports, and the file need not be parsed at all.
    marked: bool = True
    #: The line ranges of the dropped statements (emptied in ``text``).
    dropped: tuple[tuple[int, int], ...] = ()
    #: Each block of ``tree`` that lost statements, with the statements it keeps.
    kept: tuple[tuple[list[ast.stmt], list[ast.stmt]], ...] = ()

    def blanked_tree(self) -> ast.Module:
        """The blanked text's ``ast``: ``tree`` less the dropped statements (``tree`` itself is
        changed, so ask only when done with the whole file's)."""
        for body, kept in self.kept:
            body[:] = kept
        return self.tree

    def compacted(self) -> tuple[str, list[int]]:
        """``text`` without the dropped statements' lines, and the file's line number of each
        of its lines: what libcst parses, as an empty line costs it a node; positions found
        in it are mapped back (``migrator.syntax.positions.map_range``)."""
        starts = _line_starts(self.text)
        if not self.dropped:
            return self.text, list(range(1, len(starts) + 1))
        gone = bytearray(len(starts) + 2)
        for first, last in self.dropped:
            gone[first : last + 1] = b"\x01" * (last - first + 1)
        kept = [number for number in range(1, len(starts) + 1) if not gone[number]]
        ends = [*starts[1:], len(self.text)]
        return "".join(self.text[starts[n - 1] : ends[n - 1]] for n in kept), kept


@dataclass(slots=True)
class _Group:
    """Top-level statements sharing lines (``a = 1; b = 2``), kept or dropped together."""

    first: int
    last: int
    statements: list[ast.stmt]


def partial_source(
    text: str,
    statement_triggers: Iterable[str],
    definition_triggers: Iterable[str] = (),
    name_triggers: Iterable[str] = (),
    exports: ExportSlice | None = None,
    worthwhile: float = WORTHWHILE,
    function_words: Iterable[str] = (),
    paired: Iterable[tuple[Iterable[str], Iterable[str]]] = (),
    tree: ast.Module | None = None,
    shaped: Iterable[tuple[Iterable[str], Sequence[CallShape]]] = (),
) -> PartialSource | None:
    """The blanked text keeping what the triggers can reach, or None when the whole file must be
    parsed (``ast`` rejects it, or too little would be left out). Where nothing the rules read
    is kept (``PartialSource.marked`` false), the file needs no parse however little is left out.

    - ``statement_triggers``: the innermost statements holding them (inside the skeleton of the
      blocks around them) and the statements using a name their imports bind;
    - ``definition_triggers``: the whole top-level statements holding them, and those using a
      name their imports bind;
    - ``name_triggers``: the whole top-level statements holding them and, to a fixed point, the
      top-level statements using any name those bind at module level;
    - ``function_words``: identifiers (matched as whole words) whose whole top-level
      statements are kept, with those using a name their imports bind, while every occurrence
      and use (imports aside) lies inside a function; one in module-level code (whose scope is
      the module) makes the whole file needed;
    - ``paired``: (triggers, needed strings) of rules whose every finding lies in a statement
      holding both: the innermost statements (a compound statement's header alone) holding a
      trigger and a needed string, without the uses of the names their imports bind;
    - ``shaped``: (triggers, call shapes) of rules whose every finding lies in a statement
      holding such a call: of the innermost statements holding a trigger or using a name their
      imports bind, those holding one (a compound statement's header alone).

    ``tree`` is ``text``'s ``ast`` when the caller has it (``parse_ast``); it is left as it was
    (``PartialSource.blanked_tree`` makes the blanked text's from it).
    """
    if tree is None:
        tree = parse_ast(text)
    if tree is None or not tree.body:
        return None
    imports = imports_from_ast(tree, exports, text)
    line_starts = _line_starts(text)
    groups = _groups(tree.body)
    firsts = [group.first for group in groups]
    statement_lines = _trigger_lines(text, statement_triggers, line_starts)
    definition_lines = _trigger_lines(text, definition_triggers, line_starts)
    import_nodes = _imports(tree.body, [])
    # names bound through a project module that re-exports them: their uses count as aliases
    reexported = _reexported(import_nodes, imports) if exports is not None else set()
    marks = set(statement_lines)
    marks.update(_alias_uses(text, import_nodes, statement_lines, line_starts, reexported))
    for triggers, needed in paired:
        marks.update(_paired_lines(text, tree.body, triggers, needed, line_starts))
    for triggers, shapes in shaped:
        triggers = tuple(triggers)
        lines = _trigger_lines(text, triggers, line_starts)
        lines |= _alias_uses(text, import_nodes, lines, line_starts, reexported)
        marks.update(_shaped_lines(tree.body, lines, shapes, imports))
    whole = _at(groups, firsts, definition_lines)
    if definition_lines:
        uses = _alias_uses(text, import_nodes, definition_lines, line_starts, reexported)
        whole.update(_at(groups, firsts, uses))
    function_words = set(function_words)
    function_lines = _word_lines(text, function_words, line_starts)
    if function_lines:
        # a re-exported name counts with the function words when it binds one of them; the
        # others are kept where used, like any re-exported name, without their whole statement
        marks.update(_alias_uses(text, [], function_lines, line_starts, reexported))
        binding = {
            name
            for name in reexported
            if function_words.intersection(imports.bindings[name].split("."))
        }
        function_lines |= _alias_uses(text, import_nodes, function_lines, line_starts, binding)
        if not _inside_functions(function_lines, tree.body, import_nodes):
            return None
        whole.update(_at(groups, firsts, function_lines))
    name_lines = _trigger_lines(text, name_triggers, line_starts)
    if name_lines and _at(groups, firsts, name_lines):
        units = _units(text, line_starts, groups, name_lines)
        for unit in _closure(text, line_starts, units, name_lines):
            if unit.split:
                marks.update(line for first, last in unit.keep for line in range(first, last + 1))
            else:
                whole.add(unit.group)
    indent = _first_indent(text, tree, line_starts)
    dropped: list[tuple[int, int]] = []
    selector = _Selector(text, line_starts, sorted(marks), dropped)
    selector.module(tree.body, groups, whole)
    total_lines = len(line_starts)
    kept_lines = total_lines - sum(last - first + 1 for first, last in dropped)
    marked = bool(marks or whole)
    if marked and kept_lines > worthwhile * total_lines:
        return None
    return PartialSource(
        _blank(text, dropped, line_starts),
        tree,
        imports,
        indent,
        kept_lines,
        total_lines,
        marked,
        tuple(dropped),
        tuple(selector.edits),
    )


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


class _Selector:
    """Decides, block by block, which statements stay: those spanning a mark (descended into
    when compound, so only the marked statements inside stay), the guards the engine reads
    around them (an ``if`` that leaves, an ``assert``, the imports of a ``try`` body), and one
    statement per block so that every block still parses. Dropped line ranges are collected."""

    def __init__(
        self, text: str, line_starts: list[int], marks: list[int], dropped: list[tuple[int, int]]
    ) -> None:
        self.text = text
        self.line_starts = line_starts
        self.marks = marks
        self.dropped = dropped
        #: (block, its kept statements): ``PartialSource.blanked_tree`` applies them
        self.edits: list[tuple[list[ast.stmt], list[ast.stmt]]] = []

    def module(self, body: list[ast.stmt], groups: list[_Group], whole: set[int]) -> None:
        self._block(body, groups, whole, nested=False)

    def _block(
        self,
        body: list[ast.stmt],
        groups: list[_Group],
        whole: Set[int] = frozenset(),
        nested: bool = True,
    ) -> None:
        """Decide the groups of one block; ``body`` (the ``ast`` list) keeps only those kept, so
        the tree matches the blanked text."""
        decisions: list[str] = []
        for index, group in enumerate(groups):
            if index in whole:
                decisions.append("whole")
            elif self._marked(group.first, group.last):
                decisions.append("descend")
            elif any(_guarding(statement) for statement in group.statements):
                decisions.append("minimal")
            else:
                decisions.append("drop")
        if nested and decisions[-1] == "drop":
            # a block must not be empty, and guards read its last statement (does it leave?)
            decisions[-1] = "minimal"
        if decisions[0] == "drop" and (not nested or _docstring_next(groups, decisions)):
            # the first statement stays: a kept string statement after it must not become the
            # module's (or the block's) docstring (rules skip docstrings)
            decisions[0] = "minimal"
        kept: list[ast.stmt] = []
        for group, decision in zip(groups, decisions, strict=True):
            if decision == "drop":
                self.dropped.append((group.first, group.last))
                continue
            kept.extend(group.statements)
            if decision != "whole":
                self._inside(group, decision == "descend")
        self.edits.append((body, kept))

    def _marked(self, first: int, last: int) -> bool:
        index = bisect.bisect_left(self.marks, first)
        return index < len(self.marks) and self.marks[index] <= last

    def _inside(self, group: _Group, marked: bool) -> None:
        """Keep a group, descending into a lone compound statement whose blocks start on lines
        of their own (else the whole group stays)."""
        if len(group.statements) != 1:
            return
        blocks = _blocks(group.statements[0])
        if not blocks or not all(
            _starts_line(self.text, self.line_starts, block[0]) for block in blocks
        ):
            return
        inner = [_groups(block) for block in blocks]
        if marked and self._marks_outside(group, inner):
            return  # a mark in a header (a test, a decorator): the rule may read the body
        for block, block_groups in zip(blocks, inner, strict=True):
            self._block(block, block_groups)

    def _marks_outside(self, group: _Group, inner: list[list[_Group]]) -> bool:
        spans = sorted((child.first, child.last) for groups in inner for child in groups)
        firsts = [first for first, _ in spans]
        start = bisect.bisect_left(self.marks, group.first)
        for mark in self.marks[start:]:
            if mark > group.last:
                break
            index = bisect.bisect_right(firsts, mark) - 1
            if (index < 0 or spans[index][1] < mark) and not self._comment_line(mark):
                return True
        return False

    def _comment_line(self, line: int) -> bool:
        """Whether ``line`` holds only a comment (a trigger there is in no node a rule reads: it
        does not make the statement's blocks needed whole)."""
        start = self.line_starts[line - 1]
        end = self.line_starts[line] if line < len(self.line_starts) else len(self.text)
        return self.text[start:end].lstrip().startswith("#")


def _docstring_next(groups: list[_Group], decisions: list[str]) -> bool:
    """Whether the first statement kept after the dropped first one is a string statement (it
    would read as the block's docstring)."""
    for group, decision in zip(groups, decisions, strict=True):
        if decision != "drop":
            statement = group.statements[0]
            return (
                isinstance(statement, ast.Expr)
                and isinstance(statement.value, ast.Constant)
                and isinstance(statement.value.value, str)
            )
    return False


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
