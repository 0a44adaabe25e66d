"""Imports and references in a Python file: which imports are guarded, which modules they load, what
refers to a package or class."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import libcst as cst

from migrator.api import PythonRule
from migrator.api.syntax import fast_visit, handler_types

#: Exception names whose handler makes an import optional (``try: import x / except ImportError``).
IMPORT_GUARD_EXCEPTIONS = frozenset(
    {"ImportError", "ModuleNotFoundError", "Exception", "BaseException", "OSError", "RuntimeError"}
)


def _handler_catches_import_error(handler: cst.ExceptHandler | cst.ExceptStarHandler) -> bool:
    names = handler_types(handler)
    if names is None:
        return True
    for name in names:
        while isinstance(name, cst.Attribute):
            name = name.attr
        if isinstance(name, cst.Name) and name.value in IMPORT_GUARD_EXCEPTIONS:
            return True
    return False


def _statement_children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """The nodes under ``node`` that can hold statements (imports never sit in an expression)."""
    if isinstance(
        node, (cst.Module, cst.IndentedBlock, cst.SimpleStatementSuite, cst.SimpleStatementLine)
    ):
        return list(node.body)
    if isinstance(node, (cst.If, cst.For, cst.While)):
        return [node.body] if node.orelse is None else [node.body, node.orelse]
    if isinstance(node, (cst.Try, cst.TryStar)):
        parts: list[cst.CSTNode] = [node.body, *node.handlers]
        parts.extend(part for part in (node.orelse, node.finalbody) if part is not None)
        return parts
    if isinstance(node, cst.Match):
        return list(node.cases)
    if isinstance(node, cst.BaseCompoundStatement | cst.ExceptHandler | cst.ExceptStarHandler):
        return [node.body]
    if isinstance(node, cst.Else | cst.Finally | cst.MatchCase):
        return [node.body]
    return []


def _collect_guarded(node: cst.CSTNode, guarded: bool, out: set[int]) -> None:
    """Imports that cannot crash the module: in a ``try`` whose handlers catch ImportError (or
    broader), or under an ``if`` (availability checks, TYPE_CHECKING). One walk over statements
    only, so a file costs a few microseconds per statement."""
    if isinstance(node, cst.Import | cst.ImportFrom):
        if guarded:
            out.add(id(node))
        return
    if isinstance(node, cst.Try | cst.TryStar) and any(
        _handler_catches_import_error(handler) for handler in node.handlers
    ):
        _collect_guarded(node.body, True, out)
        for part in _statement_children(node)[1:]:
            _collect_guarded(part, guarded, out)
        return
    inside = guarded or isinstance(node, cst.If)
    for child in _statement_children(node):
        _collect_guarded(child, inside, out)


_guard_cache: dict[int, tuple[cst.Module, frozenset[int]]] = {}


def guarded_imports(module: cst.Module) -> frozenset[int]:
    """``id()`` of every Import/ImportFrom node of ``module`` that is guarded (see
    ``_collect_guarded``)."""
    cached = _guard_cache.get(id(module))
    if cached is not None and cached[0] is module:
        return cached[1]
    found: set[int] = set()
    _collect_guarded(module, False, found)
    result = frozenset(found)
    _guard_cache.clear()
    _guard_cache[id(module)] = (module, result)
    return result


def imported_modules(node: cst.Import | cst.ImportFrom) -> list[str]:
    """Dotted names of the modules an import statement loads (``from a.b import c`` → a.b)."""
    from migrator.api.syntax import dotted_name

    if isinstance(node, cst.Import):
        names = [dotted_name(alias.name) for alias in node.names]
        return [name for name in names if name]
    if node.relative or node.module is None:
        return []
    module = dotted_name(node.module)
    return [module] if module else []


def matches_package(module: str, packages: Iterable[str]) -> str | None:
    """The package of ``packages`` that ``module`` is (or is inside), else None."""
    for package in packages:
        if module == package or module.startswith(package + "."):
            return package
    return None


def mentions_package(
    ctx_resolve: Callable[[cst.CSTNode], str | None], node: cst.CSTNode, package: str
) -> bool:
    """Whether a Name/Attribute chain inside ``node`` resolves (through the file's imports)
    to ``package`` or something in it."""

    class _Finder(cst.CSTVisitor):
        found = False

        def visit_Attribute(self, node: cst.Attribute) -> bool:
            qualified = ctx_resolve(node)
            if qualified and matches_package(qualified, [package]):
                self.found = True
                return False
            return True

        def visit_Name(self, node: cst.Name) -> None:
            qualified = ctx_resolve(node)
            if qualified and matches_package(qualified, [package]):
                self.found = True

    finder = _Finder()
    fast_visit(node, finder, trivia=False)
    return finder.found


def non_call_references(
    resolve: Callable[[cst.CSTNode], str | None], module: cst.Module, qualified: str
) -> int:
    """How often ``qualified`` is referenced other than as the callee of a call (``isinstance``
    checks, ``type(m) is X``, aliases): a rewrite of the calls leaves those pointing at the old
    class, so the fix is not behaviour-preserving there."""

    class _Counter(cst.CSTVisitor):
        def __init__(self) -> None:
            super().__init__()
            self.callees: set[int] = set()
            self.count = 0

        def visit_Import(self, node: cst.Import) -> bool:
            return False

        def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
            return False

        def visit_Call(self, node: cst.Call) -> None:
            self.callees.add(id(node.func))

        def visit_Attribute(self, node: cst.Attribute) -> bool:
            if resolve(node) == qualified:
                if id(node) not in self.callees:
                    self.count += 1
            else:
                fast_visit(
                    node.value, self, trivia=False
                )  # not ``attr``: ``x.FusedRMSNorm`` is another object
            return False

        def visit_Name(self, node: cst.Name) -> None:
            if resolve(node) == qualified and id(node) not in self.callees:
                self.count += 1

    counter = _Counter()
    fast_visit(module, counter, trivia=False)
    return counter.count


def torch_ref(ctx: Any, module: str) -> tuple[str, list[tuple[str, str | None]]]:
    """How to spell ``module`` (a submodule that ``import torch`` loads: torch.nn,
    torch.nn.functional, torch.optim) here, importing plain ``torch`` when nothing binds it."""

    name, imports = ctx.module_ref(module)
    if imports:
        return module, [("torch", None)]
    return name, []


class UnguardedPackageImport(PythonRule, abstract=True):
    """The hard-import rules of optional CUDA-first packages (apex, xformers): the first import
    of one of ``packages()`` in a statement that no ``try: ... except ImportError`` and no ``if``
    guards is reported; a guarded import is the project's own fallback."""

    def packages(self) -> Iterable[str]:
        """The import names of the package (``apex``, ``xformers``)."""
        raise NotImplementedError

    def visit_Import(self, node: cst.Import) -> None:
        self._check(node)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self._check(node)

    def _check(self, node: cst.Import | cst.ImportFrom) -> None:
        for module in imported_modules(node):
            if matches_package(module, self.packages()) and id(node) not in guarded_imports(
                self.ctx.module
            ):
                self.report(node)
                return
