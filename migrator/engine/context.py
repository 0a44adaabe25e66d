"""Per-file contexts handed to rules: name resolution, source access and ``report``; and the
inputs one file's analysis reads of its project and its run (``FileInputs``), passed
explicitly from the runner through the engine to the contexts the rules receive."""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

import libcst as cst

from migrator.engine.report_values import Problem, Rewrite
from migrator.engine.rule_parts import Fixing, Impact, Parsing
from migrator.knowledge.versions import ProjectFacts
from migrator.model import Applicability, Finding, Severity
from migrator.reach.guards import Guards
from migrator.syntax import astutil
from migrator.syntax.imports import ImportTable
from migrator.syntax.reexports import ExportSlice

if TYPE_CHECKING:
    from migrator.engine.formatter import Formatter


class Rule(Protocol):
    """What a report keeps of the rule that made it; ``migrator.engine.rule.Rule`` satisfies it (a
    protocol, so that the contexts do not import the rule classes that hold them)."""

    @property
    def code(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def category(self) -> str: ...
    @property
    def severity(self) -> Severity: ...
    @property
    def message(self) -> str: ...
    @property
    def parsing(self) -> Parsing: ...
    @property
    def impact(self) -> Impact: ...
    @property
    def fix(self) -> Fixing: ...


@dataclass(frozen=True, slots=True)
class FileInputs:
    """What one file's analysis reads beyond its text, built once per run by the runner
    (``migrator.engine.runner``) and handed down explicitly: to the engine, to the fix policy,
    and on the context every rule receives. The default is a file read on its own (a rule
    example, a buffer outside a run): no project facts, every fix a rule offers."""

    #: The declared facts of the project (versions, line length, its kernels' macros, archs
    #: and build model); None for a file read on its own.
    facts: ProjectFacts | None = None
    #: Names re-exported through the project's own modules that this file imports.
    exports: ExportSlice | None = None
    #: The project's formatter, run on a fix's changed lines (None in a scan).
    formatter: Formatter | None = None
    #: Which findings' fixes the run's selection applies (``Selection.fixes``); None applies
    #: every fix a rule offers.
    chosen_fixes: Callable[[Finding], bool] | None = None
    #: Whether fixes that swap NVIDIA artefacts for AMD ones may apply (only when writing a ROCm
    #: variant of a file, never in place).
    vendor_swap: bool = False


#: The inputs of a file read on its own.
ALONE = FileInputs()


@dataclass(slots=True)
class RawPythonFinding:
    """A report made during traversal; positions are resolved once the traversal ends."""

    rule: Rule
    node: cst.CSTNode
    message: str
    replacement: cst.CSTNode | Callable[[], cst.CSTNode] | None
    imports: Sequence[tuple[str, str | None]]
    remove_imports: Sequence[tuple[str | None, ...]]
    applicability: Applicability
    fix_description: str | None
    #: Minimum versions of the APIs the replacement emits (package → version).
    requires: Mapping[str, str] = field(default_factory=dict)
    group: str = ""
    severity: Severity | None = None
    #: Other statements the fix rewrites (an import made optional), as (node, replacement).
    extra_edits: Sequence[tuple[cst.CSTNode, cst.CSTNode]] = ()
    #: Fixes sharing this key apply all together or not at all (``together_size`` of them).
    together: str = ""
    together_size: int = 0
    #: Cross-rule key of a problem within one file: reports of every rule giving the same key
    #: in a file are one finding (e.g. a module that cannot be imported and every use in it).
    problem: str = ""
    #: Where that key applies: ``file`` (one finding per file) or ``project`` (one per project,
    #: with the rules declaring the same ``problem``: a dependency and an opt-in use of it).
    problem_scope: str = "file"
    #: The ``problem`` key this report takes if its fix is withheld (``engine.fix_policy``).
    problem_without_fix: str = ""


@dataclass(slots=True)
class RawTextFinding:
    """A report on a span of a text file, with the replacement for that span when fixable."""

    rule: Rule
    start: int
    end: int
    message: str
    replacement: str | None
    applicability: Applicability
    fix_description: str | None
    requires: Mapping[str, str] = field(default_factory=dict)
    group: str = ""
    severity: Severity | None = None


@dataclass(slots=True)
class PythonContext:
    """What a Python rule sees of the file being scanned."""

    path: str
    module: cst.Module
    imports: ImportTable
    reports: list[RawPythonFinding] = field(default_factory=list)
    #: Parent of every node visited so far (filled by the engine's single traversal, so the
    #: ancestors of the node a rule is visiting are always known).
    parents: dict[int, cst.CSTNode] = field(default_factory=dict)
    #: Every syntax node visited so far, in pre-order (the whole file once ``complete``).
    nodes: list[cst.CSTNode] = field(default_factory=list)
    #: True once the walk has left the module: ``parents`` and ``nodes`` cover the whole file
    #: (so a rule's ``leave_Module`` sees the complete tree without walking it again).
    complete: bool = False
    #: Guard regions of this file (see ``migrator.reach.guards``); filled by the same walk.
    guards: Guards = field(init=False)
    #: Per-file memo for rule helpers that derive data from the whole tree (keyed by name).
    memo: dict[str, object] = field(default_factory=dict)
    #: The text ``module`` was parsed from when it is the whole file (else None).
    source: str | None = None
    #: The whole file's text, also when ``module`` holds only part of it (partial parsing): for
    #: cheap file-wide facts a rule needs beyond its parse scope (the classes a file defines).
    text: str = ""
    #: The whole file's ``ast`` when the engine has read it (``rules._file_ast`` reads it
    #: otherwise): file-wide facts beyond a rule's parse scope come from it.
    file_tree: ast.Module | None = None
    #: What the analysis reads of the project and the run (``FileInputs``).
    inputs: FileInputs = ALONE

    @property
    def project(self) -> ProjectFacts | None:
        """The declared facts of the project being scanned or fixed; None for a file read on
        its own."""
        return self.inputs.facts

    def __post_init__(self) -> None:
        imports = self.imports
        self.guards = Guards(imports.resolve, self.parents, imports.flag_of, imports.opt_in)

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self.parents.get(id(node))

    def release(self) -> None:
        """Drop what the rules built for this file, once its findings are read. A report holds
        its rule and the rule this context, and helpers memoise analyses that hold the tree
        they read: reference cycles that only the garbage collector would free, after
        traversing every node of the file. A memoised value with a ``release`` method (a
        ``rules._tree.Tree``) is asked to drop its own memo."""
        for value in self.memo.values():
            release = getattr(value, "release", None)
            if callable(release):
                release()
        self.memo.clear()
        self.reports.clear()

    def ancestors(self, node: cst.CSTNode) -> list[cst.CSTNode]:
        """Enclosing nodes of ``node``, innermost first (for nodes already visited)."""
        out = []
        current = self.parents.get(id(node))
        while current is not None:
            out.append(current)
            current = self.parents.get(id(current))
        return out

    def scope(self, node: cst.CSTNode) -> cst.CSTNode:
        """The innermost function or class around ``node``, else the module."""
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef)):
                return ancestor
        return self.module

    def scope_path(self, node: cst.CSTNode) -> str:
        """Dotted names of the classes and functions around ``node`` ("" at module level)."""
        names = [
            ancestor.name.value
            for ancestor in self.ancestors(node)
            if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef))
        ]
        return ".".join(reversed(names))

    def module_ref(self, module: str) -> tuple[str, list[tuple[str, str | None]]]:
        """How to spell ``module`` in this file, and the import to add when it is not imported
        (``import torch as tt`` gives ``("tt", [])``)."""
        return astutil.module_ref(self.imports, module)

    def unused_imports(self, func: cst.BaseExpression, prefix: str) -> list[tuple[str | None, ...]]:
        """Imports under ``prefix`` that rewriting ``func`` may leave unused (the fixer removes
        them only when nothing else in the file uses them)."""
        return astutil.unused_import_candidates(self.imports, self.module, func, prefix)

    def guard_of(self, node: cst.CSTNode) -> str:
        """Why ``node`` never runs on a ROCm build ("" when it may); see ``migrator.reach.guards``."""
        return self.guards.guard_of(node)

    def qualname(self, node: cst.CSTNode) -> str | None:
        """Qualified name of a Name/Attribute chain resolved through this file's imports."""
        return self.imports.resolve(node)

    def call_name(self, node: cst.Call) -> str | None:
        return self.imports.resolve(node.func)

    def module_code(self) -> str:
        """The module's code: the text it was parsed from, which is what ``module.code`` prints
        (libcst round-trips every text exactly), without generating it again from the tree."""
        return self.source if self.source is not None else self.module.code

    def code(self, node: cst.CSTNode) -> str:
        """Source text of a node (as libcst prints it)."""
        return self.module.code_for_node(node)

    def record(
        self,
        rule: Rule,
        node: cst.CSTNode,
        message: str | None,
        fix: Rewrite | None,
        problem: Problem,
    ) -> None:
        """Keep ``rule``'s report of ``node`` (``PythonRule.report`` says what each part means)."""
        chosen = Applicability.NONE
        replacement: cst.CSTNode | Callable[[], cst.CSTNode] | None = None
        if fix is not None and fix.replacement is not None:
            if isinstance(fix.replacement, str):
                raise TypeError(f"rule {rule.code}: a Python fix replaces a node, not text")
            replacement = fix.replacement
            chosen = fix.applicability if fix.applicability is not None else rule.fix.applicability
        self.reports.append(
            RawPythonFinding(
                rule=rule,
                node=node,
                message=message or rule.message,
                replacement=replacement,
                imports=() if fix is None else fix.imports,
                remove_imports=() if fix is None else fix.remove_imports,
                applicability=chosen,
                fix_description=(fix and fix.description) or rule.fix.title,
                requires=rule.fix.requires if fix is None or fix.requires is None else fix.requires,
                group=problem.group,
                severity=problem.severity,
                extra_edits=() if fix is None else fix.extra_edits,
                together="" if fix is None else fix.together,
                together_size=0 if fix is None else fix.together_size,
                problem=problem.key,
                problem_scope=problem.scope,
                problem_without_fix=problem.without_fix,
            )
        )


