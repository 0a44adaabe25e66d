"""ROC10x ``torch.version.cuda`` as a GPU test or parsed; ROC11x device gates (capability, name,
arch list, ``gcnArchName``) that misfire on AMD GPUs."""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import libcst as cst

from migrator.astutil import literal_value, module_ref
from migrator.context import PythonContext
from migrator.model import Applicability, Severity
from migrator.rule import Invalid, PythonRule, Valid
from migrator.ruledata import load_table

from ._detection_util import (
    Tree,
    alias_kind,
    assigned_value_aliases,
    guarded_regions,
    identifier,
    in_regions,
    in_try_catching,
    qualified_refs,
    statement_of,
    strings_in,
    tree,
    unreachable_on_rocm,
)

CUDA = "torch.version.cuda"
HIP = "torch.version.hip"


# --------------------------------------------------------------------------------------------
# torch.version.cuda analysis (shared by ROC101-ROC103)


@dataclass
class _Test:
    """A truth test of torch.version.cuda: ``atom`` is the ref itself or ``ref is [not] None``."""

    atom: cst.BaseExpression
    ref: cst.BaseExpression
    positive: bool  # true when the atom being true means "CUDA build"
    guards_parse: bool = False


@dataclass
class _Parse:
    node: cst.CSTNode
    ref: cst.BaseExpression
    what: str


@dataclass
class _VersionAnalysis:
    tests: list[_Test] = field(default_factory=list)
    parses: list[_Parse] = field(default_factory=list)
    rocm_aware: bool = False


def _is_ref(ctx: PythonContext, node: cst.CSTNode, name: str) -> bool:
    return isinstance(node, (cst.Name, cst.Attribute)) and ctx.qualname(node) == name


def _is_none(node: cst.CSTNode) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"


def _our_hip(ctx: PythonContext, tree_: Tree, hip: cst.CSTNode) -> bool:
    """Whether a ``torch.version.hip`` ref is the second half of this rule's own fix."""
    parent = tree_.parent(hip)
    if isinstance(parent, cst.BooleanOperation) and parent.right is hip:
        return isinstance(parent.operator, cst.Or) and _is_ref(ctx, parent.left, CUDA)
    if isinstance(parent, cst.Comparison) and parent.left is hip:
        grand = tree_.parent(parent)
        if isinstance(grand, cst.BooleanOperation) and grand.right is parent:
            left = grand.left
            return isinstance(left, cst.Comparison) and _is_ref(ctx, left.left, CUDA)
    return False


def _already_fixed(ctx: PythonContext, tree_: Tree, atom: cst.CSTNode) -> bool:
    parent = tree_.parent(atom)
    if not isinstance(parent, cst.BooleanOperation) or parent.left is not atom:
        return False
    right = parent.right
    if isinstance(right, cst.Comparison):
        right = right.left
    return _is_ref(ctx, right, HIP)


_ORDERING = (cst.LessThan, cst.LessThanEqual, cst.GreaterThan, cst.GreaterThanEqual)


def _version_analysis(ctx: PythonContext) -> _VersionAnalysis:
    tree_ = tree(ctx)
    cached = tree_.memo.get("cuda-version")
    if isinstance(cached, _VersionAnalysis):
        return cached
    analysis = _VersionAnalysis()
    tree_.memo["cuda-version"] = analysis
    callees = set(load_table("detection")["version_parse"]["callees"])

    direct = qualified_refs(ctx, tree_, {CUDA})
    aliases = assigned_value_aliases(
        tree_, lambda value, _: "cuda" if _is_ref(ctx, value, CUDA) else None
    )
    alias_refs = [
        node
        for node in tree_.nodes
        if isinstance(node, cst.Name) and alias_kind(tree_, aliases, node) == "cuda"
    ]
    analysis.rocm_aware = any(
        not _our_hip(ctx, tree_, hip) for hip in qualified_refs(ctx, tree_, {HIP})
    )
    for ref in [*direct, *alias_refs]:
        assert isinstance(ref, (cst.Name, cst.Attribute))
        _classify(ctx, tree_, ref, analysis, callees)

    parse_ids = {id(parse.ref) for parse in analysis.parses}
    for test in analysis.tests:
        truth = (1, 0) if test.positive else (0, 1)
        regions = {id(region) for region in guarded_regions(tree_, test.atom, truth)}
        if regions:
            for parse in analysis.parses:
                if id(parse.ref) in parse_ids and in_regions(tree_, parse.ref, regions):
                    test.guards_parse = True
                    break
    analysis.parses = [
        parse
        for parse in analysis.parses
        if not unreachable_on_rocm(ctx, tree_, parse.ref)
        and not in_try_catching(tree_, parse.ref, {"TypeError", "AttributeError", "ValueError"})
    ]
    return analysis


def _classify(
    ctx: PythonContext,
    tree_: Tree,
    ref: cst.Name | cst.Attribute,
    analysis: _VersionAnalysis,
    callees: set[str],
) -> None:
    parent = tree_.parent(ref)
    if isinstance(parent, cst.Comparison) and len(parent.comparisons) == 1:
        target = parent.comparisons[0]
        operator = target.operator
        if parent.left is ref and _is_none(target.comparator):
            if isinstance(operator, (cst.Is, cst.Equal, cst.IsNot, cst.NotEqual)):
                if not _already_fixed(ctx, tree_, parent):
                    positive = isinstance(operator, (cst.IsNot, cst.NotEqual))
                    analysis.tests.append(_Test(parent, ref, positive))
            return
        if isinstance(operator, _ORDERING) and not _is_none(target.comparator):
            analysis.parses.append(_Parse(parent, ref, "an ordering comparison raises TypeError"))
        elif isinstance(operator, (cst.In, cst.NotIn)) and target.comparator is ref:
            analysis.parses.append(_Parse(parent, ref, "`in` on it raises TypeError"))
        return
    if isinstance(parent, cst.Comparison):
        operators = [c.operator for c in parent.comparisons]
        if any(isinstance(op, _ORDERING) for op in operators):
            analysis.parses.append(_Parse(parent, ref, "an ordering comparison raises TypeError"))
        return
    if isinstance(parent, cst.Attribute) and parent.value is ref:
        analysis.parses.append(
            _Parse(parent, ref, f"`.{parent.attr.value}` on it raises AttributeError")
        )
        return
    if isinstance(parent, cst.Subscript) and parent.value is ref:
        analysis.parses.append(_Parse(parent, ref, "indexing it raises TypeError"))
        return
    if isinstance(parent, cst.BinaryOperation):
        if isinstance(parent.operator, cst.Modulo) and parent.right is ref:
            return  # "%s" % torch.version.cuda formats None fine
        analysis.parses.append(_Parse(parent, ref, "arithmetic on it raises TypeError"))
        return
    if isinstance(parent, cst.Arg) and parent.value is ref:
        call = tree_.parent(parent)
        if isinstance(call, cst.Call):
            name = identifier(call)
            if name in callees and parent.keyword is None:
                analysis.parses.append(_Parse(call, ref, f"`{name}()` of it raises TypeError"))
            elif name == "bool" and ctx.qualname(call.func) in (None, "bool"):
                analysis.tests.append(_Test(ref, ref, True))
        return
    if isinstance(parent, cst.BooleanOperation):
        if _already_fixed(ctx, tree_, ref):
            return
        if _in_test_context(tree_, ref) or (
            isinstance(parent.operator, cst.And) and parent.left is ref
        ):
            analysis.tests.append(_Test(ref, ref, True))
        return
    if isinstance(parent, cst.UnaryOperation) and isinstance(parent.operator, cst.Not):
        analysis.tests.append(_Test(ref, ref, True))
        return
    if isinstance(parent, (cst.If, cst.While, cst.Assert)) and parent.test is ref:
        analysis.tests.append(_Test(ref, ref, True))
        return
    if isinstance(parent, cst.IfExp) and parent.test is ref:
        analysis.tests.append(_Test(ref, ref, True))


