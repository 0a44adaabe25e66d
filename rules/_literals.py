"""Literals, strings and simple expressions in a syntax tree: what they are, what they hold, where
they are assigned."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import libcst as cst

from migrator.api.syntax import fast_visit, literal_value, simple_string_value


def is_simple(node: cst.BaseExpression) -> bool:
    """True for expressions that are cheap and side-effect free to evaluate twice: names,
    attribute chains and subscripts of those with literal/name indices."""
    if isinstance(node, cst.Name):
        return True
    if isinstance(node, cst.Attribute):
        return is_simple(node.value)
    if isinstance(node, cst.Subscript):
        if not is_simple(node.value):
            return False
        for element in node.slice:
            index = element.slice
            if isinstance(index, cst.Index):
                if not _simple_index(index.value):
                    return False
            elif isinstance(index, cst.Slice):
                for part in (index.lower, index.upper, index.step):
                    if part is not None and not _simple_index(part):
                        return False
        return True
    return False


def _simple_index(node: cst.BaseExpression) -> bool:
    return isinstance(node, (cst.Integer, cst.Name)) or (
        isinstance(node, cst.UnaryOperation) and isinstance(node.expression, cst.Integer)
    )


def has_comment(node: cst.CSTNode) -> bool:
    """Whether a comment occurs anywhere inside ``node``."""

    class _Finder(cst.CSTVisitor):
        found = False

        def visit_Comment(self, _: cst.Comment) -> None:
            self.found = True

    finder = _Finder()
    fast_visit(node, finder)
    return finder.found


def is_literal(node: cst.BaseExpression | None, value: object) -> bool:
    """Whether ``node`` is a literal equal to ``value`` (True/False/None, numbers, tuples)."""
    found = literal_value(node)
    if found is ...:
        return False
    if isinstance(value, bool) or value is None or isinstance(found, bool) or found is None:
        return found is value
    return bool(found == value)


def literal_from_text(text: str) -> object:
    """Python value of a literal written as source text in a data table (``"(-1, -1)"``)."""
    return literal_value(cst.parse_expression(text))


def string_nodes_with_value(
    node: cst.BaseExpression, values: Iterable[str]
) -> list[cst.SimpleString]:
    """Plain string literals equal to one of ``values`` that ``node`` evaluates to: the node
    itself, either branch of ``a if c else b``, either side of ``a or b`` / ``a and b``, and the
    ``default=`` of a call such as ``field(default=...)``. Comparisons are never entered."""
    wanted = set(values)
    found: list[cst.SimpleString] = []
    pending: list[cst.BaseExpression] = [node]  # in source order, first at the end
    while pending:
        current = pending.pop()
        if isinstance(current, cst.SimpleString):
            value = simple_string_value(current)
            if isinstance(value, str) and value in wanted and "f" not in current.prefix.lower():
                found.append(current)
        elif isinstance(current, cst.IfExp):
            pending += (current.orelse, current.body)
        elif isinstance(current, cst.BooleanOperation):
            pending += (current.right, current.left)
        elif isinstance(current, cst.Call):
            pending += reversed(
                [
                    argument.value
                    for argument in current.args
                    if argument.keyword is not None and argument.keyword.value == "default"
                ]
            )
    return found


def replace_string(node: cst.SimpleString, new_value: str) -> cst.SimpleString:
    """The same literal (prefix and quote style kept) holding ``new_value``."""
    quote = node.quote
    return node.with_changes(value=f"{node.prefix}{quote}{new_value}{quote}")


def docstring_nodes(module: cst.Module) -> frozenset[int]:
    """``id()`` of the string nodes that are module, class or function docstrings."""
    found: set[int] = set()

    def first_string(body: Sequence[cst.CSTNode]) -> None:
        if not body:
            return
        statement = body[0]
        if isinstance(statement, cst.SimpleStatementLine) and statement.body:
            small = statement.body[0]
            if isinstance(small, cst.Expr) and isinstance(
                small.value, (cst.SimpleString, cst.ConcatenatedString)
            ):
                found.add(id(small.value))

    class _Visitor(cst.CSTVisitor):
        def visit_ClassDef(self, node: cst.ClassDef) -> None:
            if isinstance(node.body, cst.IndentedBlock):
                first_string(node.body.body)

        def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
            if isinstance(node.body, cst.IndentedBlock):
                first_string(node.body.body)

    first_string(module.body)
    fast_visit(module, _Visitor(), trivia=False)
    return frozenset(found)


def code_of(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


def assigned_values(scope: cst.CSTNode, name: str) -> list[cst.BaseExpression]:
    """Values assigned to the plain name ``name`` anywhere in ``scope``."""
    values: list[cst.BaseExpression] = []

    class _Finder(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            for target in node.targets:
                if isinstance(target.target, cst.Name) and target.target.value == name:
                    values.append(node.value)

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            if isinstance(node.target, cst.Name) and node.target.value == name and node.value:
                values.append(node.value)

    fast_visit(scope, _Finder(), trivia=False)
    return values
