"""Shared helpers of the detection, device-gate, fp8, warp-size, backend-flag and sdpa families.

Parent links, scope-aware aliases of simple assignments, and "is this code reachable on a ROCm
build?" guard analysis (``if torch.version.hip: ... else: <here>``), all computed once per parsed
module and cached on the module object's identity.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import libcst as cst

from migrator import guards
from migrator.astutil import iter_nodes, literal_value
from migrator.context import PythonContext

# --------------------------------------------------------------------------------------------
# Parent map (one per module, cached)


@dataclass
class Tree:
    """Parent links and a flat pre-order node list of one module."""

    module: cst.Module
    parents: dict[int, cst.CSTNode]
    nodes: list[cst.CSTNode]
    memo: dict[str, Any] = field(default_factory=dict)

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self.parents.get(id(node))

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        current = self.parents.get(id(node))
        while current is not None:
            yield current
            current = self.parents.get(id(current))

    def scope(self, node: cst.CSTNode) -> cst.CSTNode:
        """The innermost function (or lambda) around ``node``, else the module."""
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, (cst.FunctionDef, cst.Lambda)):
                return ancestor
        return self.module


_TREES: list[Tree] = []


def tree(source: cst.Module | PythonContext) -> Tree:
    """Parent links and pre-order nodes of a module. Given the rule context once the engine's
    walk is complete (in ``leave_Module``), the engine's own maps are used: no second walk."""
    if isinstance(source, PythonContext):
        cached = source.memo.get("tree")
        if isinstance(cached, Tree):
            return cached
        if source.complete:
            built = Tree(source.module, source.parents, source.nodes)
            source.memo["tree"] = built
            return built
        return tree(source.module)
    module = source
    for cached_tree in _TREES:
        if cached_tree.module is module:
            return cached_tree
    pairs = iter_nodes(module)
    parents = {id(node): parent for node, parent in pairs if parent is not None}
    built = Tree(module, parents, [node for node, _ in pairs])
    _TREES.insert(0, built)
    del _TREES[2:]
    return built


# --------------------------------------------------------------------------------------------
# Names


def is_load_name(tree_: Tree, node: cst.CSTNode) -> bool:
    """Whether a Name node is read as an expression (not an attribute name, keyword, target...)."""
    parent = tree_.parent(node)
    if isinstance(parent, cst.Attribute) and parent.attr is node:
        return False
    if isinstance(parent, cst.Arg) and parent.keyword is node:
        return False
    if isinstance(parent, (cst.Param, cst.FunctionDef, cst.ClassDef, cst.ImportAlias, cst.AsName)):
        return False
    if isinstance(parent, (cst.AssignTarget, cst.AnnAssign, cst.AugAssign)):
        target = getattr(parent, "target", None)
        return target is not node
    if isinstance(parent, (cst.Element, cst.Tuple, cst.List)):
        # tuple-unpacking targets are handled by the assignment scan; treat as loads here
        return True
    return not isinstance(parent, (cst.Import, cst.ImportFrom, cst.Global, cst.Nonlocal))


def qualified_refs(ctx: PythonContext, tree_: Tree, names: set[str]) -> list[cst.CSTNode]:
    """Name/Attribute nodes (outermost of a chain) that resolve to one of ``names``."""
    memo_key = "refs:" + ",".join(sorted(names))
    if memo_key in tree_.memo:
        return list(tree_.memo[memo_key])
    tails = {name.rsplit(".", 1)[-1] for name in names}
    found: list[cst.CSTNode] = []
    for node in tree_.nodes:
        if isinstance(node, cst.Attribute):
            if node.attr.value not in tails:
                continue
        elif isinstance(node, cst.Name):
            if not is_load_name(tree_, node):
                continue
        else:
            continue
        qualified = ctx.qualname(node)
        if qualified in names:
            found.append(node)
    tree_.memo[memo_key] = found
    return list(found)


#: One home for these name helpers: the engine's guard facility.
identifier = guards.identifier
tokens = guards.tokens


def assigned_value_aliases(
    tree_: Tree,
    predicate: Callable[[cst.BaseExpression, dict[tuple[int, str], str | None]], str | None],
    tuple_parts: dict[str, list[str]] | None = None,
) -> dict[tuple[int, str], str | None]:
    """``(scope id, name) -> kind`` (None: bound, meaning unknown) for names assigned once in
    a scope from an expression that ``predicate`` classifies (it may consult the aliases found so
    far: ``p = props(); m = p.major``).
    A tuple target takes the element kinds ``tuple_parts[kind]`` (``major, minor = capability()``).
    A name bound more than once in a scope keeps its kind when every other binding is a literal
    fallback (``cap = capability()`` in one branch, ``cap = (0, 0)`` in the other); otherwise it
    is dropped (its meaning is not fixed)."""
    parts = tuple_parts or {}
    found: dict[tuple[int, str], str | None] = {}
    for _ in range(3):
        seen: dict[tuple[int, str], str | None] = {}
        for node in tree_.nodes:
            if isinstance(node, cst.Assign):
                kind = predicate(node.value, found)
                if kind is None and literal_value(node.value) is not ...:
                    kind = _LITERAL
                for target in node.targets:
                    _bind(tree_, node, target.target, kind, seen, parts)
            elif isinstance(node, cst.AnnAssign) and node.value is not None:
                _bind(tree_, node, node.target, predicate(node.value, found), seen, parts)
            elif isinstance(node, (cst.AugAssign, cst.For, cst.CompFor)):
                _bind(tree_, node, node.target, None, seen, parts)
            elif isinstance(node, cst.WithItem) and node.asname is not None:
                _bind(tree_, node, node.asname.name, None, seen, parts)
            elif isinstance(node, cst.Param):
                _bind(tree_, node, node.name, None, seen, parts)
        result = {key: None if kind == _LITERAL else kind for key, kind in seen.items()}
        if result == found:
            break
        found = result
    return found


