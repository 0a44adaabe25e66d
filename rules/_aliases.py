"""Scope-aware aliases of simple assignments (``cuda = torch.version.cuda``) and what kind of value
they hold."""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from migrator.api.syntax import literal_value

from ._tree import Tree, is_load_name


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
    # the binding nodes, picked out once per tree (each pass below, and each rule asking with
    # its own predicate, reads only them)
    bindings = tree_.memo.get("binding-nodes")
    if bindings is None:
        bindings = tree_.of_type(*_BINDINGS)
        tree_.memo["binding-nodes"] = bindings
    # whether each assignment's value is a literal, read once per tree
    literals: dict[int, bool] = tree_.memo.setdefault("literal-assignments", {})
    for _ in range(3):
        seen: dict[tuple[int, str], str | None] = {}
        for node in bindings:
            if isinstance(node, cst.Assign):
                kind = predicate(node.value, found)
                if kind is None:
                    literal = literals.get(id(node))
                    if literal is None:
                        literal = literals[id(node)] = literal_value(node.value) is not ...
                    if literal:
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
        result = _Aliases({key: None if kind == _LITERAL else kind for key, kind in seen.items()})
        if result == found:
            break
        found = result
    return found


class _Aliases(dict[tuple[int, str], str | None]):
    """The aliases (never changed once built), with the names some scope binds to a kind: a
    name outside ``kinded`` has no kind anywhere, which ``alias_kind`` answers without looking
    up the name's scope."""

    __slots__ = ("kinded",)

    def __init__(self, items: dict[tuple[int, str], str | None]) -> None:
        super().__init__(items)
        self.kinded = frozenset(name for (_, name), kind in items.items() if kind is not None)


_BINDINGS = (
    cst.Assign,
    cst.AnnAssign,
    cst.AugAssign,
    cst.For,
    cst.CompFor,
    cst.WithItem,
    cst.Param,
)

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
    if not isinstance(node, cst.Name):
        return None
    kinded = aliases.kinded if isinstance(aliases, _Aliases) else None
    if kinded is not None and node.value not in kinded:
        return None  # every binding of the name, in any scope, is of unknown kind
    if not is_load_name(tree_, node):
        return None
    scope = tree_.scope(node)
    key = (id(scope), node.value)
    if key in aliases:
        return aliases[key]
    return aliases.get((id(tree_.module), node.value))