def _in_test_context(tree_: Tree, node: cst.CSTNode) -> bool:
    """Whether a boolean chain around ``node`` is used for its truth value only."""
    current = node
    while True:
        parent = tree_.parent(current)
        if isinstance(parent, cst.BooleanOperation):
            current = parent
            continue
        if isinstance(parent, cst.UnaryOperation) and isinstance(parent.operator, cst.Not):
            return True
        if isinstance(parent, (cst.If, cst.While, cst.Assert, cst.IfExp)):
            return getattr(parent, "test", None) is current
        if isinstance(parent, cst.Arg):
            call = tree_.parent(parent)
            return isinstance(call, cst.Call) and identifier(call) == "bool"
        return False


def _hip_for(ctx: PythonContext, ref: cst.BaseExpression) -> tuple[cst.BaseExpression, list[Any]]:
    if (
        isinstance(ref, cst.Attribute)
        and ref.attr.value == "cuda"
        and ctx.qualname(ref.value) == "torch.version"
    ):
        return ref.with_changes(attr=cst.Name("hip"), lpar=[], rpar=[]), []
    name, imports = module_ref(ctx, "torch.version")
    return cst.parse_expression(f"{name}.hip"), imports


def _needs_parens(tree_: Tree, atom: cst.CSTNode, operator: type) -> bool:
    parent = tree_.parent(atom)
    if isinstance(parent, (cst.If, cst.While, cst.Assert)) and parent.test is atom:
        return False
    if isinstance(parent, (cst.Assign, cst.AnnAssign, cst.Return, cst.Arg)):
        return False
    if isinstance(parent, cst.IfExp) and parent.test is atom:
        return False
    return not (isinstance(parent, cst.BooleanOperation) and isinstance(parent.operator, operator))


def _fix(ctx: PythonContext, tree_: Tree, test: _Test) -> tuple[cst.BaseExpression, list[Any]]:
    hip, imports = _hip_for(ctx, test.ref)
    atom = test.atom
    if isinstance(atom, cst.Comparison):
        right: cst.BaseExpression = atom.with_changes(left=hip, lpar=[], rpar=[])
        operator: type = cst.Or if test.positive else cst.And
    else:
        right = hip
        operator = cst.Or
    lpar = list(atom.lpar)
    rpar = list(atom.rpar)
    if not lpar and _needs_parens(tree_, atom, operator):
        lpar, rpar = [cst.LeftParen()], [cst.RightParen()]
    new = cst.BooleanOperation(
        left=atom.with_changes(lpar=[], rpar=[]),
        operator=operator(),
        right=right,
        lpar=lpar,
        rpar=rpar,
    )
    return new, imports


class CudaVersionAsGpuCheck(PythonRule):
    """
    ## What it does
    Flags truth tests of `torch.version.cuda` (`if torch.version.cuda:`, `is not None`,
    `is None`, `not ...`, in `and` chains, ternaries and asserts) that decide whether GPU code runs.

    ## Why it breaks on ROCm
    ROCm builds of PyTorch set `torch.version.hip` to a version string and leave
    `torch.version.cuda` as `None`, so a test meant as "is this a GPU build?" is false on an AMD
    GPU and the GPU branch is silently skipped (or the CPU/"no GPU" branch taken).

    ## Example
    ```python
    if torch.version.cuda:
        model = model.cuda()
    ```

    ## Fix
    ```python
    if torch.version.cuda or torch.version.hip:
        model = model.cuda()
    ```
    `x is not None` becomes `x is not None or torch.version.hip is not None`; `x is None` becomes
    `x is None and torch.version.hip is None`.

    ## Fix safety
    Safe: on NVIDIA and CPU builds `torch.version.hip` is `None`, so the new expression has the same
    value as before (`cuda or None` is `cuda`); only ROCm builds change, which is the intent.
    Not offered (see ROC103) when the guarded code itself reads `torch.version.cuda` as a version:
    opening the branch on ROCm would run that parsing on `None`. Files that already test
    `torch.version.hip` are left alone: they tell the builds apart on purpose.

    ## Known problems
    Values copied into a variable (`cv = torch.version.cuda`) are followed within a function only
    for parsing (ROC102), not for this rule's rewrite.

    ## References
    - PyTorch HIP semantics: https://docs.pytorch.org/docs/stable/notes/hip.html
    """

    code = "ROC101"
    name = "cuda-version-as-gpu-check"
    category = "cuda-version"
    severity = Severity.ERROR
    message = "`torch.version.cuda` is None on ROCm builds: this GPU check is false on AMD GPUs"
    fix_title = "Also accept `torch.version.hip`"
    applicability = Applicability.SAFE
    fact = "§1 torch.version.cuda row; §10.2; [P1][P2]"
    triggers = ("version.cuda", "torch.version", "torch import version")
    effort_hours = 0.1
    valid = [
        Valid("import torch\nif torch.cuda.is_available():\n    pass\n"),
        Valid("import torch\nv = torch.version.cuda\nprint('CUDA', torch.version.cuda)\n"),
        Valid("import torch\nif torch.version.cuda or torch.version.hip:\n    pass\n"),
        Valid(
            "import torch\nIS_ROCM = torch.version.hip is not None\n"
            "IS_CUDA = torch.version.cuda is not None\n"
        ),
        Valid("class version:\n    cuda = None\nif version.cuda:\n    pass\n"),
        Valid(
            "import torch\nboth = torch.version.cuda and torch.version.hip\n"
            "ok = torch.version.cuda is not None\n"
        ),
        Valid(
            'import torch\n"""if torch.version.cuda: in a docstring"""\n# if torch.version.cuda:\n'
        ),
    ]
    invalid = [
        Invalid(
            "import torch\nif torch.version.cuda:\n    x = 1\n",
            fixed="import torch\nif torch.version.cuda or torch.version.hip:\n    x = 1\n",
            line=2,
            column=4,
        ),
        Invalid(
            "import torch as tt\n"
            "use_gpu = tt.version.cuda is not None and tt.cuda.is_available()\n",
            fixed=(
                "import torch as tt\nuse_gpu = (tt.version.cuda is not None or "
                "tt.version.hip is not None) and tt.cuda.is_available()\n"
            ),
        ),
        Invalid(
            "import torch\nif torch.version.cuda is None:\n    raise SystemExit('needs a GPU')\n",
            fixed=(
                "import torch\nif torch.version.cuda is None and torch.version.hip is None:\n"
                "    raise SystemExit('needs a GPU')\n"
            ),
        ),
        Invalid(
            "import torch\ndevice = 'cuda' if not torch.version.cuda else 'cpu'\n",
            fixed=(
                "import torch\ndevice = 'cuda' if not (torch.version.cuda or torch.version.hip) "
                "else 'cpu'\n"
            ),
        ),
        Invalid(
            "from torch.version import cuda\nassert cuda, 'GPU build required'\n",
            fixed=(
                "from torch.version import cuda\nimport torch.version\n\n"
                "assert cuda or torch.version.hip, 'GPU build required'\n"
            ),
        ),
        Invalid(
            "import torch\nif torch.cuda.is_available() and torch.version.cuda:\n    pass\n",
            fixed=(
                "import torch\nif torch.cuda.is_available() and (torch.version.cuda or "
                "torch.version.hip):\n    pass\n"
            ),
        ),
    ]

    def leave_Module(self, node: cst.Module) -> None:
        analysis = _version_analysis(self.ctx)
        if analysis.rocm_aware:
            return
        tree_ = tree(self.ctx)
        for test in analysis.tests:
            if test.guards_parse:
                continue
            replacement, imports = _fix(self.ctx, tree_, test)
            self.report(test.atom, replacement=replacement, imports=imports)


