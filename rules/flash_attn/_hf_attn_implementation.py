"""The shared matcher of transformers ``attn_implementation`` values (ROC403, ROC404)."""

from __future__ import annotations

import re
from typing import Any

import libcst as cst

from migrator.api import Parsing, Problem, PythonRule, Rewrite
from migrator.api.knowledge import is_test_path
from migrator.api.syntax import fast_visit, syntax_children

from .._literals import is_literal, replace_string, string_nodes_with_value
from .._optional_backend import derived_flags, flag_name
from .._problems import FLASH_ATTN_BUILD
from ._table import _data

#: An ``if`` test naming a flash-attention switch, and availability probes (which are not).
_FLASH_SWITCH = re.compile(r"flash", re.IGNORECASE)

_PROBE = re.compile(r"avail|\bhas_|HAS_|import", re.IGNORECASE)


#: Code that packs several sequences into one row (padding-free batches, multipack).
_PACKING = re.compile(r"packing|flatten|padding_free|multipack|cu_seqlens", re.IGNORECASE)


class _HfAttnImplementation(PythonRule, abstract=True):
    """Shared matcher of transformers ``attn_implementation`` values (ROC403, ROC404)."""

    values_key = "fa2"
    # a value reaches the call through module-level names and the function around it decides
    # (its ``if`` tests); the comparisons that make a file dispatch on the name are read too
    parsing = Parsing(
        scope="names",
        scope_triggers=(*_data()["transformers"]["fa2"], *_data()["transformers"]["fa3"]),
    )

    def __init__(self, ctx: Any) -> None:
        super().__init__(ctx)
        self._dispatch: bool | None = None
        #: The node being visited when a value is checked (its ancestors are known).
        self._anchor: cst.CSTNode | None = None

    # -- where the literal can be

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Name) and func.value == "setattr" and len(node.args) >= 3:
            target = node.args[1].value
            if isinstance(target, cst.SimpleString) and "attn_impl" in str(target.evaluated_value):
                self._anchor = node
                self._check(node.args[2].value)
        names_option = any(
            isinstance(a.value, cst.SimpleString)
            and a.keyword is None
            and str(a.value.evaluated_value).replace("-", "_").find("attn_impl") >= 0
            for a in node.args
        )
        for argument in node.args:
            if argument.keyword is None:
                continue
            keyword = argument.keyword.value
            if keyword == "attn_implementation" or (names_option and keyword == "default"):
                self._anchor = node
                self._check(argument.value)
            elif keyword == "use_flash_attention_2" and self.values_key == "fa2":
                self._use_flash_attention_2(node, argument)

    def visit_DictElement(self, node: cst.DictElement) -> None:
        key = node.key
        if not isinstance(key, cst.SimpleString):
            return
        if str(key.evaluated_value).lstrip("_") == "attn_implementation":
            self._anchor = node
            self._check(node.value)

    def visit_Assign(self, node: cst.Assign) -> None:
        if any(self._names_attn(target.target) for target in node.targets):
            self._anchor = node
            self._check(node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None and self._names_attn(node.target):
            self._anchor = node
            self._check(node.value)

    def visit_Param(self, node: cst.Param) -> None:
        if node.default is not None and "attn_impl" in node.name.value:
            self._anchor = node
            self._check(node.default)

    @staticmethod
    def _names_attn(target: cst.BaseExpression) -> bool:
        if isinstance(target, cst.Name):
            return "attn_impl" in target.value.lower()
        if isinstance(target, cst.Attribute):
            return "attn_impl" in target.attr.value
        if isinstance(target, cst.Subscript) and len(target.slice) == 1:
            index = target.slice[0].slice
            if isinstance(index, cst.Index) and isinstance(index.value, cst.SimpleString):
                return "attn_impl" in str(index.value.evaluated_value)
        return False

    # -- reporting

    def _values(self) -> list[str]:
        values: list[str] = _data()["transformers"][self.values_key]
        return values

    def _check(self, value: cst.BaseExpression) -> None:
        if is_test_path(self.ctx.path):
            return  # a test exercises the project's FlashAttention path on purpose
        replacement_value: str = _data()["transformers"]["replacement"]
        probed = _probed_bodies(value, self.ctx.code)
        for string in string_nodes_with_value(value, self._values()):
            if id(string) in probed:
                continue  # already dispatched on an availability probe: portable
            requested = self._explicit_request(value, flag=True)
            if requested:
                self._report_request(string, requested)
                continue
            if self._is_dispatch_code():
                self.report(
                    string,
                    message=(
                        f"{self.message}; not rewritten: this file also compares "
                        "attn_implementation against flash-attention names, so change both sides "
                        "by hand"
                    ),
                )
                continue
            self._report_dispatch(string, replacement_value, value)

    def _report_dispatch(
        self, string: cst.SimpleString, fallback: str, value: cst.BaseExpression
    ) -> None:
        """Keep FlashAttention-2 where it is installed, fall back to ``fallback`` elsewhere; leave
        explicit user requests and packed-sequence code alone (they need FA2's varlen path)."""
        if self._probe_guarded(value, string):
            return  # an availability check chooses it: without flash_attn the other branch runs
        requested = self._explicit_request(value)
        if requested:
            self._report_request(string, requested)
            return
        if _PACKING.search(self.ctx.text):
            # the code needs FlashAttention itself: the project needs ROCm/flash-attention
            self.report(
                string,
                message=(
                    f"{self.message}; not rewritten: this file packs sequences, which relies on "
                    "FlashAttention's variable-length path (sdpa would attend across them)"
                ),
                problem=Problem(key=self._build_problem(), scope="project"),
            )
            return
        probe = f"is_flash_attn_{self.values_key[-1]}_available"
        imports: list[tuple[str, str | None]] = [("transformers.utils", probe)]
        test: cst.BaseExpression = cst.Call(func=cst.Name(probe))
        if not _imports_transformers_at_top(self.ctx.module):
            # keep transformers a lazy import here: ask importlib whether flash_attn is installed
            package = "flash_attn" if self.values_key == "fa2" else "flash_attn_3"
            test = cst.parse_expression(f'importlib.util.find_spec("{package}") is not None')
            imports = [("importlib.util", None)]
        expression = cst.IfExp(test=test, body=string, orelse=replace_string(string, fallback))
        if string is not value:  # inside `a if c else b` or `a or b`: keep the precedence
            expression = expression.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        self.report(
            string,
            fix=Rewrite(
                expression,
                imports=imports,
                requires={"transformers": "4.36" if self.values_key == "fa2" else "4.53"},
            ),
        )

    def _report_request(self, string: cst.SimpleString, requested: str) -> None:
        """The user asks for FlashAttention (``if use_flash_attention_2:``): on ROCm that needs
        the ROCm/flash-attention build, one problem with the project's flash-attn dependency
        (ROC808, anchored where the project declares it, else at the first such request)."""
        self.report(
            string,
            message=(
                f"{self.message}; not rewritten: `{requested}` asks for FlashAttention "
                "explicitly (on ROCm install ROCm/flash-attention or pass sdpa)"
            ),
            problem=Problem(key=self._build_problem(), scope="project"),
        )

    def _build_problem(self) -> str:
        """Where the code itself needs FlashAttention-2 (no portable rewrite), the problem is
        the project's need for the ROCm/flash-attention build: one finding with the flash-attn
        dependency (ROC808), anchored where the project declares it, else at the first site.
        FlashAttention-3 (Hopper-only) is another problem (no key)."""
        return FLASH_ATTN_BUILD if self.values_key == "fa2" else ""

    def _probe_guarded(self, value: cst.BaseExpression, string: cst.SimpleString) -> bool:
        """Whether ``string`` is the body of ``x if HAS_FLASH_ATTN else y`` (a portable
        fallback), the flag read directly or through a name every assignment of which is false
        without it (``use_flash = use_flash if has_flash_attn else False``)."""
        if not isinstance(value, cst.IfExp) or value.body is not string:
            return False
        return bool(_PROBE.search(self.ctx.code(value.test))) or self._probe_derived(value.test)

    def _probe_derived(self, test: cst.BaseExpression) -> bool:
        """Whether ``test`` is a name or attribute (``use_flash``, ``self.use_flash_attn``)
        that the module only ever sets to something false unless an availability flag holds."""
        name = flag_name(test)
        if name is None:
            return False
        derived = self.ctx.memo.get("hf-attn-probe-derived")
        if not isinstance(derived, frozenset):
            code = self.ctx.code
            derived = derived_flags(self.ctx.module, lambda node: bool(_PROBE.search(code(node))))
            self.ctx.memo["hf-attn-probe-derived"] = derived
        return name in derived

    def _explicit_request(self, value: cst.BaseExpression, flag: bool = False) -> str | None:
        """The test of an enclosing ``if`` that names a flash-attention switch
        (``if args.use_flash_attn:``, ``if backend == "flash":``), when there is one; with
        ``flag``, only a switch the user sets: a name or attribute named for it
        (``use_flash_attention_2``), not a comparison of the current choice with the string."""
        anchor = self._anchor
        enclosing: list[cst.CSTNode] = [value] if isinstance(value, cst.IfExp) else []
        if anchor is not None:
            enclosing += self.ctx.ancestors(anchor)
        for ancestor in enclosing:
            if isinstance(ancestor, cst.If | cst.IfExp):
                test = self.ctx.code(ancestor.test)
                if self._probe_derived(ancestor.test):
                    continue  # the switch is off wherever flash_attn failed to import
                if _FLASH_SWITCH.search(test) and not _PROBE.search(test):
                    if flag and not _names_flash_flag(ancestor.test):
                        continue
                    return test.strip()
        return None

    def _use_flash_attention_2(self, call: cst.Call, argument: cst.Arg) -> None:
        if is_literal(argument.value, False) or not self._is_hf_call(call):
            return
        if is_test_path(self.ctx.path):
            return
        base = (
            "`use_flash_attention_2=True` selects FlashAttention-2, which needs "
            "ROCm/flash-attention (and the flag is gone from transformers 5)"
        )
        if not is_literal(argument.value, True):
            self.report(argument, message=f"{base}; not rewritten: the value is not a literal")
            return
        keywords = {a.keyword.value for a in call.args if a.keyword is not None}
        if "attn_implementation" in keywords:
            self.report(
                argument,
                message=f"{base}; not rewritten: the call also passes attn_implementation",
            )
            return
        self.report(
            argument,
            message=base,
            fix=Rewrite(
                argument.with_changes(
                    keyword=cst.Name("attn_implementation"),
                    value=cst.parse_expression(
                        '"flash_attention_2" if is_flash_attn_2_available() else "sdpa"'
                    ),
                ),
                imports=[("transformers.utils", "is_flash_attn_2_available")],
                requires={"transformers": "4.36"},
            ),
        )

    def _is_hf_call(self, call: cst.Call) -> bool:
        data = _data()["transformers"]
        qualified = self.ctx.call_name(call) or ""
        if any(qualified.startswith(prefix) for prefix in data["hf_prefixes"]):
            return True
        return isinstance(call.func, cst.Attribute) and call.func.attr.value in data["hf_methods"]

    def _is_dispatch_code(self) -> bool:
        """Whether the file compares some value against a flash-attention implementation name
        (``== "flash_attention_2"``, ``in (...)``): then it dispatches on the name and rewriting
        only the assignment side would silently change which branch runs."""
        if self._dispatch is None:
            names = set(_data()["transformers"]["fa2"]) | set(_data()["transformers"]["fa3"])
            self._dispatch = _compares_against(self.ctx.module, names)
        return self._dispatch


def _imports_transformers_at_top(module: cst.Module) -> bool:
    """Whether the module imports transformers at module level (so a probe import costs nothing)."""
    for statement in module.body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.ImportFrom) and small.module is not None:
                    name = cst.Module([]).code_for_node(small.module)
                    if name == "transformers" or name.startswith("transformers."):
                        return True
                if isinstance(small, cst.Import) and any(
                    cst.Module([]).code_for_node(alias.name).split(".")[0] == "transformers"
                    for alias in small.names
                ):
                    return True
    return False


