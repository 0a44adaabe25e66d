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
(``classify``), are ``migrator.guard_conditions``.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterable

import libcst as cst

from migrator.astutil import handler_types
from migrator.guard_conditions import (
    AVAILABILITY,
    IMPORT_FALLBACK,
    IMPORT_FLAG,
    NON_LINUX,
    NVIDIA_ONLY,
    ROCM_ONLY,
    ConditionClassifier,
    Holds,
    identifier,
)
from migrator.imports import dotted_name

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
        module: cst.Module | None = None,
    ) -> None:
        self._conditions = ConditionClassifier(resolve, self._is_flag)
        self._parents = parents
        self._module = module
        self._flags: frozenset[str] | None = None
        #: id(function) -> its local names that copy an availability test
        #: (``use_flash = HAS_FLASH and not cfg.no_flash``)
        self._local_flags: dict[int, frozenset[str]] = {}
        self._entering: cst.CSTNode | None = None
        self.regions: dict[int, str] = {}

    def _is_flag(self, name: cst.Name) -> bool:
        """Whether ``name`` reads an availability flag: a module-level one
        (``availability_flags``) not shadowed in its function, or a local copy of an
        availability test made once in its function."""
        # the node being entered: the names of its test are not in ``parents`` yet
        scope = self._entering
        function = scope if isinstance(scope, cst.FunctionDef) else self._function_of(scope)
        if function is not None:
            local = self._local_flags.get(id(function))
            if local is not None and name.value in local:
                return True
            if name.value in _bound_names(function):
                return False  # a parameter or local of the same name
        if self._flags is None:
            self._flags = availability_flags(self._module) if self._module else frozenset()
        return name.value in self._flags

    def _function_of(self, node: cst.CSTNode | None) -> cst.FunctionDef | None:
        if node is None:
            return None
        current = self._parents.get(id(node))
        while current is not None:
            if isinstance(current, cst.FunctionDef):
                return current
            current = self._parents.get(id(current))
        return None

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
            self._entering = node
            handler(self, node, parent)

    def _mark(self, region: cst.CSTNode | None, label: Holds) -> None:
        if label == IMPORT_FLAG:
            return  # an import flag guards only an ``if``/ternary with a fallback (``_if``)
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
        if when_true == IMPORT_FLAG:
            # ``if HAS_FLASH: flash(...) else: sdpa(...)``: the branch runs only where the
            # import worked, and the ``else`` is the project's own path elsewhere
            # (or, after ``if HAS_FLASH: return flash(...)``, the statements that follow)
            fallback = isinstance(node, cst.If) and (
                (node.orelse is not None and not _else_raises(node))
                or (
                    node.orelse is None
                    and _returns(node.body)
                    and parent is not None
                    and bool(_following(parent, node))
                )
            )
            when_true = AVAILABILITY if fallback else None
        self._mark(node.body, when_true)
        if node.orelse is not None:
            self._mark(node.orelse, when_false)
        if isinstance(node, cst.If) and parent is not None and _exits(node.body):
            for statement in _following(parent, node):
                self._mark(statement, when_false)

    def _if_exp(self, node: cst.CSTNode, parent: cst.CSTNode | None) -> None:
        assert isinstance(node, cst.IfExp)
        when_true, when_false = self.classify(node.test)
        if when_true == IMPORT_FLAG:
            when_true = AVAILABILITY  # a ternary always has its other value
        self._mark(node.body, when_true)
        self._mark(node.orelse, when_false)

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
        if isinstance(node, cst.FunctionDef):
            self._learn_local_flags(node)
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

    def _learn_local_flags(self, function: cst.FunctionDef) -> None:
        """Local names the function assigns once, at its top level, from a test that holds
        only where an optional import worked (``use_flash = HAS_FLASH and not cfg.no_flash``):
        ``if use_flash:`` is then an availability test too."""
        counts: dict[str, int] = {}
        for bound in _assigned(function.body):
            counts[bound] = counts.get(bound, 0) + 1
        parameters = {param.name.value for param in _parameters(function)}
        found: set[str] = set()
        for statement in function.body.body if isinstance(function.body, cst.IndentedBlock) else ():
            if not isinstance(statement, cst.SimpleStatementLine):
                continue
            for small in statement.body:
                if not (isinstance(small, cst.Assign) and len(small.targets) == 1):
                    continue
                target = small.targets[0].target
                if not isinstance(target, cst.Name) or target.value in parameters:
                    continue
                if counts.get(target.value) != 1:
                    continue
                if self.classify(small.value)[0] in (AVAILABILITY, IMPORT_FLAG):
                    found.add(target.value)
        if found:
            self._local_flags[id(function)] = frozenset(found)