class CudaVersionParsed(PythonRule):
    """
    ## What it does
    Flags code that treats `torch.version.cuda` as a string or number: `float(...)`, `int(...)`,
    `.split('.')`, `version.parse(...)`, indexing, arithmetic and ordering comparisons
    (`torch.version.cuda >= "11.8"`) that a guard in the same file does not keep from running on
    ROCm.

    ## Why it breaks on ROCm
    `torch.version.cuda` is `None` on ROCm builds, so every one of these raises `TypeError` or
    `AttributeError`, often at import time.

    ## Example
    ```python
    major, minor = torch.version.cuda.split(".")[:2]
    ```

    ## Manual migration
    Branch on the build first and read the HIP version on ROCm:
    ```python
    if torch.version.hip:
        major, minor = torch.version.hip.split(".")[:2]   # ROCm/HIP version, not comparable to CUDA
    else:
        major, minor = torch.version.cuda.split(".")[:2]
    ```
    Or ask whether the feature exists instead of comparing toolkit versions.

    ## Known problems
    Guards are recognised within a file (`if torch.version.cuda:`, `if torch.version.hip: ...
    else:`, `and` chains, early returns, `try/except TypeError`); a caller that guards a helper in
    another function or module is not seen.

    ## References
    - PyTorch HIP semantics: https://docs.pytorch.org/docs/stable/notes/hip.html
    """

    code = "ROC102"
    name = "cuda-version-parsed"
    category = "cuda-version"
    severity = Severity.ERROR
    message = "`torch.version.cuda` is None on ROCm builds: parsing it raises"
    fact = "§1 torch.version.cuda row; §10.2; [P1][P2]"
    triggers = ("version.cuda", "torch.version", "torch import version")
    effort_hours = 0.5
    valid = [
        Valid(
            "import torch\nif torch.version.cuda:\n"
            "    major = int(torch.version.cuda.split('.')[0])\n"
        ),
        Valid(
            "import torch\nif torch.version.hip:\n    v = torch.version.hip\n"
            "else:\n    v = float(torch.version.cuda)\n"
        ),
        Valid(
            "import torch\ndef f():\n    if torch.version.cuda is None:\n        return None\n"
            "    return torch.version.cuda.split('.')\n"
        ),
        Valid("import torch\nprint('CUDA %s' % torch.version.cuda, f'{torch.version.cuda}')\n"),
        Valid("def float(x):\n    return x\nversion = float('12.1')\n"),
    ]
    invalid = [
        Invalid(
            "import torch\nmajor, minor = torch.version.cuda.split('.')[:2]\n",
            line=2,
            column=16,
        ),
        Invalid(
            "import torch as tt\nif float(tt.version.cuda) >= 11.8:\n    pass\n", line=2, column=4
        ),
        Invalid(
            "from packaging import version\nimport torch\n"
            "NEW = version.parse(torch.version.cuda) >= version.parse('12.0')\n"
        ),
        Invalid("from torch.version import cuda\nok = cuda >= '11.0'\n"),
        Invalid(
            "import torch\ndef f():\n    cv = torch.version.cuda\n    return int(cv[:2])\n",
            line=4,
        ),
    ]

    def leave_Module(self, node: cst.Module) -> None:
        for parse in _version_analysis(self.ctx).parses:
            self.report(
                parse.node,
                message=f"`torch.version.cuda` is None on ROCm builds: {parse.what}",
            )


