"""Imports and references in a Python file: which imports are guarded, which modules they load, what
refers to a package or class."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import libcst as cst

from migrator.astutil import fast_visit

#: Exception names whose handler makes an import optional (``try: import x / except ImportError``).
IMPORT_GUARD_EXCEPTIONS = frozenset(
    {"ImportError", "ModuleNotFoundError", "Exception", "BaseException", "OSError", "RuntimeError"}
)


class _ImportCollector(cst.CSTVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.found: list[cst.Import | cst.ImportFrom] = []

    def visit_Import(self, node: cst.Import) -> None:
        self.found.append(node)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self.found.append(node)


def _imports_in(nodes: Iterable[cst.CSTNode]) -> list[cst.Import | cst.ImportFrom]:
    collector = _ImportCollector()
    for node in nodes:
        fast_visit(node, collector, trivia=False)
    return collector.found


def _handler_catches_import_error(handler: cst.ExceptHandler | cst.ExceptStarHandler) -> bool:
    kind = handler.type
    if kind is None:
        return True
    names: list[cst.BaseExpression] = (
        [element.value for element in kind.elements] if isinstance(kind, cst.Tuple) else [kind]
    )
    for name in names:
        while isinstance(name, cst.Attribute):
            name = name.attr
        if isinstance(name, cst.Name) and name.value in IMPORT_GUARD_EXCEPTIONS:
            return True
    return False


class _GuardFinder(cst.CSTVisitor):
    """Collects imports that cannot crash the module: in a ``try`` whose handlers catch
    ImportError (or broader), or under an ``if`` (availability checks, TYPE_CHECKING)."""

    def __init__(self) -> None:
        super().__init__()
        self.guarded: set[int] = set()

    def visit_Try(self, node: cst.Try) -> None:
        if any(_handler_catches_import_error(handler) for handler in node.handlers):
            self.guarded.update(id(found) for found in _imports_in([node.body]))

    def visit_TryStar(self, node: cst.TryStar) -> None:
        if any(_handler_catches_import_error(handler) for handler in node.handlers):
            self.guarded.update(id(found) for found in _imports_in([node.body]))

    def visit_If(self, node: cst.If) -> None:
        parts: list[cst.CSTNode] = [node.body]
        if node.orelse is not None:
            parts.append(node.orelse)
        self.guarded.update(id(found) for found in _imports_in(parts))


_guard_cache: dict[int, tuple[cst.Module, frozenset[int]]] = {}


def guarded_imports(module: cst.Module) -> frozenset[int]:
    """``id()`` of every Import/ImportFrom node of ``module`` that is guarded (see _GuardFinder)."""
    cached = _guard_cache.get(id(module))
    if cached is not None and cached[0] is module:
        return cached[1]
    finder = _GuardFinder()
    fast_visit(module, finder, trivia=False)
    result = frozenset(finder.guarded)
    _guard_cache.clear()
    _guard_cache[id(module)] = (module, result)
    return result


def imported_modules(node: cst.Import | cst.ImportFrom) -> list[str]:
    """Dotted names of the modules an import statement loads (``from a.b import c`` → a.b)."""
    from migrator.imports import dotted_name

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
    from migrator.astutil import module_ref

    name, imports = module_ref(ctx, module)
    if imports:
        return module, [("torch", None)]
    return name, []
