"""What the ROC13x/ROC14x backend-flag rules share: assignments to a backend setting."""

from __future__ import annotations

import libcst as cst

from migrator.api import PythonContext
from migrator.api.syntax import literal_value

from .._rocm_guards import unreachable_on_rocm
from .._tree import Tree


def _assignments(
    ctx: PythonContext, tree_: Tree, targets: dict[str, object]
) -> list[tuple[cst.CSTNode, str, object]]:
    """``(statement, qualified target, literal value)`` for assignments to the given settings
    whose value matches ``targets[name]`` (``...`` matches any value)."""
    found: list[tuple[cst.CSTNode, str, object]] = []
    for node in tree_.nodes:
        if not isinstance(node, cst.Assign):
            continue
        for target in node.targets:
            if not isinstance(target.target, cst.Attribute):
                continue
            qualified = ctx.qualname(target.target)
            if qualified not in targets:
                continue
            value = literal_value(node.value)
            wanted = targets[qualified]
            if wanted is ... or value == wanted:
                if not unreachable_on_rocm(ctx, tree_, node):
                    found.append((node, qualified, value))
    return found
