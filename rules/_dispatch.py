"""Dispatch rewrites of vendor attention kernels (ROC400, ROC410): each call keeps the vendor
function where its package imports and takes the portable expression where it does not, and the
import becomes optional (``except ImportError: name = None``), so NVIDIA keeps its kernel and the
module imports on a machine without the package."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import libcst as cst

from migrator.api import PythonContext
from migrator.api.syntax import fast_visit, handler_types

from ._imports import IMPORT_GUARD_EXCEPTIONS, imported_modules

#: Tells whether a call of the vendor function (in the given function, or None at module level)
#: has an exact portable rewrite (None) or why not.
Rewritable = Callable[[cst.Call, cst.FunctionDef | None], str | None]


@dataclass(slots=True)
class _Reference:
    """One use of a name bound by an import: as a callee, in ``name is (not) None``, as the
    ``name = None`` of an ``except ImportError:`` handler, or anything else."""

    kind: str
    call: cst.Call | None = None
    scope: cst.FunctionDef | None = None
    #: ``id()`` of the calls around this one (an argument of a vendor call stays on its side).
    inside: tuple[int, ...] = ()


@dataclass(slots=True)
class _Names:
    """Per file: the import statements binding each name and every other use of the name."""

    imports: dict[str, list[tuple[cst.Import | cst.ImportFrom, list[cst.CSTNode]]]] = field(
        default_factory=dict
    )
    references: dict[str, list[_Reference]] = field(default_factory=dict)


def _bound_names(node: cst.Import | cst.ImportFrom) -> list[str]:
    if isinstance(node.names, cst.ImportStar):
        return []
    names = []
    for alias in node.names:
        if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
            names.append(alias.asname.name.value)
        else:
            head: cst.BaseExpression = alias.name
            while isinstance(head, cst.Attribute):
                head = head.value
            if isinstance(head, cst.Name):
                names.append(head.value)
    return names


def _is_none_test(node: cst.CSTNode, name: cst.Name) -> bool:
    return (
        isinstance(node, cst.Comparison)
        and node.left is name
        and len(node.comparisons) == 1
        and isinstance(node.comparisons[0].operator, cst.IsNot | cst.Is)
        and isinstance(node.comparisons[0].comparator, cst.Name)
        and node.comparisons[0].comparator.value == "None"
    )


class _Collector(cst.CSTVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.stack: list[cst.CSTNode] = []
        self.names = _Names()

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.Import | cst.ImportFrom):
            for name in _bound_names(node):
                self.names.imports.setdefault(name, []).append((node, list(reversed(self.stack))))
            return False
        if isinstance(node, cst.Name):
            self._name(node)
        self.stack.append(node)
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        if self.stack and self.stack[-1] is original_node:
            self.stack.pop()

    def _name(self, node: cst.Name) -> None:
        parent = self.stack[-1] if self.stack else None
        if isinstance(parent, cst.Attribute) and parent.attr is node:
            return
        if isinstance(parent, cst.Arg) and parent.keyword is node:
            return
        references = self.names.references.setdefault(node.value, [])
        current: cst.CSTNode = node
        index = len(self.stack) - 1
        while index >= 0 and isinstance(self.stack[index], cst.Attribute):
            attribute = self.stack[index]
            assert isinstance(attribute, cst.Attribute)
            if attribute.value is not current:
                break
            current, index = attribute, index - 1
        above = self.stack[index] if index >= 0 else None
        inside = tuple(id(n) for n in self.stack[: index + 1] if isinstance(n, cst.Call))
        if isinstance(above, cst.Call) and above.func is current:
            scope = next((n for n in reversed(self.stack) if isinstance(n, cst.FunctionDef)), None)
            references.append(_Reference("call", above, scope, inside[:-1]))
        elif parent is not None and _is_none_test(parent, node):
            references.append(_Reference("test"))
        elif (
            isinstance(parent, cst.AssignTarget)
            and len(self.stack) >= 2
            and isinstance(self.stack[-2], cst.Assign)
            and isinstance(self.stack[-2].value, cst.Name)
            and self.stack[-2].value.value == "None"
            and any(isinstance(node, cst.ExceptHandler) for node in self.stack)
        ):
            references.append(_Reference("handler"))
        else:
            references.append(_Reference("other", inside=inside))


def _names(ctx: PythonContext) -> _Names:
    cached = ctx.memo.get("dispatch-names")
    if isinstance(cached, _Names):
        return cached
    collector = _Collector()
    fast_visit(ctx.module, collector, trivia=False)
    ctx.memo["dispatch-names"] = collector.names
    return collector.names


def callee_root(func: cst.BaseExpression) -> cst.Name | None:
    """The name a callee chain starts from (``fa`` of ``fa.flash_attn_func``)."""
    while isinstance(func, cst.Attribute):
        func = func.value
    return func if isinstance(func, cst.Name) else None


def is_dispatched(ctx: PythonContext, call: cst.Call) -> bool:
    """Whether ``call`` is already the vendor side of ``call if name is not None else ...``."""
    root = callee_root(call.func)
    parent = ctx.parent(call)
    return (
        root is not None
        and isinstance(parent, cst.IfExp)
        and parent.body is call
        and isinstance(parent.test, cst.Comparison)
        and isinstance(parent.test.left, cst.Name)
        and parent.test.left.value == root.value
        and isinstance(parent.test.comparisons[0].operator, cst.IsNot)
        and _is_none_test(parent.test, parent.test.left)
    )


@dataclass(frozen=True, slots=True)
class Plan:
    """How to dispatch one call: the name tested against None, the import statements to make
    optional (with their ``try`` form) and the key shared by every fix that must go together."""

    name: str
    edits: tuple[tuple[cst.CSTNode, cst.CSTNode], ...] = ()
    together: str = ""
    size: int = 0


def _handler_sets_none(guard: cst.Try, name: str) -> bool:
    for handler in guard.handlers:
        if not _catches_import_error(handler) or not isinstance(handler.body, cst.IndentedBlock):
            continue
        for statement in handler.body.body:
            if not isinstance(statement, cst.SimpleStatementLine):
                continue
            for small in statement.body:
                if (
                    isinstance(small, cst.Assign)
                    and isinstance(small.value, cst.Name)
                    and small.value.value == "None"
                    and any(
                        isinstance(t.target, cst.Name) and t.target.value == name
                        for t in small.targets
                    )
                ):
                    return True
    return False


def _catches_import_error(handler: cst.ExceptHandler) -> bool:
    names = handler_types(handler)
    if names is None:
        return True
    return any(isinstance(n, cst.Name) and n.value in IMPORT_GUARD_EXCEPTIONS for n in names)


def _package_imports(
    names: _Names, package: str
) -> dict[str, tuple[cst.Import | cst.ImportFrom, list[cst.CSTNode]]]:
    """Each name bound by an import of ``package``, with that import and its ancestors."""
    out = {}
    for name, bindings in names.imports.items():
        for node, ancestors in bindings:
            if any(
                module == package or module.startswith(package + ".")
                for module in imported_modules(node)
            ):
                out[name] = (node, ancestors)
    return out


def plan(ctx: PythonContext, call: cst.Call, package: str, rewritable: Rewritable) -> Plan | str:
    """The dispatch plan for ``call`` (a call of a function of ``package``), or why the module
    cannot be made to import without ``package`` by dispatching its calls."""
    root = callee_root(call.func)
    if root is None:
        return "the callee is not a name bound by an import"
    name = root.value
    names = _names(ctx)
    imported = _package_imports(names, package)
    if name not in imported:
        return f"`{name}` is not bound by an import of {package}"
    vendor_calls = {
        id(reference.call)
        for bound in imported
        for reference in names.references.get(bound, [])
        if reference.kind == "call" and reference.call is not None
    }
    unguarded: dict[int, tuple[cst.SimpleStatementLine, list[str]]] = {}
    for bound, (_node, ancestors) in imported.items():
        if len(names.imports.get(bound, [])) != 1:
            return f"`{bound}` is bound by more than one import, so no single one can be optional"
        guard = next((a for a in ancestors if isinstance(a, cst.Try | cst.If)), None)
        if guard is not None:
            if bound == name and not (
                isinstance(guard, cst.Try) and _handler_sets_none(guard, name)
            ):
                return (
                    f"the import of `{name}` is guarded but its `except ImportError:` branch "
                    f"does not set `{name} = None`; set it there, then dispatch on "
                    f"`{name} is not None`"
                )
            continue
        statement = ancestors[0] if ancestors else None
        if not (
            isinstance(statement, cst.SimpleStatementLine)
            and len(statement.body) == 1
            and len(ancestors) >= 2
            and isinstance(ancestors[1], cst.Module | cst.IndentedBlock)
        ):
            return f"the import of `{bound}` shares its line with other statements"
        unguarded.setdefault(id(statement), (statement, []))[1].append(bound)
    if not unguarded:
        return Plan(name)
    calls = 0
    for _statement, bound_names in unguarded.values():
        for bound in bound_names:
            for reference in names.references.get(bound, []):
                if vendor_calls.intersection(reference.inside) or reference.kind in (
                    "test",
                    "handler",
                ):
                    continue  # on the vendor side of a call, or already a probe
                if reference.kind == "other" or reference.call is None:
                    return (
                        f"`{bound}` is used other than in calls of {package} in this file, so "
                        "its import cannot become optional"
                    )
                if is_dispatched(ctx, reference.call):
                    continue
                reason = rewritable(reference.call, reference.scope)
                if reason is not None:
                    return (
                        f"another call of {package} in this file is not rewritable ({reason}), "
                        f"so the module would still need {package}"
                    )
                calls += 1
    return Plan(
        name=name,
        edits=tuple(
            (statement, optional_import(statement, bound_names))
            for statement, bound_names in unguarded.values()
        ),
        together=f"optional-import:{package}",
        size=calls,
    )


def optional_import(statement: cst.SimpleStatementLine, names: list[str]) -> cst.Try:
    """``try: <import> / except ImportError: a = b = None`` keeping the line's comments."""
    targets = [cst.AssignTarget(target=cst.Name(name)) for name in names]
    handler = cst.ExceptHandler(
        type=cst.Name("ImportError"),
        body=cst.IndentedBlock(
            body=[cst.SimpleStatementLine(body=[cst.Assign(targets, cst.Name("None"))])]
        ),
    )
    return cst.Try(
        body=cst.IndentedBlock(body=[statement.with_changes(leading_lines=[])]),
        handlers=[handler],
        leading_lines=statement.leading_lines,
    )


