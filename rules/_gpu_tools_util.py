"""Where a Python node sits, for the nvml, nvidia-smi, onnxruntime and no-rocm-equivalent
families: inside a guarded ``try`` or a function (:class:`ScopeTracking`), and which names a
module binds at top level or star-imports."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import libcst as cst

from migrator.api import PythonContext, PythonRule
from migrator.api.syntax import dotted_name, handler_types


def handler_names(node: cst.Try | cst.TryStar) -> set[str]:
    """Exception names (last dotted part) caught by the handlers of a ``try``; ``*`` for a bare
    ``except:``."""
    names: set[str] = set()
    for handler in node.handlers:
        if _reraises(handler):
            continue  # ``except X: log(...); raise`` is no fallback
        kinds = handler_types(handler)
        if kinds is None:
            names.add("*")
            continue
        for value in kinds:
            while isinstance(value, cst.Attribute):
                names.add(value.attr.value)
                break
            if isinstance(value, cst.Name):
                names.add(value.value)
    return names


def _reraises(handler: cst.ExceptHandler | cst.ExceptStarHandler) -> bool:
    body = handler.body
    statements = (
        body.body if isinstance(body, (cst.IndentedBlock, cst.SimpleStatementSuite)) else ()
    )
    if not statements:
        return False
    last = statements[-1]
    if isinstance(last, cst.SimpleStatementLine):
        return any(isinstance(small, cst.Raise) for small in last.body)
    return isinstance(last, cst.Raise)


IMPORT_GUARDS = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException", "*"})


class ScopeTracking(PythonRule, abstract=True):
    """Mixin that tracks, during the one traversal, the enclosing functions, ``if`` blocks and
    the handlers of every ``try`` whose *body* contains the current node."""

    def __init__(self, ctx: PythonContext) -> None:
        super().__init__(ctx)
        self._function_depth = 0
        self._functions: list[cst.FunctionDef] = []
        self._function_blocks: list[cst.CSTNode] = []
        self._if_depth = 0
        self._tries: list[cst.Try | cst.TryStar] = []
        self._guards: list[set[str]] = []
        self._guard_blocks: list[cst.CSTNode] = []

    # function bodies (and lambdas) run later, not at import time; decorators and defaults
    # run when the ``def`` does
    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._functions.append(node)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._functions.pop()

    def visit_Lambda(self, node: cst.Lambda) -> None:
        self._function_depth += 1

    def leave_Lambda(self, original_node: cst.Lambda) -> None:
        self._function_depth -= 1

    def visit_If(self, node: cst.If) -> None:
        self._if_depth += 1

    def leave_If(self, original_node: cst.If) -> None:
        self._if_depth -= 1

    def visit_Try(self, node: cst.Try) -> None:
        self._tries.append(node)

    def leave_Try(self, original_node: cst.Try) -> None:
        self._tries.pop()

    def visit_TryStar(self, node: cst.TryStar) -> None:
        self._tries.append(node)

    def leave_TryStar(self, original_node: cst.TryStar) -> None:
        self._tries.pop()

    def _enter_block(self, node: cst.CSTNode) -> None:
        if self._functions and self._functions[-1].body is node:
            self._function_depth += 1
            self._function_blocks.append(node)
        if self._tries and self._tries[-1].body is node:
            self._guards.append(handler_names(self._tries[-1]))
            self._guard_blocks.append(node)

    def _leave_block(self, node: cst.CSTNode) -> None:
        if self._function_blocks and self._function_blocks[-1] is node:
            self._function_blocks.pop()
            self._function_depth -= 1
        if self._guard_blocks and self._guard_blocks[-1] is node:
            self._guard_blocks.pop()
            self._guards.pop()

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self._enter_block(node)

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock) -> None:
        self._leave_block(original_node)

    def visit_SimpleStatementSuite(self, node: cst.SimpleStatementSuite) -> None:
        self._enter_block(node)

    def leave_SimpleStatementSuite(self, original_node: cst.SimpleStatementSuite) -> None:
        self._leave_block(original_node)

    # queries
    @property
    def in_function(self) -> bool:
        return self._function_depth > 0

    def guarded_by(self, accepted: frozenset[str] | set[str], prefix: str = "") -> bool:
        """Whether an enclosing ``try`` body catches one of ``accepted`` (or a name starting
        with ``prefix`` when given)."""
        for names in self._guards:
            if names & accepted:
                return True
            if prefix and any(name.startswith(prefix) for name in names):
                return True
        return False


def star_imported(module: cst.Module, modules: frozenset[str]) -> bool:
    """Whether the module body has ``from <one of modules> import *``."""
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if (
                isinstance(small, cst.ImportFrom)
                and isinstance(small.names, cst.ImportStar)
                and small.module is not None
                and dotted_name(small.module) in modules
            ):
                return True
    return False


def module_level_names(module: cst.Module) -> set[str]:
    """Names a module binds itself outside functions and classes (def, class, simple assignment
    targets), including inside module-level ``if``/``try``/``with`` blocks."""
    names: set[str] = set()
    _collect_names(module.body, names)
    return names


def _collect_names(body: Sequence[cst.CSTNode], names: set[str]) -> None:
    for statement in body:
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            names.add(statement.name.value)
        elif isinstance(statement, (cst.If, cst.Try, cst.With, cst.For, cst.While)):
            for child in _blocks(statement):
                _collect_names(child, names)
        elif isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Assign):
                    for target in small.targets:
                        if isinstance(target.target, cst.Name):
                            names.add(target.target.value)
                elif isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name):
                    names.add(small.target.value)


def _blocks(statement: cst.CSTNode) -> Iterator[Sequence[cst.CSTNode]]:
    """Statement lists directly nested in a compound statement (bodies, else, handlers)."""
    for attribute in ("body", "orelse", "finalbody"):
        child = getattr(statement, attribute, None)
        if child is None:
            continue
        if isinstance(child, cst.IndentedBlock):
            yield child.body
        elif isinstance(child, (cst.Else, cst.Finally)):
            yield from _blocks(child)
        elif isinstance(child, cst.If):
            yield from _blocks(child)
    for handler in getattr(statement, "handlers", ()):
        yield from _blocks(handler)
