"""What a compute-capability comparison evaluates to (ROC110, ``capability_gate``): the
comparison's value on the current NVIDIA devices and on every AMD device, arithmetic on the
capability tuple, and whether a comparison is an identity check rather than a gate."""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import libcst as cst

from migrator.api import PythonContext, load_table
from migrator.api.syntax import literal_value

from ._gates import _GateAnalysis, _gpus, _kind

_COMPARISONS: dict[type[cst.BaseCompOp], Callable[[Any, Any], Any]] = {
    cst.LessThan: operator.lt,
    cst.LessThanEqual: operator.le,
    cst.GreaterThan: operator.gt,
    cst.GreaterThanEqual: operator.ge,
    cst.Equal: operator.eq,
    cst.NotEqual: operator.ne,
    cst.In: lambda left, right: left in right,
    cst.NotIn: lambda left, right: left not in right,
}


def _compare(comparison: cst.BaseCompOp, left: object, right: object) -> bool | None:
    """``left <op> right`` for literal values; None for another operator or incomparable values."""
    compare = _COMPARISONS.get(type(comparison))
    if compare is None:
        return None
    try:
        return bool(compare(left, right))
    except TypeError:
        return None


def _collection_value(node: cst.BaseExpression) -> object:
    if isinstance(node, (cst.List, cst.Set)):
        values = [literal_value(element.value) for element in node.elements]
        return ... if any(value is ... for value in values) else tuple(values)
    value = literal_value(node)
    return value


_ARITHMETIC = (cst.Add, cst.Subtract, cst.Multiply, cst.FloorDivide, cst.Divide)


def _involves_capability(ctx: PythonContext, gates: _GateAnalysis, node: cst.CSTNode) -> bool:
    """Whether ``node`` is a capability value or arithmetic on one (``major * 10 + minor``)."""
    if _kind(ctx, gates, node) in {"cap", "major"}:
        return True
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, _ARITHMETIC):
        return _involves_capability(ctx, gates, node.left) or _involves_capability(
            ctx, gates, node.right
        )
    return False


def _value_on(
    ctx: PythonContext, gates: _GateAnalysis, node: cst.BaseExpression, gpu: dict[str, Any]
) -> object:
    """The value of a capability expression (or literal) on ``gpu``; ``...`` when unknown."""
    major, minor = gpu["capability"]
    kind = _kind(ctx, gates, node)
    if kind == "cap":
        return (major, minor)
    if kind == "major":
        return major
    if kind == "minor":
        return minor
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, _ARITHMETIC):
        left = _value_on(ctx, gates, node.left, gpu)
        right = _value_on(ctx, gates, node.right, gpu)
        if not isinstance(left, (int, float)) or not isinstance(right, (int, float)):
            return ...
        operator = node.operator
        try:
            if isinstance(operator, cst.Add):
                return left + right
            if isinstance(operator, cst.Subtract):
                return left - right
            if isinstance(operator, cst.Multiply):
                return left * right
            if isinstance(operator, cst.FloorDivide):
                return left // right
            return left / right
        except ZeroDivisionError:
            return ...
    return _collection_value(node)


def _outcome(
    ctx: PythonContext, gates: _GateAnalysis, comparison: cst.Comparison, gpu: dict[str, Any]
) -> bool | None:
    """What a capability comparison evaluates to on ``gpu`` (None when not literal)."""
    operands = [comparison.left, *[c.comparator for c in comparison.comparisons]]
    values = [_value_on(ctx, gates, operand, gpu) for operand in operands]
    if any(value is ... for value in values):
        return None
    outcome = True
    for index, target in enumerate(comparison.comparisons):
        result = _compare(target.operator, values[index], values[index + 1])
        if result is None:
            return None
        outcome = outcome and result
    return outcome


def _like_current_nvidia(
    ctx: PythonContext, gates: _GateAnalysis, comparison: cst.Comparison
) -> bool:
    """Whether the gate answers every AMD GPU the way it answers both reference NVIDIA GPUs
    (Ampere and Hopper): then it asks "a current GPU?", which AMD GPUs are, not "which one?"."""
    answers = {
        _outcome(ctx, gates, comparison, gpu)
        for gpu in [*_gpus(), *load_table("detection")["nvidia_reference"]]
    }
    return len(answers) == 1 and None not in answers


def _capability_verdict(
    ctx: PythonContext, gates: _GateAnalysis, comparison: cst.Comparison
) -> str | None:
    """'true on gfx90a, gfx942 ...; false on ...' for literal thresholds, else None."""
    results: dict[str, bool] = {}
    for gpu in _gpus():
        outcome = _outcome(ctx, gates, comparison, gpu)
        if outcome is None:
            return None
        results[f"{gpu['gfx']} {tuple(gpu['capability'])}"] = outcome
    true = [key for key, value in results.items() if value]
    false = [key for key, value in results.items() if not value]
    if not false:
        return "true on every AMD GPU"
    if not true:
        return "false on every AMD GPU"
    return f"true on {', '.join(true)}; false on {', '.join(false)}"


def _identity_check(ctx: PythonContext, gates: _GateAnalysis, comparison: cst.Comparison) -> bool:
    """``==``/``!=`` between the capability and a value read back from somewhere (a call, an
    index, an attribute: ``cache.get("device_capability") != current``): asks whether the GPU
    is the same as before, which is as right on AMD, not whether it is an NVIDIA architecture."""
    if len(comparison.comparisons) != 1:
        return False
    target = comparison.comparisons[0]
    if not isinstance(target.operator, (cst.Equal, cst.NotEqual)):
        return False
    operands = [comparison.left, target.comparator]
    capability = [_involves_capability(ctx, gates, operand) for operand in operands]
    if capability.count(True) != 1:
        return False
    other = operands[capability.index(False)]
    return isinstance(other, (cst.Call, cst.Subscript, cst.Attribute))