class CudaVersionGuard(PythonRule):
    """
    ## What it does
    Flags a truth test of `torch.version.cuda` whose branch then parses the CUDA version
    (`if torch.version.cuda: if float(torch.version.cuda) >= 11.8: ...`, or
    `torch.version.cuda and torch.version.cuda >= "11.0"`).

    ## Why it breaks on ROCm
    The guard keeps the parsing from crashing, but on ROCm (`torch.version.cuda` is `None`) the
    whole branch is skipped: whatever it enables (bf16, a fast path, a backend flag) is silently
    off on AMD GPUs. Widening the guard to `torch.version.hip` would not help: the branch would
    then parse `None`.

    ## Example
    ```python
    if torch.version.cuda and torch.version.cuda >= "11.0":
        use_bf16 = True
    ```

    ## Manual migration
    Decide what the branch means on ROCm and add an explicit `torch.version.hip` branch (its
    version numbers are HIP's, not CUDA's), or test the capability itself
    (`torch.cuda.is_bf16_supported()`).

    ## References
    - PyTorch HIP semantics: https://docs.pytorch.org/docs/stable/notes/hip.html
    """

    code = "ROC103"
    name = "cuda-version-guard"
    category = "cuda-version"
    severity = Severity.WARNING
    message = (
        "branch guarded by `torch.version.cuda` parses the CUDA version: "
        "it never runs on ROCm builds"
    )
    fact = "§1 torch.version.cuda row; §10.2; [P1][P2]"
    triggers = ("version.cuda", "torch.version", "torch import version")
    effort_hours = 0.5
    valid = [
        Valid("import torch\nif torch.version.cuda:\n    model = 1\n"),
        Valid(
            "import torch\nif torch.version.hip:\n    pass\n"
            "elif torch.version.cuda and float(torch.version.cuda) > 11:\n    pass\n"
        ),
    ]
    invalid = [
        Invalid(
            "import torch\nif torch.version.cuda:\n    if float(torch.version.cuda) >= 11.8:\n"
            "        x = 1\n",
            line=2,
            column=4,
        ),
        Invalid(
            "import torch as tt\nok = tt.version.cuda and tt.cuda.is_available() and "
            "tt.version.cuda >= '11.0'\n",
        ),
        Invalid(
            "import torch\ndef f():\n    if torch.version.cuda is None:\n        return 0\n"
            "    return int(torch.version.cuda.split('.')[0])\n",
            line=3,
        ),
    ]

    def leave_Module(self, node: cst.Module) -> None:
        analysis = _version_analysis(self.ctx)
        if analysis.rocm_aware:
            return
        for test in analysis.tests:
            if test.guards_parse:
                self.report(test.atom)


# --------------------------------------------------------------------------------------------
# Device gates


def _gpus() -> list[dict[str, Any]]:
    return list(load_table("detection")["gpu"])


_CAPABILITY = "torch.cuda.get_device_capability"
_PROPERTIES = "torch.cuda.get_device_properties"
_DEVICE_NAME = "torch.cuda.get_device_name"
_ARCH_LIST = "torch.cuda.get_arch_list"


@dataclass
class _GateAnalysis:
    tree: Tree
    aliases: dict[tuple[int, str], str | None]


def _direct_kind(
    ctx: PythonContext,
    tree_: Tree | None,
    node: cst.CSTNode,
    aliases: dict[tuple[int, str], str | None],
) -> str | None:
    """What a device-query expression is: cap, major, minor, props, name, arch-list, gcn."""
    if isinstance(node, cst.Call):
        qualified = ctx.qualname(node.func)
        if qualified == _CAPABILITY:
            return "cap"
        if qualified == _PROPERTIES:
            return "props"
        if qualified == _DEVICE_NAME:
            return "name"
        if qualified == _ARCH_LIST:
            return "arch-list"
        if isinstance(node.func, cst.Attribute) and node.func.attr.value in {
            "lower",
            "upper",
            "strip",
            "casefold",
            "replace",
            "split",
        }:
            inner = _direct_kind(ctx, tree_, node.func.value, aliases)
            return "name" if inner == "name" else None
        return None
    if isinstance(node, cst.Subscript) and len(node.slice) == 1:
        inner = _direct_kind(ctx, tree_, node.value, aliases)
        index = node.slice[0].slice
        if inner == "cap" and isinstance(index, cst.Index):
            position = literal_value(index.value)
            return {0: "major", 1: "minor"}.get(position) if isinstance(position, int) else None
        return None
    if isinstance(node, cst.Attribute):
        if node.attr.value == "gcnArchName":
            return "gcn"
        inner = _direct_kind(ctx, tree_, node.value, aliases)
        if inner == "props" and node.attr.value in {"major", "minor", "name"}:
            return node.attr.value
        return None
    if isinstance(node, cst.Name) and tree_ is not None:
        return alias_kind(tree_, aliases, node)
    return None


def _gate_analysis(ctx: PythonContext) -> _GateAnalysis:
    tree_ = tree(ctx)
    cached = tree_.memo.get("device-gate")
    if cached is None:
        aliases = assigned_value_aliases(
            tree_,
            lambda value, found: _direct_kind(ctx, tree_, value, found),
            {"cap": ["major", "minor"]},
        )
        cached = _GateAnalysis(tree_, aliases)
        tree_.memo["device-gate"] = cached
    return cached


def _kind(ctx: PythonContext, gates: _GateAnalysis, node: cst.CSTNode) -> str | None:
    return _direct_kind(ctx, gates.tree, node, gates.aliases)


_CAP_OPERATORS = (
    cst.LessThan,
    cst.LessThanEqual,
    cst.GreaterThan,
    cst.GreaterThanEqual,
    cst.Equal,
    cst.NotEqual,
    cst.In,
    cst.NotIn,
)


_COMPARISONS: dict[type[cst.BaseCompOp], Callable[[Any, Any], Any]] = {
    cst.LessThan: operator.lt,
    cst.LessThanEqual: operator.le,
    cst.GreaterThan: operator.gt,
    cst.GreaterThanEqual: operator.ge,
    cst.Equal: operator.eq,
    cst.NotEqual: operator.ne,
    cst.In: lambda left, right: left in right,
    cst.NotIn: lambda left, right: left not in right,
}


def _compare(comparison: cst.BaseCompOp, left: object, right: object) -> bool | None:
    """``left <op> right`` for literal values; None for another operator or incomparable values."""
    compare = _COMPARISONS.get(type(comparison))
    if compare is None:
        return None
    try:
        return bool(compare(left, right))
    except TypeError:
        return None


def _collection_value(node: cst.BaseExpression) -> object:
    if isinstance(node, (cst.List, cst.Set)):
        values = [literal_value(element.value) for element in node.elements]
        return ... if any(value is ... for value in values) else tuple(values)
    value = literal_value(node)
    return value


_ARITHMETIC = (cst.Add, cst.Subtract, cst.Multiply, cst.FloorDivide, cst.Divide)


def _involves_capability(ctx: PythonContext, gates: _GateAnalysis, node: cst.CSTNode) -> bool:
    """Whether ``node`` is a capability value or arithmetic on one (``major * 10 + minor``)."""
    if _kind(ctx, gates, node) in {"cap", "major"}:
        return True
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, _ARITHMETIC):
        return _involves_capability(ctx, gates, node.left) or _involves_capability(
            ctx, gates, node.right
        )
    return False


