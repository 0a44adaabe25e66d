"""Which expressions read the device's capability, name or architecture list: the analysis
ROC110-ROC113 share."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import libcst as cst

from migrator.api import PythonContext, load_table
from migrator.api.syntax import literal_value

from .._aliases import alias_kind, assigned_value_aliases
from .._tree import Tree, tree


def _gpus() -> list[dict[str, Any]]:
    return list(load_table("detection")["gpu"])


_CAPABILITY = "torch.cuda.get_device_capability"


_PROPERTIES = "torch.cuda.get_device_properties"


_DEVICE_NAME = "torch.cuda.get_device_name"


_ARCH_LIST = "torch.cuda.get_arch_list"


@dataclass
class _GateAnalysis:
    tree: Tree
    aliases: dict[tuple[int, str], str | None]


#: The node types ``_direct_kind`` can name (every other node has no kind).
KINDED_TYPES: tuple[type[cst.CSTNode], ...] = (
    cst.Call,
    cst.Subscript,
    cst.Attribute,
    cst.Name,
    cst.Tuple,
)


def _direct_kind(
    ctx: PythonContext,
    tree_: Tree | None,
    node: cst.CSTNode,
    aliases: dict[tuple[int, str], str | None],
) -> str | None:
    """What a device-query expression is: cap, major, minor, props, name, arch-list, gcn."""
    # asked of most nodes of a file: the node's type is compared by identity first (libcst's
    # concrete classes have no subclasses; ``isinstance`` against them is slow when it fails)
    kind = type(node)
    if kind is cst.Call and isinstance(node, cst.Call):
        qualified = ctx.qualname(node.func)
        if qualified == _CAPABILITY:
            return "cap"
        if isinstance(node.func, cst.Name) and tree_ is not None and not node.args:
            # a module function that returns the capability (or its major): ``_cc_major()``
            returned = tree_.memo.get("capability-functions", {}).get(node.func.value)
            if returned is not None:
                return str(returned)
        if qualified == _PROPERTIES:
            return "props"
        if qualified == _DEVICE_NAME:
            return "name"
        if qualified == _ARCH_LIST:
            return "arch-list"
        if isinstance(node.func, cst.Attribute) and node.func.attr.value in {
            "lower",
            "upper",
            "strip",
            "casefold",
            "replace",
            "split",
        }:
            inner = _direct_kind(ctx, tree_, node.func.value, aliases)
            return "name" if inner == "name" else None
        return None
    if kind is cst.Subscript and isinstance(node, cst.Subscript) and len(node.slice) == 1:
        inner = _direct_kind(ctx, tree_, node.value, aliases)
        index = node.slice[0].slice
        if inner == "cap" and isinstance(index, cst.Index):
            position = literal_value(index.value)
            return {0: "major", 1: "minor"}.get(position) if isinstance(position, int) else None
        return None
    if kind is cst.Attribute and isinstance(node, cst.Attribute):
        if node.attr.value == "gcnArchName":
            return "gcn"
        inner = _direct_kind(ctx, tree_, node.value, aliases)
        if inner == "props" and node.attr.value in {"major", "minor", "name"}:
            return node.attr.value
        return None
    if kind is cst.Name and tree_ is not None:
        return alias_kind(tree_, aliases, node)
    if kind is cst.Tuple and isinstance(node, cst.Tuple) and len(node.elements) == 2:
        # ``(major, minor)`` rebuilt from the unpacked capability
        kinds = [_direct_kind(ctx, tree_, element.value, aliases) for element in node.elements]
        return "cap" if kinds == ["major", "minor"] else None
    return None


def _gate_analysis(ctx: PythonContext) -> _GateAnalysis:
    tree_ = tree(ctx)
    cached = tree_.memo.get("device-gate")
    if cached is None:
        aliases = assigned_value_aliases(
            tree_,
            lambda value, found: _direct_kind(ctx, tree_, value, found),
            {"cap": ["major", "minor"]},
        )
        cached = _GateAnalysis(tree_, aliases)
        tree_.memo["device-gate"] = cached
        tree_.memo["capability-functions"] = _capability_functions(ctx, tree_, aliases)
    return cached


def _capability_functions(
    ctx: PythonContext, tree_: Tree, aliases: dict[tuple[int, str], str | None]
) -> dict[str, str]:
    """Module functions without parameters whose every value-returning ``return`` gives the
    capability or its major (``return major`` after ``major, _ = get_device_capability()``;
    ``return None`` when no GPU is seen): a call of one is a capability query."""
    functions = [
        statement
        for statement in tree_.module.body
        if isinstance(statement, cst.FunctionDef) and not statement.params.params
    ]
    if not functions:
        return {}
    # the returns of each such function, from one pass over the module's nodes
    returns: dict[int, list[cst.Return]] = {id(function): [] for function in functions}
    for node in tree_.of_type(cst.Return):
        if isinstance(node, cst.Return):
            found = returns.get(id(tree_.scope(node)))
            if found is not None:
                found.append(node)
    out: dict[str, str] = {}
    for statement in functions:
        kinds: set[str | None] = set()
        for node in returns[id(statement)]:
            value = node.value
            if value is None or (isinstance(value, cst.Name) and value.value == "None"):
                continue
            kinds.add(_direct_kind(ctx, tree_, value, aliases))
        if len(kinds) == 1 and (kind := kinds.pop()) in {"cap", "major"}:
            out[statement.name.value] = kind
    return out


def _kind(ctx: PythonContext, gates: _GateAnalysis, node: cst.CSTNode) -> str | None:
    return _direct_kind(ctx, gates.tree, node, gates.aliases)


def _literal_strings(node: cst.BaseExpression) -> list[str] | None:
    value = literal_value(node)
    if isinstance(value, str):
        return [value]
    if isinstance(node, (cst.List, cst.Set, cst.Tuple)):
        strings = [literal_value(element.value) for element in node.elements]
        if strings and all(isinstance(s, str) for s in strings):
            return [s for s in strings if isinstance(s, str)]
    return None
