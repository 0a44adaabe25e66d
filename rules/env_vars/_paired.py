"""The shared matcher of ROC700/ROC701: a CUDA variable written without its HIP counterpart."""

from __future__ import annotations

import re
from typing import Any, ClassVar, cast

import libcst as cst

from migrator.api import Applicability, PythonContext, Rewrite
from migrator.api.knowledge import is_test_path
from migrator.api.syntax import string_value, syntax_children

from ._access import EnvAccess, _EnvAccessRule, _quote
from ._restore import find_save, restore_fix
from ._table import _table

#: a CUDA driver API entry point (``cuInit``, ``cuDeviceGetCount``): it reads the CUDA variables
#: itself and exists only in NVIDIA's ``libcuda``
_DRIVER_API = re.compile(r"cu[A-Z][A-Za-z0-9]+(?:_v\d+)?")


def _called_name(call: cst.Call) -> str:
    """The name a call calls (``f`` of ``f()`` and of ``lib.f()``), or ""."""
    func = call.func
    name = func.attr.value if isinstance(func, cst.Attribute) else getattr(func, "value", "")
    return name if isinstance(name, str) else ""


def _calls(ctx: PythonContext, function: cst.FunctionDef) -> list[cst.Call]:
    """The calls inside ``function`` (its body, decorators and defaults), read once per
    function: rules ask during the engine's walk, before the module's ``Tree`` exists, so the
    function's own nodes are walked (not the whole module again)."""
    found = cast(dict[int, list[cst.Call]], ctx.memo.setdefault("function-calls", {}))
    calls = found.get(id(function))
    if calls is None:
        calls = []
        stack: list[cst.CSTNode] = [function]
        while stack:
            node = stack.pop()
            if type(node) is cst.Call:  # by identity: a failing ``isinstance`` is slow here
                calls.append(node)
            stack.extend(syntax_children(node))
        found[id(function)] = calls
    return calls


