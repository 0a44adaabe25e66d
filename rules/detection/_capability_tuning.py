"""Tuning tables keyed by compute capability (ROC110, ``capability_gate``): a function that
picks kernel configurations by the device's capability, where the configurations AMD gets are
a subset of those NVIDIA gets, only tunes and never gates."""

from __future__ import annotations

import re

import libcst as cst

from .._tree import Tree
from ._capability_branches import _numeric, _test_owner

#: Text of an nvcc architecture flag (``-gencode=arch=compute_90a,code=sm_90a``,
#: ``-arch=sm_80``): a value built for the CUDA compiler, which a ROCm build never runs (hipcc
#: builds for ``PYTORCH_ROCM_ARCH``; the extension build is reported by the ROC6xx rules).
_NVCC_ARCH_FLAG = re.compile(r"-gencode|arch=compute_|code=sm_|-arch[= ]sm_|--gpu-architecture")


def _tuning_value(node: cst.BaseExpression | None) -> bool:
    """A number (a tile or block size) or an nvcc architecture flag built from the
    capability: a value every GPU can use, or one only the CUDA compiler reads."""
    if _numeric(node):
        return True
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
        return bool(_NVCC_ARCH_FLAG.search(_source_text(node)))
    return False


def _subset_of(
    node: cst.BaseExpression | None, candidates: set[str], kept: frozenset[str] = frozenset()
) -> bool:
    """``configs`` or ``[c for c in configs if ...]`` where ``configs`` is a parameter, or a
    local ``kept`` already known to hold some of them, sliced (``kept[:1]``) or sorted
    (``sorted(kept, key=...)``): the function returns some of the autotuning configurations
    it was given."""
    if isinstance(node, cst.Name):
        return node.value in kept or (node.value in candidates and "config" in node.value.lower())
    if isinstance(node, cst.ListComp) and not isinstance(node.for_in.inner_for_in, cst.CompFor):
        return _subset_of(node.for_in.iter, candidates, kept) and (
            isinstance(node.elt, cst.Name)
            and isinstance(node.for_in.target, cst.Name)
            and node.elt.value == node.for_in.target.value
        )
    if isinstance(node, cst.Subscript) and all(
        isinstance(element.slice, cst.Slice) for element in node.slice
    ):
        return _subset_of(node.value, candidates, kept)
    if (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Name)
        and node.func.value in ("sorted", "list")
        and node.args
        and node.args[0].keyword is None
    ):
        return _subset_of(node.args[0].value, candidates, kept)
    return False


def _kept_configs(function: cst.FunctionDef, tree_: Tree, candidates: set[str]) -> frozenset[str]:
    """Locals of an autotune pruning function that hold some of its configurations: assigned a
    subset of them, or what a pruning helper returns for them (``kept = base(configs, args)``:
    a helper given the configurations passes some of them on)."""
    kept: set[str] = set()
    changed = True
    while changed:
        changed = False
        for node in tree_.descendants(function.body):
            if not isinstance(node, cst.Assign) or len(node.targets) != 1:
                continue
            target = node.targets[0].target
            if not isinstance(target, cst.Name) or target.value in kept:
                continue
            value = node.value
            helper = (
                isinstance(value, cst.Call)
                and bool(value.args)
                and value.args[0].keyword is None
                and _subset_of(value.args[0].value, candidates, frozenset(kept))
            )
            if helper or _subset_of(value, candidates, frozenset(kept)):
                kept.add(target.value)
                changed = True
    return frozenset(kept)


def _sort_key(tree_: Tree, node: cst.CSTNode) -> bool:
    """Whether a lambda is the ``key=`` of ``sorted``/``min``/``max``."""
    argument = tree_.parent(node)
    call = tree_.parent(argument) if isinstance(argument, cst.Arg) else None
    return (
        isinstance(argument, cst.Arg)
        and argument.keyword is not None
        and argument.keyword.value == "key"
        and isinstance(call, cst.Call)
        and isinstance(call.func, cst.Name)
        and call.func.value in ("sorted", "min", "max")
    )


def _source_text(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


def _tuning_function(tree_: Tree, comparison: cst.CSTNode) -> bool:
    """A gate inside a function that only computes a tuning value (every ``return`` gives a
    number or an nvcc architecture flag, and its statements are a docstring, assignments,
    asserts, ``if``s, returns and precondition ``raise``s): a tile or block size chosen per
    architecture, which every GPU can use, or a flag only nvcc reads. A gate whose own branch
    raises is a precondition, not a choice, and stays reported."""
    function = next(
        (a for a in tree_.ancestors(comparison) if isinstance(a, cst.FunctionDef)), None
    )
    if function is None:
        return False
    owner = _test_owner(tree_, comparison)
    if isinstance(owner, cst.If) and any(
        isinstance(node, cst.Raise) for node in tree_.descendants(owner.body)
    ):
        return False
    # autotune pruning: ``return configs`` or a filter of it (every GPU can run what is kept)
    candidates = {param.name.value for param in function.params.params}
    kept = _kept_configs(function, tree_, candidates) if candidates else frozenset()
    returns = 0
    for node in tree_.descendants(function.body):
        if isinstance(node, cst.Lambda) and _sort_key(tree_, node):
            continue
        if isinstance(node, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            return False
        if isinstance(node, cst.Return):
            if not (_tuning_value(node.value) or _subset_of(node.value, candidates, kept)):
                return False
            returns += 1
        elif isinstance(node, cst.Expr) and isinstance(node.value, cst.SimpleString):
            continue  # the docstring
        elif isinstance(node, cst.BaseSmallStatement) and not isinstance(
            node,
            (cst.Assign, cst.Assert, cst.Return, cst.Pass, cst.Raise, cst.Import, cst.ImportFrom),
        ):
            return False
    return returns > 0
