"""Save/restore of a CUDA variable (``saved = os.environ.get("CUDA_X", "")`` … later
``os.environ["CUDA_X"] = saved``): the HIP counterpart must be saved and restored on its own, since
mirroring the CUDA value on restore would overwrite a HIP value set before."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, cast

import libcst as cst

from migrator.api import PythonContext
from migrator.api.syntax import string_value


@dataclass(frozen=True, slots=True)
class Save:
    """The statement that saved a CUDA variable's value into ``target`` before a restore."""

    line: cst.SimpleStatementLine
    #: the name the value was saved into (``self.saved_cuda_launch_blocking``)
    target: str
    #: the getter as the code spells it (``os.environ.get``, ``os.getenv``)
    getter: str
    #: the default's code (a string literal), or None when the save cannot be mirrored safely
    default: str | None


class _Saves(cst.CSTVisitor):
    """Statements ``<target> = <getter>("NAME"[, default])`` anywhere in a module."""

    def __init__(self, ctx: PythonContext, name: str, target: str) -> None:
        self.ctx, self.name, self.target = ctx, name, target
        self.found: list[Save] = []

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> bool:
        if len(node.body) != 1 or not isinstance(node.body[0], cst.Assign):
            return False
        assign = node.body[0]
        if len(assign.targets) != 1 or self.ctx.code(assign.targets[0].target) != self.target:
            return False
        call = assign.value
        if not isinstance(call, cst.Call) or self.ctx.call_name(call) not in _GETTERS:
            return False
        if not call.args or string_value(call.args[0].value) != self.name:
            return False
        default = None
        if len(call.args) == 2 and string_value(call.args[1].value) is not None:
            default = self.ctx.code(call.args[1].value)
        self.found.append(Save(node, self.target, self.ctx.code(call.func), default))
        return False


_GETTERS = frozenset({"os.environ.get", "os.getenv"})


def find_save(ctx: PythonContext, name: str, value: cst.BaseExpression) -> Save | None:
    """The one statement that saved variable ``name`` into the restored ``value`` (a name or an
    attribute such as ``self.saved``), or None when ``value`` is no such saved copy."""
    if not isinstance(value, cst.Name | cst.Attribute):
        return None
    visitor = _Saves(ctx, name, ctx.code(value))
    ctx.module.visit(visitor)
    return visitor.found[0] if len(visitor.found) == 1 else None


def hip_name(target: str, rocm: str, module_code: str) -> str | None:
    """The name for the HIP copy of a saved value: the CUDA spelling in the last part replaced by
    HIP (``saved_cuda_launch_blocking`` → ``saved_hip_launch_blocking``), else ``_hip`` appended;
    None when that name is already used in the module."""
    head, dot, last = target.rpartition(".")
    renamed = re.sub(
        "cuda",
        lambda match: {"CUDA": "HIP", "Cuda": "Hip"}.get(match.group(0), "hip"),
        last,
        count=1,
        flags=re.IGNORECASE,
    )
    if renamed == last:
        renamed = f"{last}_hip" if not last.isupper() else f"{last}_HIP"
    new = f"{head}{dot}{renamed}"
    if re.search(rf"(?<![\w.]){re.escape(new)}(?!\w)", module_code) or rocm in new:
        return None
    return new


def restore_fix(
    ctx: PythonContext,
    save: Save,
    restore: cst.SimpleStatementLine,
    mapping: str,
    quote: str,
    rocm: str,
) -> tuple[Any, tuple[cst.CSTNode, Any]] | None:
    """The restore line followed by a restore of the HIP variable from its own saved value, and
    the save line followed by a save of the HIP variable (the extra edit); None when the save has
    no string default (restoring ``None`` would raise) or no free name exists."""
    if save.default is None:
        return None
    copy = hip_name(save.target, rocm, ctx.text)
    if copy is None:
        return None
    saved = cst.parse_statement(f"{copy} = {save.getter}({quote}{rocm}{quote}, {save.default})\n")
    restored = cst.parse_statement(f"{mapping}[{quote}{rocm}{quote}] = {copy}\n")
    save_pair = cst.FlattenSentinel(
        [save.line, cast(cst.SimpleStatementLine, saved).with_changes(leading_lines=[])]
    )
    restore_pair = cst.FlattenSentinel(
        [restore, cast(cst.SimpleStatementLine, restored).with_changes(leading_lines=[])]
    )
    return (lambda: restore_pair), (save.line, save_pair)
