"""What the code a compute-capability gate picks does (ROC110, ``capability_gate``): only
notify, only turn a feature off, only exit or skip a test, only choose numbers true on every
AMD device: branches that change nothing a user relies on when AMD takes the other side."""

from __future__ import annotations

import libcst as cst

from migrator.api import PythonContext, load_table
from migrator.api.knowledge import is_test_path

from .._tree import Tree, identifier, simple_statements
from ._capability_values import _outcome
from ._gates import _GateAnalysis, _gpus

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


_EXITS = frozenset({"skip", "skipTest"})


def _test_owner(tree_: Tree, comparison: cst.CSTNode) -> cst.If | cst.IfExp | None:
    """The ``if`` statement or ``a if test else b`` whose whole test holds ``comparison``."""
    child = comparison
    for ancestor in tree_.ancestors(comparison):
        if isinstance(ancestor, (cst.If, cst.IfExp)) and ancestor.test is child:
            return ancestor
        if not isinstance(ancestor, (cst.BooleanOperation, cst.UnaryOperation, cst.Comparison)):
            return None
        child = ancestor
    return None


def _only_turns_off(smalls: list[cst.BaseSmallStatement]) -> bool:
    """``flash_attn_func_v3 = None`` / ``USE_FAST = False``: the branch only disables an optional
    path, so whichever way the gate answers, nothing that cannot run is chosen by it."""
    return bool(smalls) and all(
        isinstance(small, cst.Assign)
        and isinstance(small.value, cst.Name)
        and small.value.value in ("None", "False")
        for small in smalls
    )


def _only_exits(smalls: list[cst.BaseSmallStatement]) -> bool:
    """A bare ``return``, ``continue`` or ``pytest.skip(...)``: the gated work is skipped."""
    if len(smalls) != 1:
        return False
    small = smalls[0]
    if isinstance(small, cst.Return):
        return small.value is None
    if isinstance(small, cst.Continue):
        return True
    return (
        isinstance(small, cst.Expr)
        and isinstance(small.value, cst.Call)
        and identifier(small.value) in _EXITS
    )


def _number(node: cst.BaseExpression) -> bool:
    return isinstance(node, (cst.Integer, cst.Float))


def _harmless_choice(tree_: Tree, comparison: cst.CSTNode, verdict: str | None) -> bool:
    """Gates that cannot send an AMD GPU into code it cannot run: one that only turns an optional
    path off, one that every AMD GPU answers by skipping the gated work (``if major != 8:
    return`` before an Ampere-only kernel), and one that only picks a number (a tile size:
    ``32 if cap[0] >= 10 else 128``) rather than a code path."""
    owner = _test_owner(tree_, comparison)
    if isinstance(owner, cst.IfExp):
        return _number(owner.body) and _number(owner.orelse)
    if owner is None:
        return False
    smalls = simple_statements(owner.body)
    if owner.orelse is not None:
        return smalls is not None and _only_sets_numbers(smalls)
    if smalls is None:
        return False
    if _only_turns_off(smalls) or _only_sets_numbers(smalls):
        return True
    return _true_on_every_amd(tree_, comparison, owner, verdict) and _only_exits(smalls)


def _true_on_every_amd(
    tree_: Tree, comparison: cst.CSTNode, owner: cst.If, verdict: str | None
) -> bool:
    """Whether the whole ``if`` test is true on every AMD GPU (``not`` flips the comparison's
    answer; any ``and``/``or`` around it makes the answer unknown)."""
    if verdict not in ("true on every AMD GPU", "false on every AMD GPU"):
        return False
    holds = verdict == "true on every AMD GPU"
    for ancestor in tree_.ancestors(comparison):
        if ancestor is owner:
            return holds
        if not (
            isinstance(ancestor, cst.UnaryOperation) and isinstance(ancestor.operator, cst.Not)
        ):
            return False
        holds = not holds
    return False


def _numeric(node: cst.BaseExpression | None) -> bool:
    """A number, a negated one, or ``a if test else b`` of numbers: a tuning constant."""
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        return _numeric(node.expression)
    if isinstance(node, cst.IfExp):
        return _numeric(node.body) and _numeric(node.orelse)
    return node is not None and _number(node)


def _only_sets_numbers(smalls: list[cst.BaseSmallStatement]) -> bool:
    """``heuristic = -1`` / ``BLOCK_N = 64``: the gated branch only picks tuning constants, so
    on any GPU it selects a number, not code that cannot run."""
    return bool(smalls) and all(
        isinstance(small, cst.Assign) and _numeric(small.value) for small in smalls
    )


