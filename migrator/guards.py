"""Which code runs on a ROCm build: vendor-dispatched branches, import fallbacks, availability
probes, other vendors' accelerator branches (``is_torch_npu_available()``, rocm-facts §1) and
non-Linux platform branches, marked once per file during the engine's single walk.

The engine calls ``Guards.enter`` for every node before any rule visits it, so when a rule
visits a node, every guard around it (an enclosing ``if``, an earlier ``if ...: return`` in the
same block, an enclosing ``try``) is already known. Rules ask ``ctx.guards``:

- ``guard_of(node)``: why ``node`` never runs on a ROCm build ("" when it may run there);
- ``never_on_rocm(node)`` / ``only_on_rocm(node)``: the vendor question alone.

The engine itself hides findings whose node has a guard (``migrate scan --show-guarded`` shows
them, marked), so most rules need not ask at all.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable

import libcst as cst

from migrator.astutil import handler_types
from migrator.vendor_tokens import NVIDIA_TOKENS, ROCM_TOKENS

#: Guard labels (what ``guard_of`` answers). All of them mean "never runs on a ROCm build".
NVIDIA_ONLY = "NVIDIA-only branch"
NON_LINUX = "non-Linux platform branch"
IMPORT_FALLBACK = "import with a portable fallback"
AVAILABILITY = "availability probe"
OTHER_DEVICE = "another vendor's accelerator branch"
#: Not a guard (the code runs on ROCm), answered by ``only_on_rocm``.
ROCM_ONLY = "ROCm-only branch"

_ROCM_STRINGS = frozenset({"hip", "rocm", "amd"})
_NON_LINUX_STRINGS = frozenset({"win32", "cygwin", "darwin", "windows", "nt", "macos", "mac"})
_NON_LINUX_TOKENS = frozenset({"windows", "win32", "macos", "darwin", "osx", "mac"})
_PLATFORM_NAMES = frozenset(
    {"sys.platform", "os.name", "platform.system", "platform.platform", "platform.uname"}
)
_IMPORT_ERRORS = frozenset(
    {"ImportError", "ModuleNotFoundError", "Exception", "BaseException", "OSError"}
)
#: torch's CUDA toolkit location: set only where nvcc is found (rocm-facts §6, [P9]).
_CUDA_HOME = "torch.utils.cpp_extension.CUDA_HOME"
_BROAD_ERRORS = frozenset({"Exception", "BaseException"})
_PROBE_DEF = re.compile(r"^_*(is|has|check)_\w*(available|installed)$")
_PROBE_CALL = re.compile(r"^_*(is|has)_(\w+)_(available|installed)$")
#: Words of ``X`` in ``is_X_available()`` that make it a torch or hardware capability check
#: (true on ROCm builds too, or a decision a rule must see), not a package probe.
_PORTABLE_PROBES = frozenset(
    {"torch", "cuda", "gpu", "accelerate", "accelerator", "bf16", "fp16", "tf32", "fp8", "sdpa"}
)
#: Words of ``X`` in ``is_torch_X_available()`` naming another vendor's accelerator (Ascend NPU,
#: Intel XPU, Apple MPS, Habana HPU, Cambricon MLU, Moore Threads MUSA): never a ROCm device.
_OTHER_DEVICES = frozenset({"npu", "xpu", "mps", "hpu", "mlu", "musa"})
#: Words that make a name about CUDA devices too (``is_xpu_or_cuda``, ``xpu_or_gpu``).
_ALSO_CUDA = frozenset({"cuda", "gpu", "or", "accelerator", "any"})
#: NVIDIA data-center and workstation GPU model names as projects spell them in settings
#: (``h100_80gb``, ``a100-40g``, ``nvidia-l40s``, ``t4``).
_NVIDIA_GPU_NAME = re.compile(
    r"^(nvidia[ _-]?)?(a100|a10g?|a800|h100|h200|h800|b100|b200|gb200|v100|p100|l4|l40s?|t4)"
    r"(?![a-z])"
)
#: Test decorators that skip the test on a condition (``skipUnless``: unless it holds).
_SKIP_DECORATORS = frozenset({"skipif", "skipIf", "skipUnless"})
_CAMEL = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")

#: What a test being true (or false) proves about the build: None (nothing), or a label.
Holds = str | None


def tokens(name: str) -> list[str]:
    """Lower-case words of an identifier: ``isROCmBuild`` -> ``["is", "ro", "cm", "build"]``."""
    parts: list[str] = []
    for chunk in name.split("_"):
        parts.extend(match.group(0).lower() for match in _CAMEL.finditer(chunk))
    return parts


def identifier(node: cst.CSTNode) -> str | None:
    """The last identifier of a Name/Attribute/Call chain (``a.b.is_hip()`` -> ``is_hip``)."""
    if isinstance(node, cst.Call):
        node = node.func
    if isinstance(node, cst.Attribute):
        return node.attr.value
    if isinstance(node, cst.Name):
        return node.value
    return None


def _string(node: cst.BaseExpression) -> str | None:
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    return None


def _none(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"


def _never(label: Holds) -> bool:
    return label is not None and label != ROCM_ONLY


class Guards:
    """Per-file guard regions: ``id(node) -> label`` for subtrees (and statements) that only
    run under the guard, filled as the engine's walk enters guard-bearing nodes."""

    def __init__(
        self,
        resolve: Callable[[cst.CSTNode], str | None],
        parents: dict[int, cst.CSTNode],
    ) -> None:
        self._resolve = resolve
        self._parents = parents
        self.regions: dict[int, str] = {}
        #: Names a test of this file compared with "hip"/"rocm" so far (``DEVICE_TYPE == "hip"``):
        #: they hold the vendor, so comparing them with "cuda" is an NVIDIA-only test.
        self._vendor_names: set[str] = set()

    # ---------------------------------------------------------------- queries (for rules)

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

    # ---------------------------------------------------------------- the walk (for the engine)

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
            self._vendor_arms(node)
        when_true, when_false = self.classify(node.test)
        if when_true == AVAILABILITY and isinstance(node, cst.If) and _else_raises(node):
            # ``if is_x_available(): use_x() else: raise``: the branch is the opt-in itself;
            # without the package the run fails, so there is no portable fallback
            when_true = None
        self._mark(node.body, when_true)
        if node.orelse is not None:
            self._mark(node.orelse, when_false)
        if isinstance(node, cst.If) and parent is not None and _exits(node.body):
            for statement in _following(parent, node):
                self._mark(statement, when_false)

    def _vendor_arms(self, node: cst.If) -> None:
        """``if kind == "cuda": ... elif kind == "hip": ...``: a later arm that names the ROCm
        vendor makes ``kind`` a vendor name before the first arm is classified."""
        arm: cst.If | cst.Else | None = node.orelse
        while isinstance(arm, cst.If):
            test = arm.test
            if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
                target = test.comparisons[0]
                text = _string(target.comparator)
                if (
                    isinstance(target.operator, cst.Equal)
                    and text
                    and text.lower() in _ROCM_STRINGS
                ):
                    self._remember_vendor_name(test.left)
            arm = arm.orelse

    def _if_exp(self, node: cst.CSTNode, parent: cst.CSTNode | None) -> None:
        assert isinstance(node, cst.IfExp)
        when_true, when_false = self.classify(node.test)
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

    # ---------------------------------------------------------------- test classification

    def classify(self, test: cst.BaseExpression) -> tuple[Holds, Holds]:
        """(what holds when ``test`` is true, what holds when it is false)."""
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            when_true, when_false = self.classify(test.expression)
            return when_false, when_true
        if isinstance(test, cst.BooleanOperation):
            left = self.classify(test.left)
            right = self.classify(test.right)
            if isinstance(test.operator, cst.And):
                return left[0] or right[0], _either(left[1], right[1])
            return _either(left[0], right[0]), left[1] or right[1]
        if isinstance(test, cst.Call) and identifier(test) == "bool" and len(test.args) == 1:
            return self.classify(test.args[0].value)
        return self._atom(test)

    def _qualified(self, node: cst.BaseExpression) -> str | None:
        """The dotted name of ``node``; ``getattr(torch.version, "hip", None)`` reads as
        ``torch.version.hip`` (the spelling that also works on torch builds without it)."""
        if isinstance(node, (cst.Name, cst.Attribute)):
            return self._resolve(node)
        if isinstance(node, cst.Call) and identifier(node) == "getattr" and len(node.args) >= 2:
            attribute = _string(node.args[1].value)
            base = self._qualified(node.args[0].value)
            return f"{base}.{attribute}" if base and attribute else None
        return None

    def _atom(self, node: cst.BaseExpression) -> tuple[Holds, Holds]:
        qualified = self._qualified(node)
        if qualified == "torch.version.cuda":
            return NVIDIA_ONLY, None
        if qualified == "torch.version.hip":
            return ROCM_ONLY, NVIDIA_ONLY
        if qualified == _CUDA_HOME:
            # found only where the CUDA toolkit (nvcc) is installed, which a ROCm build lacks
            return NVIDIA_ONLY, None
        if isinstance(node, cst.Comparison):
            return self._comparison(node)
        if isinstance(node, cst.Call):
            probe = self._probe(node)
            if probe is not None:
                return probe
        name = identifier(node)
        if name is None:
            return None, None
        parts = set(tokens(name))
        if parts & ROCM_TOKENS:
            return ROCM_ONLY, NVIDIA_ONLY
        if parts & NVIDIA_TOKENS:
            return NVIDIA_ONLY, None
        if parts & _OTHER_DEVICES and not parts & _ALSO_CUDA:
            # ``if xpu_ok:``, ``if use_npu:``: another vendor's accelerator, never a ROCm GPU
            # (not ``_is_xpu_or_cuda_capability_atleast_8_9()``, true on CUDA devices too)
            return OTHER_DEVICE, None
        if parts & _NON_LINUX_TOKENS and ("is" in parts or name.isupper() or "on" in parts):
            return NON_LINUX, None
        return None, None

    def _probe(self, node: cst.Call) -> tuple[Holds, Holds] | None:
        qualified = self._resolve(node.func) or identifier(node) or ""
        if qualified.rsplit(".", 1)[-1] == "find_spec" or qualified == "importlib.find_loader":
            return AVAILABILITY, None
        parts = qualified.split(".")
        if len(parts) == 3 and parts[0] == "torch" and parts[1] in _OTHER_DEVICES:
            # ``torch.xpu.is_available()``: false on every ROCm build
            return (OTHER_DEVICE, None) if parts[2] == "is_available" else None
        match = _PROBE_CALL.match(qualified.rsplit(".", 1)[-1])
        words = set(match.group(2).lower().split("_")) if match else set()
        if words & _OTHER_DEVICES:
            return OTHER_DEVICE, None
        if match and not words & _PORTABLE_PROBES:
            return AVAILABILITY, None
        return None

    def _comparison(self, node: cst.Comparison) -> tuple[Holds, Holds]:
        if len(node.comparisons) != 1:
            return None, None
        left = node.left
        target = node.comparisons[0]
        operator = target.operator
        if _none(target.comparator):
            inner = self._atom(left)
            if inner == (None, None):
                return None, None
            if isinstance(operator, (cst.Is, cst.Equal)):
                # ``x is None``: true exactly when ``x`` is falsy (for these atoms)
                return inner[1], inner[0]
            if isinstance(operator, (cst.IsNot, cst.NotEqual)):
                return inner
            return None, None
        if isinstance(operator, (cst.In, cst.NotIn)):
            # ``"nvidia" in gpu_name``: no AMD device or vendor name contains it
            text = _string(left)
            if text is not None and text.lower() in NVIDIA_TOKENS:
                return (NVIDIA_ONLY, None) if isinstance(operator, cst.In) else (None, NVIDIA_ONLY)
            held = self._member_of(left, target.comparator)
            return held if isinstance(operator, cst.In) else (held[1], held[0])
        for one, other in ((left, target.comparator), (target.comparator, left)):
            text = _string(other)
            if text is None:
                continue
            lower = text.lower()
            if self._is_os(one):
                non_linux = lower in _NON_LINUX_STRINGS or lower.startswith(("win", "darwin"))
                if isinstance(operator, cst.Equal):
                    return (NON_LINUX if non_linux else None), (
                        NON_LINUX if lower == "linux" else None
                    )
                if isinstance(operator, cst.NotEqual):
                    return (NON_LINUX if lower == "linux" else None), (
                        NON_LINUX if non_linux else None
                    )
                return None, None
            if lower in _OTHER_DEVICES and isinstance(operator, cst.Equal):
                return OTHER_DEVICE, None  # ``device_type == "xpu"``
            if lower in _ROCM_STRINGS:
                self._remember_vendor_name(one)
                if isinstance(operator, cst.Equal):
                    return ROCM_ONLY, NVIDIA_ONLY
                if isinstance(operator, cst.NotEqual):
                    return NVIDIA_ONLY, ROCM_ONLY
            if _NVIDIA_GPU_NAME.match(lower) and set(tokens(identifier(one) or "")) & {
                "gpu",
                "device",
            }:
                # ``gpu_type == "h100_80gb"``: no AMD GPU carries an NVIDIA model name
                if isinstance(operator, cst.Equal):
                    return NVIDIA_ONLY, None
                if isinstance(operator, cst.NotEqual):
                    return None, NVIDIA_ONLY
            if lower in {"cuda", "nvidia"} and (_is_vendor(one) or self._holds_vendor(one)):
                if isinstance(operator, cst.Equal):
                    return NVIDIA_ONLY, None
                if isinstance(operator, cst.NotEqual):
                    return None, NVIDIA_ONLY
        return None, None

    def _member_of(
        self, left: cst.BaseExpression, collection: cst.BaseExpression
    ) -> tuple[Holds, Holds]:
        """``device_type in ("xpu", "hip")``: a vendor name tested against literal names. The
        test is false on ROCm when "hip" is not among them and the name holds the vendor."""
        if not isinstance(collection, (cst.Tuple, cst.List, cst.Set)) or _string(left) is not None:
            return None, None
        names = [_string(element.value) for element in collection.elements]
        if not names or any(name is None for name in names):
            return None, None
        lowered = {str(name).lower() for name in names}
        if lowered & _ROCM_STRINGS:
            self._remember_vendor_name(left)
            return (ROCM_ONLY if lowered <= _ROCM_STRINGS else None), NVIDIA_ONLY
        if lowered & {"cuda", "nvidia"} and self._holds_vendor(left):
            return NVIDIA_ONLY, None
        return None, None

    def _remember_vendor_name(self, node: cst.BaseExpression) -> None:
        key = _dotted(node)
        if key is not None:
            self._vendor_names.add(key)

    def _holds_vendor(self, node: cst.BaseExpression) -> bool:
        key = _dotted(node)
        return key is not None and key in self._vendor_names

    def _is_os(self, node: cst.BaseExpression) -> bool:
        target = node.func if isinstance(node, cst.Call) else node
        qualified = self._resolve(target) if isinstance(target, (cst.Name, cst.Attribute)) else None
        if qualified in _PLATFORM_NAMES:
            return True
        # ``sys.platform.lower()``, ``platform.system().lower()``
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            return self._is_os(node.func.value)
        return False


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
            dotted = _dotted(name)
            if dotted is None or dotted.split(".", 1)[0] not in _PRESENT:
                return False
    return True


def _either(one: Holds, other: Holds) -> Holds:
    """What holds when one of two tests holds: the same label, or, when both keep the code off
    ROCm builds for different reasons (a package probe, another vendor's device), the first."""
    if one == other:
        return one
    if one is None or other is None or ROCM_ONLY in (one, other):
        return None
    return one


def _dotted(node: cst.BaseExpression) -> str | None:
    """``a.b.c`` for a Name/Attribute chain, else None."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr.value}" if base else None
    return None


def _is_vendor(node: cst.BaseExpression) -> bool:
    name = identifier(node)
    return name is not None and bool(set(tokens(name)) & {"platform", "backend", "vendor"})


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