def _value_on(
    ctx: PythonContext, gates: _GateAnalysis, node: cst.BaseExpression, gpu: dict[str, Any]
) -> object:
    """The value of a capability expression (or literal) on ``gpu``; ``...`` when unknown."""
    major, minor = gpu["capability"]
    kind = _kind(ctx, gates, node)
    if kind == "cap":
        return (major, minor)
    if kind == "major":
        return major
    if kind == "minor":
        return minor
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, _ARITHMETIC):
        left = _value_on(ctx, gates, node.left, gpu)
        right = _value_on(ctx, gates, node.right, gpu)
        if not isinstance(left, (int, float)) or not isinstance(right, (int, float)):
            return ...
        operator = node.operator
        try:
            if isinstance(operator, cst.Add):
                return left + right
            if isinstance(operator, cst.Subtract):
                return left - right
            if isinstance(operator, cst.Multiply):
                return left * right
            if isinstance(operator, cst.FloorDivide):
                return left // right
            return left / right
        except ZeroDivisionError:
            return ...
    return _collection_value(node)


def _outcome(
    ctx: PythonContext, gates: _GateAnalysis, comparison: cst.Comparison, gpu: dict[str, Any]
) -> bool | None:
    """What a capability comparison evaluates to on ``gpu`` (None when not literal)."""
    operands = [comparison.left, *[c.comparator for c in comparison.comparisons]]
    values = [_value_on(ctx, gates, operand, gpu) for operand in operands]
    if any(value is ... for value in values):
        return None
    outcome = True
    for index, target in enumerate(comparison.comparisons):
        result = _compare(target.operator, values[index], values[index + 1])
        if result is None:
            return None
        outcome = outcome and result
    return outcome


def _like_current_nvidia(
    ctx: PythonContext, gates: _GateAnalysis, comparison: cst.Comparison
) -> bool:
    """Whether the gate answers every AMD GPU the way it answers both reference NVIDIA GPUs
    (Ampere and Hopper): then it asks "a current GPU?", which AMD GPUs are, not "which one?"."""
    answers = {
        _outcome(ctx, gates, comparison, gpu)
        for gpu in [*_gpus(), *load_table("detection")["nvidia_reference"]]
    }
    return len(answers) == 1 and None not in answers


def _capability_verdict(
    ctx: PythonContext, gates: _GateAnalysis, comparison: cst.Comparison
) -> str | None:
    """'true on gfx90a, gfx942 ...; false on ...' for literal thresholds, else None."""
    results: dict[str, bool] = {}
    for gpu in _gpus():
        outcome = _outcome(ctx, gates, comparison, gpu)
        if outcome is None:
            return None
        results[f"{gpu['gfx']} {tuple(gpu['capability'])}"] = outcome
    true = [key for key, value in results.items() if value]
    false = [key for key, value in results.items() if not value]
    if not false:
        return "true on every AMD GPU"
    if not true:
        return "false on every AMD GPU"
    return f"true on {', '.join(true)}; false on {', '.join(false)}"


class CapabilityGate(PythonRule):
    """
    ## What it does
    Flags comparisons of `torch.cuda.get_device_capability()` (or its `major`/`minor`, or
    `get_device_properties(i).major`) with NVIDIA compute-capability numbers:
    `>= (8, 0)`, `major >= 9`, `== (9, 0)`.

    ## Why it breaks on ROCm
    On ROCm the "capability" is the gfx version: MI250X = (9, 0), MI300X = (9, 4),
    MI355X = (9, 5), Radeon RX 7900 = (11, 0). MI300X therefore passes `>= (8, 0)` *and*
    `>= (9, 0)`, so code written for Ampere or Hopper (FlashAttention-3, cuDNN attention, sm90
    FP8/wgmma kernels) gets selected, while `== (8, 0)`-style checks never match. The message
    says how the gate evaluates on each AMD GPU.

    ## Example
    ```python
    if torch.cuda.get_device_capability() >= (9, 0):
        use_hopper_kernels()
    ```

    ## Manual migration
    Branch on the build first, then on the AMD architecture:
    ```python
    if torch.version.hip:
        arch = torch.cuda.get_device_properties(0).gcnArchName.split(":")[0]
        use_fast_path = arch in ("gfx942", "gfx950")
    elif torch.cuda.get_device_capability() >= (9, 0):
        use_hopper_kernels()
    ```
    Prefer feature checks (`torch.cuda.is_bf16_supported()`) when they exist.

    A gate that answers every AMD GPU the way it answers both Ampere (8, 0) and Hopper (9, 0),
    such as `>= (8, 0)` for bf16 or `major >= 7` for fp16, asks "a current GPU?" rather than
    "which architecture?": AMD GPUs get the current-GPU path, which is right, and it is not
    reported. A gate whose branch only warns, prints or logs changes a message, not what runs: it is
    reported at `info`.

    ## Known problems
    Gates inside a branch that a `torch.version.hip`/`torch.version.cuda` test (or a name like
    `is_rocm`, `is_nvidia`) keeps off ROCm are not reported.

    ## References
    - pytorch/ao PR #2853 (MI300X properties)
    """

    code = "ROC110"
    name = "capability-gate"
    category = "device-gate"
    severity = Severity.WARNING
    aggregate = "scope"
    message = "compute-capability gate: AMD GPUs report their gfx version (MI300X = (9, 4))"
    fact = "§0; §1 get_device_capability row; §10.1; [D1][D3]"
    triggers = ("get_device_capability", "get_device_properties")
    effort_hours = 0.5
    valid = [
        Valid("import torch\nmajor, minor = torch.cuda.get_device_capability()\nprint(major)\n"),
        Valid(
            "import torch\nif torch.version.hip:\n    ok = True\n"
            "else:\n    ok = torch.cuda.get_device_capability() >= (8, 0)\n"
        ),
        Valid(
            "def get_device_capability():\n    return (8, 0)\n"
            "ok = get_device_capability() >= (8, 0)\n"
        ),
        Valid("import torch\nok = torch.cuda.is_bf16_supported()\n"),
        Valid(
            "import torch\ndef f(override):\n"
            "    cap = torch.cuda.get_device_capability()\n"
            "    if override:\n"
            "        cap = override\n"
            "    return cap >= (9, 0)\n"
        ),
        Valid(
            "import torch\ndef f(major, minor):\n    if major == 8:\n        return minor >= 9\n"
        ),
        Valid(
            "import torch\n"
            "bf16 = torch.cuda.get_device_capability() >= (8, 0)\n"
            "dtype = torch.bfloat16 if bf16 else torch.float16\n"
        ),
        Valid(
            "import torch\ndef fp16_ok():\n"
            "    major, _ = torch.cuda.get_device_capability()\n    return major >= 7\n"
        ),
    ]
    invalid = [
        Invalid(
            "import torch\nif torch.cuda.get_device_capability() >= (9, 0):\n    pass\n",
            line=2,
            column=4,
        ),
        Invalid(
            "from torch.cuda import get_device_capability\n"
            "def f():\n    major, minor = get_device_capability()\n    return major >= 9\n",
            line=4,
        ),
        Invalid(
            "import torch as tt\nprops = tt.cuda.get_device_properties(0)\n"
            "hopper = props.major == 9\n"
        ),
        Invalid("import torch\nsm90 = torch.cuda.get_device_capability(0)[0] >= 9\n"),
        Invalid(
            "import torch, warnings\nif torch.cuda.get_device_capability() < (9, 0):\n"
            "    warnings.warn('FP8 needs Hopper')\n",
            line=2,
        ),
        Invalid(
            "import torch\ncc = torch.cuda.get_device_capability()\n"
            "ada = cc[0] * 10 + cc[1] >= 89\n",
            line=3,
        ),
        Invalid(
            "import torch\ndef pick():\n"
            "    if torch.cuda.is_available():\n"
            "        cap = torch.cuda.get_device_capability()\n"
            "    else:\n"
            "        cap = (0, 0)\n"
            "    return 'fa3' if cap >= (9, 0) else 'sdpa'\n",
            line=7,
        ),
    ]

    def leave_Module(self, node: cst.Module) -> None:
        gates = _gate_analysis(self.ctx)
        for candidate in gates.tree.nodes:
            if not isinstance(candidate, cst.Comparison):
                continue
            operands = [candidate.left, *[c.comparator for c in candidate.comparisons]]
            if not any(_involves_capability(self.ctx, gates, operand) for operand in operands):
                continue  # `minor >= 9` alone sits under a `major` gate, which is reported
            if not all(isinstance(c.operator, _CAP_OPERATORS) for c in candidate.comparisons):
                continue
            if unreachable_on_rocm(self.ctx, gates.tree, candidate):
                continue
            if _like_current_nvidia(self.ctx, gates, candidate):
                continue  # `>= (8, 0)` for bf16: every AMD GPU answers like A100 and H100
            verdict = _capability_verdict(self.ctx, gates, candidate)
            code = " ".join(self.ctx.code(candidate).split()).replace("( ", "(").replace(", )", ")")
            if verdict is None:
                message = (
                    f"`{code}` compares an AMD gfx version (MI300X = (9, 4)) with NVIDIA "
                    "compute-capability numbers"
                )
            else:
                message = (
                    f"`{code}` is {verdict}: AMD GPUs report their gfx version, not an NVIDIA "
                    "compute capability"
                )
            if _only_notifies(gates.tree, candidate):
                self.report(
                    candidate,
                    message=message + " (the gate only guards a warning or a message)",
                    severity=Severity.INFO,
                )
                continue
            self.report(candidate, message=message)


