"""Finding reads and writes of environment variables in Python code: the base of the ROC70x rules."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import libcst as cst

from migrator.api import Parsing, PythonContext, PythonRule
from migrator.api.syntax import string_value


@dataclass(frozen=True, slots=True)
class EnvAccess:
    """One read or write of an environment variable named by a string literal.

    ``kind``: ``assign`` (``os.environ[k] = v``), ``assign-other`` (``env[k] = v`` on another
    name), ``setdefault``, ``putenv``, ``dict-key`` (a key of an environment dict literal or of
    ``os.environ.update(...)``), ``get`` (``os.environ.get`` / ``os.getenv``), ``subscript``
    (``os.environ[k]`` read), ``test`` (``k in os.environ``), ``pop``.
    """

    node: cst.CSTNode
    name: str
    kind: str
    key: cst.BaseExpression | None = None
    call: cst.Call | None = None
    has_default: bool = False
    #: the statement line holding the access when it is that line's only statement
    line: cst.SimpleStatementLine | None = None
    #: every variable written by a sibling statement of the same block
    block_writes: frozenset[str] = frozenset()
    #: the value written, when known
    value: cst.BaseExpression | None = None
    #: every variable removed (``pop``/``del``) by a statement of the same block
    block_removes: frozenset[str] = frozenset()
    #: how the code spells ``os.environ`` at this access
    environ: str = "os.environ"
    #: for ``dict-key``: the dict literal and the element
    mapping: cst.Dict | None = None
    element: cst.DictElement | None = None


_ENVIRON = "os.environ"


_GETTERS = {
    "os.environ.get": "get",
    "os.getenv": "get",
    "os.environ.setdefault": "setdefault",
    "os.putenv": "putenv",
    "os.environ.pop": "pop",
    "os.environ.update": "update",
}


def _key_of(subscript: cst.Subscript) -> tuple[str, cst.BaseExpression] | None:
    if len(subscript.slice) != 1:
        return None
    index = subscript.slice[0].slice
    if not isinstance(index, cst.Index):
        return None
    value = string_value(index.value)
    return (value, index.value) if value is not None else None


class _EnvAccessRule(PythonRule, abstract=True):
    """Walks environment reads and writes and hands those of ``variables`` to ``on_access``."""

    variables: ClassVar[frozenset[str]] = frozenset()
    # an access may name the variable through a module-level constant, and a check reads the
    # function (or block) around it: the top-level statements connected by module-level names
    parsing = Parsing(scope="names")

    def __init__(self, ctx: PythonContext) -> None:
        super().__init__(ctx)
        self._lines: dict[int, tuple[cst.SimpleStatementLine | None, frozenset[str]]] = {}
        self._targets: set[int] = set()
        self._env_dicts: set[int] = set()
        self._done: set[int] = set()
        self._block_removes: dict[int, frozenset[str]] = {}

    def on_access(self, access: EnvAccess) -> None:
        raise NotImplementedError

    # -- helpers
    def is_environ(self, node: cst.BaseExpression) -> bool:
        return self.ctx.qualname(node) == _ENVIRON

    def _emit(self, access: EnvAccess) -> None:
        if access.name in self.variables and id(access.node) not in self._done:
            self._done.add(id(access.node))
            self.on_access(access)

    def _written(self, small: cst.BaseSmallStatement) -> set[str]:
        names: set[str] = set()
        if isinstance(small, cst.Assign):
            for target in small.targets:
                if isinstance(target.target, cst.Subscript):
                    key = _key_of(target.target)
                    if key is not None:
                        names.add(key[0])
        elif isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
            call = small.value
            kind = _GETTERS.get(self.ctx.call_name(call) or "")
            if kind in {"setdefault", "putenv"} and call.args:
                value = string_value(call.args[0].value)
                if value is not None:
                    names.add(value)
        return names

    def _removed(self, small: cst.BaseSmallStatement) -> set[str]:
        names: set[str] = set()
        if isinstance(small, cst.Del) and isinstance(small.target, cst.Subscript):
            key = _key_of(small.target)
            if key is not None:
                names.add(key[0])
        elif isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
            call = small.value
            if _GETTERS.get(self.ctx.call_name(call) or "") == "pop" and call.args:
                value = string_value(call.args[0].value)
                if value is not None:
                    names.add(value)
        return names

    def _scan_block(self, body: Any) -> None:
        written: set[str] = set()
        removed: set[str] = set()
        lines = [statement for statement in body if isinstance(statement, cst.SimpleStatementLine)]
        for line in lines:
            for small in line.body:
                written |= self._written(small)
                removed |= self._removed(small)
        frozen = frozenset(written)
        for line in lines:
            only = line if len(line.body) == 1 else None
            for small in line.body:
                self._lines[id(small)] = (only, frozen)
                self._block_removes[id(small)] = frozenset(removed)

    def visit_Module(self, node: cst.Module) -> None:
        self._scan_block(node.body)

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self._scan_block(node.body)

    def visit_SimpleStatementSuite(self, node: cst.SimpleStatementSuite) -> None:
        written: set[str] = set()
        for small in node.body:
            written |= self._written(small)
        for small in node.body:
            self._lines[id(small)] = (None, frozenset(written))

    # -- writes
    def visit_Assign(self, node: cst.Assign) -> None:
        line, block = self._lines.get(id(node), (None, frozenset()))
        for target in node.targets:
            subscript = target.target
            if not isinstance(subscript, cst.Subscript):
                continue
            self._targets.add(id(subscript))
            key = _key_of(subscript)
            if key is None:
                continue
            if self.is_environ(subscript.value):
                kind = "assign"
            elif isinstance(subscript.value, cst.Name):
                kind = "assign-other"
            else:
                continue
            self._emit(
                EnvAccess(
                    node=line if line is not None and len(node.targets) == 1 else node,
                    name=key[0],
                    kind=kind,
                    key=key[1],
                    line=line if len(node.targets) == 1 else None,
                    block_writes=block,
                    value=node.value,
                )
            )

    def visit_Del(self, node: cst.Del) -> None:
        if not isinstance(node.target, cst.Subscript):
            return
        self._targets.add(id(node.target))
        key = _key_of(node.target)
        if key is None or not self.is_environ(node.target.value):
            return
        line, _ = self._lines.get(id(node), (None, frozenset()))
        self._emit(
            EnvAccess(
                node=line if line is not None else node,
                name=key[0],
                kind="del",
                key=key[1],
                line=line,
                block_removes=self._block_removes.get(id(node), frozenset()),
                environ=self.ctx.code(node.target.value),
            )
        )

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.target, cst.Subscript):
            self._targets.add(id(node.target))

    def visit_Expr(self, node: cst.Expr) -> None:
        # remember statement-level setdefault calls with their line
        if isinstance(node.value, cst.Call):
            self._lines.setdefault(id(node.value), self._lines.get(id(node), (None, frozenset())))
            if id(node) in self._block_removes:
                self._block_removes[id(node.value)] = self._block_removes[id(node)]

    def visit_Arg(self, node: cst.Arg) -> None:
        if (
            node.keyword is not None
            and node.keyword.value == "env"
            and isinstance(node.value, cst.Dict)
        ):
            self._env_dicts.add(id(node.value))

    def visit_Dict(self, node: cst.Dict) -> None:
        splats_environ = any(
            isinstance(element, cst.StarredDictElement) and self.is_environ(element.value)
            for element in node.elements
        )
        keys = {
            string_value(element.key): element
            for element in node.elements
            if isinstance(element, cst.DictElement)
        }
        # an environment dict: spreads os.environ, is passed as env=, or names our variables
        if not splats_environ and id(node) not in self._env_dicts:
            if not set(keys) & self.variables:
                return
        names = frozenset(name for name in keys if name is not None)
        for name, element in keys.items():
            if name is not None:
                self._emit(
                    EnvAccess(
                        node=element.key,
                        name=name,
                        kind="dict-key",
                        key=element.key,
                        value=element.value,
                        block_writes=names,
                        mapping=node,
                        element=element,
                    )
                )

    def visit_Call(self, node: cst.Call) -> None:
        kind = _GETTERS.get(self.ctx.call_name(node) or "")
        if kind is None:
            return
        if kind == "update":
            self._update(node)
            return
        positional = [argument for argument in node.args if argument.keyword is None]
        if not positional or positional[0].star:
            return
        name = string_value(positional[0].value)
        if name is None:
            return
        line, block = self._lines.get(id(node), (None, frozenset()))
        has_default = len(node.args) > 1
        written = positional[1].value if len(positional) > 1 else None
        self._emit(
            EnvAccess(
                node=node,
                name=name,
                kind=kind,
                key=positional[0].value,
                call=node,
                has_default=has_default,
                line=line,
                block_writes=block,
                value=written,
                block_removes=self._block_removes.get(id(node), frozenset()),
                environ=self.ctx.code(node.func.value)
                if isinstance(node.func, cst.Attribute) and kind != "putenv"
                else "os.environ",
            )
        )

    def _update(self, node: cst.Call) -> None:
        for argument in node.args:
            if argument.keyword is not None:
                self._emit(EnvAccess(node=argument, name=argument.keyword.value, kind="dict-key"))
            elif isinstance(argument.value, cst.Dict):
                self._env_dicts.add(id(argument.value))

    # -- reads
    def visit_Subscript(self, node: cst.Subscript) -> None:
        if id(node) in self._targets or not self.is_environ(node.value):
            return
        key = _key_of(node)
        if key is not None:
            self._emit(EnvAccess(node=node, name=key[0], kind="subscript", key=key[1]))

    def visit_Comparison(self, node: cst.Comparison) -> None:
        left = string_value(node.left)
        if left is None:
            return
        for target in node.comparisons:
            if isinstance(target.operator, (cst.In, cst.NotIn)) and self.is_environ(
                target.comparator
            ):
                self._emit(EnvAccess(node=node, name=left, kind="test"))


def _quote(key: cst.BaseExpression | None) -> str:
    if isinstance(key, cst.SimpleString):
        return key.quote[-1] if key.quote else '"'
    return '"'
