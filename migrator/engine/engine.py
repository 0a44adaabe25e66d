"""Analyse one file: prefilter, parse once, run every selected rule in one traversal, resolve
positions, apply suppressions and, when asked, apply fixes and prove the result is stable.

Everything that can go wrong with one file ends as a ``FileResult`` with a one-line reason; the
engine never raises for a single bad file.
"""

from __future__ import annotations

import ast
import functools
import json
import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import libcst as cst
from libcst.metadata import CodeRange

from migrator.engine.context import PythonContext, RawPythonFinding, RawTextFinding, TextContext
from migrator.engine.embedded import with_doc_commands, with_recipes
from migrator.engine.fix_policy import (
    check_line_length,
    chosen_fixes,
    police_python,
    police_text,
)
from migrator.engine.fixer import (
    FixError,
    apply_python_fixes,
    apply_text_edits,
    eligible,
    incomplete_groups,
)
from migrator.engine.image_folding import fold_image_parts
from migrator.engine.partial import WORTHWHILE, PartialSource, partial_source
from migrator.engine.rule import PythonRule, Rule, TextRule
from migrator.engine.suppress import SUPPRESSION_MARK, Suppressions
from migrator.engine.triggers import TriggerSearch
from migrator.engine.visual_indent import keep_visual_indent
from migrator.files.sources import FailFile, SkipFile, check_nesting, notebook_cells
from migrator.model import Applicability, Finding, FixInfo, Status
from migrator.reach.callers import mark_dispatched
from migrator.reach.ci_guards import ci_line_guards
from migrator.reach.guards import GUARD_NODE_TYPES
from migrator.reach.opt_in import as_hint
from migrator.reach.release_tooling import release_tooling
from migrator.reach.text_guards import TextGuards
from migrator.syntax.astutil import syntax_children
from migrator.syntax.imports import ImportTable, imports_from_ast
from migrator.syntax.parse import parse_ast, parse_module
from migrator.syntax.positions import map_range, positions_for
from migrator.syntax.reexports import ExportSlice, current_exports

MAX_FIX_PASSES = 6
#: Set to "whole" (``migrate scan --whole-parse``) to parse every file whole: the reference the
#: partial parse is proven against; "partial" parses partially however little that leaves out.
PARSE_MODE_VARIABLE = "MIGRATE_PARSE"


@dataclass(slots=True)
class Analysis:
    """Findings of one text (or notebook), and the fixed text when fixing was asked for."""

    findings: list[Finding] = field(default_factory=list)
    new_text: str | None = None
    fixed: list[Finding] = field(default_factory=list)
    fix_error: str | None = None
    unused_suppressions: list[tuple[int, str]] = field(default_factory=list)


class _Dispatcher:
    """Calls each rule's ``visit_<Node>``/``leave_<Node>`` methods in one walk of the tree."""

    _method_cache: dict[type, dict[str, list[str]]] = {}

    def __init__(self, rules: Sequence[PythonRule], context: PythonContext) -> None:
        self.context = context
        self.parents = context.parents
        self.nodes = context.nodes
        self.guards = context.guards
        self.visits: dict[str, list[Callable[[Any], Any]]] = {}
        self.leaves: dict[str, list[Callable[[Any], Any]]] = {}
        for rule in rules:
            methods = self._methods(type(rule))
            for node_name in methods["visit"]:
                self.visits.setdefault(node_name, []).append(getattr(rule, f"visit_{node_name}"))
            for node_name in methods["leave"]:
                self.leaves.setdefault(node_name, []).append(getattr(rule, f"leave_{node_name}"))

    @classmethod
    def _methods(cls, rule_type: type) -> dict[str, list[str]]:
        cached = cls._method_cache.get(rule_type)
        if cached is None:
            cached = {"visit": [], "leave": []}
            for attribute in dir(rule_type):
                for kind in ("visit", "leave"):
                    if attribute.startswith(kind + "_") and callable(getattr(rule_type, attribute)):
                        cached[kind].append(attribute[len(kind) + 1 :])
            cls._method_cache[rule_type] = cached
        return cached

    def walk(self, module: cst.Module) -> None:
        """Visit every syntax node (``astutil.syntax_children``: no trivia) in pre-order, as
        ``astutil.fast_visit`` would, in one loop: record its parent and the node list, mark
        guards, call the rules' hooks; a node's leaving is queued only where a hook (or the
        module's end, which completes the context) needs it."""
        parents = self.parents
        append_node = self.nodes.append
        enter_guard = self.guards.enter
        visits = self.visits
        leaves = self.leaves
        context = self.context
        stack: list[tuple[cst.CSTNode, cst.CSTNode | None, bool]] = [(module, None, False)]
        pop, push, extend = stack.pop, stack.append, stack.extend
        while stack:
            node, parent, leaving = pop()
            name = type(node).__name__
            if leaving:
                if node is module:
                    context.complete = True
                for callback in leaves.get(name, ()):
                    callback(node)
                continue
            if parent is not None:
                parents[id(node)] = parent
            append_node(node)
            if type(node) in GUARD_NODE_TYPES:
                # guards are marked before any rule visits the node or what it controls
                enter_guard(node, parent)
            callbacks = visits.get(name)
            if callbacks:
                for callback in callbacks:
                    callback(node)
            if node is module or name in leaves:
                push((node, parent, True))
            children = syntax_children(node)
            if children:
                extend([(child, node, False) for child in reversed(children)])