_NOTIFY_CALLS = frozenset(
    {"warn", "print", "debug", "info", "warning", "warning_once", "info_once", "log"}
)


def _only_notifies(tree_: Tree, comparison: cst.CSTNode) -> bool:
    """Whether the ``if`` this comparison tests only warns, prints or logs (both branches)."""
    test_owner = None
    child = comparison
    for ancestor in tree_.ancestors(comparison):
        if isinstance(ancestor, cst.If) and ancestor.test is child:
            test_owner = ancestor
            break
        if not isinstance(ancestor, (cst.BooleanOperation, cst.UnaryOperation, cst.Comparison)):
            return False
        child = ancestor
    if test_owner is None:
        return False
    blocks: list[cst.BaseSuite] = [test_owner.body]
    if isinstance(test_owner.orelse, cst.Else):
        blocks.append(test_owner.orelse.body)
    elif test_owner.orelse is not None:
        return False
    for block in blocks:
        statements = block.body if isinstance(block, cst.IndentedBlock) else [block]
        for statement in statements:
            smalls = getattr(statement, "body", None)
            if not isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
                return False
            for small in smalls or ():
                if isinstance(small, cst.Pass):
                    continue
                if not (
                    isinstance(small, cst.Expr)
                    and isinstance(small.value, cst.Call)
                    and identifier(small.value) in _NOTIFY_CALLS
                ):
                    return False
    return True


_AMD_WORDS = re.compile(
    r"amd|advanced micro|instinct|radeon|\bmi\d{2,3}|gfx|rocm|hip", re.IGNORECASE
)
_STRING_METHODS = {"startswith", "endswith", "find", "rfind", "index", "count", "__contains__"}
_REGEX_FUNCS = {"re.search", "re.match", "re.fullmatch", "re.findall", "re.finditer"}


def _literal_strings(node: cst.BaseExpression) -> list[str] | None:
    value = literal_value(node)
    if isinstance(value, str):
        return [value]
    if isinstance(node, (cst.List, cst.Set, cst.Tuple)):
        strings = [literal_value(element.value) for element in node.elements]
        if strings and all(isinstance(s, str) for s in strings):
            return [s for s in strings if isinstance(s, str)]
    return None


def _comprehension_strings(tree_: Tree, name: cst.BaseExpression) -> list[str] | None:
    if not isinstance(name, cst.Name):
        return None
    for ancestor in tree_.ancestors(name):
        if isinstance(ancestor, (cst.GeneratorExp, cst.ListComp, cst.SetComp)):
            comp: cst.CompFor | None = ancestor.for_in
            while comp is not None:
                if isinstance(comp.target, cst.Name) and comp.target.value == name.value:
                    return _literal_strings(comp.iter)
                comp = comp.inner_for_in
    return None


def _mentions_amd(strings: list[str]) -> bool:
    names = [gpu["name"].lower() for gpu in _gpus()]
    for text in strings:
        if _AMD_WORDS.search(text):
            return True
        if text and any(text.lower() in name for name in names):
            return True
    return False