def _skips_only_off_nvidia_references(
    ctx: PythonContext, gates: _GateAnalysis, comparison: cst.Comparison
) -> bool:
    """A gate that only skips (an ``if`` whose body is ``pytest.skip``, a bare ``return`` or
    ``continue``; a ``skipif`` decorator's condition) and whose comparison lets the work run
    on both reference NVIDIA GPUs (Ampere and Hopper): the work is not architecture-specific,
    so an AMD GPU either runs it as they do or skips it."""
    negated = _skip_negation(gates.tree, comparison)
    if negated is None:
        return False
    for gpu in load_table("detection")["nvidia_reference"]:
        outcome = _outcome(ctx, gates, comparison, gpu)
        if outcome is None or outcome != negated:
            return False  # the comparison would skip the work on this NVIDIA GPU
    return True


def _skip_negation(tree_: Tree, comparison: cst.Comparison) -> bool | None:
    """Whether ``comparison`` is negated on its way to a skip (the work is skipped when it is
    true, or with ``True`` when it is false), through ``and``/``or``/``not`` only; None when it
    does not decide a skip."""
    owner = _test_owner(tree_, comparison)
    if isinstance(owner, cst.IfExp):
        return None  # a value chosen, not work skipped
    if isinstance(owner, cst.If):
        if owner.orelse is not None:
            return None
        smalls = simple_statements(owner.body)
        if smalls is None or not _only_exits(smalls):
            return None
    negated = False
    for ancestor in tree_.ancestors(comparison):
        if ancestor is owner:
            return negated
        if isinstance(ancestor, cst.UnaryOperation) and isinstance(ancestor.operator, cst.Not):
            negated = not negated
        elif isinstance(ancestor, cst.BooleanOperation):
            continue
        elif isinstance(ancestor, cst.Arg) and (
            ancestor.keyword is None or ancestor.keyword.value == "condition"
        ):
            continue
        elif isinstance(ancestor, cst.Call) and identifier(ancestor.func) in ("skipif", "skipIf"):
            first = ancestor.args[0] if ancestor.args else None
            return (
                negated if first is not None and first is _arg_holding(tree_, comparison) else None
            )
        else:
            return None
    return None


def _arg_holding(tree_: Tree, node: cst.CSTNode) -> cst.Arg | None:
    """The call argument that holds ``node``."""
    for ancestor in tree_.ancestors(node):
        if isinstance(ancestor, cst.Arg):
            return ancestor
    return None


def _never_read(ctx: PythonContext, tree_: Tree, comparison: cst.CSTNode) -> bool:
    """``is_sm80 = major == 8`` where nothing reads ``is_sm80`` (in its function, or anywhere in
    a test module): the gate decides nothing."""
    assign = tree_.parent(comparison)
    if not isinstance(assign, cst.Assign) or len(assign.targets) != 1:
        return False
    target = assign.targets[0].target
    if not isinstance(target, cst.Name):
        return False
    scope = tree_.scope(assign)
    if scope is tree_.module and not is_test_path(ctx.path):
        return False  # another module may import it
    nodes = tree_.nodes if scope is tree_.module else tree_.descendants(scope)
    return not any(
        isinstance(node, cst.Name) and node.value == target.value and node is not target
        for node in nodes
    )


def _skips_a_test(ctx: PythonContext, gates: _GateAnalysis, comparison: cst.Comparison) -> bool:
    """In a test file, a gate whose only effect is skipping a test (``if ...: pytest.skip()``,
    ``@pytest.mark.skipif(...)``) that skips it on every AMD Instinct GPU: the NVIDIA-specific
    test never runs there (one that AMD would run stays reported)."""
    if not is_test_path(ctx.path):
        return False
    tree_ = gates.tree
    decorator = False
    negated = False
    owner: cst.CSTNode | None = None
    for ancestor in tree_.ancestors(comparison):
        if isinstance(ancestor, cst.UnaryOperation) and isinstance(ancestor.operator, cst.Not):
            negated = not negated
        elif isinstance(ancestor, (cst.BooleanOperation, cst.Arg)):
            continue
        elif isinstance(ancestor, cst.Call):
            decorator = identifier(ancestor.func) in ("skipif", "skipIf")
            break
        else:
            owner = ancestor
            break
    if not decorator:
        if not isinstance(owner, cst.If) or owner.test is None or owner.orelse is not None:
            return False
        smalls = simple_statements(owner.body)
        if smalls is None or not _only_exits(smalls):
            return False
    instinct = [gpu for gpu in _gpus() if str(gpu["gfx"]).startswith("gfx9")]
    outcomes = [_outcome(ctx, gates, comparison, gpu) for gpu in instinct]
    return all(outcome is not None and outcome != negated for outcome in outcomes)
