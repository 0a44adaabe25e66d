"""What ROC600-ROC603 share: the CUDA extension table, kernel source text, builds that already
dispatch on ROCm, and the extension-build problem key."""

from __future__ import annotations

from typing import Any

import libcst as cst

from migrator.api import PythonContext, PythonRule, load_table
from migrator.api.reach import guard_conditions
from migrator.api.syntax import syntax_children

from .._literals import docstring_nodes


def _data() -> dict[str, Any]:
    data: dict[str, Any] = load_table("cuda_extension")
    return data


def string_text(node: cst.CSTNode) -> str | None:
    """Source text of a string literal (plain, concatenated or f-string), else None."""
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        try:
            value = node.evaluated_value
        except Exception:  # noqa: BLE001 - odd escapes: fall back to nothing
            return None
        if isinstance(value, str):
            return value
        return None if isinstance(node, cst.ConcatenatedString) else node.value
    if isinstance(node, cst.FormattedString):
        return "".join(
            part.value if isinstance(part, cst.FormattedStringText) else "{}" for part in node.parts
        )
    return None


class _KernelSource(PythonRule, abstract=True):
    """Shared matcher: string literals that hold CUDA source, either because they are passed to
    a kernel-compiling API (``load_inline(cuda_sources=...)``, ``cupy.RawKernel``, …) or because
    they contain CUDA markers (``__global__``, ``threadIdx``, …). Docstrings never count."""

    def __init__(self, ctx: Any) -> None:
        super().__init__(ctx)
        self._kernel_args: set[int] = set()
        self._parts: set[int] = set()  # pieces of an implicit concatenation, checked as a whole
        self._docstrings: frozenset[int] | None = None

    def visit_Call(self, node: cst.Call) -> None:
        qualified = self.ctx.call_name(node)
        if qualified is None:
            return
        spec = _data()["kernel_sources"].get(qualified)
        if spec is None:
            return
        positional = [a for a in node.args if a.keyword is None and not a.star]
        for key in spec:
            if isinstance(key, int):
                if key < len(positional):
                    self._mark(positional[key].value)
            else:
                for argument in node.args:
                    if argument.keyword is not None and argument.keyword.value == key:
                        self._mark(argument.value)

    def _mark(self, value: cst.BaseExpression) -> None:
        values = [value]
        if isinstance(value, (cst.List, cst.Tuple)):
            values = [element.value for element in value.elements]
        for item in values:
            self._kernel_args.add(id(item))

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        self._string(node)

    def visit_FormattedString(self, node: cst.FormattedString) -> None:
        self._string(node)

    def visit_ConcatenatedString(self, node: cst.ConcatenatedString) -> None:
        if id(node) in self._parts:
            self._parts.update((id(node.left), id(node.right)))
            return
        if id(node) in self._kernel_args:
            self._kernel_args.update((id(node.left), id(node.right)))
        self._parts.update((id(node.left), id(node.right)))
        self._string(node)

    def _string(self, node: cst.BaseExpression) -> None:
        if id(node) in self._parts:
            return
        text = string_text(node)
        if text is None:
            return
        if self._docstrings is None:
            self._docstrings = docstring_nodes(self.ctx.module)
        if id(node) in self._docstrings:
            return
        markers = _data()["source_markers"]["cuda"]
        if id(node) in self._kernel_args or any(marker in text for marker in markers):
            self.check_source(node, text)

    def check_source(self, node: cst.BaseExpression, text: str) -> None:
        raise NotImplementedError


def _scope_of(ctx: PythonContext, node: cst.CSTNode) -> cst.CSTNode:
    """The innermost function around ``node``, else the module."""
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, cst.FunctionDef):
            return ancestor
    return ctx.module


def _dispatches_on_rocm(ctx: PythonContext, scope: cst.CSTNode) -> bool:
    """Whether ``scope`` (a function, or the module's own statements) has an ``if`` that tests
    for a ROCm build (``if self.is_rocm_pytorch():``, ``if IS_ROCM:``, ``torch.version.hip``):
    an extension build there already has its ROCm path."""
    key = f"rocm-dispatch-{id(scope)}"
    cached = ctx.memo.get(key)
    if isinstance(cached, bool):
        return cached
    found = False
    stack: list[cst.CSTNode] = [scope]
    while stack and not found:
        current = stack.pop()
        if isinstance(current, (cst.If, cst.IfExp)):
            found = guard_conditions.ROCM_ONLY in ctx.guards.classify(current.test)
        for child in syntax_children(current):
            if isinstance(child, (cst.FunctionDef, cst.ClassDef)) and current is not scope:
                continue
            if isinstance(child, cst.FunctionDef) and scope is ctx.module:
                continue  # the module's own statements only
            stack.append(child)
    ctx.memo[key] = found
    return found


def _rocm_aware(ctx: PythonContext, node: cst.CSTNode) -> bool:
    """The build at ``node`` runs only on ROCm or sits in code that dispatches on ROCm."""
    return ctx.guards.only_on_rocm(node) or _dispatches_on_rocm(ctx, _scope_of(ctx, node))


#: Problem key of a file's CUDA extension builds: the builds (ROC600) and the nvcc flags they
#: pass (ROC603) are one problem, "build and check this extension on ROCm", at the build.
EXTENSION_BUILD = "cuda-extension-build"
