"""How a file tests and parses ``torch.version.cuda``: the analysis ROC101-ROC103 share."""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from migrator.api import PythonContext, load_table

from .._aliases import alias_kind, assigned_value_aliases
from .._rocm_guards import guarded_regions, in_regions, in_try_catching, unreachable_on_rocm
from .._tree import Tree, identifier, qualified_refs, tree

CUDA = "torch.version.cuda"


HIP = "torch.version.hip"


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
        node for node in tree_.of_type(cst.Name) if alias_kind(tree_, aliases, node) == "cuda"
    ]
    analysis.rocm_aware = any(
        not _our_hip(ctx, tree_, hip) for hip in qualified_refs(ctx, tree_, {HIP})
    )
    for ref in [*direct, *alias_refs]:
        assert isinstance(ref, cst.BaseExpression)
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
    # ``assert torch.version.cuda is not None`` before a parse guards nothing on ROCm: it raises
    # there, and the parse after it is never reached (ROC102 reports the assert; widening it to
    # ``torch.version.hip``, ROC101's fix for a bare GPU-build assert, would parse None)
    for test in [test for test in analysis.tests if test.positive and test.guards_parse]:
        statement = _asserting(tree_, test.atom)
        if statement is None:
            continue
        analysis.tests.remove(test)
        regions = {id(region) for region in guarded_regions(tree_, test.atom, (1, 0))}
        analysis.parses = [
            parse for parse in analysis.parses if not in_regions(tree_, parse.ref, regions)
        ]
        analysis.parses.append(
            _Parse(statement, test.ref, "asserting that it is set raises AssertionError")
        )
    analysis.parses = [
        parse
        for parse in analysis.parses
        if not unreachable_on_rocm(ctx, tree_, parse.ref)
        and not in_try_catching(
            tree_, parse.ref, {"TypeError", "AttributeError", "ValueError", "AssertionError"}
        )
    ]
    return analysis


def _asserting(tree_: Tree, atom: cst.CSTNode) -> cst.Assert | None:
    """The ``assert`` statement whose test requires ``atom`` to be true (the test itself or an
    operand of an ``and`` chain), if any."""
    current = atom
    while True:
        parent = tree_.parent(current)
        if isinstance(parent, cst.BooleanOperation) and isinstance(parent.operator, cst.And):
            current = parent
            continue
        if isinstance(parent, cst.Assert) and parent.test is current:
            return parent
        return None


def _default_of_lookup(call: cst.Call, arg: cst.Arg) -> bool:
    """Whether ``arg`` is the default of a lookup that returns it when the key is missing:
    ``os.environ.get(key, arg)``, ``os.getenv(key, arg)``, ``mapping.get(key, arg)``."""
    name = identifier(call)
    if name not in ("get", "getenv"):
        return False
    if name == "get" and not isinstance(call.func, cst.Attribute):
        return False
    if arg.keyword is not None:
        return arg.keyword.value == "default"
    positional = [candidate for candidate in call.args if candidate.keyword is None]
    return len(positional) == 2 and positional[1] is arg


def _classify(
    ctx: PythonContext,
    tree_: Tree,
    ref: cst.BaseExpression,
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
            if _default_of_lookup(call, parent):
                # ``os.environ.get("CUDA_VERSION", torch.version.cuda)``: where the key is
                # missing the lookup returns the version itself, None on ROCm
                _classify(ctx, tree_, call, analysis, callees)
            elif name in callees and parent.keyword is None:
                analysis.parses.append(_Parse(call, ref, f"`{name}()` of it raises TypeError"))
            elif name == "str" and ctx.qualname(call.func) in (None, "str"):
                if _parsed_text(tree_, call, callees):
                    analysis.parses.append(
                        _Parse(call, ref, "`str()` of it is 'None', whose parse raises ValueError")
                    )
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


def _parsed_text(tree_: Tree, text: cst.Call, callees: set[str]) -> bool:
    """Whether ``str(version)`` is parsed as a version: split into numbers
    (``str(v).split(".")``) or handed to a parser (``Version(str(v))``)."""
    parent = tree_.parent(text)
    if isinstance(parent, cst.Attribute) and parent.value is text:
        return parent.attr.value in {"split", "rsplit", "partition"}
    if isinstance(parent, cst.Arg) and parent.value is text:
        call = tree_.parent(parent)
        return isinstance(call, cst.Call) and identifier(call) in callees
    return False


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
