"""ROC70x/ROC71x: CUDA environment variables in Python code and in shell, Docker, compose and CI
files. The variable table lives in ``rules/data/env_vars.toml``."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, ClassVar, cast

import libcst as cst

from migrator.astutil import string_value
from migrator.context import PythonContext
from migrator.model import Applicability, Severity
from migrator.rule import Invalid, PythonRule, TextRule, Valid
from migrator.ruledata import load_table

from ._shell import iter_lines


def _table() -> dict[str, Any]:
    return load_table("env_vars")


# --------------------------------------------------------------------------------------------
# Python: finding environment accesses


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


class _EnvAccessRule(PythonRule):
    """Walks environment reads and writes and hands those of ``variables`` to ``on_access``."""

    abstract = True
    variables: ClassVar[frozenset[str]] = frozenset()

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


# --------------------------------------------------------------------------------------------
# ROC700 / ROC701: set the HIP variable next to the CUDA one


class _PairedVariable(_EnvAccessRule):
    """Shared matcher of ROC700/ROC701: a write of ``cuda_name`` with no sibling write of a ROCm
    counterpart gets a following statement that copies the value."""

    abstract = True
    cuda_name: ClassVar[str]

    def _entry(self) -> dict[str, Any]:
        return cast(dict[str, Any], _table()["paired"][self.cuda_name])

    def on_access(self, access: EnvAccess) -> None:
        if access.kind in {"pop", "del"}:
            self._removal(access)
            return
        if access.kind not in {"assign", "assign-other", "setdefault", "putenv", "dict-key"}:
            return
        entry = self._entry()
        if access.block_writes & set(entry["handled"]):
            return
        if access.value is not None and string_value(access.value) in entry["off"]:
            return
        rocm = entry["add"]
        message = (
            f"`{self.cuda_name}` is set but `{rocm}` is not: {entry['why']}; set `{rocm}` "
            "to the same value"
        )
        replacement = None
        applicability = None
        line = access.line
        if access.kind == "dict-key" and access.mapping is not None:
            fixed = self._dict_fix(access, rocm)
            if fixed is not None:
                self.report(
                    access.mapping,
                    message=message,
                    replacement=fixed,
                    applicability=Applicability.UNSAFE,
                )
                return
        if line is not None and access.kind in {"assign", "assign-other", "setdefault"}:
            quote = _quote(access.key)
            if access.kind == "setdefault" and access.call is not None:
                func = self.ctx.code(access.call.func)
                environ = self.ctx.code(cast(cst.Attribute, access.call.func).value)
                extra = f"{func}({quote}{rocm}{quote}, {environ}[{quote}{self.cuda_name}{quote}])"
            else:
                small = line.body[0]
                assert isinstance(small, cst.Assign)
                target = cast(cst.Subscript, small.targets[0].target)
                mapping = self.ctx.code(target.value)
                extra = (
                    f"{mapping}[{quote}{rocm}{quote}] = {mapping}[{quote}{self.cuda_name}{quote}]"
                )
            new_line = cst.parse_statement(extra + "\n")
            trailing = line.trailing_whitespace
            first = line.with_changes(trailing_whitespace=trailing)
            second = cast(cst.SimpleStatementLine, new_line).with_changes(leading_lines=[])
            pair = cst.FlattenSentinel([first, second])
            replacement = cast(Any, lambda pair=pair: pair)
            if access.kind == "assign-other":
                applicability = Applicability.UNSAFE
        self.report(
            line if replacement is not None and line is not None else access.node,
            message=message,
            replacement=replacement,
            applicability=applicability,
        )

    def _dict_fix(self, access: EnvAccess, rocm: str) -> cst.Dict | None:
        """The dict with ``"HIP_...": <same value>`` after the CUDA entry, when the value is a
        literal or a plain name (copying it cannot evaluate anything twice)."""
        mapping, element = access.mapping, access.element
        if mapping is None or element is None:
            return None
        value = element.value
        simple = isinstance(value, (cst.Name, cst.Integer, cst.SimpleString)) or (
            isinstance(value, cst.Attribute)
            and self.ctx.qualname(value) is None
            and isinstance(value.value, cst.Name)
        )
        if not simple:
            return None
        quote = _quote(access.key)
        comma = element.comma
        last = not isinstance(comma, cst.Comma)
        separator = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
        new = cst.DictElement(
            key=cst.SimpleString(f"{quote}{rocm}{quote}"),
            value=value,
            whitespace_before_colon=element.whitespace_before_colon,
            whitespace_after_colon=element.whitespace_after_colon,
            comma=cst.MaybeSentinel.DEFAULT if last else comma,
        )
        elements = list(mapping.elements)
        index = elements.index(element)
        previous = elements[index - 1].comma if index > 0 else None
        final = index == len(elements) - 1
        if final and isinstance(previous, cst.Comma):
            separator = previous  # keep the one-entry-per-line layout
        if final:  # the new entry takes the trailing comma (or none); this one a separator
            new = new.with_changes(comma=comma)
        elements[index] = element.with_changes(comma=separator if final else comma)
        elements.insert(index + 1, new)
        return mapping.with_changes(elements=elements)

    def _removal(self, access: EnvAccess) -> None:
        entry = self._entry()
        rocm = entry["add"]
        if access.block_removes & set(entry["handled"]):
            return
        message = (
            f"`{self.cuda_name}` is removed but `{rocm}` is not: on ROCm a `{rocm}` set "
            f"earlier (or by the launcher) stays in force; remove `{rocm}` too"
        )
        replacement = None
        line = access.line
        if line is not None:
            quote = _quote(access.key)
            extra = f"{access.environ}.pop({quote}{rocm}{quote}, None)"
            second = cast(cst.SimpleStatementLine, cst.parse_statement(extra + "\n"))
            pair = cst.FlattenSentinel([line, second.with_changes(leading_lines=[])])
            replacement = cast(Any, lambda pair=pair: pair)
        self.report(
            line if replacement is not None and line is not None else access.node,
            message=message,
            replacement=replacement,
        )


class CudaVisibleDevicesWithoutHip(_PairedVariable):
    """
    ## What it does
    Flags Python code that sets `CUDA_VISIBLE_DEVICES` (`os.environ[...] = ...`,
    `os.environ.setdefault`, `os.putenv`, `os.environ.update`, environment dicts passed as
    `env=`) without setting `HIP_VISIBLE_DEVICES` (or `ROCR_VISIBLE_DEVICES`) next to it, and
    code that removes it (`os.environ.pop`, `del`) without removing `HIP_VISIBLE_DEVICES`.

    ## Why it breaks on ROCm
    Today this works: HIP (ROCm ≤ 7.x docs) accepts `CUDA_VISIBLE_DEVICES` as a legacy alias
    of `HIP_VISIBLE_DEVICES`, and PyTorch's device parsing on ROCm reads it. Hence `info`:
    the ROCm 10 docs list only the HIP name, and a `HIP_VISIBLE_DEVICES` inherited from the
    launcher overrides the CUDA name, so setting both keeps the pinning explicit.

    ## Example
    ```python
    import os

    os.environ["CUDA_VISIBLE_DEVICES"] = ",".join(map(str, ids))
    ```

    ## Fix
    ```python
    import os

    os.environ["CUDA_VISIBLE_DEVICES"] = ",".join(map(str, ids))
    os.environ["HIP_VISIBLE_DEVICES"] = os.environ["CUDA_VISIBLE_DEVICES"]
    ```

    ## Fix safety
    Safe for `os.environ[...] = ...`, `os.environ.setdefault(...)`, `os.environ.pop(...)` and
    `del os.environ[...]` (the removal gets `os.environ.pop("HIP_VISIBLE_DEVICES", None)`):
    the CUDA runtime and PyTorch's CUDA builds never read `HIP_VISIBLE_DEVICES`, so nothing
    changes on NVIDIA, and the copy re-reads the variable instead of evaluating the value
    twice. Unsafe for an
    assignment into another mapping (`env["CUDA_VISIBLE_DEVICES"] = ...`), which may not be
    an environment. Other forms are reported without a fix.

    ## References
    - ROCm/HIP `docs/reference/env_variables/gpu_isolation_hip_env.rst`
    - rocm.docs.amd.com "GPU isolation techniques"
    """

    code = "ROC700"
    name = "cuda-visible-devices-without-hip"
    category = "env-var"
    severity = Severity.INFO
    aggregate = "file"
    message = "`CUDA_VISIBLE_DEVICES` is set but `HIP_VISIBLE_DEVICES` is not"
    fix_title = "Also set `HIP_VISIBLE_DEVICES` to the same value"
    applicability = Applicability.SAFE
    fact = "§6 CUDA_VISIBLE_DEVICES; [E1][E2][P2]"
    triggers = ("CUDA_VISIBLE_DEVICES",)
    effort_hours = 0.1
    cuda_name = "CUDA_VISIBLE_DEVICES"
    variables = frozenset({"CUDA_VISIBLE_DEVICES"})
    valid = [
        Valid(
            'import os\n\nos.environ["CUDA_VISIBLE_DEVICES"] = "0"\n'
            'os.environ["HIP_VISIBLE_DEVICES"] = "0"\n'
        ),
        Valid('import os\n\nprint(os.environ.get("CUDA_VISIBLE_DEVICES"))\n'),
        Valid('"""Set os.environ["CUDA_VISIBLE_DEVICES"] = "0" first."""\n'),
        Valid('config = {}\nconfig.CUDA_VISIBLE_DEVICES = "0"\n'),
        Valid('env = {"CUDA_VISIBLE_DEVICES": "0", "HIP_VISIBLE_DEVICES": "0"}\n'),
        Valid(
            'import os\n\nos.environ["ROCR_VISIBLE_DEVICES"] = "1"\n'
            'os.environ["CUDA_VISIBLE_DEVICES"] = "1"\n'
        ),
        Valid(
            'import os\n\nos.environ.pop("CUDA_VISIBLE_DEVICES", None)\n'
            'os.environ.pop("HIP_VISIBLE_DEVICES", None)\n'
        ),
    ]
    invalid = [
        Invalid(  # one entry per line, trailing comma: the new entry gets its own line
            "import os, subprocess\n"
            'env = {\n    **os.environ,\n    "CUDA_VISIBLE_DEVICES": "1",\n}\n',
            fixed=(
                "import os, subprocess\n"
                'env = {\n    **os.environ,\n    "CUDA_VISIBLE_DEVICES": "1",\n'
                '    "HIP_VISIBLE_DEVICES": "1",\n}\n'
            ),
        ),
        Invalid(
            "import os\n\ndef pin(ids):\n"
            '    os.environ["CUDA_VISIBLE_DEVICES"] = ",".join(ids)  # first\n'
            "    return ids\n",
            fixed="import os\n\ndef pin(ids):\n"
            '    os.environ["CUDA_VISIBLE_DEVICES"] = ",".join(ids)  # first\n'
            '    os.environ["HIP_VISIBLE_DEVICES"] = os.environ["CUDA_VISIBLE_DEVICES"]\n'
            "    return ids\n",
            line=4,
            column=5,
        ),
        Invalid(
            "from os import environ\n\nenviron['CUDA_VISIBLE_DEVICES'] = '0'\n",
            fixed="from os import environ\n\nenviron['CUDA_VISIBLE_DEVICES'] = '0'\n"
            "environ['HIP_VISIBLE_DEVICES'] = environ['CUDA_VISIBLE_DEVICES']\n",
        ),
        Invalid(
            'import os as o\n\no.environ.setdefault("CUDA_VISIBLE_DEVICES", "0")\n',
            fixed='import os as o\n\no.environ.setdefault("CUDA_VISIBLE_DEVICES", "0")\n'
            'o.environ.setdefault("HIP_VISIBLE_DEVICES", o.environ["CUDA_VISIBLE_DEVICES"])\n',
        ),
        Invalid(
            'import os\n\nenv = os.environ.copy()\nenv["CUDA_VISIBLE_DEVICES"] = str(rank)\n',
            fixed='import os\n\nenv = os.environ.copy()\nenv["CUDA_VISIBLE_DEVICES"] = str(rank)\n'
            'env["HIP_VISIBLE_DEVICES"] = env["CUDA_VISIBLE_DEVICES"]\n',
        ),
        Invalid(
            "import os, subprocess\n\n"
            'subprocess.run(cmd, env={**os.environ, "CUDA_VISIBLE_DEVICES": "1"})\n',
            fixed="import os, subprocess\n\n"
            'subprocess.run(cmd, env={**os.environ, "CUDA_VISIBLE_DEVICES": "1", '
            '"HIP_VISIBLE_DEVICES": "1"})\n',
        ),
        Invalid(
            'env = {"CUDA_VISIBLE_DEVICES": "0,1"}\n',
            fixed='env = {"CUDA_VISIBLE_DEVICES": "0,1", "HIP_VISIBLE_DEVICES": "0,1"}\n',
        ),
        Invalid('env = {"CUDA_VISIBLE_DEVICES": pick(), "PATH": path}\n'),
        Invalid('import os\n\nif x: os.environ["CUDA_VISIBLE_DEVICES"] = "0"\n'),
        Invalid(
            "import os\n\nos.environ.pop('CUDA_VISIBLE_DEVICES', None)\n",
            fixed="import os\n\nos.environ.pop('CUDA_VISIBLE_DEVICES', None)\n"
            "os.environ.pop('HIP_VISIBLE_DEVICES', None)\n",
        ),
        Invalid(
            'import os\n\ndel os.environ["CUDA_VISIBLE_DEVICES"]\n',
            fixed='import os\n\ndel os.environ["CUDA_VISIBLE_DEVICES"]\n'
            'os.environ.pop("HIP_VISIBLE_DEVICES", None)\n',
        ),
    ]


class CudaLaunchBlockingWithoutHip(_PairedVariable):
    """
    ## What it does
    Flags Python code that sets `CUDA_LAUNCH_BLOCKING` without setting `HIP_LAUNCH_BLOCKING`
    (or `AMD_SERIALIZE_KERNEL`) next to it.

    ## Why it breaks on ROCm
    Whether HIP reads `CUDA_LAUNCH_BLOCKING` is undocumented; the HIP variable is
    `HIP_LAUNCH_BLOCKING=1` (same as `AMD_SERIALIZE_KERNEL`; `AMD_SERIALIZE_KERNEL=3` waits
    before and after each kernel). Without it, the synchronous launches the code asked for
    (to get accurate error locations) silently stay asynchronous.

    ## Example
    ```python
    import os

    os.environ["CUDA_LAUNCH_BLOCKING"] = "1"
    ```

    ## Fix
    ```python
    import os

    os.environ["CUDA_LAUNCH_BLOCKING"] = "1"
    os.environ["HIP_LAUNCH_BLOCKING"] = os.environ["CUDA_LAUNCH_BLOCKING"]
    ```

    ## Fix safety
    Safe for `os.environ[...] = ...` and `setdefault`: CUDA never reads the HIP variable.
    Unsafe for assignments into other mappings.

    ## References
    - ROCm/HIP `docs/reference/env_variables/debug_hip_env.rst`
    """

    code = "ROC701"
    name = "cuda-launch-blocking-without-hip"
    category = "env-var"
    severity = Severity.INFO
    aggregate = "file"
    message = "`CUDA_LAUNCH_BLOCKING` is set but `HIP_LAUNCH_BLOCKING` is not"
    fix_title = "Also set `HIP_LAUNCH_BLOCKING` to the same value"
    applicability = Applicability.SAFE
    fact = "§6 CUDA_LAUNCH_BLOCKING; [E3]"
    triggers = ("CUDA_LAUNCH_BLOCKING",)
    effort_hours = 0.1
    cuda_name = "CUDA_LAUNCH_BLOCKING"
    variables = frozenset({"CUDA_LAUNCH_BLOCKING"})
    valid = [
        Valid(
            'import os\n\nos.environ["CUDA_LAUNCH_BLOCKING"] = "1"\n'
            'os.environ["AMD_SERIALIZE_KERNEL"] = "3"\n'
        ),
        Valid('import os\n\nblocking = os.environ.get("CUDA_LAUNCH_BLOCKING") == "1"\n'),
        Valid('# os.environ["CUDA_LAUNCH_BLOCKING"] = "1"\nimport os\n'),
        Valid('settings = {}\nsettings.get("CUDA_LAUNCH_BLOCKING")\n'),
        Valid('import os\n\nos.environ["CUDA_LAUNCH_BLOCKING"] = "0"\n'),
    ]
    invalid = [
        Invalid(
            'import os\n\nos.environ["CUDA_LAUNCH_BLOCKING"] = "1"\n',
            fixed='import os\n\nos.environ["CUDA_LAUNCH_BLOCKING"] = "1"\n'
            'os.environ["HIP_LAUNCH_BLOCKING"] = os.environ["CUDA_LAUNCH_BLOCKING"]\n',
            line=3,
        ),
        Invalid(
            'from os import environ as env\n\nif debug:\n    env["CUDA_LAUNCH_BLOCKING"] = "1"\n',
            fixed="from os import environ as env\n\nif debug:\n"
            '    env["CUDA_LAUNCH_BLOCKING"] = "1"\n'
            '    env["HIP_LAUNCH_BLOCKING"] = env["CUDA_LAUNCH_BLOCKING"]\n',
        ),
        Invalid('import os\n\nos.putenv("CUDA_LAUNCH_BLOCKING", "1")\n'),
    ]


# --------------------------------------------------------------------------------------------
# ROC702: CUDA_HOME / CUDA_PATH lookups


class CudaHomeLookup(_EnvAccessRule):
    """
    ## What it does
    Flags reads (and writes) of `CUDA_HOME` / `CUDA_PATH` through `os.environ` or
    `os.getenv`.

    ## Why it breaks on ROCm
    ROCm installs are not found through `CUDA_HOME`/`CUDA_PATH`: PyTorch's extension builder
    looks for `ROCM_HOME`, then `ROCM_PATH`, then the location of `hipcc`, then `/opt/rocm`.
    Code that locates the toolkit through the CUDA names finds nothing on ROCm and skips (or
    fails) JIT kernel builds.

    ## Example
    ```python
    import os

    cuda_home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
    ```

    ## Fix
    ```python
    import os

    cuda_home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH") or os.environ.get(
        "ROCM_HOME"
    ) or os.environ.get("ROCM_PATH")
    ```

    ## Fix safety
    Unsafe. On an NVIDIA machine where `CUDA_HOME` is unset (or empty) but `ROCM_HOME`/
    `ROCM_PATH` is set, the result changes; an empty `CUDA_HOME` now falls through. What the
    code does with the path next (`bin/nvcc`, `lib64/libcudart.so`) does not exist under a
    ROCm root and must be reviewed. Reads with a default, subscript reads and writes are
    reported without a fix.

    ## References
    - pytorch/pytorch `torch/utils/cpp_extension.py` (`_find_rocm_home`)
    """

    code = "ROC702"
    name = "cuda-home-lookup"
    category = "env-var"
    severity = Severity.WARNING
    aggregate = "file"
    message = "`CUDA_HOME`/`CUDA_PATH` do not locate ROCm; ROCm uses `ROCM_HOME`/`ROCM_PATH`"
    fix_title = "Fall back to `ROCM_HOME` and `ROCM_PATH`"
    applicability = Applicability.UNSAFE
    fact = "§6 CUDA_HOME / CUDA_PATH; [P9]"
    triggers = ("CUDA_HOME", "CUDA_PATH")
    effort_hours = 0.5
    variables = frozenset({"CUDA_HOME", "CUDA_PATH", "ROCM_HOME", "ROCM_PATH"})
    valid = [
        Valid('import os\n\nhome = os.environ.get("ROCM_HOME") or os.environ.get("CUDA_HOME")\n'),
        Valid("from torch.utils.cpp_extension import CUDA_HOME\n\nprint(CUDA_HOME)\n"),
        Valid('"""Reads os.environ.get("CUDA_HOME")."""\n'),
        Valid('def getenv(name):\n    return name\n\ngetenv("CUDA_HOME")\n'),
    ]
    invalid = [
        Invalid(
            'import os\n\nhome = os.environ.get("CUDA_HOME")\n',
            fixed='import os\n\nhome = os.environ.get("CUDA_HOME") or os.environ.get("ROCM_HOME") '
            'or os.environ.get("ROCM_PATH")\n',
            line=3,
            column=8,
        ),
        Invalid(
            'import os\n\nh = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")\n',
            fixed='import os\n\nh = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH") '
            'or os.environ.get("ROCM_HOME") or os.environ.get("ROCM_PATH")\n',
            count=1,
        ),
        Invalid(
            "from os import getenv\n\nnvcc = getenv('CUDA_HOME') + '/bin/nvcc'\n",
            fixed="from os import getenv\n\nnvcc = (getenv('CUDA_HOME') or getenv('ROCM_HOME') "
            "or getenv('ROCM_PATH')) + '/bin/nvcc'\n",
        ),
        Invalid(
            'import os\n\nhome = os.environ.get("CUDA_HOME") or "/usr/local/cuda"\n',
            fixed='import os\n\nhome = os.environ.get("CUDA_HOME") or os.environ.get("ROCM_HOME") '
            'or os.environ.get("ROCM_PATH") or "/usr/local/cuda"\n',
        ),
        Invalid('import os\n\nhome = os.environ.get("CUDA_HOME", "/usr/local/cuda")\n'),
        Invalid('import os\n\nhome = os.environ["CUDA_HOME"]\n'),
        Invalid('import os\n\nif "CUDA_HOME" in os.environ:\n    pass\n'),
        Invalid('import os\n\nos.environ["CUDA_HOME"] = "/usr/local/cuda"\n'),
    ]

    _ROCM = frozenset({"ROCM_HOME", "ROCM_PATH"})
    _CUDA = frozenset({"CUDA_HOME", "CUDA_PATH"})

    def __init__(self, ctx: PythonContext) -> None:
        super().__init__(ctx)
        self._bare: set[int] = set()
        self._chained: set[int] = set()

    # contexts where ``a or b or c`` needs no parentheses
    def visit_Assign(self, node: cst.Assign) -> None:
        self._bare.add(id(node.value))
        super().visit_Assign(node)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._bare.add(id(node.value))

    def visit_Return(self, node: cst.Return) -> None:
        if node.value is not None:
            self._bare.add(id(node.value))

    def visit_Arg(self, node: cst.Arg) -> None:
        self._bare.add(id(node.value))
        super().visit_Arg(node)

    def _read(self, node: cst.BaseExpression) -> tuple[str, cst.Call] | None:
        """(name, call) when ``node`` is ``os.environ.get("X")`` / ``os.getenv("X")`` with no
        default."""
        if not isinstance(node, cst.Call) or len(node.args) != 1 or node.args[0].keyword:
            return None
        if _GETTERS.get(self.ctx.call_name(node) or "") != "get":
            return None
        name = string_value(node.args[0].value)
        return (name, node) if name is not None else None

    def _operands(self, node: cst.BaseExpression) -> list[cst.BaseExpression]:
        if (
            isinstance(node, cst.BooleanOperation)
            and isinstance(node.operator, cst.Or)
            and not node.lpar
        ):
            return [*self._operands(node.left), *self._operands(node.right)]
        return [node]

    def visit_BooleanOperation(self, node: cst.BooleanOperation) -> None:
        if id(node) in self._chained or not isinstance(node.operator, cst.Or):
            return
        operands = [*self._operands(node.left), *self._operands(node.right)]
        self._mark_chain(node)
        reads = [(index, self._read(operand)) for index, operand in enumerate(operands)]
        names = {found[0] for _, found in reads if found is not None}
        for operand in operands:
            self._chained.add(id(operand))
        if names & self._ROCM or not names & self._CUDA:
            return
        last = max(index for index, found in reads if found and found[0] in self._CUDA)
        found = reads[last][1]
        assert found is not None
        call = found[1]
        extra = [self._rocm_read(call, name) for name in ("ROCM_HOME", "ROCM_PATH")]
        new_operands = [*operands[: last + 1], *extra, *operands[last + 1 :]]
        replacement = self._chain(new_operands).with_changes(lpar=node.lpar, rpar=node.rpar)
        self.report(node, message=self._message(), replacement=replacement)

    def _mark_chain(self, node: cst.BaseExpression) -> None:
        if isinstance(node, cst.BooleanOperation) and isinstance(node.operator, cst.Or):
            self._chained.add(id(node))
            if not node.lpar:
                self._mark_chain(node.left)
                self._mark_chain(node.right)

    def _rocm_read(self, call: cst.Call, name: str) -> cst.Call:
        quote = _quote(call.args[0].value)
        return cast(
            cst.Call, cst.parse_expression(f"{self.ctx.code(call.func)}({quote}{name}{quote})")
        )

    def _chain(self, operands: list[cst.BaseExpression]) -> cst.BooleanOperation:
        result = operands[0]
        for operand in operands[1:]:
            result = cst.BooleanOperation(
                left=result,
                operator=cst.Or(
                    whitespace_before=cst.SimpleWhitespace(" "),
                    whitespace_after=cst.SimpleWhitespace(" "),
                ),
                right=operand,
            )
        return cast(cst.BooleanOperation, result)

    def _message(self, detail: str = "") -> str:
        text = (
            "`CUDA_HOME`/`CUDA_PATH` do not locate ROCm (torch looks at `ROCM_HOME`, "
            "`ROCM_PATH`, hipcc, /opt/rocm)"
        )
        return text + (
            f"; {detail}" if detail else "; review what the path is used for (nvcc, lib64)"
        )

    def on_access(self, access: EnvAccess) -> None:
        if access.name not in self._CUDA or id(access.node) in self._chained:
            return
        if access.kind in {"pop", "del"}:
            return
        if access.kind == "get" and not access.has_default and access.call is not None:
            call = access.call
            chain = self._chain(
                [call, *(self._rocm_read(call, name) for name in ("ROCM_HOME", "ROCM_PATH"))]
            )
            if id(call) not in self._bare:
                chain = chain.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
            self.report(call, message=self._message(), replacement=chain)
            return
        if access.kind in {"assign", "assign-other", "setdefault", "putenv", "dict-key"}:
            detail = "set `ROCM_PATH` (usually /opt/rocm) for ROCm builds"
        elif access.kind == "subscript":
            detail = "`os.environ[...]` raises KeyError where only `ROCM_PATH` is set"
        else:
            detail = "also look at `ROCM_HOME`/`ROCM_PATH`"
        self.report(access.node, message=self._message(detail))


# --------------------------------------------------------------------------------------------
# ROC703: variables with no effect on ROCm


class CudaOnlyEnvVar(_EnvAccessRule):
    """
    ## What it does
    Flags Python code that sets or reads `TORCH_CUDA_ARCH_LIST`, `TORCH_USE_CUDA_DSA`,
    `NVIDIA_VISIBLE_DEVICES` or `NVIDIA_DRIVER_CAPABILITIES`.

    ## Why it breaks on ROCm
    These have no effect on ROCm: extension builds for ROCm ignore `TORCH_CUDA_ARCH_LIST` and
    target `PYTORCH_ROCM_ARCH` (default: the archs torch was built for); device-side asserts
    are compiled out of ROCm builds whatever `TORCH_USE_CUDA_DSA` says; the `NVIDIA_*`
    variables are read only by the NVIDIA container toolkit.

    ## Example
    ```python
    import os

    os.environ["TORCH_CUDA_ARCH_LIST"] = "8.0;9.0"
    ```

    ## Manual migration
    Set the ROCm counterpart with values chosen for the target GPUs, for example
    `os.environ["PYTORCH_ROCM_ARCH"] = "gfx90a;gfx942"`; pass AMD GPUs to containers with
    `--device /dev/kfd --device /dev/dri`.

    ## References
    - pytorch/pytorch `torch/utils/cpp_extension.py`
    - rocm.docs.amd.com "Running ROCm Docker containers"
    """

    code = "ROC703"
    name = "cuda-only-env-var"
    category = "env-var"
    severity = Severity.WARNING
    aggregate = "file"
    message = "This CUDA environment variable has no effect on ROCm"
    fact = "§6 TORCH_CUDA_ARCH_LIST, TORCH_USE_CUDA_DSA rows; §9 docker row; [P9][P1][C1]"
    triggers = (
        "TORCH_CUDA_ARCH_LIST",
        "TORCH_USE_CUDA_DSA",
        "NVIDIA_VISIBLE_DEVICES",
        "NVIDIA_DRIVER_CAPABILITIES",
    )
    effort_hours = 0.25
    variables = frozenset(
        {
            "TORCH_CUDA_ARCH_LIST",
            "TORCH_USE_CUDA_DSA",
            "NVIDIA_VISIBLE_DEVICES",
            "NVIDIA_DRIVER_CAPABILITIES",
        }
    )
    valid = [
        Valid('import os\n\nos.environ["PYTORCH_ROCM_ARCH"] = "gfx942"\n'),
        Valid('"""Set TORCH_CUDA_ARCH_LIST before building."""\n'),
        Valid('import os\n\nos.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"\n'),
        Valid('d = {}\nd.get("TORCH_CUDA_ARCH_LIST")\n'),
    ]
    invalid = [
        Invalid('import os\n\nos.environ["TORCH_CUDA_ARCH_LIST"] = "8.0;9.0"\n', line=3, column=1),
        Invalid('from os import getenv\n\narchs = getenv("TORCH_CUDA_ARCH_LIST", "")\n'),
        Invalid('import os\n\nos.environ.setdefault("TORCH_USE_CUDA_DSA", "1")\n'),
        Invalid('import os\n\nif "NVIDIA_VISIBLE_DEVICES" in os.environ:\n    pass\n'),
    ]

    def on_access(self, access: EnvAccess) -> None:
        if access.kind in {"pop", "del"}:
            return  # removing a variable that has no effect is harmless
        entry = _table()["cuda_only"][access.name]
        self.report(
            access.node,
            message=(
                f"`{access.name}` has no effect on ROCm ({entry['why']}); use {entry['instead']}"
            ),
        )


# --------------------------------------------------------------------------------------------
# Shell, Dockerfile, compose, CI YAML


_TEXT_KINDS = frozenset({"shell", "dockerfile", "compose", "ci-yaml"})
_SIMPLE_VALUE = re.compile(r"""^(?:"[^"$`\\]*"|'[^']*'|[\w.,:;/@%+=-]*)$""")


@dataclass(frozen=True, slots=True)
class TextSetting:
    """One place a text file sets (or passes through) a variable."""

    start: int  # offset of the variable name
    #: "assign" (NAME=value), "env-space" (ENV NAME value), "yaml-map", "yaml-list", "docker-e"
    form: str
    value: str  # the value text as written (may be quoted; "" for docker -e NAME)
    value_end: int  # offset just after the value
    line_end: int  # offset of the end of the line (before the newline)
    indent: str
    line: str
    flag: str = ""  # "-e" / "--env" for docker-e


def _name_pattern(name: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w$]){re.escape(name)}(?!\w)")


def find_settings(text: str, name: str) -> list[TextSetting]:
    """Every assignment / pass-through of ``name`` outside comments."""
    settings: list[TextSetting] = []
    pattern = _name_pattern(name)
    for offset, line, code in iter_lines(text):
        if name not in code:
            continue
        indent = line[: len(line) - len(line.lstrip())]
        for match in pattern.finditer(code):
            start, end = match.span()
            before = code[:start]
            after = code[end:]
            setting: TextSetting | None = None
            stripped = before.strip()
            if re.match(r"^\s*-\s*$", before) and after.startswith("="):
                value = after[1:].strip()
                setting = TextSetting(
                    offset + start,
                    "yaml-list",
                    value,
                    offset + len(code.rstrip()),
                    offset + len(line),
                    indent,
                    line,
                )
            elif after.startswith("="):
                value_match = re.match(r"""=("[^"]*"|'[^']*'|[^\s;&|)]*)""", after)
                assert value_match is not None
                value = value_match.group(1)
                value_end = offset + end + value_match.end()
                flag_match = re.search(r"(?:^|\s)(-e|--env)\s*$", before)
                form = "docker-e" if flag_match else "assign"
                setting = TextSetting(
                    offset + start,
                    form,
                    value,
                    value_end,
                    offset + len(line),
                    indent,
                    line,
                    flag_match.group(1) if flag_match else "",
                )
            elif re.match(r"^\s*:\s", after + " ") and (not stripped or stripped == "-"):
                value = after.split(":", 1)[1].strip()
                setting = TextSetting(
                    offset + start,
                    "yaml-map",
                    value,
                    offset + len(code.rstrip()),
                    offset + len(line),
                    indent,
                    line,
                )
            elif re.match(r"^\s*ENV\s+$", before) and re.match(r"^\s+\S", after):
                value = after.strip()
                setting = TextSetting(
                    offset + start,
                    "env-space",
                    value,
                    offset + len(code.rstrip()),
                    offset + len(line),
                    indent,
                    line,
                )
            else:
                flag_match = re.search(r"(?:^|\s)(-e|--env)\s+$", before)
                if flag_match and (not after or after[0].isspace() or after[0] in "\\\"'"):
                    setting = TextSetting(
                        offset + start,
                        "docker-e",
                        "",
                        offset + end,
                        offset + len(line),
                        indent,
                        line,
                        flag_match.group(1),
                    )
            if setting is not None:
                settings.append(setting)
    return settings


def find_reads(text: str, name: str) -> list[int]:
    """Offsets of ``$NAME`` / ``${NAME...}`` outside comments (one per line)."""
    offsets: list[int] = []
    pattern = re.compile(rf"\$\{{?{re.escape(name)}(?!\w)")
    for offset, _line, code in iter_lines(text):
        match = pattern.search(code)
        if match:
            offsets.append(offset + match.start())
    return offsets


class _TextPaired(TextRule):
    """Shared matcher of ROC710/ROC711 (the text forms of ROC700/ROC701)."""

    abstract = True
    cuda_name: ClassVar[str]
    file_kinds = _TEXT_KINDS

    def check(self) -> None:
        entry = _table()["paired"][self.cuda_name]
        rocm = entry["add"]
        handled = entry["handled"]
        lines = self.ctx.text.splitlines()
        for setting in find_settings(self.ctx.text, self.cuda_name):
            line_number, _ = self.ctx.position(setting.start)
            nearby = " ".join(lines[line_number - 1 : line_number + 1])
            if any(re.search(rf"(?<![\w$]){name}(?!\w)", nearby) for name in handled):
                continue
            if setting.value.strip("\"'") in entry["off"] and setting.form != "docker-e":
                continue
            replacement, end = self._fix(setting, rocm)
            message = (
                f"`{self.cuda_name}` is set but `{rocm}` is not: {entry['why']}; set `{rocm}` "
                "to the same value"
            )
            self.report(
                setting.start,
                end if replacement is not None else setting.start + len(self.cuda_name),
                message=message,
                replacement=replacement,
            )

    def _fix(self, setting: TextSetting, rocm: str) -> tuple[str | None, int]:
        if self.ctx.path.endswith(".ipynb"):
            return None, 0  # notebook `!` lines are never rewritten by the engine
        value = setting.value
        original = self.ctx.text[setting.start : setting.value_end]
        if setting.form == "docker-e":
            suffix = f"={value}" if value else ""
            return f"{original} {setting.flag} {rocm}{suffix}", setting.value_end
        if not _SIMPLE_VALUE.match(value) and not re.fullmatch(
            r"\$\w+|\$\{\w+(?::?[-=+?][\w.,:/@%+-]*)?\}", value
        ):
            return None, 0
        if setting.form == "assign":
            return f"{original} {rocm}={value}", setting.value_end
        original_line = self.ctx.text[setting.start : setting.line_end]
        if setting.form == "yaml-list":
            dash = setting.line[: setting.line.index("-") + 1]
            spacing = setting.line[len(dash) :][
                : len(setting.line[len(dash) :]) - len(setting.line[len(dash) :].lstrip())
            ]
            return f"{original_line}\n{dash}{spacing}{rocm}={value}", setting.line_end
        if setting.form == "yaml-map":
            if setting.line.lstrip().startswith("-"):
                return None, 0
            colon = re.search(r":\s*", self.ctx.text[setting.start :])
            if colon is None:
                return None, 0
            separator = colon.group(0)
            return f"{original_line}\n{setting.indent}{rocm}{separator}{value}", setting.line_end
        if setting.form == "env-space":
            return f"{original_line}\n{setting.indent}ENV {rocm} {value}", setting.line_end
        return None, 0


class ShellCudaVisibleDevicesWithoutHip(_TextPaired):
    """
    ## What it does
    Flags `CUDA_VISIBLE_DEVICES` set in shell scripts (`export`, `VAR=... cmd`), Dockerfiles
    (`ENV`), compose `environment:` entries, CI `env:` blocks and `docker run -e`, when
    `HIP_VISIBLE_DEVICES` (or `ROCR_VISIBLE_DEVICES`) is not set on the same or the next line.

    ## Why it breaks on ROCm
    Today this works: HIP (ROCm ≤ 7.x docs) accepts `CUDA_VISIBLE_DEVICES` as a legacy alias
    of `HIP_VISIBLE_DEVICES`, and PyTorch on ROCm reads it. Hence `info`: the ROCm 10 docs list
    only the HIP name, and an inherited `HIP_VISIBLE_DEVICES` overrides the CUDA name.

    ## Example
    ```python
    # launch.sh
    export CUDA_VISIBLE_DEVICES=0,1
    CUDA_VISIBLE_DEVICES=0 python train.py
    ```

    ## Fix
    ```python
    # launch.sh
    export CUDA_VISIBLE_DEVICES=0,1 HIP_VISIBLE_DEVICES=0,1
    CUDA_VISIBLE_DEVICES=0 HIP_VISIBLE_DEVICES=0 python train.py
    ```
    Compose list and map entries and `ENV NAME value` lines get a new line below;
    `docker run -e CUDA_VISIBLE_DEVICES` gets `-e HIP_VISIBLE_DEVICES`.

    ## Fix safety
    Safe: the same value is copied (only simple values: no command substitution), and
    nothing on an NVIDIA machine reads `HIP_VISIBLE_DEVICES`.

    ## References
    - ROCm/HIP `docs/reference/env_variables/gpu_isolation_hip_env.rst`
    """

    code = "ROC710"
    name = "shell-cuda-visible-devices-without-hip"
    category = "env-var"
    severity = Severity.INFO
    aggregate = "file"
    message = "`CUDA_VISIBLE_DEVICES` is set but `HIP_VISIBLE_DEVICES` is not"
    fix_title = "Also set `HIP_VISIBLE_DEVICES` to the same value"
    applicability = Applicability.SAFE
    fact = "§6 CUDA_VISIBLE_DEVICES; [E1][E2][P2]"
    triggers = ("CUDA_VISIBLE_DEVICES",)
    effort_hours = 0.1
    cuda_name = "CUDA_VISIBLE_DEVICES"
    valid = [
        Valid("export CUDA_VISIBLE_DEVICES=0\nexport HIP_VISIBLE_DEVICES=0\n", path="run.sh"),
        Valid("# export CUDA_VISIBLE_DEVICES=0\n", path="run.sh"),
        Valid('echo "GPUs: $CUDA_VISIBLE_DEVICES"\n', path="run.sh"),
        Valid("export MY_CUDA_VISIBLE_DEVICES=0\n", path="run.sh"),
    ]
    invalid = [
        Invalid(
            "#!/bin/bash\nexport CUDA_VISIBLE_DEVICES=0,1\n",
            fixed="#!/bin/bash\nexport CUDA_VISIBLE_DEVICES=0,1 HIP_VISIBLE_DEVICES=0,1\n",
            path="launch.sh",
            line=2,
            column=8,
        ),
        Invalid(
            "CUDA_VISIBLE_DEVICES=$GPU python train.py\n",
            fixed="CUDA_VISIBLE_DEVICES=$GPU HIP_VISIBLE_DEVICES=$GPU python train.py\n",
            path="run.sh",
        ),
        Invalid(
            "services:\n  app:\n    environment:\n      - CUDA_VISIBLE_DEVICES=0\n",
            fixed="services:\n  app:\n    environment:\n      - CUDA_VISIBLE_DEVICES=0\n"
            "      - HIP_VISIBLE_DEVICES=0\n",
            path="docker-compose.yml",
        ),
        Invalid(
            'services:\n  app:\n    environment:\n      CUDA_VISIBLE_DEVICES: "0"\n',
            fixed='services:\n  app:\n    environment:\n      CUDA_VISIBLE_DEVICES: "0"\n'
            '      HIP_VISIBLE_DEVICES: "0"\n',
            path="docker-compose.yml",
        ),
        Invalid(
            "FROM x\nENV CUDA_VISIBLE_DEVICES 0\n",
            fixed="FROM x\nENV CUDA_VISIBLE_DEVICES 0\nENV HIP_VISIBLE_DEVICES 0\n",
            path="Dockerfile",
        ),
        Invalid(
            "docker run --rm \\\n  -e CUDA_VISIBLE_DEVICES \\\n  img\n",
            fixed="docker run --rm \\\n"
            "  -e CUDA_VISIBLE_DEVICES -e HIP_VISIBLE_DEVICES \\\n  img\n",
            path="run.sh",
        ),
        Invalid(
            "jobs:\n  t:\n    env:\n      CUDA_VISIBLE_DEVICES: 0\n",
            fixed="jobs:\n  t:\n    env:\n"
            "      CUDA_VISIBLE_DEVICES: 0\n      HIP_VISIBLE_DEVICES: 0\n",
            path=".github/workflows/ci.yml",
        ),
        Invalid("export CUDA_VISIBLE_DEVICES=$(pick_gpus)\n", path="run.sh"),
        Invalid(
            "export CUDA_VISIBLE_DEVICES=${GPUS:-0}\n",
            fixed="export CUDA_VISIBLE_DEVICES=${GPUS:-0} HIP_VISIBLE_DEVICES=${GPUS:-0}\n",
            path="run.sh",
        ),
    ]


class ShellCudaLaunchBlockingWithoutHip(_TextPaired):
    """
    ## What it does
    Flags `CUDA_LAUNCH_BLOCKING` set in shell scripts, Dockerfiles, compose and CI files when
    `HIP_LAUNCH_BLOCKING` (or `AMD_SERIALIZE_KERNEL`) is not set on the same or next line.

    ## Why it breaks on ROCm
    Whether HIP reads `CUDA_LAUNCH_BLOCKING` is undocumented; HIP's variable is
    `HIP_LAUNCH_BLOCKING` (same as `AMD_SERIALIZE_KERNEL`), so the requested synchronous
    launches silently stay asynchronous.

    ## Example
    ```python
    # debug.sh
    CUDA_LAUNCH_BLOCKING=1 python train.py
    ```

    ## Fix
    ```python
    # debug.sh
    CUDA_LAUNCH_BLOCKING=1 HIP_LAUNCH_BLOCKING=1 python train.py
    ```

    ## Fix safety
    Safe: the same simple value is copied and CUDA never reads the HIP variable.

    ## References
    - ROCm/HIP `docs/reference/env_variables/debug_hip_env.rst`
    """

    code = "ROC711"
    name = "shell-cuda-launch-blocking-without-hip"
    category = "env-var"
    severity = Severity.INFO
    aggregate = "file"
    message = "`CUDA_LAUNCH_BLOCKING` is set but `HIP_LAUNCH_BLOCKING` is not"
    fix_title = "Also set `HIP_LAUNCH_BLOCKING` to the same value"
    applicability = Applicability.SAFE
    fact = "§6 CUDA_LAUNCH_BLOCKING; [E3]"
    triggers = ("CUDA_LAUNCH_BLOCKING",)
    effort_hours = 0.1
    cuda_name = "CUDA_LAUNCH_BLOCKING"
    valid = [
        Valid("CUDA_LAUNCH_BLOCKING=1 AMD_SERIALIZE_KERNEL=3 python t.py\n", path="run.sh"),
        Valid("# CUDA_LAUNCH_BLOCKING=1 for debugging\n", path="run.sh"),
        Valid('echo "$CUDA_LAUNCH_BLOCKING"\n', path="run.sh"),
        Valid("export CUDA_LAUNCH_BLOCKING=0\n", path="run.sh"),
    ]
    invalid = [
        Invalid(
            "export CUDA_LAUNCH_BLOCKING=1\n",
            fixed="export CUDA_LAUNCH_BLOCKING=1 HIP_LAUNCH_BLOCKING=1\n",
            path="run.sh",
            column=8,
        ),
        Invalid(
            "FROM x\nENV CUDA_LAUNCH_BLOCKING=1\n",
            fixed="FROM x\nENV CUDA_LAUNCH_BLOCKING=1 HIP_LAUNCH_BLOCKING=1\n",
            path="Dockerfile",
        ),
    ]


class _TextVariables(TextRule):
    abstract = True
    file_kinds = _TEXT_KINDS


class ShellCudaHome(_TextVariables):
    """
    ## What it does
    Flags `CUDA_HOME` / `CUDA_PATH` set or expanded (`$CUDA_HOME/bin/nvcc`) in shell scripts,
    Dockerfiles, compose and CI files.

    ## Why it breaks on ROCm
    ROCm is not located through these variables: PyTorch's extension builder looks at
    `ROCM_HOME`, then `ROCM_PATH`, then `hipcc`, then `/opt/rocm`, and paths below a CUDA root
    (`bin/nvcc`, `lib64`) do not exist in a ROCm install.

    ## Example
    ```python
    # Dockerfile
    ENV CUDA_HOME=/usr/local/cuda
    ENV PATH=$CUDA_HOME/bin:$PATH
    ```

    ## Manual migration
    Set `ROCM_PATH` (usually `/opt/rocm`) in ROCm images and put `$ROCM_PATH/bin` on `PATH`;
    replace `nvcc` invocations with `hipcc` or let `torch.utils.cpp_extension` hipify.

    ## References
    - pytorch/pytorch `torch/utils/cpp_extension.py` (`_find_rocm_home`)
    """

    code = "ROC712"
    name = "shell-cuda-home"
    category = "env-var"
    severity = Severity.WARNING
    aggregate = "file"
    message = "`CUDA_HOME`/`CUDA_PATH` do not locate ROCm; ROCm uses `ROCM_PATH` (/opt/rocm)"
    fact = "§6 CUDA_HOME / CUDA_PATH; [P9]"
    triggers = ("CUDA_HOME", "CUDA_PATH")
    effort_hours = 0.25
    valid = [
        Valid("export ROCM_PATH=/opt/rocm\n", path="run.sh"),
        Valid("# CUDA_HOME=/usr/local/cuda\n", path="run.sh"),
        Valid("echo set CUDA_HOME first\n", path="run.sh"),
    ]
    invalid = [
        Invalid("FROM x\nENV CUDA_HOME=/usr/local/cuda\n", path="Dockerfile", line=2, column=5),
        Invalid("export PATH=$CUDA_HOME/bin:$PATH\n", path="run.sh", column=13),
        Invalid(
            "export CUDA_PATH=/usr/local/cuda LD_LIBRARY_PATH=$CUDA_PATH/lib64\n",
            path="run.sh",
            count=1,
        ),
    ]

    def check(self) -> None:
        seen_lines: set[int] = set()
        hits: list[tuple[int, str, str]] = []
        for name in ("CUDA_HOME", "CUDA_PATH"):
            for setting in find_settings(self.ctx.text, name):
                hits.append((setting.start, name, "set"))
            for offset in find_reads(self.ctx.text, name):
                hits.append((offset, name, "read"))
        for start, name, kind in sorted(hits):
            line, _ = self.ctx.position(start)
            if line in seen_lines:
                continue
            seen_lines.add(line)
            if kind == "set":
                message = (
                    f"`{name}` does not locate ROCm (torch reads `ROCM_HOME`/`ROCM_PATH`, "
                    "default /opt/rocm); set `ROCM_PATH` in ROCm images"
                )
            else:
                message = (
                    f"`${name}` does not locate ROCm; paths below a CUDA root (bin/nvcc, lib64) "
                    "do not exist there: use `$ROCM_PATH` (/opt/rocm) and hipcc"
                )
            end = start + len(name) + (1 if kind == "read" else 0)
            self.report(start, end, message=message)


class ShellCudaOnlyEnvVar(_TextVariables):
    """
    ## What it does
    Flags `TORCH_CUDA_ARCH_LIST`, `TORCH_USE_CUDA_DSA`, `NVIDIA_VISIBLE_DEVICES` and
    `NVIDIA_DRIVER_CAPABILITIES` set in shell scripts, Dockerfiles, compose and CI files.

    ## Why it breaks on ROCm
    None of them has an effect on ROCm: extension builds target `PYTORCH_ROCM_ARCH` (default:
    the archs torch was built for), device-side asserts are compiled out of ROCm builds, and
    the `NVIDIA_*` variables are read only by the NVIDIA container toolkit.

    ## Example
    ```python
    # Dockerfile
    ENV TORCH_CUDA_ARCH_LIST="8.0;9.0"
    ```

    ## Manual migration
    ```python
    # Dockerfile
    ENV PYTORCH_ROCM_ARCH="gfx90a;gfx942"
    ```
    Choose the gfx targets of the GPUs you deploy on (MI210/MI250: gfx90a, MI300X: gfx942,
    MI355X: gfx950). Containers get AMD GPUs through `--device /dev/kfd --device /dev/dri`.

    ## References
    - pytorch/pytorch `torch/utils/cpp_extension.py`
    - rocm.docs.amd.com "Running ROCm Docker containers"
    """

    code = "ROC713"
    name = "shell-cuda-only-env-var"
    category = "env-var"
    severity = Severity.WARNING
    aggregate = "file"
    message = "This CUDA environment variable has no effect on ROCm"
    fact = "§6 TORCH_CUDA_ARCH_LIST, TORCH_USE_CUDA_DSA rows; §9 docker row; [P9][P1][C1]"
    triggers = (
        "TORCH_CUDA_ARCH_LIST",
        "TORCH_USE_CUDA_DSA",
        "NVIDIA_VISIBLE_DEVICES",
        "NVIDIA_DRIVER_CAPABILITIES",
    )
    effort_hours = 0.25
    valid = [
        Valid('ENV PYTORCH_ROCM_ARCH="gfx942"\n', path="Dockerfile"),
        Valid("# TORCH_CUDA_ARCH_LIST=8.0\n", path="run.sh"),
        Valid('echo "$TORCH_CUDA_ARCH_LIST"\n', path="run.sh"),
    ]
    invalid = [
        Invalid(
            'FROM x\nENV TORCH_CUDA_ARCH_LIST="8.0;9.0"\n', path="Dockerfile", line=2, column=5
        ),
        Invalid(
            "services:\n  a:\n    environment:\n      - NVIDIA_VISIBLE_DEVICES=all\n",
            path="docker-compose.yml",
        ),
        Invalid("TORCH_CUDA_ARCH_LIST='8.0' pip install .\n", path="build.sh"),
    ]

    def check(self) -> None:
        table = _table()["cuda_only"]
        for name, entry in table.items():
            if name not in self.ctx.text:
                continue
            for setting in find_settings(self.ctx.text, name):
                self.report(
                    setting.start,
                    setting.start + len(name),
                    message=(
                        f"`{name}` has no effect on ROCm ({entry['why']}); use {entry['instead']}"
                    ),
                )
