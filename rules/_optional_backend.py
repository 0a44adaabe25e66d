"""Calls inside an optional package's own backend implementation, which runs only when chosen."""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from migrator.api import PythonContext

from ._dispatch import callee_root
from ._literals import is_literal
from ._tree import Tree, tree


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
    return frozenset(names)


#: Handlers that catch a failed import.
_IMPORT_FAILURES = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})


def _import_flags(module: cst.Module) -> dict[str, frozenset[str]]:
    """For each name a top-level ``try: import xformers`` binds, the flags its ``except`` sets
    (``except ImportError: xformers_available = False``): where the import failed the name stays
    unbound and the flag says so."""
    out: dict[str, frozenset[str]] = {}
    for statement in module.body:
        if not isinstance(statement, cst.Try):
            continue
        flags: set[str] = set()
        for handler in statement.handlers:
            kind = handler.type
            if kind is not None and not (
                isinstance(kind, cst.Name) and kind.value in _IMPORT_FAILURES
            ):
                continue
            for line in handler.body.body:
                # the simple statements' parts (a compound statement's body is a block)
                for small in line.body if isinstance(line, cst.SimpleStatementLine) else ():
                    if isinstance(small, cst.Assign) and isinstance(small.value, cst.Name):
                        if small.value.value in ("False", "None"):
                            flags.update(
                                t.target.value
                                for t in small.targets
                                if isinstance(t.target, cst.Name)
                            )
        if not flags:
            continue
        for line in statement.body.body:
            for small in line.body if isinstance(line, cst.SimpleStatementLine) else ():
                if isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(
                    small.names, cst.ImportStar
                ):
                    for alias in small.names:
                        bound: cst.BaseExpression = (
                            alias.asname.name if alias.asname else alias.name
                        )
                        while isinstance(bound, cst.Attribute):
                            bound = bound.value
                        if isinstance(bound, cst.Name):
                            out[bound.value] = frozenset(flags)
    return out


