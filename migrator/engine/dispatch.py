"""One walk of a libcst tree for every selected Python rule: each rule's ``visit_<Node>`` and
``leave_<Node>`` methods called in turn, with the guard and parent bookkeeping the rules'
context reads."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import libcst as cst

from migrator.engine.context import PythonContext
from migrator.engine.rule import PythonRule
from migrator.reach.guards import GUARD_NODE_TYPES
from migrator.syntax.astutil import syntax_children


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