class DeviceNameGate(PythonRule):
    """
    ## What it does
    Flags tests of the GPU name from `torch.cuda.get_device_name()` or
    `get_device_properties(i).name` against NVIDIA model strings: `"A100" in name`,
    `name.startswith("NVIDIA")`, `name == "NVIDIA H100 80GB HBM3"`, `re.search("H100", name)`.

    ## Why it breaks on ROCm
    AMD GPUs report names such as `AMD Instinct MI300X`, so these tests are never true (and `not
    in`/`!=` tests always true): the tuned branch for the NVIDIA part is skipped, or an
    "unsupported GPU" path is taken, on every AMD GPU.

    ## Example
    ```python
    if "A100" in torch.cuda.get_device_name():
        block = 128
    ```

    ## Manual migration
    Gate on what the branch needs (memory size, `multi_processor_count`, a feature check) or add
    an AMD branch keyed on `get_device_properties(i).gcnArchName.split(":")[0]` (e.g. `gfx942`).

    ## Known problems
    One finding per function (at the first test; the message lists the names tested). A function
    that also tests for AMD names (`"amd"`, `"MI300"`, `"Instinct"`) is taken as a vendor
    dispatch and not reported.

    ## References
    - pytorch/ao PR #2853 (MI300X `name`, `gcnArchName`)
    """

    code = "ROC111"
    name = "device-name-gate"
    category = "device-gate"
    severity = Severity.WARNING
    aggregate = "scope"
    message = "GPU-name test never matches an AMD GPU ('AMD Instinct MI300X')"
    fact = "§0; §1 name gates row; §10.1; [D1]"
    triggers = ("get_device_name", "get_device_properties")
    effort_hours = 0.5
    valid = [
        Valid("import torch\nprint(torch.cuda.get_device_name(0))\n"),
        Valid("import torch\nname = torch.cuda.get_device_name()\ngpu = name.replace(' ', '-')\n"),
        Valid(
            "import torch\n"
            "big = any(k in torch.cuda.get_device_name() for k in ('H100', 'MI300X'))\n"
        ),
        Valid("def get_device_name():\n    return 'x'\nok = 'A100' in get_device_name()\n"),
        Valid(
            "import torch\n"
            "if torch.version.hip is None and 'A100' in torch.cuda.get_device_name():\n"
            "    pass\n"
        ),
        Valid(
            "import torch\ndef vendor():\n"
            "    name = torch.cuda.get_device_properties(0).name.lower()\n"
            "    if 'nvidia' in name:\n        return 'nv'\n"
            "    elif 'amd' in name:\n        return 'amd'\n"
        ),
    ]
    invalid = [
        Invalid(
            "import torch\n"
            "if torch.cuda.is_available() and 'A100' in torch.cuda.get_device_name():\n"
            "    pass\n",
            line=2,
            column=34,
        ),
        Invalid(
            "from torch.cuda import get_device_name\nnv = get_device_name(0).startswith('NVIDIA')\n"
        ),
        Invalid(
            "import torch as tt\ndef f(i):\n    p = tt.cuda.get_device_properties(i)\n"
            "    return p.name == 'NVIDIA H100 80GB HBM3'\n",
            line=4,
        ),
        Invalid(
            "import re\nimport torch\nname = torch.cuda.get_device_name().lower()\n"
            "hopper = re.search('h100|h200', name) is not None\n"
        ),
        Invalid(
            "import torch\n"
            "hopper = any(x in torch.cuda.get_device_name() for x in ['H100', 'H200'])\n"
        ),
    ]

    def leave_Module(self, node: cst.Module) -> None:
        gates = _gate_analysis(self.ctx)
        tree_ = gates.tree
        vendor_aware: set[int] = set()
        tests: list[tuple[int, cst.CSTNode, list[str]]] = []
        for candidate in tree_.nodes:
            strings: list[str] | None = None
            if isinstance(candidate, cst.Comparison) and len(candidate.comparisons) == 1:
                target = candidate.comparisons[0]
                left, right = candidate.left, target.comparator
                if isinstance(target.operator, (cst.In, cst.NotIn)):
                    if _kind(self.ctx, gates, right) == "name":
                        strings = _literal_strings(left) or _comprehension_strings(tree_, left)
                elif isinstance(target.operator, (cst.Equal, cst.NotEqual)):
                    if _kind(self.ctx, gates, left) == "name":
                        strings = _literal_strings(right)
                    elif _kind(self.ctx, gates, right) == "name":
                        strings = _literal_strings(left)
            elif isinstance(candidate, cst.Call):
                func = candidate.func
                if (
                    isinstance(func, cst.Attribute)
                    and func.attr.value in _STRING_METHODS
                    and _kind(self.ctx, gates, func.value) == "name"
                    and candidate.args
                ):
                    strings = _literal_strings(candidate.args[0].value)
                elif self.ctx.qualname(func) in _REGEX_FUNCS and len(candidate.args) >= 2:
                    if _kind(self.ctx, gates, candidate.args[1].value) == "name":
                        strings = _literal_strings(candidate.args[0].value)
            if not strings:
                continue
            scope = id(tree_.scope(candidate))
            if _mentions_amd(strings):
                vendor_aware.add(scope)
                continue
            if unreachable_on_rocm(self.ctx, tree_, candidate):
                continue
            tests.append((scope, candidate, strings))
        by_scope: dict[int, list[tuple[cst.CSTNode, list[str]]]] = {}
        for scope, candidate, strings in tests:
            if scope in vendor_aware:
                continue  # the same function also tests for AMD names: a vendor dispatch
            by_scope.setdefault(scope, []).append((candidate, strings))
        for found in by_scope.values():
            names = list(dict.fromkeys(s for _, strings in found for s in strings))
            shown = ", ".join(repr(s) for s in names[:4]) + (", ..." if len(names) > 4 else "")
            self.report(
                found[0][0],
                message=(
                    f"GPU-name test for {shown} never matches an AMD GPU (MI300X reports "
                    "'AMD Instinct MI300X'): the branch meant for that NVIDIA part is decided "
                    "wrongly on ROCm"
                ),
            )


_SM_STRING = re.compile(r"\b(sm|compute)_(\d|\{|%|$)")


def _header(statement: cst.CSTNode) -> list[cst.CSTNode]:
    if isinstance(statement, (cst.If, cst.While)):
        return [statement.test]
    if isinstance(statement, cst.For):
        return [statement.iter, statement.body]
    if isinstance(statement, cst.With):
        return list(statement.items)
    if isinstance(statement, cst.SimpleStatementLine):
        return [statement]
    return []


