"""Binding call arguments to parameters and rebuilding argument lists that keep the original commas,
whitespace and comments."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import libcst as cst


def bind_arguments(
    call: cst.Call, positional: Sequence[str], keywords: Iterable[str] = ()
) -> dict[str, cst.Arg] | str:
    """Map ``call``'s arguments to parameter names: the first ``len(positional)`` positional
    arguments by order, keywords by name. Returns a reason string when the call cannot be bound
    (star arguments, more positional arguments than known, unknown or repeated keywords)."""
    allowed = set(positional) | set(keywords)
    bound: dict[str, cst.Arg] = {}
    index = 0
    for argument in call.args:
        if argument.star:
            return "it passes `*args`/`**kwargs`, so the arguments are unknown"
        if argument.keyword is None:
            if index >= len(positional):
                return (
                    f"it passes more than {len(positional)} positional arguments, whose meaning "
                    "depends on the library version"
                )
            bound[positional[index]] = argument
            index += 1
            continue
        name = argument.keyword.value
        if name not in allowed:
            return f"it passes `{name}=`, which has no equivalent here"
        if name in bound:
            return f"`{name}` is passed twice"
        bound[name] = argument
    return bound


def parenthesize(node: cst.BaseExpression) -> cst.BaseExpression:
    """``node`` wrapped in parentheses unless it is atomic enough to take ``.attr`` directly."""
    atomic = (
        cst.Name,
        cst.Attribute,
        cst.Call,
        cst.Subscript,
        cst.SimpleString,
        cst.Integer,
        cst.Float,
        cst.List,
        cst.Tuple,
        cst.Dict,
    )
    if isinstance(node, atomic) or node.lpar:
        return node
    return node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def method_call(value: cst.BaseExpression, method: str, args: Sequence[str] = ()) -> cst.Call:
    """``value.method(args...)`` with ``args`` given as source text."""
    return cst.Call(
        func=cst.Attribute(value=parenthesize(value), attr=cst.Name(method)),
        args=[cst.Arg(value=cst.parse_expression(text)) for text in args],
    )


def as_positional(argument: cst.Arg, value: cst.BaseExpression | None = None) -> cst.Arg:
    """``argument`` (maybe a keyword argument) as a positional one, optionally with a new value."""
    return argument.with_changes(
        keyword=None,
        equal=cst.MaybeSentinel.DEFAULT,
        value=value if value is not None else argument.value,
    )


def as_keyword(argument: cst.Arg, name: str, value: cst.BaseExpression | None = None) -> cst.Arg:
    """``argument`` passed as ``name=`` (keeps its value, comma and surrounding whitespace)."""
    equal = argument.equal
    if not isinstance(equal, cst.AssignEqual):
        equal = cst.AssignEqual(
            whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")
        )
    return argument.with_changes(
        keyword=cst.Name(name),
        equal=equal,
        value=value if value is not None else argument.value,
    )


def new_keyword(name: str, value: str | cst.BaseExpression) -> cst.Arg:
    return cst.Arg(
        keyword=cst.Name(name),
        value=cst.parse_expression(value) if isinstance(value, str) else value,
        equal=cst.AssignEqual(
            whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")
        ),
    )


def relayout(original: Sequence[cst.Arg], new: Sequence[cst.Arg]) -> list[cst.Arg]:
    """Give ``new`` arguments the comma/whitespace layout of ``original`` slot by slot, so a
    rebuilt multi-line call keeps its line breaks; extra arguments get ``, `` and the last one
    keeps the original last argument's trailing layout."""
    default_comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    out: list[cst.Arg] = []
    count = len(new)
    for index, argument in enumerate(new):
        if index == count - 1:
            source = original[-1] if original else None
        elif index < len(original) - 1:
            source = original[index]
        else:
            source = None
        if source is None:
            comma: cst.Comma | cst.MaybeSentinel = (
                default_comma if index < count - 1 else cst.MaybeSentinel.DEFAULT
            )
            whitespace: cst.BaseParenthesizableWhitespace = cst.SimpleWhitespace("")
        else:
            comma = source.comma
            whitespace = source.whitespace_after_arg
            if index < count - 1 and not isinstance(comma, cst.Comma):
                comma = default_comma
        out.append(argument.with_changes(comma=comma, whitespace_after_arg=whitespace))
    return out


def _line_break(indent: str) -> cst.ParenthesizedWhitespace:
    return cst.ParenthesizedWhitespace(
        first_line=cst.TrailingWhitespace(newline=cst.Newline()),
        empty_lines=[],
        indent=True,
        last_line=cst.SimpleWhitespace(indent),
    )


def exploded(call: cst.Call, args: Sequence[cst.Arg], unit: str) -> cst.Call:
    """``call`` with ``args`` one per line (hanging indent ``unit`` below the statement's
    indentation, magic trailing comma), the layout black gives a long call."""
    laid = [
        argument.with_changes(
            comma=cst.Comma(whitespace_after=_line_break("" if index == len(args) - 1 else unit)),
            whitespace_after_arg=cst.SimpleWhitespace(""),
        )
        for index, argument in enumerate(args)
    ]
    return call.with_changes(args=laid, whitespace_before_args=_line_break(unit))