#: Kind of a name bound to a literal (a fallback value), merged away by ``assigned_value_aliases``.
_LITERAL = "<literal>"


def _bind(
    tree_: Tree,
    statement: cst.CSTNode,
    target: cst.BaseExpression,
    kind: str | None,
    seen: dict[tuple[int, str], str | None],
    parts: dict[str, list[str]],
) -> None:
    scope = id(tree_.scope(statement))
    if isinstance(target, cst.Name):
        key = (scope, target.value)
        if key not in seen:
            seen[key] = kind
        elif seen[key] != kind:
            earlier = seen[key]
            seen[key] = kind if earlier == _LITERAL else earlier if kind == _LITERAL else None
    elif isinstance(target, (cst.Tuple, cst.List)):
        element_kinds = parts.get(kind or "", [])
        for index, element in enumerate(target.elements):
            element_kind = element_kinds[index] if index < len(element_kinds) else None
            if kind == _LITERAL:
                element_kind = _LITERAL
            _bind(tree_, statement, element.value, element_kind, seen, parts)


def alias_kind(
    tree_: Tree, aliases: dict[tuple[int, str], str | None], node: cst.CSTNode
) -> str | None:
    """Kind of a loaded Name bound by ``assigned_value_aliases`` in its scope or the module."""
    if not isinstance(node, cst.Name) or not is_load_name(tree_, node):
        return None
    scope = tree_.scope(node)
    key = (id(scope), node.value)
    if key in aliases:
        return aliases[key]
    return aliases.get((id(tree_.module), node.value))


# --------------------------------------------------------------------------------------------
# Guards: code that cannot run on a ROCm build


#: Tokens of a test name that mean "this is a ROCm/AMD build or device" and "an NVIDIA one".
ROCM_TOKENS = guards.ROCM_TOKENS
NVIDIA_TOKENS = guards.NVIDIA_TOKENS


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


def in_try_catching(tree_: Tree, node: cst.CSTNode, exceptions: set[str]) -> bool:
    """Whether ``node`` sits in the body of a ``try`` whose handlers catch one of ``exceptions``
    (bare ``except:`` and ``Exception``/``BaseException`` always count)."""
    child: cst.CSTNode = node
    for ancestor in tree_.ancestors(node):
        if isinstance(ancestor, cst.Try) and ancestor.body is child:
            for handler in ancestor.handlers:
                if handler.type is None:
                    return True
                caught = handler.type
                names = (
                    [element.value for element in caught.elements]
                    if isinstance(caught, cst.Tuple)
                    else [caught]
                )
                for name in names:
                    ident = identifier(name)
                    if ident in exceptions or ident in {"Exception", "BaseException"}:
                        return True
        child = ancestor
    return False


def statement_of(tree_: Tree, node: cst.CSTNode) -> cst.CSTNode:
    """The innermost statement holding ``node``."""
    for ancestor in tree_.ancestors(node):
        if isinstance(ancestor, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            return ancestor
    return tree_.module


def strings_in(node: cst.CSTNode) -> Iterator[str]:
    """Values of the plain string literals (and static parts of f-strings) under ``node``."""
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.SimpleString):
            value = current.evaluated_value
            if isinstance(value, str):
                yield value
            continue
        if isinstance(current, cst.FormattedStringText):
            yield current.value
            continue
        stack.extend(current.children)


def is_docstring(tree_: Tree, node: cst.CSTNode) -> bool:
    """Whether a string node is an expression statement of its own (docstring or bare string)."""
    parent = tree_.parent(node)
    while isinstance(parent, cst.ConcatenatedString):
        parent = tree_.parent(parent)
    return isinstance(parent, cst.Expr)


def bound_at_module_level(module: cst.Module, local: str) -> bool:
    """Whether ``local`` is bound by an import at module level (also inside top-level ``try``/
    ``if``), as opposed to only by imports inside functions (a deliberately lazy import)."""
    statements: list[cst.CSTNode] = list(module.body)
    while statements:
        statement = statements.pop()
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(
                    small.names, cst.ImportStar
                ):
                    for alias in small.names:
                        name = alias.evaluated_alias or alias.evaluated_name
                        if name.split(".", 1)[0] == local:
                            return True
        elif isinstance(statement, (cst.Try, cst.If, cst.Else, cst.ExceptHandler, cst.Finally)):
            body = statement.body
            if isinstance(body, cst.IndentedBlock):
                statements.extend(body.body)
            for extra in ("orelse", "finalbody"):
                part = getattr(statement, extra, None)
                if part is not None:
                    statements.append(part)
            statements.extend(getattr(statement, "handlers", ()))
    return False
