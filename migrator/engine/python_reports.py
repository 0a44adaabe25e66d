"""Run the Python rules over one parsed file and turn what they report into findings: parse
(whole or partial), dispatch, resolve positions, mark guarded and dispatched code; a syntax
error is one finding."""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import libcst as cst
from libcst.metadata import CodeRange

from migrator.engine.context import (
    ALONE,
    FileInputs,
    PythonContext,
    RawPythonFinding,
    RawTextFinding,
)
from migrator.engine.dispatch import _Dispatcher
from migrator.engine.fix_policy import police_python
from migrator.engine.parse_plan import (
    PARSE_MODE_VARIABLE,
    _parse_partial,
    _partial_allowed,
    active_rules,
    partial_for,
)
from migrator.engine.partial import WORTHWHILE
from migrator.engine.rule import PythonRule, Rule
from migrator.files.sources import FailFile, check_nesting
from migrator.model import Applicability, Finding, FixInfo
from migrator.reach.callers import mark_dispatched
from migrator.reach.opt_in import as_hint
from migrator.syntax.imports import ImportTable, imports_from_ast
from migrator.syntax.parse import parse_ast, parse_module
from migrator.syntax.positions import map_range, positions_for

#: How ``_parse`` words a syntax error; ``syntax_error_at`` reads the position back.
_SYNTAX_ERROR = "syntax error at line {line}, column {column}: {message}"


def syntax_error_at(reason: str) -> tuple[int, int] | None:
    """The 1-based (line, column) of a syntax error from its one-line reason; None for any
    other reason (the language server places its diagnostic there)."""
    match = re.match(r"syntax error at line (\d+), column (\d+): ", reason)
    return (int(match[1]), int(match[2])) if match else None


def _parse(text: str) -> cst.Module:
    check_nesting(text)
    try:
        return parse_module(text)
    except cst.ParserSyntaxError as error:
        message = str(error.message).splitlines()[0] if error.message else "invalid syntax"
        raise FailFile(
            _SYNTAX_ERROR.format(line=error.raw_line, column=error.raw_column + 1, message=message)
        ) from None
    except (RecursionError, MemoryError):
        raise FailFile("too deeply nested to parse") from None


def python_reports(
    text: str,
    path: str,
    rules: Sequence[type[Rule]],
    *,
    prefilter: bool = True,
    imports: ImportTable | None = None,
    module: cst.Module | None = None,
    inputs: FileInputs = ALONE,
) -> tuple[cst.Module | None, PythonContext | None]:
    """Parse once and run every active Python rule in one walk; (None, None) when the prefilter
    rules it out. The context holds the reports, parents, scopes and guards of the file."""
    parsed = _reports(
        text, path, rules, prefilter=prefilter, imports=imports, module=module, inputs=inputs
    )
    return (parsed.module, parsed.context) if isinstance(parsed, _Parsed) else (None, None)


@dataclass(slots=True)
class _Parsed:
    """A walked module, its context, and the text and ``ast`` its positions are computed from
    (the blanked text of ``migrator.engine.partial`` when only part of the file was parsed)."""

    module: cst.Module
    context: PythonContext
    text: str
    tree: ast.Module | None = None
    #: For a partially parsed file, the file's line number of each line of ``text``
    #: (``PartialSource.compacted``): positions are mapped back through it.
    lines: list[int] | None = None


class _Unread:
    """``_reports``'s answer for a file whose active rules can report in none of its statements
    (partial parsing keeps none they read): no findings, with its suppressions all unused, as a
    parsed file without findings has."""


_UNREAD = _Unread()


