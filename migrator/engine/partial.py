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
from collections.abc import Iterable, Sequence, Set
from dataclasses import dataclass

from migrator.engine.partial_names import (
    _alias_uses,
    _closure,
    _imports,
    _inside_functions,
    _reexported,
    _units,
)
from migrator.engine.partial_statements import (
    _blank,
    _blocks,
    _first_indent,
    _Group,
    _groups,
    _guarding,
    _line_starts,
    _starts_line,
)
from migrator.engine.partial_triggers import (
    _at,
    _paired_lines,
    _shaped_lines,
    _trigger_lines,
    _word_lines,
)
from migrator.engine.rule_parts import CallShape
from migrator.syntax.imports import ImportTable, imports_from_ast
from migrator.syntax.parse import parse_ast
from migrator.syntax.reexports import ExportSlice

#: Below this share of the file's lines the blanked text is worth parsing instead of the file.
WORTHWHILE = 0.85


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