def active_rules(
    rules: Iterable[type[Rule]], text: str, prefilter: bool, kind: str = "python"
) -> list[type[Rule]]:
    """Rules that can fire on ``text``: those with a trigger string in it (all, without prefilter)."""
    if not prefilter:
        return list(rules)
    rules = tuple(rules)
    present = _trigger_search(rules, kind).present(text)
    return [
        rule
        for rule in rules
        if not present.isdisjoint(table_for(rule, kind))
        and (
            not (required := requires_for(rule, kind)) or any(needed in text for needed in required)
        )
        and (
            not rule.statement_requires or any(needed in text for needed in rule.statement_requires)
        )
        and (rule.silenced_by is None or not rule.silenced_by.search(text))
    ]


@functools.lru_cache(maxsize=64)
def _trigger_search(rules: tuple[type[Rule], ...], kind: str) -> TriggerSearch:
    """Every distinct trigger of ``rules`` for ``kind``, searched for at most once per file."""
    return TriggerSearch.build(trigger for rule in rules for trigger in table_for(rule, kind))


def table_for(rule: type[Rule], kind: str) -> tuple[str, ...]:
    return rule.kind_triggers.get(kind, rule.triggers)


def requires_for(rule: type[Rule], kind: str) -> tuple[str, ...]:
    """What a text of ``kind`` must also hold for ``rule`` to be active (``Rule.requires``)."""
    return rule.kind_requires.get(kind, rule.requires)


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
) -> tuple[cst.Module | None, PythonContext | None]:
    """Parse once and run every active Python rule in one walk; (None, None) when the prefilter
    rules it out. The context holds the reports, parents, scopes and guards of the file."""
    parsed = _reports(text, path, rules, prefilter=prefilter, imports=imports, module=module)
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
        if prefilter and imports is None and any(rule.requires_imports for rule in chosen):
            # rules whose findings resolve names the file's imports cannot: not run
            whole_tree = parse_ast(text)
            if whole_tree is not None:
                resolvable = imports_from_ast(whole_tree, current_exports.get(), text)
                chosen = [
                    rule
                    for rule in chosen
                    if not rule.requires_imports or resolvable.may_resolve(rule.requires_imports)
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
                    current_exports.get(),
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
        table = ImportTable.from_module(module, current_exports.get(), source or text, tree)
    context = PythonContext(
        path=path, module=module, imports=table, source=source, text=text, file_tree=whole_tree
    )
    instances = [rule(context) for rule in chosen]
    if instances:
        # one read-only walk for all rules; whitespace and punctuation nodes are skipped
        _Dispatcher(instances, context).walk(module)
        police_python(context)
    return _Parsed(module, context, parsed_text, tree, lines)


def _partial_allowed(chosen: Sequence[type[Rule]]) -> bool:
    """Partial parsing unless switched off (``--whole-parse``) or a rule reads the whole module."""
    if os.environ.get(PARSE_MODE_VARIABLE) == "whole":
        return False
    return not any(rule.parse_scope == "module" for rule in chosen)


def partial_for(
    chosen: Sequence[type[Rule]],
    text: str,
    exports: ExportSlice | None = None,
    worthwhile: float = WORTHWHILE,
    tree: ast.Module | None = None,
) -> PartialSource | None:
    """What ``migrator.engine.partial`` keeps of ``text`` for the active rules ``chosen``, by their
    ``parse_scope``, triggers, scope triggers, function words, statement requirements and calls
    (``tree``: ``text``'s ``ast``, see ``partial_source``)."""
    return partial_source(
        text,
        _present_triggers(chosen, text, "statement"),
        _present_triggers(chosen, text, "definition"),
        _present_triggers(chosen, text, "names"),
        exports,
        worthwhile=worthwhile,
        function_words={word for rule in chosen for word in rule.function_words if word in text},
        paired=[
            (
                _present(
                    (t for t in table_for(rule, "python") if t not in rule.unpaired_triggers),
                    text,
                ),
                rule.statement_requires,
            )
            for rule in chosen
            if rule.parse_scope == "statement" and rule.statement_requires
        ],
        tree=tree,
        shaped=[
            (_present(table_for(rule, "python"), text), rule.statement_calls)
            for rule in chosen
            if rule.parse_scope == "statement" and rule.statement_calls
        ],
    )


def _present_triggers(chosen: Sequence[type[Rule]], text: str, scope: str) -> set[str]:
    """Triggers (and scope triggers) in ``text`` that the rules whose ``parse_scope`` is
    ``scope`` read by that scope alone (``_plain_triggers``)."""
    return {
        trigger
        for rule in chosen
        if rule.parse_scope == scope
        for trigger in (*_plain_triggers(rule), *rule.scope_triggers)
        if trigger in text
    }


def _plain_triggers(rule: type[Rule]) -> tuple[str, ...]:
    """The triggers read by ``parse_scope`` alone: all of them but for a rule with
    ``statement_requires`` (its unpaired ones: ``paired`` reads the others) or
    ``statement_calls`` (none: ``shaped`` reads them)."""
    if rule.statement_requires:
        return rule.unpaired_triggers
    if rule.statement_calls:
        return ()
    return table_for(rule, "python")


def _present(strings: Iterable[str], text: str) -> list[str]:
    return [string for string in strings if string in text]


def _parse_partial(text: str, blanked: str) -> cst.Module | None:
    """The blanked text's module (None when libcst rejects it: the whole file is parsed then,
    so its own error, if any, is the one reported)."""
    check_nesting(text)
    try:
        return parse_module(blanked)
    except (cst.ParserSyntaxError, RecursionError, MemoryError):
        return None


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
        fix = FixInfo(raw.applicability, raw.fix_description or rule.fix_title or "apply fix")
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
        guard="" if rule.sees_guarded else guard,
        scope=scope,
        group=raw.group,
        # a report's own problem key makes it one problem with the file's other reports of it
        aggregate=(
            raw.problem_scope
            if isinstance(raw, RawPythonFinding) and raw.problem
            else rule.aggregate
        ),
        problem=(raw.problem if isinstance(raw, RawPythonFinding) else "") or rule.problem or "",
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


def _fixable(
    raw: RawPythonFinding | RawTextFinding, finding: Finding, level: Applicability
) -> bool:
    """Fixes never touch code that does not run on ROCm (an NVIDIA-only branch stays as is),
    nor findings whose fix the run's selection does not apply (``fix_policy.chosen_fixes``)."""
    chosen = chosen_fixes.get()
    return not finding.guard and eligible(raw, level) and (chosen is None or chosen(finding))


def _suppress(
    pairs: list[tuple[Any, Finding]], suppressions: Suppressions
) -> list[tuple[Any, Finding]]:
    return [
        (raw, finding)
        for raw, finding in pairs
        if not suppressions.suppresses(finding.line, finding.rule)
    ]


def analyze_python(
    text: str,
    path: str,
    rules: Sequence[type[Rule]],
    *,
    fix: Applicability | None = None,
    prefilter: bool = True,
    imports: ImportTable | None = None,
    cell: int | None = None,
    whole_file: Sequence[str] = (),
) -> Analysis:
    """Findings of a Python text; with ``fix`` (SAFE or UNSAFE) also the fixed text. A scan
    parses only the statements its rules can see (``migrator.engine.partial``); a fix the whole file.
    ``whole_file``: the other texts of the same file (a notebook's cells), whose
    ``ignore-file`` comments apply too."""
    suppressions = Suppressions.parse(text, whole_file)
    parsed = _reports(
        text,
        path,
        rules,
        prefilter=prefilter,
        imports=imports,
        partial=fix is None and cell is None,
    )
    if parsed is None:  # no rule can fire: every suppression comment is unused
        return Analysis(unused_suppressions=suppressions.unused())
    if isinstance(parsed, _Unread):
        return Analysis(unused_suppressions=suppressions.unused())
    pairs = _suppress(_python_findings(parsed, path, text, cell), suppressions)
    analysis = Analysis(
        findings=[finding for _, finding in pairs],
        unused_suppressions=suppressions.unused(),
    )
    if fix is None or not any(_fixable(raw, finding, fix) for raw, finding in pairs):
        parsed.context.release()
        return analysis
    try:
        new_text, fixed = _fix_python_loop(
            text, path, rules, fix, prefilter, imports, cell, whole_file
        )
        new_text = keep_visual_indent(text, keep_final_newline(text, new_text))
        new_text, limit = _formatted(text, new_text, path, cell)
        check_line_length(text, new_text, limit)
    except FixError as error:
        analysis.fix_error = str(error)
        return analysis
    if new_text != text:
        analysis.new_text = new_text
        analysis.fixed = fixed
        after = analyze_python(
            new_text,
            path,
            rules,
            fix=None,
            prefilter=prefilter,
            imports=imports,
            cell=cell,
            whole_file=whole_file,
        )
        analysis.findings = after.findings
    return analysis


def _formatted(text: str, new_text: str, path: str, cell: int | None) -> tuple[str, int | None]:
    """The rewrite with the project's formatter (``migrator.engine.formatter``) applied to its
    changed lines where that formatter checks the file and is installed here (as it is
    otherwise), and the line length the formatter is run with, if any."""
    from migrator.engine.formatter import (
        RUNNABLE,
        FormatterFailed,
        current_formatter,
        executable,
        format_rewrite,
    )

    formatter = current_formatter.get() if cell is None else None
    if formatter is None or not formatter.covers(path):
        return new_text, None
    if formatter.tool not in RUNNABLE or executable(formatter.tool) is None:
        return new_text, formatter.line_length
    try:
        return format_rewrite(text, new_text, path, formatter), formatter.line_length
    except FormatterFailed:
        return new_text, formatter.line_length


def _fix_python_loop(
    text: str,
    path: str,
    rules: Sequence[type[Rule]],
    fix: Applicability,
    prefilter: bool,
    imports: ImportTable | None,
    cell: int | None,
    whole_file: Sequence[str] = (),
) -> tuple[str, list[Finding]]:
    current = text
    fixed: list[Finding] = []
    for _ in range(MAX_FIX_PASSES):
        parsed = _reports(current, path, rules, prefilter=prefilter, imports=imports)
        if not isinstance(parsed, _Parsed):  # a fix parses whole files: never unread
            return current, fixed
        pairs = _suppress(
            _python_findings(parsed, path, current, cell),
            Suppressions.parse(current, whole_file),
        )
        chosen = [(raw, finding) for raw, finding in pairs if _fixable(raw, finding, fix)]
        partial = incomplete_groups(raw for raw, _ in chosen)
        chosen = [(raw, finding) for raw, finding in chosen if raw.together not in partial]
        if not chosen:
            return current, fixed
        new_text = apply_python_fixes(parsed.module, [raw for raw, _ in chosen], path)
        if new_text == current:
            return current, fixed
        fixed.extend(finding for _, finding in chosen)
        current = new_text
    raise FixError(f"fixes did not settle after {MAX_FIX_PASSES} passes; file left unchanged")


def keep_final_newline(original: str, new_text: str) -> str:
    """The fixed text with the original's own line ending at its end: libcst drops a final
    carriage return of a CR-only file, which is outside any edit."""
    if original.endswith("\r") and not new_text.endswith(("\r", "\n")):
        return new_text + "\r"
    return new_text


def analyze_text(
    text: str,
    path: str,
    kind: str,
    rules: Sequence[type[Rule]],
    *,
    fix: Applicability | None = None,
    prefilter: bool = True,
    cell: int | None = None,
    line_map: Callable[[int], int] | None = None,
    whole_file: Sequence[str] = (),
) -> Analysis:
    """Findings of a non-Python text file of ``kind``; with ``fix`` also the fixed text.
    ``whole_file``: as for ``analyze_python``."""
    chosen = [
        rule
        for rule in active_rules(rules, text, prefilter, kind)
        if issubclass(rule, TextRule) and kind in rule.file_kinds
    ]
    suppressions = Suppressions.parse(text, whole_file)
    if not chosen:  # no rule can fire: every suppression comment is unused
        return Analysis(unused_suppressions=suppressions.unused())
    context = TextContext(path=path, kind=kind, text=text)
    for rule in chosen:
        rule(context).check()
    police_text(context)
    lines = text.splitlines()
    line_guards = ci_line_guards(text) if kind == "ci-yaml" else {}
    pairs: list[tuple[RawTextFinding, Finding]] = []
    guards = TextGuards(text, kind)
    release = release_tooling(path, text, kind)
    for raw in sorted(context.reports, key=lambda item: (item.start, item.rule.code)):
        start = context.position(raw.start)
        end = context.position(raw.end)
        guard = release or line_guards.get(start[0], "") or guards.guard_at(raw.start)
        finding = _finding(raw, path, start, end, lines, cell, guard)
        if line_map is not None:
            finding = _remap(finding, line_map)
        if not suppressions.suppresses(start[0], finding.rule):
            pairs.append((raw, finding))
    if kind == "dockerfile":  # a CUDA image's own lines are that image's problem
        pairs = fold_image_parts(pairs, text)
    analysis = Analysis(
        findings=[finding for _, finding in pairs], unused_suppressions=suppressions.unused()
    )
    if fix is None:
        context.release()
        return analysis
    chosen_raw = [raw for raw, finding in pairs if _fixable(raw, finding, fix)]
    if not chosen_raw:
        return analysis
    new_text = apply_text_edits(text, chosen_raw)
    if new_text == text:
        return analysis
    again = analyze_text(new_text, path, kind, rules, fix=fix, prefilter=prefilter)
    if again.new_text is not None and again.new_text != new_text:
        analysis.fix_error = "a second fix pass would change the file again; file left unchanged"
        return analysis
    analysis.new_text = new_text
    analysis.fixed = [finding for raw, finding in pairs if _fixable(raw, finding, fix)]
    analysis.findings = analyze_text(new_text, path, kind, rules, prefilter=prefilter).findings
    return analysis


def _remap(finding: Finding, line_map: Callable[[int], int]) -> Finding:
    from dataclasses import replace

    return replace(finding, line=line_map(finding.line), end_line=line_map(finding.end_line))


def analyze_notebook(
    text: str,
    path: str,
    rules: Sequence[type[Rule]],
    *,
    fix: Applicability | None = None,
    prefilter: bool = True,
) -> Analysis:
    """Scan (and fix) each code cell; findings carry the cell index and the line in the cell."""
    document, cells = notebook_cells(text)
    tables: list[ImportTable] = []
    parsed: dict[int, cst.Module] = {}
    errors: list[str] = []
    for cell in cells:
        if not cell.source.strip():
            continue
        try:
            parsed[cell.index] = _parse(cell.source)
        except FailFile as error:
            errors.append(f"cell {cell.index}: {error}")
            continue
        tables.append(ImportTable.from_module(parsed[cell.index], current_exports.get()))
    shared = ImportTable(current_exports.get())
    for table in tables:
        shared.bindings.update(table.bindings)
        shared.modules.update(table.modules)
    result = Analysis()
    new_sources: dict[int, str] = {}
    # an ``ignore-file`` comment in any cell holds for the whole notebook
    marked = [(cell.index, cell.source) for cell in cells if SUPPRESSION_MARK in cell.source]
    for cell in cells:
        others = [source for index, source in marked if index != cell.index]
        if cell.index in parsed:
            part = analyze_python(
                cell.source,
                path,
                rules,
                fix=fix,
                prefilter=prefilter,
                imports=shared,
                cell=cell.index,
                whole_file=others,
            )
            result.findings.extend(part.findings)
            result.fixed.extend(part.fixed)
            if part.fix_error:
                result.fix_error = f"cell {cell.index}: {part.fix_error}"
            if part.new_text is not None:
                new_sources[cell.index] = _restore_magics(part.new_text, cell.shell_lines)
        if cell.shell_lines:
            numbers = [number for number, _ in cell.shell_lines]
            shell_text = "\n".join(_strip_magic(line) for _, line in cell.shell_lines) + "\n"
            part = analyze_text(
                shell_text,
                path,
                "shell",
                rules,
                prefilter=prefilter,
                cell=cell.index,
                line_map=_line_mapper(numbers),
                whole_file=[cell.source, *others],
            )
            result.findings.extend(part.findings)
    if (
        errors
        and not result.findings
        and len(errors) == len([c for c in cells if c.source.strip()])
    ):
        raise FailFile("; ".join(errors))
    if new_sources and result.fix_error is None:
        result.new_text = _write_cells(text, document, new_sources)
    return result


def _line_mapper(numbers: list[int]) -> Callable[[int], int]:
    """Maps a line of the extracted shell text back to its line in the notebook cell."""

    def mapped(line: int) -> int:
        return numbers[min(line, len(numbers)) - 1]

    return mapped


def _strip_magic(line: str) -> str:
    stripped = line.lstrip()
    return stripped[1:] if stripped[:1] in "!%" else stripped


def _restore_magics(source: str, shell_lines: tuple[tuple[int, str], ...]) -> str:
    lines = source.split("\n")
    for number, original in shell_lines:
        if number - 1 < len(lines):
            lines[number - 1] = original
    return "\n".join(lines)


def _write_cells(text: str, document: dict[str, Any], new_sources: dict[int, str]) -> str:
    """The notebook with its cells' new sources, in the file's own layout where it can be read
    (``splice_sources``), else the whole document written again."""
    from migrator.files.notebook_text import splice_sources

    spliced = splice_sources(text, new_sources)
    if spliced is not None:
        return spliced
    for index, source in new_sources.items():
        cell = document["cells"][index]
        original = cell.get("source")
        if isinstance(original, list):
            cell["source"] = source.splitlines(keepends=True)
        else:
            cell["source"] = source
    match = re.search(r"\n( +)\"", text)
    indent = len(match.group(1)) if match else 1
    trailing = "\n" if text.endswith("\n") else ""
    return json.dumps(document, indent=indent, ensure_ascii=False) + trailing


def analyze(
    text: str,
    path: str,
    kind: str,
    rules: Sequence[type[Rule]],
    *,
    fix: Applicability | None = None,
    prefilter: bool = True,
) -> Analysis:
    """Dispatch on the file kind; raises SkipFile/FailFile with a one-line reason."""
    if kind == "python":
        analysis = analyze_python(text, path, rules, fix=fix, prefilter=prefilter)
        return with_recipes(  # Dockerfiles and conda environments the code writes out
            analysis,
            analysis.new_text or text,
            lambda value, kind: analyze_text(value, path, kind, rules, prefilter=prefilter),
        )
    if kind == "markdown":  # the shell commands documentation tells users to run
        return with_doc_commands(
            Analysis(),
            text,
            lambda value, kind: analyze_text(value, path, kind, rules, prefilter=prefilter),
        )
    if kind == "notebook":
        return analyze_notebook(text, path, rules, fix=fix, prefilter=prefilter)
    if kind in _STRUCTURED:
        _validate_structure(text, kind)
    return analyze_text(text, path, kind, rules, fix=fix, prefilter=prefilter)


_STRUCTURED = {"pyproject", "compose", "conda", "ci-yaml", "cog"}


def _validate_structure(text: str, kind: str) -> None:
    """Reject malformed TOML/YAML with a one-line reason before text rules read it."""
    if kind == "pyproject":
        from migrator.files.tomlcompat import parse_toml, tomllib

        try:
            parse_toml(text)
        except tomllib.TOMLDecodeError as error:
            raise FailFile(f"invalid TOML: {error}") from None
        return
    import yaml

    fast = getattr(yaml, "CSafeLoader", None)  # libyaml's loader, where PyYAML was built with it
    if fast is not None:
        try:
            list(yaml.load_all(text, Loader=fast))
            return
        except yaml.YAMLError:
            pass  # the pure-Python loader decides, and words the reason
        except RecursionError:
            raise FailFile("invalid YAML: nested too deep to read") from None
    try:
        list(yaml.safe_load_all(text))
    except RecursionError:  # PyYAML's composer recurses once per nesting level
        raise FailFile("invalid YAML: nested too deep to read") from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise FailFile(f"invalid YAML{where}: {problem}") from None


__all__ = ["Analysis", "analyze", "SkipFile", "FailFile", "Status"]
