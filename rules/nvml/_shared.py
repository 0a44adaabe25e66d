"""What ROC200-ROC202 share: the NVML bindings and their table, ``_NvmlResolver`` (the NVML function
a call names), ``nvmlInit`` at import time and the handlers of NVML errors."""

from __future__ import annotations

from typing import Any

import libcst as cst

from migrator.api import PythonContext, PythonRule, load_table
from migrator.api.syntax import dotted_name, handler_types, syntax_children

from .._gpu_tools_util import module_level_names, star_imported

_BINDING_PACKAGES = ("pynvml", "py3nvml", "nvidia_smi", "pynvml_utils")


def _table() -> dict[str, Any]:
    return load_table("nvml")


def _is_binding(module: str) -> bool:
    return module.split(".", 1)[0] in _BINDING_PACKAGES


def _imports_amdsmi(ctx: PythonContext) -> bool:
    """A file that already talks to amdsmi has been ported by hand; its NVML code is the CUDA
    branch of a dual-backend implementation."""
    return any(module.split(".", 1)[0] == "amdsmi" for module in ctx.imports.modules)


class _NvmlResolver(PythonRule, abstract=True):
    """Resolves a call to the NVML function it names, through the file's imports (including
    ``from pynvml import *`` when the module does not redefine the name)."""

    def __init__(self, ctx: PythonContext) -> None:
        super().__init__(ctx)
        modules = frozenset(_table()["modules"])
        self._skip_file = _imports_amdsmi(ctx)
        self._star = star_imported(ctx.module, modules)
        self._own_names = module_level_names(ctx.module) if self._star else set()
        self._prefixes = tuple(f"{module}." for module in modules)

    def nvml_function(self, func: cst.BaseExpression) -> str | None:
        """``nvmlDeviceGetName`` for ``pynvml.nvmlDeviceGetName`` (however imported), else None."""
        if self._skip_file:
            return None
        qualified = self.ctx.qualname(func)
        if qualified is not None:
            for prefix in self._prefixes:
                if qualified.startswith(prefix):
                    name = qualified[len(prefix) :]
                    return name if "." not in name and name.startswith("nvml") else None
            return None
        if (
            self._star
            and isinstance(func, cst.Name)
            and func.value.startswith("nvml")
            and func.value not in self._own_names
            and func.value not in self.ctx.imports.bindings
        ):
            return func.value
        return None


#: Memo key and problem key of a module that calls ``nvmlInit()`` unguarded at import: on ROCm
#: the module cannot be imported, so its NVML import, init and queries are one problem.
_IMPORT_FAILS = "nvml-module-import-fails"


#: Memo key (and problem-key prefix) of the functions that call ``nvmlInit()`` unguarded
#: (ROC201): scope path -> the walk's position at the first such call. A query after it in the same
#: function never runs on ROCm (the init raised), so it is part of that one problem.
_INIT_FAILS_IN = "nvml-init-fails-in"


def init_fails_in(ctx: PythonContext) -> dict[str, int]:
    """The functions of this file whose ``nvmlInit()`` ROC201 reported (scope path -> the
    number of nodes the walk had visited there)."""
    found = ctx.memo.setdefault(_INIT_FAILS_IN, {})
    assert isinstance(found, dict)
    return found


def init_problem(scope: str) -> str:
    """The problem key of an unguarded ``nvmlInit()`` in the function ``scope`` and the queries
    after it."""
    return f"{_INIT_FAILS_IN}:{scope}"


def _init_at_import(ctx: PythonContext) -> bool:
    """Whether the module's own top-level code (also under a module-level ``if`` or ``with``,
    not under a ``try``) calls ``nvmlInit()``: importing the module then fails on ROCm."""
    cached = ctx.memo.get(_IMPORT_FAILS)
    if isinstance(cached, bool):
        return cached
    resolver = _NvmlResolver(ctx)
    inits = _table()["init"]
    found = False
    statements: list[cst.CSTNode] = list(ctx.module.body)
    while statements and not found:
        statement = statements.pop()
        if isinstance(statement, (cst.If, cst.With)):
            statements.extend(getattr(statement.body, "body", ()))
            orelse = getattr(statement, "orelse", None)
            while isinstance(orelse, cst.If):
                statements.extend(getattr(orelse.body, "body", ()))
                orelse = orelse.orelse
            if isinstance(orelse, cst.Else):
                statements.extend(getattr(orelse.body, "body", ()))
        elif isinstance(statement, cst.SimpleStatementLine):
            stack: list[cst.CSTNode] = [statement]
            while stack and not found:
                node = stack.pop()
                if isinstance(node, cst.Call) and resolver.nvml_function(node.func) in inits:
                    found = True
                stack.extend(syntax_children(node))
    ctx.memo[_IMPORT_FAILS] = found
    return found


def _nvml_error_handler(handler: cst.ExceptHandler) -> bool:
    values = handler_types(handler)
    if values is None:
        return False
    return any(
        (dotted_name(value) or "").rsplit(".", 1)[-1].startswith("NVMLError") for value in values
    )
