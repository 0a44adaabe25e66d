"""Whether code is reachable on a ROCm build: regions a vendor test excludes, ``try`` blocks that
catch the failure."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable

import libcst as cst

from migrator.api import PythonContext
from migrator.api.reach import falls_back
from migrator.api.syntax import dotted_name, handler_types

from ._tree import Tree, identifier


def _exits(block: cst.BaseSuite) -> bool:
    body: list[cst.CSTNode] = []
    if isinstance(block, cst.IndentedBlock):
        body = list(block.body)
    elif isinstance(block, cst.SimpleStatementSuite):
        body = [cst.SimpleStatementLine(body=block.body)]
    if not body:
        return False
    last = body[-1]
    if isinstance(last, cst.SimpleStatementLine):
        for small in last.body:
            if isinstance(small, (cst.Return, cst.Raise, cst.Continue, cst.Break)):
                return True
            if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
                name = identifier(small.value)
                if name in {"exit", "skip", "skipTest", "_exit"}:
                    return True
    return False


def guarded_regions(
    tree_: Tree,
    atom: cst.BaseExpression,
    truth: tuple[int, int],
) -> list[cst.CSTNode]:
    """Nodes (subtrees, or following statements) that only run when the property that ``atom``
    tests holds: ``truth`` = (holds if atom is true, holds if atom is false)."""
    regions: list[cst.CSTNode] = []
    current: cst.CSTNode = atom
    t, f = truth
    while True:
        parent = tree_.parent(current)
        if isinstance(parent, cst.UnaryOperation) and isinstance(parent.operator, cst.Not):
            t, f = f, t
        elif isinstance(parent, cst.BooleanOperation):
            is_left = parent.left is current
            if isinstance(parent.operator, cst.And):
                if is_left and t == 1:
                    regions.append(parent.right)
                f = 0
            else:
                if is_left and f == 1:
                    regions.append(parent.right)
                t = 0
        elif isinstance(parent, cst.Call) and identifier(parent) == "bool":
            pass
        elif isinstance(parent, cst.Arg):
            grand = tree_.parent(parent)
            if not (isinstance(grand, cst.Call) and identifier(grand) == "bool"):
                return regions
        elif isinstance(parent, cst.IfExp) and parent.test is current:
            if t == 1:
                regions.append(parent.body)
            if f == 1:
                regions.append(parent.orelse)
            return regions
        elif isinstance(parent, (cst.If, cst.While)) and parent.test is current:
            if t == 1:
                regions.append(parent.body)
            if f == 1 and parent.orelse is not None:
                regions.append(parent.orelse)
            if isinstance(parent, cst.If) and f == 1 and _exits(parent.body):
                regions.extend(following_statements(tree_, parent))
            if isinstance(parent, cst.If) and t == 1 and parent.orelse is not None:
                pass
            return regions
        elif isinstance(parent, cst.Assert) and parent.test is current:
            if t == 1:
                regions.extend(following_statements(tree_, tree_.parent(parent) or parent))
            return regions
        else:
            return regions
        if parent is None:
            return regions
        current = parent


def following_statements(tree_: Tree, statement: cst.CSTNode) -> list[cst.CSTNode]:
    """Statements after ``statement`` in the same block."""
    block = tree_.parent(statement)
    body: list[cst.CSTNode] = []
    if isinstance(block, (cst.IndentedBlock, cst.Module)):
        body = list(block.body)
    for index, item in enumerate(body):
        if item is statement:
            return body[index + 1 :]
    return []


def in_regions(tree_: Tree, node: cst.CSTNode, regions: set[int]) -> bool:
    if id(node) in regions:
        return True
    return any(id(ancestor) in regions for ancestor in tree_.ancestors(node))


def unreachable_on_rocm(ctx: PythonContext, tree_: Tree, node: cst.CSTNode) -> bool:
    """Whether a vendor or platform guard in this file keeps ``node`` from running on a ROCm
    build (the engine's guard facility, ``ctx.guards``, answers)."""
    return ctx.guards.never_on_rocm(node)


def only_where_imported(
    ancestors: Iterable[cst.CSTNode], node: cst.CSTNode, packages: Collection[str]
) -> bool:
    """Whether ``node`` (``ancestors``: its enclosing nodes, innermost first) sits in the body
    of a ``try`` that imports one of ``packages`` and falls back where the import fails (a
    handler catching ``ImportError`` that does not raise): it runs, or is defined, only where
    the import succeeded, so never on a build that has no such package."""
    child = node
    for ancestor in ancestors:
        if (
            isinstance(ancestor, cst.Try)
            and ancestor.body is child
            and falls_back(ancestor, frozenset({"ImportError", "ModuleNotFoundError"}))
            and _imports_any(ancestor.body, packages)
        ):
            return True
        child = ancestor
    return False


def _imports_any(block: cst.BaseSuite, packages: Collection[str]) -> bool:
    """Whether a block's statements (a nested ``try``'s included) import one of ``packages``."""
    statements = block.body if isinstance(block, cst.IndentedBlock) else ()
    for statement in statements:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if (
                    isinstance(small, cst.ImportFrom)
                    and small.module is not None
                    and not small.relative
                ):
                    modules = [dotted_name(small.module)]
                elif isinstance(small, cst.Import):
                    modules = [dotted_name(alias.name) for alias in small.names]
                else:
                    continue
                if any(m is not None and m.split(".", 1)[0] in packages for m in modules):
                    return True
        elif isinstance(statement, cst.Try):
            blocks = [statement.body, *(handler.body for handler in statement.handlers)]
            if any(_imports_any(inner, packages) for inner in blocks):
                return True
    return False


def in_try_catching(tree_: Tree, node: cst.CSTNode, exceptions: set[str]) -> bool:
    """Whether ``node`` sits in the body of a ``try`` whose handlers catch one of ``exceptions``
    (bare ``except:`` and ``Exception``/``BaseException`` always count)."""
    child: cst.CSTNode = node
    for ancestor in tree_.ancestors(node):
        if isinstance(ancestor, cst.Try) and ancestor.body is child:
            for handler in ancestor.handlers:
                names = handler_types(handler)
                if names is None:
                    return True
                for name in names:
                    ident = identifier(name)
                    if ident in exceptions or ident in {"Exception", "BaseException"}:
                        return True
        child = ancestor
    return False


def called_only_on_nvidia(ctx: PythonContext, node: cst.CSTNode) -> bool:
    """``node`` is inside a module-level function whose every use in the file is a call in an
    NVIDIA-only branch (``add_cuda_gencodes(...)`` under ``if not IS_ROCM:``, a helper called
    under ``if "nvidia" in gpu_name:``): it runs only there. Needs the whole walk (ask from
    ``leave_Module``)."""
    return called_only_where(ctx, node, ctx.guards.never_on_rocm)


def called_only_where(
    ctx: PythonContext, node: cst.CSTNode, holds: Callable[[cst.Call], bool]
) -> bool:
    """``node`` is inside a module-level function whose every use in the file is a call for
    which ``holds`` (in an NVIDIA-only branch; in a ``try`` of the caller that catches the
    failure and falls back). Needs the whole walk (ask from ``leave_Module``)."""
    function: cst.CSTNode | None = None
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, cst.FunctionDef):
            function = ancestor
    if not isinstance(function, cst.FunctionDef) or ctx.parent(function) is not ctx.module:
        return False
    name = function.name.value
    uses = [n for n in ctx.nodes if isinstance(n, cst.Name) and n.value == name]
    uses = [n for n in uses if n is not function.name]
    return bool(uses) and all(
        isinstance(call := ctx.parent(use), cst.Call) and call.func is use and holds(call)
        for use in uses
    )
