"""Availability flags: the names and attributes a module binds to whether an optional package
imported, so that a test of one (``if XFORMERS:``, ``if self.use_xformers:``) is an availability
probe like ``is_xformers_available()``.

A flag is bound by a ``try:`` that imports the package and a handler that sets the name to
``False``/``None`` (``try: import xformers; XFORMERS = True except ImportError: XFORMERS =
False``), by ``importlib.util.find_spec("x") is not None``, by an ``is_x_available()`` helper,
or derived from another flag (``USE = FLAG and cond``, ``self.use_xformers = FLAG``, a class
attribute ``use_xformers = FLAG``). Every binding of the name in the file must be one of these
or a constant ``False``/``None``: a name the file also sets otherwise (or takes as a parameter)
is not a flag. Read from the file's ``ast`` (``migrator.syntax.imports`` binds the names to
``flag_target(package)``, and the project index carries them across modules); nothing runs.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field

#: The head of the qualified name a flag resolves to (not an identifier: no module is named so).
AVAILABILITY_FLAG = "migrate-availability-flag"
#: Modules present wherever the scanned code runs on a GPU: a ``try`` that imports only these
#: guards a probe's failure, not an optional package (as ``migrator.reach.guards`` reads it).
PRESENT = frozenset({"torch"}) | frozenset(sys.stdlib_module_names)
#: Packages that import on a ROCm build too and fail only when used: the NVML bindings and
#: the tools on them are pure Python (rocm-facts §3a), numba imports without a GPU. A flag of
#: their import is set on ROCm, so it guards nothing.
IMPORT_ON_ROCM = frozenset(
    {"pynvml", "py3nvml", "nvidia_smi", "gpustat", "nvitop", "GPUtil", "numba"}
)
_IMPORT_ON_ROCM_WORDS = frozenset(name.lower() for name in IMPORT_ON_ROCM) | {"nvml"}
#: Exceptions a failed import raises (a handler catching one of them falls back).
_IMPORT_ERRORS = frozenset(
    {"ImportError", "ModuleNotFoundError", "Exception", "BaseException", "OSError"}
)
#: ``is_xformers_available()``, ``_is_apex_installed()``, ``has_flash_attn_available()``.
_PROBE_CALL = re.compile(r"^_*(?:is|has)_(\w+)_(?:available|installed)$")
#: Words of ``X`` in ``is_X_available()`` that make it a torch or hardware capability check
#: (true on ROCm builds too), not a package probe (as ``guard_conditions`` reads them).
_PORTABLE_PROBES = frozenset(
    {"torch", "cuda", "gpu", "accelerate", "accelerator", "bf16", "fp16", "tf32", "fp8", "sdpa"}
)
#: What a file that binds a flag of its own holds: a ``find_spec``/``is_x_available()`` probe,
#: a handler that sets a name to ``False``/``None`` within its first lines, or a ``try`` that
#: sets one to ``True`` (``XFORMERS = True`` after the import).
_PROBE_TEXT = re.compile(r"find_spec|find_loader|_(?:available|installed)[ \t]*\(")
_HANDLER_TEXT = re.compile(
    r"^[ \t]*except\b[^\n]*\n(?:[ \t][^\n]*\n){0,3}?[ \t]+\w+[ \t]*=[ \t]*(?:False|None)\b",
    re.MULTILINE,
)
_TRY_TEXT = re.compile(
    r"^[ \t]*try[ \t]*:[^\n]*\n(?:[ \t][^\n]*\n){0,6}?[ \t]+\w+[ \t]*=[ \t]*True\b",
    re.MULTILINE,
)


def may_bind(text: str) -> bool:
    """A cheap test of a file's text: whether it may bind a flag of its own (a file that does
    not binds flags only from those it imports)."""
    if "find_" in text or "_available" in text or "_installed" in text:
        if _PROBE_TEXT.search(text):
            return True
    if "except" not in text:
        return False
    return bool(_HANDLER_TEXT.search(text) or _TRY_TEXT.search(text))


def flag_target(package: str) -> str:
    """The qualified name a flag for ``package`` resolves to."""
    return f"{AVAILABILITY_FLAG}.{package}"


def flag_package(qualified: str | None) -> str | None:
    """The package a resolved flag name probes (None when ``qualified`` is no flag)."""
    if qualified is None or not qualified.startswith(AVAILABILITY_FLAG + "."):
        return None
    return qualified[len(AVAILABILITY_FLAG) + 1 :]


@dataclass(slots=True)
class ModuleFlags:
    """A file's flags: names (any scope) and attributes (``self.x``, class attributes), each
    mapped to the package it probes."""

    names: dict[str, str] = field(default_factory=dict)
    attributes: dict[str, str] = field(default_factory=dict)


#: What a binding sets a name to: a flag (its package), a constant that says "absent", or
#: anything else.
_ABSENT = ""
_OTHER = None


def _identifier(node: ast.expr) -> str | None:
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return None


def _constant(node: ast.expr | None, *values: object) -> bool:
    return isinstance(node, ast.Constant) and any(node.value is value for value in values)


def _optional(module: str | None) -> str | None:
    """The top-level package of an absolute import, when it is not always present."""
    if not module:
        return None
    top = module.split(".", 1)[0]
    return None if top in PRESENT or top in IMPORT_ON_ROCM else top


def _imported_package(statements: list[ast.stmt]) -> str | None:
    """The first optional package the statements import (directly, not in nested blocks)."""
    for statement in statements:
        if isinstance(statement, ast.Import):
            for alias in statement.names:
                found = _optional(alias.name)
                if found:
                    return found
        elif isinstance(statement, ast.ImportFrom) and not statement.level:
            found = _optional(statement.module)
            if found:
                return found
    return None


def _falls_back(handler: ast.ExceptHandler) -> bool:
    """Whether a handler catches a failed import and does not raise."""
    if handler.body and isinstance(handler.body[-1], ast.Raise):
        return False
    kinds = handler.type
    if kinds is None:
        return True
    names = kinds.elts if isinstance(kinds, ast.Tuple) else [kinds]
    return any(_identifier(name) in _IMPORT_ERRORS for name in names)


class _Reader:
    """Collects every binding of names and attributes in a file, then keeps the flags."""

    def __init__(self, resolve: Callable[[ast.expr], str | None]) -> None:
        self._resolve = resolve
        #: name -> each value bound to it (None: a binding that is no assignment)
        self.names: dict[str, list[ast.expr | None]] = {}
        self.attributes: dict[str, list[ast.expr | None]] = {}
        #: (name, package) of a constant ``True`` set where an optional import succeeded
        self.probed: dict[int, str] = {}

    def read(self, tree: ast.Module) -> ModuleFlags:
        self._block(tree.body, in_class=False)
        flags = ModuleFlags()
        for _ in range(4):  # derived flags of derived flags, a few levels deep
            changed = False
            for values, found in (
                (self.names, flags.names),
                (self.attributes, flags.attributes),
            ):
                for name, bound in values.items():
                    if name in found:
                        continue
                    package = self._all_flags(bound, flags)
                    if package:
                        found[name] = package
                        changed = True
            if not changed:
                break
        return flags

    def _all_flags(self, values: list[ast.expr | None], flags: ModuleFlags) -> str | None:
        """The package when every value is a flag or absent (and one is a flag)."""
        package = None
        for value in values:
            if value is None:
                return None
            kind = self._kind(value, flags)
            if kind is _OTHER:
                return None
            if kind:
                package = package or kind
        return package

    def _kind(self, value: ast.expr, flags: ModuleFlags) -> str | None:
        """A flag's package, ``_ABSENT`` for a constant that says absent, else ``_OTHER``."""
        if _constant(value, False, None):
            return _ABSENT
        probed = self.probed.get(id(value))
        if probed:
            return probed
        return self._flag(value, flags) or _OTHER

    def _flag(self, value: ast.expr, flags: ModuleFlags) -> str | None:
        """The package ``value`` is true only with (it is false unless the package imported)."""
        if isinstance(value, ast.Name):
            return flags.names.get(value.id) or flag_package(self._resolve(value))
        if isinstance(value, ast.Attribute):
            return flags.attributes.get(value.attr) or flag_package(self._resolve(value))
        if isinstance(value, ast.BoolOp) and isinstance(value.op, ast.And):
            return next((p for v in value.values if (p := self._flag(v, flags))), None)
        if isinstance(value, ast.IfExp) and _constant(value.orelse, False, None):
            return self._flag(value.test, flags) or self._flag(value.body, flags)
        if isinstance(value, ast.Compare) and len(value.ops) == 1:
            if isinstance(value.ops[0], (ast.IsNot, ast.NotEq)) and _constant(
                value.comparators[0], None
            ):
                return self._flag(value.left, flags)
            return None
        if isinstance(value, ast.Call):
            name = _identifier(value) or ""
            if name == "bool" and len(value.args) == 1:
                return self._flag(value.args[0], flags)
            if name in ("find_spec", "find_loader") and value.args:
                spec = value.args[0]
                if isinstance(spec, ast.Constant) and isinstance(spec.value, str):
                    return _optional(spec.value)
                return None
            match = _PROBE_CALL.match(name)
            words = set(match.group(1).lower().split("_")) if match else set()
            if match and not words & _PORTABLE_PROBES and not words & _IMPORT_ON_ROCM_WORDS:
                return match.group(1).lower()
        return None

    def _bind(self, target: ast.expr, value: ast.expr | None, in_class: bool) -> None:
        if isinstance(target, ast.Name):
            store = self.attributes if in_class else self.names
            store.setdefault(target.id, []).append(value)
            if in_class:  # a class attribute is a name of the class body too
                self.names.setdefault(target.id, []).append(value)
        elif isinstance(target, ast.Attribute):
            self.attributes.setdefault(target.attr, []).append(value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self._bind(element, None, in_class)
        elif isinstance(target, ast.Starred):
            self._bind(target.value, None, in_class)

    def _block(self, statements: list[ast.stmt], in_class: bool) -> None:
        for statement in statements:
            self._statement(statement, in_class)

    def _statement(self, statement: ast.stmt, in_class: bool) -> None:
        if isinstance(statement, ast.Assign):
            for target in statement.targets:
                self._bind(target, statement.value, in_class)
        elif isinstance(statement, ast.AnnAssign):
            if statement.value is not None:
                self._bind(statement.target, statement.value, in_class)
        elif isinstance(statement, ast.AugAssign):
            self._bind(statement.target, None, in_class)
        elif isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            arguments = statement.args
            for argument in (
                *arguments.posonlyargs,
                *arguments.args,
                *arguments.kwonlyargs,
                arguments.vararg,
                arguments.kwarg,
            ):
                if argument is not None:
                    self.names.setdefault(argument.arg, []).append(None)
            self._block(statement.body, in_class=False)
        elif isinstance(statement, ast.ClassDef):
            self._block(statement.body, in_class=True)
        elif isinstance(statement, (ast.For, ast.AsyncFor)):
            self._bind(statement.target, None, in_class)
            self._block(statement.body, in_class)
            self._block(statement.orelse, in_class)
        elif isinstance(statement, (ast.With, ast.AsyncWith)):
            for item in statement.items:
                if item.optional_vars is not None:
                    self._bind(item.optional_vars, None, in_class)
            self._block(statement.body, in_class)
        elif isinstance(statement, (ast.If, ast.While)):
            self._block(statement.body, in_class)
            self._block(statement.orelse, in_class)
        elif isinstance(statement, _TRY):
            self._try(statement, in_class)
        elif isinstance(statement, ast.Match):
            for case in statement.cases:
                self._block(case.body, in_class)

    def _try(self, statement: ast.Try, in_class: bool) -> None:
        package = _imported_package(statement.body)
        if package and any(_falls_back(handler) for handler in statement.handlers):
            # ``XFORMERS = True`` where the import succeeded is the probe's answer
            for line in (*statement.body, *statement.orelse):
                if isinstance(line, ast.Assign) and _constant(line.value, True):
                    self.probed[id(line.value)] = package
        self._block(statement.body, in_class)
        self._block(statement.orelse, in_class)
        self._block(statement.finalbody, in_class)
        for handler in statement.handlers:
            if handler.name:
                self.names.setdefault(handler.name, []).append(None)
            self._block(handler.body, in_class)


_TRY = (ast.Try, getattr(ast, "TryStar", ast.Try))


def module_flags(tree: ast.Module, resolve: Callable[[ast.expr], str | None]) -> ModuleFlags:
    """The availability flags a file binds (``resolve``: a Name/Attribute chain's qualified name
    through the file's imports, so that a flag imported from a project module counts)."""
    return _Reader(resolve).read(tree)
