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
    sources = sorted((ROOT / "migrator").rglob("*.py"))[:20]
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


def _node_classes() -> list[type[cst.CSTNode]]:
    found: list[type[cst.CSTNode]] = []
    pending = [cst.CSTNode]
    while pending:
        current = pending.pop()
        pending.extend(current.__subclasses__())
        if not current.__subclasses__():
            found.append(current)
    return found


class _Recorder(cst.CSTVisitor):
    """Records every visit and leave, whichever way the walk calls them."""

    def __init__(self, context: object = None) -> None:
        super().__init__()
        self.events: list[tuple[str, int]] = []


for _class in _node_classes():
    setattr(
        _Recorder,
        f"visit_{_class.__name__}",
        lambda self, node: self.events.append(("v", id(node))),
    )
    setattr(
        _Recorder,
        f"leave_{_class.__name__}",
        lambda self, node: self.events.append(("l", id(node))),
    )


def test_the_engine_walk_equals_fast_visit_on_the_repository():
    """The engine's walk (parents on its stack, leavings queued only where hooked) visits and
    leaves the nodes that ``fast_visit`` does, in the same order, with ``iter_nodes``'s parents."""
    from migrator.engine.context import PythonContext
    from migrator.engine.dispatch import _Dispatcher
    from migrator.syntax.astutil import fast_visit, iter_nodes
    from migrator.syntax.imports import ImportTable

    sources = sorted((ROOT / "migrator").rglob("*.py")) + sorted((ROOT / "rules").glob("*/*.py"))
    for path in sources[::7]:
        module = cst.parse_module(path.read_text(encoding="utf-8"))
        reference = _Recorder()
        fast_visit(module, reference, trivia=False)
        context = PythonContext(path="m.py", module=module, imports=ImportTable.from_module(module))
        walked = _Recorder()
        _Dispatcher([walked], context).walk(module)  # type: ignore[list-item]
        assert walked.events == reference.events, path.name
        pairs = iter_nodes(module)
        assert context.nodes == [node for node, _ in pairs]
        assert context.parents == {id(node): parent for node, parent in pairs if parent is not None}
        assert context.complete


def test_descendants_are_the_syntax_nodes_under_a_node_on_the_repository():
    """``Tree.descendants`` (syntax nodes only, read once per node) holds every node under a
    function that libcst's own ``children`` reach, less the trivia: the same nodes by identity,
    on every function of the repository's first modules."""
    from migrator.syntax.astutil import _is_syntax_type

    def by_children(node: cst.CSTNode) -> list[cst.CSTNode]:
        out: list[cst.CSTNode] = []
        stack = list(node.children)
        while stack:
            current = stack.pop()
            out.append(current)
            stack.extend(current.children)
        return out

    checked = 0
    for path in sorted((ROOT / "migrator" / "engine").glob("*.py"))[:12]:
        tree_ = tree(cst.parse_module(path.read_text(encoding="utf-8")))
        for function in tree_.of_type(cst.FunctionDef):
            expected = {id(n) for n in by_children(function) if _is_syntax_type(type(n))}
            assert {id(n) for n in tree_.descendants(function)} == expected, path.name
            assert tree_.descendants(function) is tree_.descendants(function)
            checked += 1
    assert checked > 100


@pytest.mark.parametrize("order", ["pre-order", "reversed"])
def test_scope_is_the_innermost_function_or_lambda_whatever_the_order_of_questions(order):
    """``Tree.scope`` keeps each answer for the ancestors it passes: asked deepest first or
    outermost first, it answers as the plain walk up the ancestors does."""
    sources = sorted((ROOT / "migrator" / "engine").glob("*.py"))[:12]
    kinds: set[type] = set()
    for path in sources:
        tree_ = tree(cst.parse_module(path.read_text(encoding="utf-8")))
        nodes = tree_.nodes if order == "pre-order" else list(reversed(tree_.nodes))
        answers = {id(node): tree_.scope(node) for node in nodes}
        kinds.update(type(answer) for answer in answers.values())
        for node in tree_.nodes:
            expected = next(
                (a for a in tree_.ancestors(node) if isinstance(a, (cst.FunctionDef, cst.Lambda))),
                tree_.module,
            )
            assert answers[id(node)] is expected, path.name
    assert kinds == {cst.Module, cst.FunctionDef, cst.Lambda}


def test_import_flags_read_the_simple_statements_beside_blocks():
    """A block in a ``try`` body or in its handler (an ``if``, a nested ``try``) is passed over,
    not read as statements: a file shaped so once failed every rule with a TypeError."""
    from rules._optional_backend import _import_flags

    module = cst.parse_module(
        "try:\n    if old_gpu:\n        raise ImportError('too old')\n    import xformers\n"
        "except ImportError:\n    try:\n        import fallback\n    except ImportError:\n"
        "        pass\n    XFORMERS = False\n"
    )
    assert _import_flags(module) == {"xformers": frozenset({"XFORMERS"})}