def _break(indent: str) -> cst.ParenthesizedWhitespace:
    return cst.ParenthesizedWhitespace(
        first_line=cst.TrailingWhitespace(newline=cst.Newline()),
        empty_lines=[],
        indent=True,
        last_line=cst.SimpleWhitespace(indent),
    )


def dispatch(
    call: cst.Call, name: str, portable: cst.BaseExpression, unit: str
) -> cst.BaseExpression:
    """``(call if name is not None else portable)`` laid out one part per line, as black does."""
    test = cst.parse_expression(f"{name} is not None")
    return cst.IfExp(
        test=test,
        body=shifted(call.with_changes(lpar=[], rpar=[]), unit),
        orelse=shifted(portable, unit),
        whitespace_before_if=_break(unit),
        whitespace_after_if=cst.SimpleWhitespace(" "),
        whitespace_before_else=_break(unit),
        whitespace_after_else=cst.SimpleWhitespace(" "),
        lpar=[cst.LeftParen(whitespace_after=_break(unit))],
        rpar=[cst.RightParen(whitespace_before=_break(""))],
    )


class _Shift(cst.CSTTransformer):
    def __init__(self, unit: str) -> None:
        super().__init__()
        self.unit = unit

    def leave_ParenthesizedWhitespace(
        self, original_node: cst.ParenthesizedWhitespace, updated_node: cst.ParenthesizedWhitespace
    ) -> cst.ParenthesizedWhitespace:
        if not updated_node.indent:
            return updated_node
        shifted = self.unit + updated_node.last_line.value
        return updated_node.with_changes(last_line=cst.SimpleWhitespace(shifted))


def shifted(node: cst.BaseExpression, unit: str) -> cst.BaseExpression:
    """``node`` with every continuation line indented one ``unit`` deeper (it moves into the
    parenthesised dispatch)."""
    result = node.visit(_Shift(unit))
    assert isinstance(result, cst.BaseExpression)
    return result


def optional_edits(route: Plan) -> list[tuple[cst.CSTNode, cst.CSTNode]]:
    """The import edits a dispatch needs (none when the imports are already optional)."""
    return list(route.edits)
