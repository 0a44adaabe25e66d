"""Calls inside an optional package's own backend implementation, which runs only when chosen."""

from __future__ import annotations

import libcst as cst

from migrator.context import PythonContext

from ._dispatch import callee_root


def _none_bindings(module: cst.Module) -> frozenset[str]:
    """Names the module binds to ``None`` at its top level, in ``if``/``else``/``try`` blocks
    included (``else: flash_attn_func = None``, ``except ImportError: xformers = None``)."""
    names: set[str] = set()

    def block(statements: object) -> None:
        for statement in statements if isinstance(statements, (list, tuple)) else ():
            if isinstance(statement, cst.SimpleStatementLine):
                for small in statement.body:
                    if isinstance(small, cst.Assign) and isinstance(small.value, cst.Name):
                        if small.value.value == "None":
                            for target in small.targets:
                                if isinstance(target.target, cst.Name):
                                    names.add(target.target.value)
            elif isinstance(statement, cst.If):
                block(statement.body.body)
                orelse = statement.orelse
                while orelse is not None:
                    block(orelse.body.body)
                    orelse = orelse.orelse if isinstance(orelse, cst.If) else None
            elif isinstance(statement, cst.Try):
                block(statement.body.body)
                for handler in statement.handlers:
                    block(handler.body.body)
                if statement.orelse is not None:
                    block(statement.orelse.body.body)

    block(module.body)
    return frozenset(names | _try_import_bindings(module))


#: Handlers that catch a failed import.
_IMPORT_FAILURES = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})


def _try_import_bindings(module: cst.Module) -> set[str]:
    """Names a top-level ``try: import xformers`` binds whose ``except ImportError:`` (or a broad
    handler) swallows the failure: when the package is missing they stay unbound, like a name
    set to ``None``, so code using them runs only where the import succeeded."""
    names: set[str] = set()
    for statement in module.body:
        if not isinstance(statement, cst.Try) or not any(
            handler.type is None
            or (isinstance(handler.type, cst.Name) and handler.type.value in _IMPORT_FAILURES)
            for handler in statement.handlers
        ):
            continue
        for line in statement.body.body:
            for small in (
                getattr(line, "body", ()) if isinstance(line, cst.SimpleStatementLine) else ()
            ):
                if isinstance(small, cst.Import):
                    for alias in small.names:
                        bound: cst.BaseExpression = (
                            alias.asname.name if alias.asname else alias.name
                        )
                        while isinstance(bound, cst.Attribute):
                            bound = bound.value
                        if isinstance(bound, cst.Name):
                            names.add(bound.value)
                elif isinstance(small, cst.ImportFrom) and not isinstance(
                    small.names, cst.ImportStar
                ):
                    for alias in small.names:
                        bound = alias.asname.name if alias.asname else alias.name
                        if isinstance(bound, cst.Name):
                            names.add(bound.value)
    return names


def in_optional_backend(ctx: PythonContext, call: cst.Call, word: str) -> bool:
    """Whether ``call`` runs inside a function or class named for the optional package (``word``:
    ``_flash_attention``, ``XFormersAttnProcessor``) through a name that this module binds to
    ``None``, or leaves unbound (a ``try:`` import that swallows the failure), when the package
    is missing. Such code is that package's backend, which runs only
    where the package imported: whether it may be chosen is decided where it is selected (a
    backend registry, ``enable_xformers_memory_efficient_attention()``), not at the call."""
    root = callee_root(call.func)
    if root is None:
        return False
    named = any(
        isinstance(ancestor, (cst.FunctionDef, cst.ClassDef))
        and word in ancestor.name.value.lower()
        for ancestor in ctx.ancestors(call)
    )
    if not named:
        return False
    bindings = ctx.memo.get("optional-backend-none")
    if not isinstance(bindings, frozenset):
        bindings = _none_bindings(ctx.module)
        ctx.memo["optional-backend-none"] = bindings
    return root.value in bindings