@dataclass(slots=True)
class TextContext:
    """What a text rule sees: the decoded text, its lines and offsets, and ``report``."""

    path: str
    kind: str
    text: str
    reports: list[RawTextFinding] = field(default_factory=list)
    _line_starts: list[int] = field(default_factory=list)
    #: What the analysis reads of the project and the run (``FileInputs``).
    inputs: FileInputs = ALONE

    @property
    def project(self) -> ProjectFacts | None:
        """As ``PythonContext.project``."""
        return self.inputs.facts

    def __post_init__(self) -> None:
        starts = [0]
        find = self.text.find
        index = find("\n")
        while index >= 0:
            starts.append(index + 1)
            index = find("\n", index + 1)
        self._line_starts = starts

    @property
    def lines(self) -> list[str]:
        return self.text.splitlines()

    def release(self) -> None:
        """Drop the reports once the findings are read (each holds its rule, which holds this
        context: a cycle only the garbage collector would free)."""
        self.reports.clear()

    def offset(self, line: int, column: int = 0) -> int:
        """Offset of 1-based ``line`` and 0-based ``column``."""
        return self._line_starts[line - 1] + column

    def position(self, offset: int) -> tuple[int, int]:
        """1-based line and 0-based column of an offset."""
        import bisect

        line_index = bisect.bisect_right(self._line_starts, offset) - 1
        return line_index + 1, offset - self._line_starts[line_index]

    def record(
        self,
        rule: Rule,
        span: tuple[int, int],
        message: str | None,
        fix: Rewrite | None,
        problem: Problem,
    ) -> None:
        """Keep ``rule``'s report of the text ``span`` (start, end offsets)."""
        chosen = Applicability.NONE
        replacement: str | None = None
        if fix is not None and fix.replacement is not None:
            if not isinstance(fix.replacement, str):
                raise TypeError(f"rule {rule.code}: a text fix replaces the span with text")
            replacement = fix.replacement
            chosen = fix.applicability if fix.applicability is not None else rule.fix.applicability
        self.reports.append(
            RawTextFinding(
                rule=rule,
                start=span[0],
                end=span[1],
                message=message or rule.message,
                replacement=replacement,
                applicability=chosen,
                fix_description=(fix and fix.description) or rule.fix.title,
                requires=rule.fix.requires if fix is None or fix.requires is None else fix.requires,
                group=problem.group,
                severity=problem.severity,
            )
        )