def _probed_bodies(value: cst.BaseExpression, code: Any) -> set[int]:
    """``id()`` of the bodies of ``x if is_..._available() else y`` expressions inside ``value``."""
    found: set[int] = set()
    stack: list[cst.CSTNode] = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.IfExp):
            test = code(node.test)
            if "_available(" in test or "find_spec(" in test:
                found.add(id(node.body))
        stack.extend(syntax_children(node))
    return found


def _compares_against(module: cst.Module, names: set[str]) -> bool:
    class _Finder(cst.CSTVisitor):
        found = False

        def visit_Comparison(self, node: cst.Comparison) -> None:
            parts: list[cst.BaseExpression] = [node.left] + [c.comparator for c in node.comparisons]
            for part in parts:
                elements: list[cst.BaseExpression] = [part]
                if isinstance(part, (cst.Tuple, cst.List, cst.Set)):
                    elements = [element.value for element in part.elements]
                for element in elements:
                    if isinstance(element, cst.SimpleString) and element.evaluated_value in names:
                        self.found = True

    finder = _Finder()
    fast_visit(module, finder, trivia=False)
    return finder.found


def _names_flash_flag(test: cst.BaseExpression) -> bool:
    """Whether a test reads a flag named for flash attention (``use_flash_attention_2``,
    ``args.use_flash_attn``): the user's switch, not the current backend compared with a name."""
    stack: list[cst.CSTNode] = [test]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Name) and "flash" in node.value.lower():
            return True
        if isinstance(node, cst.Attribute) and "flash" in node.attr.value.lower():
            return True
        stack.extend(syntax_children(node))
    return False
