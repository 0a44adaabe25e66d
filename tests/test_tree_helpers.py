"""``Tree.of_type`` picks nodes by type identity instead of ``isinstance``: the same nodes, in
the same order, for the concrete classes it accepts, and a refusal for a class with subclasses."""

from __future__ import annotations

import libcst as cst
import pytest

from rules._aliases import _BINDINGS
from rules._tree import tree
from tests.conftest import ROOT

TYPES = [
    (cst.Comparison,),
    (cst.Comparison, cst.Call),
    (cst.Attribute, cst.Name),
    (cst.Return,),
    _BINDINGS,
]


@pytest.mark.parametrize("types", TYPES, ids=lambda types: ",".join(t.__name__ for t in types))
def test_of_type_equals_isinstance_on_the_repository(types):
    sources = sorted((ROOT / "migrator").glob("*.py"))[:20]
    assert sources
    for path in sources:
        tree_ = tree(cst.parse_module(path.read_text(encoding="utf-8")))
        expected = [node for node in tree_.nodes if isinstance(node, types)]
        assert tree_.of_type(*types) == expected, path.name
        assert tree_.of_type(*types) == expected  # the memoised answer, unchanged by a caller


def test_of_type_refuses_a_class_with_subclasses():
    tree_ = tree(cst.parse_module("x = 1\n"))
    with pytest.raises(TypeError, match="BaseExpression has subclasses"):
        tree_.of_type(cst.BaseExpression)
