"""Building ``scaled_dot_product_attention`` calls from another library's attention call."""

from __future__ import annotations

import libcst as cst

from ._arguments import as_positional, exploded, method_call, parenthesize, relayout
from ._literals import code_of, has_comment, is_literal


def sdpa_call(
    call: cst.Call,
    sdpa: str,
    tensors: list[cst.Arg],
    keywords: list[cst.Arg],
    unit: str,
) -> cst.BaseExpression:
    """``sdpa(tensors..., keywords...).transpose(1, 2).contiguous()`` replacing ``call``.

    The output goes back from (B, H, S, D) to flash-attn's/xformers' (B, S, H, D); ``contiguous``
    keeps their contract of a contiguous output (callers often ``.view`` it), and is free when
    SDPA's kernel already wrote (B, S, H, D) memory (the flash and efficient backends do).
    Arguments go one per line; a call with comments inside keeps its own layout instead, so the
    comments stay where they were."""
    inner = cst.Call(
        func=cst.parse_expression(sdpa),
        whitespace_after_func=call.whitespace_after_func,
        whitespace_before_args=call.whitespace_before_args,
    )
    arguments = [*tensors, *keywords]
    if has_comment(call):
        inner = inner.with_changes(args=relayout(call.args, arguments))
    else:
        inner = exploded(inner, arguments, unit)
    outer = method_call(method_call(inner, "transpose", ["1", "2"]), "contiguous")
    return outer.with_changes(lpar=call.lpar, rpar=call.rpar)


def transposed(argument: cst.Arg) -> cst.Arg:
    """The tensor argument as ``<value>.transpose(1, 2)`` (B,S,H,D ↔ B,H,S,D), positional."""
    return as_positional(argument, method_call(argument.value, "transpose", ["1", "2"]))


def unpacked(argument: cst.Arg) -> cst.Arg:
    """A packed (B, S, n, H, D) tensor as ``*<value>.transpose(1, 3).unbind(2)``: n tensors of
    shape (B, H, S, D), each evaluated once."""
    value = method_call(method_call(argument.value, "transpose", ["1", "3"]), "unbind", ["2"])
    return as_positional(argument, value).with_changes(star="*")


def causal_mask(
    causal: cst.BaseExpression, query: cst.BaseExpression, key: cst.BaseExpression
) -> cst.BaseExpression:
    """``causal_lower_right(q.size(1), k.size(1))`` (bottom-right aligned, as flash-attn ≥ 2.1),
    made conditional when ``causal`` is not the literal True."""
    mask = cst.parse_expression(
        f"causal_lower_right({code_of(query)}.size(1), {code_of(key)}.size(1))"
    )
    if is_literal(causal, True):
        return mask
    return cst.IfExp(test=parenthesize(causal), body=mask, orelse=cst.Name("None"))
