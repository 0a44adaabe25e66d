"""Which code runs on a ROCm build: vendor-dispatched branches, import fallbacks, availability
probes, other vendors' accelerator branches (``is_torch_npu_available()``, rocm-facts §1) and
non-Linux platform branches, marked once per file during the engine's single walk.

The engine calls ``Guards.enter`` for every node before any rule visits it, so when a rule
visits a node, every guard around it (an enclosing ``if``, an earlier ``if ...: return`` in the
same block, an enclosing ``try``) is already known. Rules ask ``ctx.guards``:

- ``guard_of(node)``: why ``node`` never runs on a ROCm build ("" when it may run there);
- ``never_on_rocm(node)`` / ``only_on_rocm(node)``: the vendor question alone.

The engine itself hides findings whose node has a guard (``migrate scan --show-guarded`` shows
them, marked), so most rules need not ask at all. The labels, and what each condition proves
(``classify``), are ``migrator.reach.guard_conditions``.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterable

import libcst as cst

from migrator.reach.guard_conditions import (
    AVAILABILITY,
    IMPORT_FALLBACK,
    NON_LINUX,
    NVIDIA_ONLY,
    ROCM_ONLY,
    ConditionClassifier,
    Holds,
    identifier,
)
from migrator.syntax.astutil import handler_types
from migrator.syntax.imports import dotted_name

_IMPORT_ERRORS = frozenset(
    {"ImportError", "ModuleNotFoundError", "Exception", "BaseException", "OSError"}
)
_BROAD_ERRORS = frozenset({"Exception", "BaseException"})
_PROBE_DEF = re.compile(r"^_*(is|has|check)_\w*(available|installed)$")
#: Test decorators that skip the test on a condition (``skipUnless``: unless it holds).
_SKIP_DECORATORS = frozenset({"skipif", "skipIf", "skipUnless"})


def _never(label: Holds) -> bool:
    return label is not None and label != ROCM_ONLY


class Guards:
    """Per-file guard regions: ``id(node) -> label`` for subtrees (and statements) that only
    run under the guard, filled as the engine's walk enters guard-bearing nodes.

    Rules ask the queries (``label_of``, ``guard_of``, ``never_on_rocm``, ``only_on_rocm``,
    ``classify``); the engine calls ``enter`` for every node of its walk."""

    def __init__(
        self,
        resolve: Callable[[cst.CSTNode], str | None],
        parents: dict[int, cst.CSTNode],
        flag: Callable[[cst.CSTNode], str | None] | None = None,
        option: Callable[[cst.CSTNode], str | None] | None = None,
    ) -> None:
        self._conditions = ConditionClassifier(resolve, flag)
        self._parents = parents
        self.regions: dict[int, str] = {}
        #: how an opt-in backend option is spelled (``ImportTable.opt_in``), None for others
        self._option = option
        #: ``id(node)`` -> the opt-in option (off by default) a region runs only with: not a
        #: guard (a user may switch it on), but the default path runs without it
        self.opt_ins: dict[int, str] = {}

    def label_of(self, node: cst.CSTNode) -> str:
        """The innermost guard label around ``node`` (also ``ROCM_ONLY``), "" when none."""
        regions = self.regions
        if not regions:
            return ""
        current: cst.CSTNode | None = node
        parents = self._parents
        while current is not None:
            label = regions.get(id(current))
            if label is not None:
                return label
            current = parents.get(id(current))
        return ""

    def guard_of(self, node: cst.CSTNode) -> str:
        """Why ``node`` never runs on a ROCm build: a label such as ``NVIDIA_ONLY``, or ""."""
        regions = self.regions
        if not regions:
            return ""
        current: cst.CSTNode | None = node
        parents = self._parents
        while current is not None:
            label = regions.get(id(current))
            if label is not None and label != ROCM_ONLY:
                return label
            current = parents.get(id(current))
        return ""

    def never_on_rocm(self, node: cst.CSTNode) -> bool:
        """Whether a vendor or platform test keeps ``node`` off ROCm builds."""
        regions = self.regions
        current: cst.CSTNode | None = node
        while current is not None:
            label = regions.get(id(current))
            if label == NVIDIA_ONLY or label == NON_LINUX:
                return True
            current = self._parents.get(id(current))
        return False

    def opt_in_of(self, node: cst.CSTNode) -> str:
        """The opt-in option (off by default) that ``node`` runs only with, "" when none."""
        opt_ins = self.opt_ins
        if not opt_ins:
            return ""
        current: cst.CSTNode | None = node
        while current is not None:
            option = opt_ins.get(id(current))
            if option is not None:
                return option
            current = self._parents.get(id(current))
        return ""

    def _opt_in(self, test: cst.BaseExpression) -> tuple[str, bool] | None:
        """(the option, whether the test is true with it) when ``test`` reads an opt-in option:
        ``args.use_apex``, ``not self.use_xformers``, ``cfg.use_apex and fp16``."""
        if self._option is None:
            return None
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            inner = self._opt_in(test.expression)
            return (inner[0], not inner[1]) if inner is not None else None
        if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
            for side in (test.left, test.right):
                found = self._opt_in(side)
                if found is not None and found[1]:
                    return found
            return None
        option = self._option(test)
        return (option, True) if option else None

    def _mark_opt_in(
        self, test: cst.BaseExpression, body: cst.CSTNode, orelse: cst.CSTNode | None
    ) -> None:
        found = self._opt_in(test)
        if found is None:
            return
        option, when_true = found
        region = body if when_true else orelse
        if region is not None:
            self.opt_ins.setdefault(id(region), option)

    def only_on_rocm(self, node: cst.CSTNode) -> bool:
        """Whether ``node`` sits in a branch that only runs on a ROCm build."""
        return self.label_of(node) == ROCM_ONLY

    def classify(self, test: cst.BaseExpression) -> tuple[Holds, Holds]:
        """(what holds when ``test`` is true, what holds when it is false)."""
        return self._conditions.classify(test)

    def enter(self, node: cst.CSTNode, parent: cst.CSTNode | None) -> None:
        """Mark the regions a guard-bearing ``node`` controls (called in pre-order)."""
        handler = _HANDLERS.get(type(node))
        if handler is not None:
            handler(self, node, parent)

    def _mark(self, region: cst.CSTNode | None, label: Holds) -> None:
        if region is not None and label is not None:
            self.regions.setdefault(id(region), label)

    def _if(self, node: cst.CSTNode, parent: cst.CSTNode | None) -> None:
        assert isinstance(node, (cst.If, cst.While))
        if isinstance(node, cst.If):
            self._conditions.learn_vendor_arms(node)
        when_true, when_false = self.classify(node.test)
        if when_true == AVAILABILITY and isinstance(node, cst.If) and _else_raises(node):
            # ``if is_x_available(): use_x() else: raise``: the branch is the opt-in itself;
            # without the package the run fails, so there is no portable fallback
            when_true = None
        self._mark(node.body, when_true)
        if node.orelse is not None:
            self._mark(node.orelse, when_false)
        if isinstance(node, cst.If):
            self._mark_opt_in(node.test, node.body, node.orelse)
        if isinstance(node, cst.If) and parent is not None and _exits(node.body):
            for statement in _following(parent, node):
                self._mark(statement, when_false)

    def _if_exp(self, node: cst.CSTNode, parent: cst.CSTNode | None) -> None:
        assert isinstance(node, cst.IfExp)
        when_true, when_false = self.classify(node.test)
        self._mark(node.body, when_true)
        self._mark(node.orelse, when_false)
        self._mark_opt_in(node.test, node.body, node.orelse)

    def _boolean(self, node: cst.CSTNode, parent: cst.CSTNode | None) -> None:
        assert isinstance(node, cst.BooleanOperation)
        when_true, when_false = self.classify(node.left)
        self._mark(node.right, when_true if isinstance(node.operator, cst.And) else when_false)

    def _assert(self, node: cst.CSTNode, parent: cst.CSTNode | None) -> None:
        assert isinstance(node, cst.Assert)
        when_true, _ = self.classify(node.test)
        line = parent
        block = self._parents.get(id(line)) if line is not None else None
        if _never(when_true) and line is not None and block is not None:
            for statement in _following(block, line):
                self._mark(statement, when_true)

    def _try(self, node: cst.CSTNode, parent: cst.CSTNode | None) -> None:
        assert isinstance(node, cst.Try)
        caught: set[str] = set()
        portable = False
        for handler in node.handlers:
            names = _caught(handler)
            if names & _IMPORT_ERRORS and not _raises(handler.body):
                caught |= names
                portable = True
        if not portable or not isinstance(node.body, cst.IndentedBlock):
            return
        statements = node.body.body
        imports = [
            statement
            for statement in statements
            if isinstance(statement, cst.SimpleStatementLine)
            and any(isinstance(small, (cst.Import, cst.ImportFrom)) for small in statement.body)
        ]
        imports = [statement for statement in imports if not _always_present(statement)]
        if not imports:
            return
        if caught & _BROAD_ERRORS:
            # any failure of the optional code falls back: the whole body is the probe
            self._mark(node.body, IMPORT_FALLBACK)
            return
        for statement in imports:
            self._mark(statement, IMPORT_FALLBACK)

    def _function(self, node: cst.CSTNode, parent: cst.CSTNode | None) -> None:
        assert isinstance(node, (cst.FunctionDef, cst.ClassDef))
        if isinstance(node, cst.FunctionDef) and _PROBE_DEF.match(node.name.value):
            self._mark(node.body, AVAILABILITY)
        for decorator in node.decorators:
            # ``@pytest.mark.skipif(not is_x_available(), ...)``, ``@unittest.skipIf(...)``:
            # the test body runs only when the condition is false (``skipUnless``: true)
            call = decorator.decorator
            name = identifier(call) if isinstance(call, cst.Call) else None
            if not isinstance(call, cst.Call) or name not in _SKIP_DECORATORS or not call.args:
                continue
            when_true, when_false = self.classify(call.args[0].value)
            self._mark(node.body, when_true if name == "skipUnless" else when_false)


#: Modules present wherever the scanned code runs on a GPU: torch, and the standard library.
_PRESENT = frozenset({"torch"}) | frozenset(sys.stdlib_module_names)


def _always_present(statement: cst.SimpleStatementLine) -> bool:
    """Whether a line imports only torch or the standard library: ``try: import torch ...
    except Exception: return False`` guards a probe's failure, not an optional package, so
    its body runs on a ROCm build."""
    for small in statement.body:
        if isinstance(small, cst.Import):
            names = [alias.name for alias in small.names]
        elif isinstance(small, cst.ImportFrom) and small.module is not None and not small.relative:
            names = [small.module]
        else:
            return False
        for name in names:
            found = dotted_name(name)
            if found is None or found.split(".", 1)[0] not in _PRESENT:
                return False
    return True


def caught_with_fallback(
    node: cst.CSTNode, ancestors: Iterable[cst.CSTNode], errors: frozenset[str]
) -> bool:
    """Whether ``node`` sits in the body of a ``try`` of its own function (``ancestors``: its
    enclosing nodes, innermost first) that catches one of ``errors`` and falls back
    (``falls_back``): a failure there takes the project's own other path."""
    child = node
    for ancestor in ancestors:
        if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            return False
        if (
            isinstance(ancestor, cst.Try)
            and child is ancestor.body
            and falls_back(ancestor, errors)
        ):
            return True
        child = ancestor
    return False