def flag_name(node: cst.BaseExpression) -> str | None:
    """A flag's identity: ``use_flash`` for a name, ``.use_flash_attn`` for an attribute (of any
    owner: ``self.use_flash_attn`` and ``model.use_flash_attn`` are one flag)."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f".{node.attr.value}"
    return None


def derived_flags(
    module: cst.Module, is_flag: Callable[[cst.BaseExpression], bool]
) -> frozenset[str]:
    """The names and attributes (``flag_name``) that the module sets, every time, to a value
    false unless a flag holds: ``x if FLAG else False``, ``cfg.use_flash and FLAG``, ``FLAG``."""

    def false_without(value: cst.BaseExpression) -> bool:
        if isinstance(value, cst.IfExp):
            return is_flag(value.test) and (
                is_literal(value.orelse, False) or is_literal(value.orelse, None)
            )
        if isinstance(value, cst.BooleanOperation) and isinstance(value.operator, cst.And):
            return any(is_flag(side) or false_without(side) for side in (value.left, value.right))
        return is_flag(value)

    verdicts: dict[str, bool] = {}

    class _Assignments(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            for target in node.targets:
                name = flag_name(target.target)
                if name is not None:
                    verdicts[name] = verdicts.get(name, True) and false_without(node.value)

    module.visit(_Assignments())
    return frozenset(name for name, derived in verdicts.items() if derived)


def _behind_flag(
    tree_: Tree, node: cst.CSTNode, flags: frozenset[str], *, fallback: bool = True
) -> bool:
    """Whether ``node`` sits in the body of ``if FLAG: ... else: <fallback>`` (with
    ``fallback`` off, the ``else`` may be missing)."""
    child = node
    for ancestor in tree_.ancestors(node):
        if isinstance(ancestor, cst.If) and ancestor.body is child:
            name = flag_name(ancestor.test)
            if name is not None and name in flags:
                return ancestor.orelse is not None or not fallback
        child = ancestor
    return False


def _behind_flag_with_fallback(tree_: Tree, node: cst.CSTNode, flags: frozenset[str]) -> bool:
    """Whether ``node`` sits in the body of ``if FLAG: ... else: <fallback>``."""
    return _behind_flag(tree_, node, flags)


def _only_called_behind_flag(
    ctx: PythonContext, call: cst.Call, root: str, bindings: dict[str, frozenset[str]]
) -> bool:
    """``try: import xformers ... except ImportError: xformers_available = False`` and the call
    sits in a function that the module calls only as ``if xformers_available: f(...) else:
    <portable fallback>``: it never runs where the import failed, and a fallback runs there."""
    flags = bindings.get(root)
    if not flags:
        return False
    tree_ = tree(ctx.module)  # the whole module: call sites may come after the call
    function = next((a for a in ctx.ancestors(call) if isinstance(a, cst.FunctionDef)), None)
    if function is None:
        return _behind_flag_with_fallback(tree_, call, flags)
    owner = next((a for a in ctx.ancestors(function) if isinstance(a, cst.ClassDef)), None)
    if owner is not None:
        # a method of the package's own class (``class FlashAttention``): the object exists only
        # where every construction sits under the flag, or a switch forced off without it
        # (``self.use_flash_attn = config.use_flash_attn and has_flash_attn``)
        switches = flags | derived_flags(
            ctx.module, lambda node: flag_name(node) in flags if flag_name(node) else False
        )
        built = [
            node
            for node in tree_.nodes
            if isinstance(node, cst.Call)
            and isinstance(node.func, cst.Name)
            and node.func.value == owner.name.value
        ]
        if built and all(_behind_flag(tree_, site, switches, fallback=False) for site in built):
            return True
    name = function.name.value
    sites = [
        node
        for node in tree_.nodes
        if isinstance(node, cst.Call)
        and (
            (isinstance(node.func, cst.Name) and node.func.value == name)
            or (isinstance(node.func, cst.Attribute) and node.func.attr.value == name)
        )
    ]
    return bool(sites) and all(_behind_flag_with_fallback(tree_, site, flags) for site in sites)


def _selects_backend(test: cst.BaseExpression, word: str) -> bool:
    """``backend == FLASH_VARLEN`` / ``impl == "flash_attention_2"``: the arm of a backend
    dispatch chosen for the package (a value compared, not a user's boolean switch)."""
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return False
    target = test.comparisons[0]
    if not isinstance(target.operator, cst.Equal):
        return False
    value = target.comparator
    if isinstance(value, cst.Name):
        return word in value.value.lower()
    if isinstance(value, cst.SimpleString):
        text = value.evaluated_value
        return isinstance(text, str) and word in text.lower()
    return False


def in_optional_backend(ctx: PythonContext, call: cst.Call, word: str) -> bool:
    """Whether ``call`` runs inside a function or class named for the optional package (``word``:
    ``_flash_attention``, ``XFormersAttnProcessor``), or in the arm of a backend dispatch chosen
    for it (``if backend == FLASH_VARLEN:``), through a name that this module binds to
    ``None`` when the package is missing, or leaves unbound (a swallowed ``try:`` import that
    sets a flag) where every call of that function sits under the flag with a fallback. Such code is that package's backend, which runs only
    where the package imported: whether it may be chosen is decided where it is selected (a
    backend registry, ``enable_xformers_memory_efficient_attention()``), not at the call."""
    root = callee_root(call.func)
    if root is None:
        return False
    named = False
    child: cst.CSTNode = call
    for ancestor in ctx.ancestors(call):
        if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef)):
            named = word in ancestor.name.value.lower()
        elif isinstance(ancestor, cst.If) and ancestor.body is child:
            named = _selects_backend(ancestor.test, word)
        if named:
            break
        child = ancestor
    if not named:
        return False
    bindings = ctx.memo.get("optional-backend-none")
    if not isinstance(bindings, frozenset):
        bindings = _none_bindings(ctx.module)
        ctx.memo["optional-backend-none"] = bindings
    if root.value in bindings:
        return True
    flags = ctx.memo.get("optional-backend-flags")
    if not isinstance(flags, dict):
        flags = _import_flags(ctx.module)
        ctx.memo["optional-backend-flags"] = flags
    return _only_called_behind_flag(ctx, call, root.value, flags)