class _PairedVariable(_EnvAccessRule, abstract=True):
    """Shared matcher of ROC700/ROC701: a write of ``cuda_name`` with no sibling write of a ROCm
    counterpart gets a following statement that copies the value."""

    cuda_name: ClassVar[str]

    def _entry(self) -> dict[str, Any]:
        return cast(dict[str, Any], _table()["paired"][self.cuda_name])

    def _read_by_cuda_driver(self, access: EnvAccess) -> bool:
        """The variable is set for the CUDA driver API called in the same function (a
        ``libcuda.cuInit()`` probe): HIP never reads what that code reads, so a HIP copy would
        change nothing; the driver calls are the ROCm problem, reported by their own rules."""
        scope = self.ctx.scope(access.node)
        if not isinstance(scope, cst.FunctionDef):
            return False
        # asked for every access: each function is read once per file
        found = self.ctx.memo.setdefault("cuda-driver-functions", {})
        assert isinstance(found, dict)
        if id(scope) not in found:
            found[id(scope)] = any(
                _DRIVER_API.fullmatch(_called_name(call)) for call in _calls(self.ctx, scope)
            )
        return bool(found[id(scope)])

    def _nvml_only_project(self) -> bool:
        """Whether the project's only GPU library is an NVML binding (a monitoring tool) and it
        declares no GPU compute framework: nothing in it has a ROCm path for a HIP copy to serve."""
        facts = self.ctx.project
        if facts is None:
            return False
        table = _table()["nvml_only"]
        declared = set(facts.ranges)
        return bool(declared & set(table["nvml"])) and not declared & set(table["compute"])

    def _parsed_by_project(self, access: EnvAccess) -> bool:
        """The same function hands the variable to the project's own parser of it
        (``Device.from_cuda_visible_devices()``), not to a GPU runtime."""
        scope = self.ctx.scope(access.node)
        if not isinstance(scope, cst.FunctionDef):
            return False
        variable = self.cuda_name.lower()
        return any(
            variable in _called_name(call).lower()
            and not (self.ctx.qualname(call.func) or "").startswith("torch.")
            for call in _calls(self.ctx, scope)
        )

    def _handled_in_function(self, access: EnvAccess, handled: list[str]) -> bool:
        """The enclosing function deals with the ROCm variable itself (reads, writes or pops it,
        often under its own ROCm check), so the project keeps the two in step already."""
        scope = self.ctx.scope(access.node)
        if not isinstance(scope, cst.FunctionDef):
            return False
        codes = self.ctx.memo.setdefault("function-code", {})
        assert isinstance(codes, dict)
        if id(scope) not in codes:
            codes[id(scope)] = self.ctx.code(scope)
        code = str(codes[id(scope)])
        return any(re.search(rf"[\"']{re.escape(name)}[\"']", code) for name in handled)

    def _test_data(self, access: EnvAccess) -> bool:
        """In a test, a plain mapping that names the variable is input for the code under test
        (a simulated host environment), not the environment of this process or of a child:
        adding the ROCm variable would change what the test checks. A mapping handed to a call
        (``env=``, ``patch.dict(os.environ, {...})``), spread from ``os.environ`` or bound to a
        name later passed as ``env=`` is an environment and stays reported."""
        if not is_test_path(self.ctx.path):
            return False
        if access.kind == "assign-other":
            target = access.node
            name = _mapping_name(target)
        elif access.kind == "dict-key" and access.mapping is not None:
            if any(isinstance(item, cst.StarredDictElement) for item in access.mapping.elements):
                return False
            parent = self.ctx.parent(access.mapping)
            if isinstance(parent, cst.Arg):
                return False
            target = access.mapping
            name = None
            if isinstance(parent, cst.Assign) and len(parent.targets) == 1:
                bound = parent.targets[0].target
                name = bound.value if isinstance(bound, cst.Name) else None
            elif isinstance(parent, cst.AnnAssign) and isinstance(parent.target, cst.Name):
                name = parent.target.value
        else:
            return False
        if name is None:
            return access.kind == "dict-key"
        scope = self.ctx.scope(target)
        code = self.ctx.code(scope)
        handed = (
            rf"(?<![\w.])env\s*=\s*{re.escape(name)}\b|patch\.dict\([^,()]+,\s*{re.escape(name)}\b"
        )
        return re.search(handed, code) is None

    def on_access(self, access: EnvAccess) -> None:
        if self._read_by_cuda_driver(access):
            return
        nvml_only = self._nvml_only_project()
        if nvml_only and self._parsed_by_project(access):
            return  # set for the project's own NVML/libcuda device parsing: HIP never reads it
        if access.kind in {"pop", "del"}:
            self._removal(access)
            return
        if access.kind not in {"assign", "assign-other", "setdefault", "putenv", "dict-key"}:
            return
        entry = self._entry()
        if access.block_writes & set(entry["handled"]):
            return
        if self._handled_in_function(access, entry["handled"]) or self._test_data(access):
            return
        if access.value is not None and string_value(access.value) in entry["off"]:
            return
        rocm = entry["add"]
        message = (
            f"`{self.cuda_name}` is set but `{rocm}` is not: {entry['why']}; set `{rocm}` "
            "to the same value"
        )
        if nvml_only:
            self.report(
                access.line or access.node,
                message=f"`{self.cuda_name}` is set but `{rocm}` is not: {entry['why']}; no "
                f"`{rocm}` copy is offered: this project reads GPUs only through NVML, which has "
                "no ROCm path, so the copy would serve nothing in it",
            )
            return
        replacement = None
        applicability = None
        line = access.line
        if access.kind == "dict-key" and access.mapping is not None:
            fixed = self._dict_fix(access, rocm)
            if fixed is not None:
                self.report(
                    access.mapping,
                    message=message,
                    fix=Rewrite(fixed, applicability=Applicability.UNSAFE),
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
                save = find_save(self.ctx, self.cuda_name, small.value)
                if save is not None:  # a restore: the HIP variable gets its own saved value
                    self._restore(access, line, save, mapping, quote, rocm, message)
                    return
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
            fix=Rewrite(replacement, applicability=applicability),
        )

    def _restore(
        self,
        access: EnvAccess,
        line: cst.SimpleStatementLine,
        save: Any,
        mapping: str,
        quote: str,
        rocm: str,
        message: str,
    ) -> None:
        """Report a restore of a saved CUDA value: the fix saves ``rocm`` beside the CUDA save
        and restores it from that copy (never from the CUDA value, which would overwrite a HIP
        value set before)."""
        fix = restore_fix(self.ctx, save, line, mapping, quote, rocm)
        restore = f"save `{rocm}` where `{self.cuda_name}` is saved and restore it beside it"
        if fix is None:
            self.report(access.node, message=f"{message}; this restores a saved value: {restore}")
            return
        replacement, extra = fix
        self.report(
            line,
            message=f"{message}; this restores a saved value: {restore}",
            fix=Rewrite(
                replacement,
                applicability=Applicability.UNSAFE if access.kind == "assign-other" else None,
                extra_edits=[extra],
            ),
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
            fix=Rewrite(replacement),
        )


def _mapping_name(node: cst.CSTNode) -> str | None:
    """``env`` in ``env["X"] = v`` (the statement or the subscript the access points at)."""
    for found in _subscripts(node):
        if isinstance(found.value, cst.Name):
            return found.value.value
    return None


def _subscripts(node: cst.CSTNode) -> list[cst.Subscript]:
    if isinstance(node, cst.Subscript):
        return [node]
    if isinstance(node, cst.SimpleStatementLine):
        node = node.body[0]
    if isinstance(node, cst.Assign):
        return [t.target for t in node.targets if isinstance(t.target, cst.Subscript)]
    return []