def falls_back(node: cst.Try, errors: frozenset[str]) -> bool:
    """Whether a ``try`` catches one of ``errors`` (by class name, or a bare ``except``) in a
    handler that does not raise: a failure of its body takes the handler's path instead."""
    return any(
        _caught(handler) & (errors | _BROAD_ERRORS) and not _raises(handler.body)
        for handler in node.handlers
    )


def _caught(handler: cst.ExceptHandler) -> set[str]:
    kinds = handler_types(handler)
    if kinds is None:
        return {"BaseException"}
    names = set()
    for value in kinds:
        name = identifier(value)
        if name:
            names.add(name)
    return names


def _raises(body: cst.BaseSuite) -> bool:
    """Whether a handler body ends by raising (the fallback is an error, not a portable path)."""
    statements = body.body if isinstance(body, cst.IndentedBlock) else [body]
    if not statements:
        return False
    last = statements[-1]
    smalls = (
        last.body if isinstance(last, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) else []
    )
    return any(isinstance(small, cst.Raise) for small in smalls)


def _else_raises(node: cst.If) -> bool:
    """Whether the ``else`` of an ``if`` only raises."""
    orelse = node.orelse
    return isinstance(orelse, cst.Else) and _raises(orelse.body)


def _exits(block: cst.BaseSuite) -> bool:
    """Whether a block always leaves its enclosing block (return, raise, continue, exit...)."""
    if isinstance(block, cst.IndentedBlock):
        if not block.body:
            return False
        last = block.body[-1]
        smalls = last.body if isinstance(last, cst.SimpleStatementLine) else []
    elif isinstance(block, cst.SimpleStatementSuite):
        smalls = block.body
    else:
        return False
    for small in smalls:
        if isinstance(small, (cst.Return, cst.Raise, cst.Continue, cst.Break)):
            return True
        if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
            if identifier(small.value) in {"exit", "skip", "skipTest", "_exit"}:
                return True
    return False


def _following(block: cst.CSTNode, statement: cst.CSTNode) -> list[cst.CSTNode]:
    """Statements after ``statement`` in ``block`` (a Module or IndentedBlock)."""
    body = getattr(block, "body", None)
    if not isinstance(body, (list, tuple)):
        return []
    for index, item in enumerate(body):
        if item is statement:
            return list(body[index + 1 :])
    return []


_HANDLERS: dict[type, Callable[[Guards, cst.CSTNode, cst.CSTNode | None], None]] = {
    cst.If: Guards._if,
    cst.While: Guards._if,
    cst.IfExp: Guards._if_exp,
    cst.BooleanOperation: Guards._boolean,
    cst.Assert: Guards._assert,
    cst.Try: Guards._try,
    cst.FunctionDef: Guards._function,
    cst.ClassDef: Guards._function,
}

#: Node types whose entry may mark a region (the engine calls ``enter`` only for these).
GUARD_NODE_TYPES = frozenset(_HANDLERS)
