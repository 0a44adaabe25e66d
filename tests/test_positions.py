"""The anchored position computation agrees with libcst's PositionProvider on real code."""

from __future__ import annotations

import ast
from pathlib import Path

import libcst as cst
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from migrator.syntax.astutil import iter_nodes
from migrator.syntax.positions import _anchored, full_positions
from tests.conftest import ROOT
from tests.project_sources import GROUP, SOURCES, libcst_tree, text_of
from tests.strategies import python_sources

pytestmark = GROUP


def _check(text: str, module: cst.Module | None = None) -> None:
    """``module`` is libcst's parse of ``text`` when the caller has it already."""
    module = cst.parse_module(text) if module is None else module
    pairs = iter_nodes(module)
    parents = {id(node): parent for node, parent in pairs if parent is not None}
    nodes = [node for node, _ in pairs if not isinstance(node, cst.Module)]
    expected = full_positions(module)
    tree = ast.parse(text)  # read only: one parse serves every batch, as the engine passes one
    # positions in batches, as the engine asks for them (the reported nodes of one file)
    for start in range(0, len(nodes), 97):
        batch = nodes[start : start + 97 : 7]
        # the anchored path itself (no fallback): a mismatch raises and fails the test
        got = _anchored(module, tree, batch, lambda n: parents.get(id(n)))
        for node in batch:
            assert got(node) == expected(node), (
                type(node).__name__,
                module.code_for_node(node)[:60],
            )


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_positions_match_libcst_on_project_sources(path: Path):
    _check(text_of(path), libcst_tree(path))


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(source=st.deferred(python_sources))
def test_positions_match_libcst_on_generated_code(source):
    try:
        cst.parse_module(source)
        compile(source, "g.py", "exec")
    except Exception:
        return
    _check(source)


def test_a_walk_without_trivia_reads_only_the_fields_that_can_hold_syntax() -> None:
    """``syntax_children`` skips the fields declared to hold only trivia, strings or sentinels:
    on every node of the repository's own code and the fixtures (trivia included) it returns
    what reading every field returns."""
    from migrator.syntax.astutil import _fields, _is_syntax_type, child_nodes, syntax_children

    def every_field(node: cst.CSTNode) -> list[cst.CSTNode]:
        out: list[cst.CSTNode] = []
        for name in _fields(type(node)):
            value = getattr(node, name)
            values = value if isinstance(value, (list, tuple)) else [value]
            out.extend(item for item in values if _is_syntax_type(type(item)))
        return out

    types: set[type] = set()
    for path in SOURCES:
        pending: list[cst.CSTNode] = [libcst_tree(path)]
        while pending:
            node = pending.pop()
            types.add(type(node))
            assert syntax_children(node) == every_field(node), (path, type(node).__name__)
            pending.extend(child_nodes(node))
    assert len(types) > 100  # the sample reaches most node types
