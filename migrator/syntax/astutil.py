"""Small helpers rules use to read calls and build replacement nodes."""

from __future__ import annotations

import typing
from typing import TYPE_CHECKING

import libcst as cst

if TYPE_CHECKING:
    from migrator.syntax.imports import ImportTable


def module_ref(imports: ImportTable, module: str) -> tuple[str, list[tuple[str, str | None]]]:
    """How to spell ``module`` in a file with these imports, and the import to add when it is not
    imported.

    ``import torch as tt`` gives ``("tt", [])``; no torch import gives ``("torch", [("torch", None)])``.
    """
    for local, full in imports.bindings.items():
        if full == module:
            return local, []
    head = module.split(".", 1)[0]
    for local, full in imports.bindings.items():
        if full == head and local == head:
            return module, []
    return module, [(module, None)]


def expr(text: str) -> cst.BaseExpression:
    return cst.parse_expression(text)


def arg(call: cst.Call, keyword: str | None = None, position: int | None = None) -> cst.Arg | None:
    """The argument passed by ``keyword`` or at ``position`` (positional only), else None."""
    if keyword is not None:
        for argument in call.args:
            if argument.keyword is not None and argument.keyword.value == keyword:
                return argument
    if position is not None:
        positional = [a for a in call.args if a.keyword is None and not a.star]
        if position < len(positional):
            return positional[position]
    return None


def handler_types(
    handler: cst.ExceptHandler | cst.ExceptStarHandler,
) -> list[cst.BaseExpression] | None:
    """The exception types an ``except`` clause names (one, or each of a tuple), or None for a
    bare ``except:``, which catches everything."""
    kind = handler.type
    if kind is None:
        return None
    if isinstance(kind, cst.Tuple):
        return [element.value for element in kind.elements]
    return [kind]


def has_star_args(call: cst.Call) -> bool:
    return any(argument.star for argument in call.args)


def string_value(node: cst.BaseExpression | None) -> str | None:
    """The value of a plain (non f-) string literal or implicit concatenation, else None."""
    if isinstance(node, cst.SimpleString):
        value: object = simple_string_value(node)
        return value if isinstance(value, str) else None
    if isinstance(node, cst.ConcatenatedString):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    return None


def simple_string_value(node: cst.SimpleString) -> str | bytes:
    """``node.evaluated_value`` read directly where the literal has no prefix, no escape and no
    carriage return (its value is then the text between its quotes). libcst evaluates it with
    ``ast.literal_eval``, which leaves a reference cycle of closures behind on every call: garbage
    that only the collector frees, and on a large project tens of thousands of calls."""
    raw = node.value
    if raw[0] in "'\"" and "\\" not in raw and "\r" not in raw:
        quotes = 3 if len(raw) >= 6 and raw[:3] in ('"""', "'''") else 1
        return raw[quotes:-quotes]
    return node.evaluated_value


def literal_value(node: cst.BaseExpression | None) -> object:
    """Python value of simple literals (numbers, strings, True/False/None, tuples), else ``...``."""
    if node is None:
        return ...
    if isinstance(node, cst.Name) and node.value in {"True", "False", "None"}:
        return {"True": True, "False": False, "None": None}[node.value]
    if isinstance(node, (cst.Integer, cst.Float)):
        return node.evaluated_value
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        inner = literal_value(node.expression)
        return -inner if isinstance(inner, (int, float)) else ...
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        return string_value(node)
    if isinstance(node, cst.Tuple):
        values = [literal_value(element.value) for element in node.elements]
        return ... if any(value is ... for value in values) else tuple(values)
    return ...


def with_comma(argument: cst.Arg) -> cst.Arg:
    return argument.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))


def replace_call(
    call: cst.Call,
    func: str,
    *,
    prepend: list[cst.Arg] | None = None,
    drop: set[str] | None = None,
) -> cst.Call:
    """``call`` with a new callee, extra leading arguments and some keywords dropped;
    the remaining arguments keep their formatting and comments."""
    kept = [
        a for a in call.args if not (a.keyword is not None and drop and a.keyword.value in drop)
    ]
    new_args = list(prepend or [])
    if new_args and kept:
        new_args = [with_comma(a) for a in new_args]
    elif new_args:
        new_args[-1] = new_args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    if kept:
        last = kept[-1]
        if drop and last.comma is not cst.MaybeSentinel.DEFAULT and call.args[-1] is not last:
            kept[-1] = last.with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return call.with_changes(func=expr(func), args=[*new_args, *kept])