def _reports(
    text: str,
    path: str,
    rules: Sequence[type[Rule]],
    *,
    prefilter: bool = True,
    imports: ImportTable | None = None,
    module: cst.Module | None = None,
    partial: bool = False,
    inputs: FileInputs = ALONE,
) -> _Parsed | _Unread | None:
    chosen = [rule for rule in active_rules(rules, text, prefilter) if issubclass(rule, PythonRule)]
    if not chosen and prefilter:
        return None
    parsed_text = text
    tree: ast.Module | None = None
    lines: list[int] | None = None
    table = imports
    source: str | None = None  # the text a whole-file ``module`` was parsed from
    whole_tree: ast.Module | None = None  # the whole file's ``ast``, where read
    if module is None:
        blanked = None
        if prefilter and imports is None and any(rule.parsing.requires_imports for rule in chosen):
            # rules whose findings resolve names the file's imports cannot: not run
            whole_tree = parse_ast(text)
            if whole_tree is not None:
                resolvable = imports_from_ast(whole_tree, inputs.exports, text)
                chosen = [
                    rule
                    for rule in chosen
                    if not rule.parsing.requires_imports
                    or resolvable.may_resolve(rule.parsing.requires_imports)
                ]
                if not chosen:
                    return None
        if partial and prefilter and imports is None and _partial_allowed(chosen):
            if whole_tree is None:
                whole_tree = parse_ast(text)
            if whole_tree is not None:
                blanked = partial_for(
                    chosen,
                    text,
                    inputs.exports,
                    # "partial" (for tests): whenever possible, however little is left out
                    worthwhile=(
                        1.0 if os.environ.get(PARSE_MODE_VARIABLE) == "partial" else WORTHWHILE
                    ),
                    tree=whole_tree,
                )
        if blanked is not None and not blanked.marked:
            return _UNREAD  # no statement an active rule reports in: nothing to parse
        compact = blanked.compacted() if blanked is not None else None
        partial_module = _parse_partial(text, compact[0]) if compact is not None else None
        if blanked is not None and compact is not None and partial_module is not None:
            if partial_module.default_indent == blanked.indent:
                module = partial_module
                # positions are found in the compacted text (its ``ast`` read when needed)
                parsed_text, lines = compact
                table = blanked.imports
                # the whole file's ``ast`` is freed before the walk (a rule asking for
                # file-wide facts reads it again: ``rules._file_ast``)
                whole_tree = blanked = None
        if module is None:
            tree = whole_tree  # the file's own ``ast`` (if read, left whole), for positions
            module = _parse(text)
            # a whole file's module prints exactly its text (a blanked text's may not: libcst
            # moves the comments of emptied lines), so rules read the text instead of printing it
            source = text
    if table is None:
        # the module's own text: its availability flags are read from it
        table = ImportTable.from_module(module, inputs.exports, source or text, tree)
    context = PythonContext(
        path=path,
        module=module,
        imports=table,
        source=source,
        text=text,
        file_tree=whole_tree,
        inputs=inputs,
    )
    instances = [rule(context) for rule in chosen]
    if instances:
        # one read-only walk for all rules; whitespace and punctuation nodes are skipped
        _Dispatcher(instances, context).walk(module)
        police_python(context)
    return _Parsed(module, context, parsed_text, tree, lines)


def _finding(
    raw: RawPythonFinding | RawTextFinding,
    path: str,
    start: tuple[int, int],
    end: tuple[int, int],
    lines: list[str],
    cell: int | None,
    guard: str = "",
    scope: str = "",
) -> Finding:
    rule = raw.rule
    fix = None
    if raw.replacement is not None and raw.applicability is not Applicability.NONE:
        fix = FixInfo(raw.applicability, raw.fix_description or rule.fix.title or "apply fix")
    line = start[0]
    return Finding(
        rule=rule.code,
        name=rule.name,
        category=rule.category,
        severity=raw.severity if raw.severity is not None else rule.severity,
        path=path,
        line=line,
        column=start[1] + 1,
        end_line=end[0],
        end_column=end[1] + 1,
        message=raw.message,
        fix=fix,
        cell=cell,
        source_line=lines[line - 1].strip() if 0 < line <= len(lines) else "",
        guard="" if rule.parsing.sees_guarded else guard,
        scope=scope,
        group=raw.group,
        # a report's own problem key makes it one problem with the file's other reports of it
        aggregate=(
            raw.problem_scope
            if isinstance(raw, RawPythonFinding) and raw.problem
            else rule.impact.aggregate
        ),
        problem=(raw.problem if isinstance(raw, RawPythonFinding) else "")
        or rule.impact.problem
        or "",
    )


def _python_findings(
    parsed: _Parsed,
    path: str,
    text: str,
    cell: int | None,
) -> list[tuple[RawPythonFinding, Finding]]:
    context = parsed.context
    reports = context.reports
    if not reports:
        return []
    parents = context.parents
    if parsed.tree is None:
        # one ``ast`` for both position passes below (None: they fall back to libcst's)
        parsed.tree = parse_ast(parsed.text)

    def located(nodes: Sequence[cst.CSTNode]) -> Callable[[cst.CSTNode], CodeRange | None]:
        """The positions of ``nodes`` in the file (mapped back from a compacted text)."""
        found = positions_for(
            parsed.module, parsed.text, nodes, lambda node: parents.get(id(node)), parsed.tree
        )
        lines = parsed.lines
        if lines is None:
            return found
        return lambda node: None if (where := found(node)) is None else map_range(where, lines)

    def first_lines(nodes: Sequence[cst.CSTNode]) -> list[int]:
        """The first line of each node, from the same anchored positions as the findings'."""
        found = located(nodes)
        return [code_range.start.line if (code_range := found(node)) else 0 for node in nodes]

    mark_dispatched(context, text, path, first_lines)
    positions = located([raw.node for raw in reports])
    lines = text.splitlines()
    out = []
    seen: set[tuple[str, int, int]] = set()
    for raw in reports:
        code_range = positions(raw.node)
        if code_range is None:
            continue
        key = (raw.rule.code, code_range.start.line, code_range.start.column)
        if key in seen:
            continue
        seen.add(key)
        start = (code_range.start.line, code_range.start.column)
        end = (code_range.end.line, code_range.end.column)
        guard = context.guards.guard_of(raw.node)
        scope = context.scope_path(raw.node)
        finding = _finding(raw, path, start, end, lines, cell, guard, scope)
        if not guard and (option := context.guards.opt_in_of(raw.node)):
            finding = as_hint(finding, option)
        out.append((raw, finding))
    return out