def availability_flags(module: cst.Module) -> frozenset[str]:
    """Module-level names that are true only where an optional import worked: set to ``True``
    in the body (after the import) or the ``else`` of a ``try`` that imports a package which
    is not always present and whose handler catches the import's failure without raising, and
    otherwise only ever set to ``False`` or ``None`` (before the ``try``, in its handler).
    ``if HAS_FLASH_ATTN:`` then tests the package's availability like
    ``is_flash_attn_available()``."""
    truths: set[str] = set()
    others: set[str] = set()

    def block(statements: Iterable[cst.CSTNode], imported: bool, optional: bool) -> bool:
        """Sort the assignments of ``statements``; ``imported``: an optional import already
        worked on the way here; ``optional``: inside the body of a ``try`` that falls back when
        its import fails (only there does an import make the lines after it conditional)."""
        for statement in statements:
            if isinstance(statement, cst.SimpleStatementLine):
                for small in statement.body:
                    if isinstance(small, (cst.Import, cst.ImportFrom)):
                        if optional and not _always_present(statement):
                            imported = True
                    elif isinstance(small, (cst.Assign, cst.AnnAssign, cst.AugAssign)):
                        _note(small, imported, truths, others)
            elif isinstance(statement, cst.If):
                block(_suite(statement.body), imported, optional)
                orelse = statement.orelse
                while orelse is not None:
                    block(_suite(orelse.body), imported, optional)
                    orelse = orelse.orelse if isinstance(orelse, cst.If) else None
            elif isinstance(statement, cst.Try):
                falls_back = any(
                    _caught(handler) & _IMPORT_ERRORS and not _raises(handler.body)
                    for handler in statement.handlers
                )
                worked = block(_suite(statement.body), imported, optional or falls_back)
                for handler in statement.handlers:
                    block(_suite(handler.body), imported, optional)
                if statement.orelse is not None:
                    block(_suite(statement.orelse.body), worked, optional)
                if statement.finalbody is not None:
                    block(_suite(statement.finalbody.body), imported, optional)
            elif isinstance(statement, (cst.With, cst.For, cst.While)):
                block(_suite(statement.body), imported, optional)
        return imported

    block(module.body, False, False)
    # a function that declares the name ``global`` and binds it may change it after the import
    for node in _walk(module):
        if isinstance(node, cst.FunctionDef):
            declared = {
                item.name.value
                for statement in _walk(node.body)
                if isinstance(statement, cst.Global)
                for item in statement.names
            }
            others.update(declared & set(_assigned(node.body)))
    return frozenset(truths - others)


def _note(
    small: cst.BaseSmallStatement, imported: bool, truths: set[str], others: set[str]
) -> None:
    """Sort one module-level assignment: ``NAME = True`` after an optional import, ``NAME =
    False``/``None`` (neither), anything else."""
    if isinstance(small, cst.Assign):
        targets = [target.target for target in small.targets]
        value: cst.BaseExpression | None = small.value
    elif isinstance(small, cst.AnnAssign):
        targets, value = [small.target], small.value
    else:
        assert isinstance(small, cst.AugAssign)
        targets, value = [small.target], None
    constant = value.value if isinstance(value, cst.Name) else None
    for target in targets:
        if not isinstance(target, cst.Name):
            continue
        if constant == "True" and imported:
            truths.add(target.value)
        elif constant not in ("False", "None"):
            others.add(target.value)


def _suite(body: cst.BaseSuite) -> Iterable[cst.CSTNode]:
    if isinstance(body, cst.IndentedBlock):
        return body.body
    if isinstance(body, cst.SimpleStatementSuite):
        return [cst.SimpleStatementLine(body=body.body)]
    return ()


def _walk(node: cst.CSTNode) -> Iterable[cst.CSTNode]:
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(current.children)


def _parameters(function: cst.FunctionDef) -> list[cst.Param]:
    params = function.params
    out = [*params.posonly_params, *params.params, *params.kwonly_params]
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            out.append(star)
    return out


def _assigned(body: cst.CSTNode) -> list[str]:
    """Names a function body binds (assignments, loop and ``with`` targets), nested functions
    excluded; one entry per binding."""
    out: list[str] = []
    stack: list[cst.CSTNode] = list(body.children)
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        targets: list[cst.BaseExpression] = []
        if isinstance(node, cst.Assign):
            targets = [target.target for target in node.targets]
        elif isinstance(node, (cst.AnnAssign, cst.AugAssign)):
            targets = [node.target]
        elif isinstance(node, (cst.For, cst.CompFor)):
            targets = [node.target]
        elif isinstance(node, cst.AsName):
            targets = [node.name]
        elif isinstance(node, cst.NamedExpr):
            targets = [node.target]
        for target in targets:
            if isinstance(target, cst.Name):
                out.append(target.value)
            elif isinstance(target, (cst.Tuple, cst.List)):
                out.extend(
                    element.value.value
                    for element in target.elements
                    if isinstance(element.value, cst.Name)
                )
        stack.extend(node.children)
    return out


def _bound_names(function: cst.FunctionDef) -> frozenset[str]:
    """The parameters and local names of ``function`` (names a ``global`` statement declares
    excluded)."""
    declared: set[str] = set()
    for node in _walk(function.body):
        if isinstance(node, cst.Global):
            declared.update(item.name.value for item in node.names)
    names = {param.name.value for param in _parameters(function)} | set(_assigned(function.body))
    return frozenset(names - declared)


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


def _returns(block: cst.BaseSuite) -> bool:
    """Whether a block ends with a ``return``."""
    if isinstance(block, cst.IndentedBlock):
        if not block.body:
            return False
        last = block.body[-1]
        smalls = last.body if isinstance(last, cst.SimpleStatementLine) else []
    elif isinstance(block, cst.SimpleStatementSuite):
        smalls = block.body
    else:
        return False
    return any(isinstance(small, cst.Return) for small in smalls)


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