def keyword_arg(name: str, value: str) -> cst.Arg:
    return cst.Arg(
        keyword=cst.Name(name),
        value=expr(value),
        equal=cst.AssignEqual(
            whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")
        ),
    )


def positional_arg(value: str) -> cst.Arg:
    return cst.Arg(value=expr(value))


def unused_import_candidates(
    imports: ImportTable, module: cst.Module, func: cst.BaseExpression, prefix: str
) -> list[tuple[str | None, ...]]:
    """Imports that a rewrite of ``func`` may leave unused, as (module, obj, asname) tuples for
    the fixer, which removes them only when nothing else in the file uses them."""
    head = func
    while isinstance(head, cst.Attribute):
        head = head.value
    if not isinstance(head, cst.Name):
        return []
    local = head.value
    full = imports.bindings.get(local)
    if full is None or not full.startswith(prefix):
        return []
    if _imported_in_try(module, local):
        return []  # an availability probe (`try: import x; HAS_X = True`): removing it flips it
    if full in imports.modules:
        # ``import a.b.c as local`` (or ``import a`` when local == a)
        return [(full, None, local if local != full else None)]
    owner, _, obj = full.rpartition(".")
    return [(owner, obj, local if local != obj else None)]


def _imported_in_try(module: cst.Module, local: str) -> bool:
    """Whether a module-level ``try:`` body imports the name ``local``."""
    for statement in module.body:
        if not isinstance(statement, cst.Try):
            continue
        for line in statement.body.body:
            if not isinstance(line, cst.SimpleStatementLine):
                continue
            for small in line.body:
                if isinstance(small, cst.Import | cst.ImportFrom) and not isinstance(
                    small.names, cst.ImportStar
                ):
                    for alias in small.names:
                        name = alias.asname.name if alias.asname else alias.name
                        bound = module.code_for_node(name).split(".")[0]
                        if bound == local:
                            return True
    return False


_FIELDS: dict[type, tuple[str, ...]] = {}


def _fields(node_type: type) -> tuple[str, ...]:
    names = _FIELDS.get(node_type)
    if names is None:
        import dataclasses

        names = tuple(field.name for field in dataclasses.fields(node_type))
        _FIELDS[node_type] = names
    return names


_IS_NODE: dict[type, bool] = {}


def is_node_type(value_type: type) -> bool:
    """``issubclass(value_type, CSTNode)``, memoised: CSTNode is an ABC, and ABC checks
    dominate a walk's cost when done per value."""
    known = _IS_NODE.get(value_type)
    if known is None:
        known = _IS_NODE[value_type] = issubclass(value_type, cst.CSTNode)
    return known


def child_nodes(node: cst.CSTNode) -> list[cst.CSTNode]:
    """Direct children of ``node`` in field order, without libcst's node rebuilding."""
    out: list[cst.CSTNode] = []
    for name in _fields(type(node)):
        value = getattr(node, name)
        value_type = type(value)
        if value_type is list or value_type is tuple:
            out.extend(item for item in value if is_node_type(type(item)))
        elif is_node_type(value_type):
            out.append(value)
    return out


#: Whitespace, comments, punctuation and operator tokens: no rule matches them as nodes (rules
#: read them as attributes of their parents), and they are about half of all nodes.
_TRIVIA_BASES: tuple[type, ...] = (
    cst.BaseParenthesizableWhitespace,
    cst.Newline,
    cst.EmptyLine,
    cst.TrailingWhitespace,
    cst.Comment,
    cst.Comma,
    cst.Dot,
    cst.LeftParen,
    cst.RightParen,
    cst.LeftSquareBracket,
    cst.RightSquareBracket,
    cst.LeftCurlyBrace,
    cst.RightCurlyBrace,
    cst.Colon,
    cst.Semicolon,
    cst.AssignEqual,
    cst.BaseBinaryOp,
    cst.BaseBooleanOp,
    cst.BaseCompOp,
    cst.BaseUnaryOp,
    cst.BaseAugOp,
    cst.ImportStar,
)
_IS_SYNTAX: dict[type, bool] = {}


