"""Parent links and statement lookups of a parsed module, computed once per module and cached on its
identity."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import libcst as cst

from migrator.api import PythonContext
from migrator.api.reach import guard_conditions
from migrator.api.syntax import iter_nodes, simple_string_value, syntax_children


@dataclass
class Tree:
    """Parent links and a flat pre-order node list of one module."""

    module: cst.Module
    parents: dict[int, cst.CSTNode]
    nodes: list[cst.CSTNode]
    memo: dict[str, Any] = field(default_factory=dict)
    #: ``scope``'s answers by node id
    scopes: dict[int, cst.CSTNode] = field(default_factory=dict)

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self.parents.get(id(node))

    def release(self) -> None:
        """Forget the memoised analyses: each holds this tree (a cycle that only the garbage
        collector would free, after traversing the whole module)."""
        self.memo.clear()
        self.scopes.clear()

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        current = self.parents.get(id(node))
        while current is not None:
            yield current
            current = self.parents.get(id(current))

    def scope(self, node: cst.CSTNode) -> cst.CSTNode:
        """The innermost function (or lambda) around ``node``, else the module. Each node's
        answer is kept, with those of the ancestors passed on the way (they share it)."""
        scopes = self.scopes
        found = scopes.get(id(node))
        if found is not None:
            return found
        passed = [node]
        parents = self.parents
        current = parents.get(id(node))
        found = self.module
        while current is not None:
            if type(current) in _SCOPES:
                found = current
                break
            known = scopes.get(id(current))
            if known is not None:
                found = known
                break
            passed.append(current)
            current = parents.get(id(current))
        for each in passed:
            scopes[id(each)] = found
        return found

    def descendants(self, node: cst.CSTNode) -> list[cst.CSTNode]:
        """Every syntax node under ``node`` (trivia left out: whitespace, comments, punctuation,
        operators), in no set order: for questions about the kinds of node a function or block
        holds. Read once per node (``node.children`` rebuilds each node it visits)."""
        memo: dict[int, list[cst.CSTNode]] = self.memo.setdefault("descendants", {})
        found = memo.get(id(node))
        if found is None:
            found = []
            stack = syntax_children(node)
            while stack:
                current = stack.pop()
                found.append(current)
                stack.extend(syntax_children(current))
            memo[id(node)] = found
        return found

    def of_type(self, *types: type[cst.CSTNode]) -> list[cst.CSTNode]:
        """The nodes of these concrete types, in pre-order, picked out once per tree: by type
        identity, as libcst's node classes are ABCs (an ``isinstance`` that fails costs several
        times a plain one's) and its concrete classes have no subclasses."""
        key = "of-type:" + ",".join(kind.__name__ for kind in types)
        found = self.memo.get(key)
        if found is None:
            wanted = frozenset(map(_concrete, types))
            found = [node for node in self.nodes if type(node) in wanted]
            self.memo[key] = found
        return list(found)


def _concrete(kind: type[cst.CSTNode]) -> type[cst.CSTNode]:
    """``kind``, refused when it has subclasses (then type identity would miss nodes)."""
    if kind.__subclasses__():
        raise TypeError(f"{kind.__name__} has subclasses: use isinstance")
    return kind


#: The nodes that open a scope for ``Tree.scope`` (concrete classes: compared by identity).
_SCOPES = frozenset({cst.FunctionDef, cst.Lambda})


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
    for evicted in _TREES[2:]:
        evicted.release()
    del _TREES[2:]
    return built


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
    # a bare name resolves only when an import binds it (``ImportTable.resolve``)
    imported = ctx.imports.bindings
    found: list[cst.CSTNode] = []
    for node in tree_.of_type(cst.Attribute, cst.Name):
        attribute = type(node) is cst.Attribute
        if attribute:
            assert isinstance(node, cst.Attribute)
            if node.attr.value not in tails:
                continue
        else:
            assert isinstance(node, cst.Name)
            if node.value not in imported:
                continue
        qualified = ctx.qualname(node)
        # the cheap resolution first: only a name that resolves needs its context read
        if qualified in names and (attribute or is_load_name(tree_, node)):
            found.append(node)
    tree_.memo[memo_key] = found
    return list(found)


#: One home for these name helpers: the guard facility (what a condition proves).
identifier = guard_conditions.identifier

tokens = guard_conditions.tokens


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
            value = simple_string_value(current)
            if isinstance(value, str):
                yield value
            continue
        if isinstance(current, cst.FormattedStringText):
            yield current.value
            continue
        stack.extend(syntax_children(current))


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


def simple_statements(block: cst.BaseSuite) -> list[cst.BaseSmallStatement] | None:
    """The simple statements of a block (``return``, assignments, calls...), None when it holds
    a compound statement (``if``, ``for``, ``with``...)."""
    statements = block.body if isinstance(block, cst.IndentedBlock) else [block]
    out: list[cst.BaseSmallStatement] = []
    for statement in statements:
        if not isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            return None
        out.extend(statement.body)
    return out
