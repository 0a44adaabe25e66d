"""The values a build script's path and source-list expressions may hold, read without running
it: each value is a path or glob with the build branch it came from, anchored at the project
root (``__file__`` and what is joined to it) or relative to the folder of the file that wrote
it. Joins, ``..``, ``dirname``, string concatenation and suffix filters (``f.endswith('.cu')``)
work on these values; an unknown value stays unknown."""

from __future__ import annotations

import ast
import posixpath
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from migrator.kernels.buildmodel import BOTH, Pattern, meet, under

#: First character of a text anchored at the project root (``__file__`` and what is joined to it).
ANCHOR = "\x02"
#: Marks a text that comes from a parameter of a function read without its call.
PARAM = "\x00"
#: At most this many values come out of one expression (joins of multi-valued parts multiply).
MAX_VALUES = 256


@dataclass(frozen=True, slots=True)
class Val:
    """One value: ``text`` (anchored with ``ANCHOR``, else relative to ``base``), the build
    branch it entered in, and why it is compiled only where the build finds CUDA ("" if not)."""

    text: str
    context: str = BOTH
    base: str = ""
    gate: str = ""

    @property
    def anchored(self) -> bool:
        return self.text.startswith(ANCHOR)

    @property
    def from_param(self) -> bool:
        return PARAM in self.text


def join(left: Val, right: Val) -> Val | None:
    """``os.path.join(left, right)`` (also ``left / right``)."""
    context = meet(left.context, right.context)
    if context is None:
        return None
    gate = left.gate or right.gate
    if right.anchored or right.text.startswith("/"):
        return replace(right, context=context, gate=gate)
    if not left.text or left.text == ANCHOR:
        text = (ANCHOR if left.anchored else "") + right.text
        return Val(text, context, left.base if left.text else right.base, gate)
    if not right.text:
        return replace(left, context=context, gate=gate)
    return Val(f"{left.text.rstrip('/')}/{right.text}", context, left.base, gate)


def concat(left: Val, right: Val) -> Val | None:
    """``left + right`` on two strings."""
    context = meet(left.context, right.context)
    if context is None:
        return None
    return Val(
        left.text + right.text.replace(ANCHOR, ""), context, left.base, left.gate or right.gate
    )


def dirname(value: Val) -> Val:
    """``os.path.dirname`` (``Path.parent``)."""
    if value.anchored:
        rest = value.text[1:]
        return value if not rest else replace(value, text=ANCHOR + posixpath.dirname(rest))
    return replace(value, text=posixpath.dirname(value.text))


def product(parts: Sequence[list[Val]], combine: object) -> list[Val]:
    """Every combination of one value of each part, combined left to right."""
    results: list[Val] = parts[0][:MAX_VALUES] if parts else []
    for part in parts[1:]:
        combined: list[Val] = []
        for left in results:
            for right in part:
                value = combine(left, right)  # type: ignore[operator]
                if value is not None:
                    combined.append(value)
                if len(combined) >= MAX_VALUES:
                    break
        results = combined
    return results


def to_patterns(values: Iterable[Val], setup: bool, drop_params: bool = False) -> list[Pattern]:
    """Patterns relative to the project root. A relative path in a ``setup.py`` is relative to
    its folder (setuptools runs there); elsewhere (a JIT ``load`` at run time) it may be
    relative to that file's folder or to the root, the folder the user runs from: both. A
    parameter's unknown text reads as the folder (``drop_params``) or the value is left out."""
    out: list[Pattern] = []
    for value in values:
        text = value.text
        if PARAM in text:
            if not drop_params:
                continue
            text = re.sub(r"\x00\w*/?", "", text)
        if value.anchored:
            candidates = [under("", text[1:])]
        else:
            candidates = [under(value.base, text)]
            if not setup and value.base:
                candidates.append(under("", text))
        for glob in dict.fromkeys(candidates):
            if glob:
                out.append(Pattern(glob, value.context, gate=value.gate))
    return out


_SUFFIX_OF = re.compile(r"\.[A-Za-z0-9]+$")


def narrow(values: list[Val], suffixes: Sequence[str], keep: bool) -> list[Val]:
    """The values a filter ``f.endswith(suffixes)`` (``keep``) or its negation lets through: a
    glob ending in ``*`` takes each suffix; a literal ending keeps or drops the value."""
    out: list[Val] = []
    for value in values:
        literal = value.text.rsplit("/", 1)[-1]
        if keep:
            if literal.endswith("*"):
                out.extend(replace(value, text=value.text + suffix) for suffix in suffixes)
            elif any(value.text.endswith(suffix) for suffix in suffixes) or PARAM in literal:
                out.append(value)
        elif not any(value.text.endswith(suffix) for suffix in suffixes):
            out.append(value)
    return out


def suffix_test(test: ast.expr) -> tuple[str, tuple[str, ...], bool] | None:
    """(name, suffixes, keep) of a suffix filter on a name: ``f.endswith('.cu')``,
    ``f.endswith(('.cu', '.cpp'))``, ``not f.endswith(...)``, ``f.split('.')[-1] in ['cu']``,
    ``os.path.splitext(f)[1] == '.cu'``; None for any other test."""
    keep = True
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        keep = False
        test = test.operand
    if (
        isinstance(test, ast.Call)
        and isinstance(test.func, ast.Attribute)
        and test.func.attr == "endswith"
        and isinstance(test.func.value, ast.Name)
        and test.args
    ):
        suffixes = _strings(test.args[0])
        if suffixes:
            return test.func.value.id, suffixes, keep
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and len(test.comparators) == 1:
        operator = test.ops[0]
        name = _extension_of(test.left)
        if name is None:
            return None
        suffixes = tuple(s if s.startswith(".") else f".{s}" for s in _strings(test.comparators[0]))
        if not suffixes:
            return None
        if isinstance(operator, (ast.In, ast.Eq)):
            return name, suffixes, keep
        if isinstance(operator, (ast.NotIn, ast.NotEq)):
            return name, suffixes, not keep
    return None


def _extension_of(node: ast.expr) -> str | None:
    """The name whose file extension ``node`` takes: ``f.split('.')[-1]``,
    ``os.path.splitext(f)[1]``, ``Path(f).suffix``, ``f.suffix``."""
    if isinstance(node, ast.Attribute) and node.attr == "suffix":
        inner = node.value
        if isinstance(inner, ast.Call) and inner.args:
            inner = inner.args[0]
        return inner.id if isinstance(inner, ast.Name) else None
    if isinstance(node, ast.Subscript):
        call = node.value
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute):
            if call.func.attr in {"split", "rsplit"} and isinstance(call.func.value, ast.Name):
                return call.func.value.id
            if call.func.attr == "splitext" and call.args and isinstance(call.args[0], ast.Name):
                return call.args[0].id
    return None


def _strings(node: ast.expr) -> tuple[str, ...]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return (node.value,)
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return tuple(
            e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)
        )
    return ()


def is_suffix_literal(text: str) -> bool:
    """Whether ``text`` ends in a file extension."""
    return _SUFFIX_OF.search(text) is not None


__all__ = [
    "ANCHOR",
    "MAX_VALUES",
    "PARAM",
    "Val",
    "concat",
    "dirname",
    "join",
    "narrow",
    "product",
    "suffix_test",
    "to_patterns",
]