def _is_syntax_type(value_type: type) -> bool:
    known = _IS_SYNTAX.get(value_type)
    if known is None:
        known = _IS_SYNTAX[value_type] = issubclass(value_type, cst.CSTNode) and not issubclass(
            value_type, _TRIVIA_BASES
        )
    return known


_SYNTAX_FIELDS: dict[type, tuple[str, ...]] = {}


def _syntax_fields(node_type: type) -> tuple[str, ...]:
    """The fields of ``node_type`` whose declared type admits a syntax node: a field declared
    to hold only trivia (``whitespace_after``, ``lpar``, ``comma``), strings or sentinels is
    never read by a walk that skips trivia."""
    names = _SYNTAX_FIELDS.get(node_type)
    if names is None:
        try:
            hints = typing.get_type_hints(node_type)
        except Exception:  # an annotation that does not resolve: read every field
            hints = {}
        names = tuple(
            name
            for name in _fields(node_type)
            if name not in hints or _may_hold_syntax(hints[name])
        )
        _SYNTAX_FIELDS[node_type] = names
    return names


def _may_hold_syntax(annotation: object) -> bool:
    """Whether a value of the declared type may be a syntax node (or hold one in a sequence);
    anything not understood counts as may."""
    if typing.get_origin(annotation) is typing.Literal:
        return False
    arguments = typing.get_args(annotation)
    if arguments:
        return any(_may_hold_syntax(argument) for argument in arguments)
    if not isinstance(annotation, type):
        return True
    if issubclass(annotation, cst.CSTNode):
        return _is_syntax_type(annotation)
    return not issubclass(annotation, (str, int, float, bool, type(None), cst.MaybeSentinel))


def syntax_children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """Like ``child_nodes`` without trivia (whitespace, comments, punctuation, operators)."""
    out: list[cst.CSTNode] = []
    known = _IS_SYNTAX  # asked of every node of every walk: the memo is read inline
    node_type = type(node)
    fields = _SYNTAX_FIELDS.get(node_type)
    if fields is None:
        fields = _syntax_fields(node_type)
    for name in fields:
        value = getattr(node, name)
        value_type = type(value)
        if value_type is list or value_type is tuple:
            for item in value:
                item_type = type(item)
                syntax = known.get(item_type)
                if syntax is None:
                    syntax = _is_syntax_type(item_type)
                if syntax:
                    out.append(item)
        else:
            syntax = known.get(value_type)
            if syntax is None:
                syntax = _is_syntax_type(value_type)
            if syntax:
                out.append(value)
    return out


def fast_visit(node: cst.CSTNode, visitor: cst.CSTVisitor, *, trivia: bool = True) -> None:
    """Run a read-only ``CSTVisitor`` over ``node`` (``visit_*``/``leave_*`` hooks; a visit hook
    returning False skips the children). Same nodes as ``node.visit(visitor)`` but several times
    cheaper, because libcst's ``visit`` rebuilds every node even when nothing changes.
    Attribute-level hooks (``visit_Node_attr``) are not called; ``trivia=False`` also skips
    whitespace, comments, punctuation and operator nodes."""
    children = child_nodes if trivia else syntax_children
    stack: list[tuple[cst.CSTNode, bool]] = [(node, False)]
    while stack:
        current, leaving = stack.pop()
        if leaving:
            visitor.on_leave(current)
            continue
        stack.append((current, True))
        if visitor.on_visit(current) is not False:
            stack.extend((child, False) for child in reversed(children(current)))


def iter_nodes(node: cst.CSTNode) -> list[tuple[cst.CSTNode, cst.CSTNode | None]]:
    """Every syntax node under ``node`` (no trivia) in pre-order, each with its parent."""
    out: list[tuple[cst.CSTNode, cst.CSTNode | None]] = []
    stack: list[tuple[cst.CSTNode, cst.CSTNode | None]] = [(node, None)]
    while stack:
        current, parent = stack.pop()
        out.append((current, parent))
        stack.extend((child, current) for child in reversed(syntax_children(current)))
    return out
