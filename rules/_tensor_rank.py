"""Evidence that a tensor is 4-D (the layout SDPA needs), from how it is made and reshaped."""

from __future__ import annotations

import libcst as cst

from migrator.api.syntax import fast_visit

_RANK_PRESERVING = frozenset(
    {
        "contiguous",
        "transpose",
        "to",
        "float",
        "half",
        "bfloat16",
        "type_as",
        "clone",
        "detach",
        "cuda",
        "requires_grad_",
    }
)


_FACTORIES = frozenset({"randn", "rand", "zeros", "ones", "empty", "full"})


def _positional(call: cst.Call) -> list[cst.BaseExpression] | None:
    if any(argument.star for argument in call.args):
        return None
    values = [argument.value for argument in call.args if argument.keyword is None]
    if len(values) == 1 and isinstance(values[0], (cst.Tuple, cst.List)):
        return [element.value for element in values[0].elements]
    return values


def _einops_rank(pattern: str) -> int | None:
    if "->" not in pattern:
        return None
    right = pattern.split("->", 1)[1]
    depth = 0
    count = 0
    for token in right.replace("(", " ( ").replace(")", " ) ").split():
        if token == "(":
            if depth == 0:
                count += 1
            depth += 1
        elif token == ")":
            depth -= 1
        elif depth == 0:
            count += 1
    return count


def is_4d(node: cst.BaseExpression) -> bool:
    """Whether ``node`` evidently builds a 4-D tensor: ``x.view(a, b, c, d)`` / ``reshape`` with
    four sizes, ``x.view(a, b, 3, c, d).unbind(2)``, ``torch.randn(a, b, c, d)``, an einops
    ``rearrange`` to four axes, or a rank-preserving method (``transpose``, ``to``, …) of one."""
    if not isinstance(node, cst.Call):
        return False
    func = node.func
    if isinstance(func, cst.Attribute):
        method = func.attr.value
        if method in {"view", "reshape"}:
            sizes = _positional(node)
            return sizes is not None and len(sizes) == 4
        if method == "unbind" and isinstance(func.value, cst.Call):
            inner = func.value
            inner_method = inner.func.attr.value if isinstance(inner.func, cst.Attribute) else ""
            if inner_method in {"view", "reshape"}:
                sizes = _positional(inner)
                return sizes is not None and len(sizes) == 5
            return False
        if method in _RANK_PRESERVING:
            return is_4d(func.value)
        if method in _FACTORIES:
            sizes = _positional(node)
            return sizes is not None and len(sizes) == 4
    name = (
        func.attr.value
        if isinstance(func, cst.Attribute)
        else (func.value if isinstance(func, cst.Name) else "")
    )
    if name == "rearrange" and len(node.args) >= 2:
        pattern = node.args[1].value
        if isinstance(pattern, cst.SimpleString):
            return _einops_rank(str(pattern.evaluated_value)) == 4
    return False


def rank4_evidence(scope: cst.CSTNode, names: set[str]) -> bool:
    """Whether an assignment in ``scope`` gives one of ``names`` an evidently 4-D value."""

    class _Finder(cst.CSTVisitor):
        found = False

        def visit_Assign(self, node: cst.Assign) -> None:
            for target in node.targets:
                self._target(target.target, node.value)

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            if node.value is not None:
                self._target(node.target, node.value)

        def _target(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
            if isinstance(target, cst.Name):
                if target.value in names and is_4d(value):
                    self.found = True
            elif isinstance(target, (cst.Tuple, cst.List)):
                elements = [element.value for element in target.elements]
                if isinstance(value, (cst.Tuple, cst.List)) and len(value.elements) == len(
                    elements
                ):
                    for element, part in zip(elements, value.elements, strict=True):
                        self._target(element, part.value)
                elif any(isinstance(e, cst.Name) and e.value in names for e in elements) and is_4d(
                    value
                ):
                    self.found = True

    finder = _Finder()
    fast_visit(scope, finder, trivia=False)
    return finder.found