class CudaArchListCheck(PythonRule):
    """
    ## What it does
    Flags `torch.cuda.get_arch_list()` results searched for NVIDIA `sm_XY`/`compute_XY` targets,
    and `sm_` strings built from `get_device_capability()` (`f"sm_{major}{minor}"`).

    ## Why it breaks on ROCm
    On ROCm `get_arch_list()` returns gfx targets (`gfx90a`, `gfx942`, ...), so `"sm_80" in
    torch.cuda.get_arch_list()` is false and the CUDA-only feature check skips the GPU path; an
    `sm_` name built from the capability of an MI300X is the meaningless `sm_94`.

    ## Example
    ```python
    if "sm_90" in torch.cuda.get_arch_list():
        use_fp8 = True
    ```

    ## Manual migration
    Branch on `torch.version.hip` and check the gfx target instead
    (`"gfx942" in torch.cuda.get_arch_list()`), or test for the feature directly.

    ## References
    - pytorch/pytorch `torch/cuda/__init__.py` (`get_arch_list`), `torch/utils/cpp_extension.py`
    """

    code = "ROC112"
    name = "cuda-arch-list-check"
    category = "device-gate"
    severity = Severity.WARNING
    aggregate = "scope"
    message = "NVIDIA `sm_XY` architecture test: ROCm builds list gfx targets (gfx942), never sm_XY"
    fact = "§1 get_arch_list row; [P2][P9]"
    triggers = ("get_arch_list", "get_device_capability", "get_device_properties")
    effort_hours = 0.5
    valid = [
        Valid("import torch\nprint(torch.cuda.get_arch_list())\n"),
        Valid("import torch\nok = 'gfx942' in torch.cuda.get_arch_list()\n"),
        Valid("ARCHS = ['sm_80', 'sm_90']\nprint(ARCHS)\n"),
        Valid("def get_arch_list():\n    return []\nok = 'sm_90' in get_arch_list()\n"),
    ]
    invalid = [
        Invalid(
            "import torch\nif 'sm_90' in torch.cuda.get_arch_list():\n    pass\n",
            line=2,
            column=15,
        ),
        Invalid(
            "from torch.cuda import get_arch_list\n"
            "archs = get_arch_list()\nhas_sm80 = any(a.startswith('sm_8') for a in archs)\n",
            line=3,
        ),
        Invalid(
            "import torch as tt\nmajor, minor = tt.cuda.get_device_capability()\n"
            "arch = f'sm_{major}{minor}'\n",
            line=3,
        ),
    ]

    def leave_Module(self, node: cst.Module) -> None:
        gates = _gate_analysis(self.ctx)
        tree_ = gates.tree
        done: set[int] = set()
        for candidate in tree_.nodes:
            kind = _kind(self.ctx, gates, candidate)
            if kind not in {"arch-list", "cap", "major", "minor"}:
                continue
            statement = statement_of(tree_, candidate)
            if id(statement) in done:
                continue
            parts = _header(statement)
            if not any(_SM_STRING.search(text) for part in parts for text in strings_in(part)):
                continue
            if unreachable_on_rocm(self.ctx, tree_, candidate):
                continue
            done.add(id(statement))
            if kind == "arch-list":
                self.report(candidate)
            else:
                self.report(
                    candidate,
                    message=(
                        "`sm_XY` name built from the compute capability: on ROCm it is the gfx "
                        "version (MI300X gives sm_94), not an NVIDIA architecture"
                    ),
                )


_GFX_EXACT = re.compile(r"^gfx[0-9a-f]+$")


class GcnArchNameExactCompare(PythonRule):
    """
    ## What it does
    Flags `get_device_properties(i).gcnArchName` compared for equality with a bare gfx name
    (`== "gfx942"`, `in ("gfx90a", "gfx942")`).

    ## Why it breaks on ROCm
    `gcnArchName` carries target features: an MI300X reports `gfx942:sramecc+:xnack-`, so the
    equality is never true and the AMD-specific branch is skipped.

    ## Example
    ```python
    is_mi300 = torch.cuda.get_device_properties(0).gcnArchName == "gfx942"
    ```

    ## Fix
    ```python
    is_mi300 = torch.cuda.get_device_properties(0).gcnArchName.split(":")[0] == "gfx942"
    ```

    ## Fix safety
    Safe: on CUDA builds `gcnArchName` holds the device name, which has no `:`, so `split(":")[0]`
    returns it unchanged; on ROCm the comparison now sees the bare gfx name, as intended.

    ## References
    - pytorch/ao PR #2853 (MI300X `gcnArchName`)
    """

    code = "ROC113"
    name = "gcn-arch-name-exact-compare"
    category = "device-gate"
    severity = Severity.WARNING
    aggregate = "scope"
    message = (
        "`gcnArchName` is 'gfx942:sramecc+:xnack-' on MI300X: "
        "an exact gfx-name compare never matches"
    )
    fix_title = "Compare `gcnArchName.split(':')[0]`"
    applicability = Applicability.SAFE
    fact = "§0; §1 gcnArchName row; [P2][D1][V]"
    triggers = ("gcnArchName",)
    effort_hours = 0.1
    valid = [
        Valid("import torch\nok = 'gfx94' in torch.cuda.get_device_properties(0).gcnArchName\n"),
        Valid(
            "import torch\n"
            "ok = torch.cuda.get_device_properties(0).gcnArchName.split(':')[0] == 'gfx942'\n"
        ),
        Valid("import torch\nprint(torch.cuda.get_device_properties(0).gcnArchName)\n"),
    ]
    invalid = [
        Invalid(
            "import torch\nok = torch.cuda.get_device_properties(0).gcnArchName == 'gfx942'\n",
            fixed=(
                "import torch\n"
                "ok = torch.cuda.get_device_properties(0).gcnArchName.split(\":\")[0] == 'gfx942'\n"
            ),
            line=2,
            column=6,
        ),
        Invalid(
            "import torch as tt\ndef f():\n"
            "    arch = tt.cuda.get_device_properties(0).gcnArchName\n"
            "    return arch in ('gfx942', 'gfx950')\n",
            fixed=(
                "import torch as tt\ndef f():\n"
                "    arch = tt.cuda.get_device_properties(0).gcnArchName\n"
                "    return arch.split(\":\")[0] in ('gfx942', 'gfx950')\n"
            ),
        ),
    ]

    def leave_Module(self, node: cst.Module) -> None:
        gates = _gate_analysis(self.ctx)
        for candidate in gates.tree.nodes:
            if not isinstance(candidate, cst.Comparison) or len(candidate.comparisons) != 1:
                continue
            target = candidate.comparisons[0]
            pairs: list[tuple[cst.BaseExpression, cst.BaseExpression]] = []
            if isinstance(target.operator, (cst.Equal, cst.NotEqual)):
                pairs = [(candidate.left, target.comparator), (target.comparator, candidate.left)]
            elif isinstance(target.operator, (cst.In, cst.NotIn)):
                if isinstance(target.comparator, (cst.Tuple, cst.List, cst.Set)):
                    pairs = [(candidate.left, target.comparator)]
            for gcn, other in pairs:
                if _kind(self.ctx, gates, gcn) != "gcn":
                    continue
                strings = _literal_strings(other)
                if not strings or not all(_GFX_EXACT.match(s) for s in strings):
                    continue
                split = cst.parse_expression('x.split(":")[0]')
                assert isinstance(split, cst.Subscript) and isinstance(split.value, cst.Call)
                assert isinstance(split.value.func, cst.Attribute)
                new_gcn = split.with_changes(
                    value=split.value.with_changes(
                        func=split.value.func.with_changes(value=gcn.with_changes(lpar=[], rpar=[]))
                    ),
                    lpar=gcn.lpar,
                    rpar=gcn.rpar,
                )
                if gcn is candidate.left:
                    replacement = candidate.with_changes(left=new_gcn)
                else:
                    replacement = candidate.with_changes(
                        comparisons=[target.with_changes(comparator=new_gcn)]
                    )
                self.report(candidate, replacement=replacement)
                break
