"""Source positions of reported nodes without regenerating the whole module.

libcst's PositionProvider re-generates the code of the entire module (plus a metadata visit)
to find the position of any node; on large files that costs more than parsing. Python's ``ast``
(a C parser, a few per cent of a libcst parse) already knows the first line of every statement,
so only the innermost statement around each reported node is regenerated, starting at the line
``ast`` gives for it. Any mismatch between the two trees falls back to the full provider.
"""

from __future__ import annotations

import ast
import traceback
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

import libcst as cst
from libcst.metadata import CodePosition, CodeRange, MetadataWrapper, PositionProvider
from libcst.metadata.position_provider import PositionProvidingCodegenState

_BLOCK_OWNERS = (
    cst.ClassDef,
    cst.FunctionDef,
    cst.If,
    cst.For,
    cst.While,
    cst.With,
    cst.Try,
    cst.TryStar,
)


class _Sink:
    """Stands in for the provider object the codegen state records positions into; with an
    anchor and the ids of the wanted nodes under it, it stops the generation (``_Done``) once
    they all have their ranges and the anchor's start is known."""

    def __init__(self, anchor: cst.CSTNode, wanted: set[int]) -> None:
        self._computed = _Recorder(self)
        self.anchor = anchor
        self.wanted = wanted
        #: whether the generation stopped (or never needed to)
        self.finished = not wanted
        #: where the anchor's range starts (``_State``)
        self.anchor_start: CodePosition | None = None

    def release(self) -> None:
        """Break the sink's cycle with its recorder (which holds the generated nodes) once its
        ranges are read, so that they are freed at once, not by the garbage collector."""
        self._computed.sink = None

    def stop_when_done(self) -> None:
        if not self.wanted and self.anchor_start is not None:
            self.finished = True
            raise _Done


def _ast_counts(statement: cst.BaseStatement) -> int:
    return len(statement.body) if isinstance(statement, cst.SimpleStatementLine) else 1


def _first_line(node: ast.stmt) -> int:
    """The line both trees agree a statement starts on (for decorated definitions, the ``def`` or
    ``class`` line: libcst's position of a FunctionDef excludes its decorators, as ast's does)."""
    return node.lineno


def _match(cst_body: Sequence[cst.BaseStatement], ast_body: Sequence[ast.stmt]) -> list[ast.stmt]:
    """The ast statement that starts each libcst statement of a body (raises on mismatch)."""
    out: list[ast.stmt] = []
    index = 0
    for statement in cst_body:
        if index >= len(ast_body):
            raise LookupError("statement count differs")
        out.append(ast_body[index])
        index += _ast_counts(statement)
    if index != len(ast_body):
        raise LookupError("statement count differs")
    return out


def full_positions(module: cst.Module) -> Callable[[cst.CSTNode], CodeRange | None]:
    positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    return positions.get


def positions_for(
    module: cst.Module,
    text: str,
    nodes: Sequence[cst.CSTNode],
    parent: Callable[[cst.CSTNode], cst.CSTNode | None],
    tree: ast.Module | None = None,
) -> Callable[[cst.CSTNode], CodeRange | None]:
    """A lookup giving the CodeRange of each of ``nodes`` (as PositionProvider would); ``tree``
    is ``text``'s ``ast`` when the caller already has it."""
    try:
        if tree is None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tree = ast.parse(text)
        return _anchored(module, tree, nodes, parent)
    except (SyntaxError, ValueError, LookupError, RecursionError, KeyError):
        return full_positions(module)


def _chain(
    node: cst.CSTNode, parent: Callable[[cst.CSTNode], cst.CSTNode | None]
) -> list[cst.CSTNode]:
    chain = [node]
    current = parent(node)
    while current is not None:
        chain.append(current)
        current = parent(current)
    chain.reverse()  # module first
    return chain


class _Done(Exception):
    """Raised once every wanted node of an anchor has its range and the anchor's start is
    known: the rest of the anchor is not generated."""


class _Recorder(dict[cst.CSTNode, CodeRange]):
    """The ranges the codegen state records (a node's when its own code is complete), telling
    the sink when a wanted one is in."""

    def __init__(self, sink: _Sink) -> None:
        super().__init__()
        self.sink: _Sink | None = sink

    def __setitem__(self, key: cst.CSTNode, value: CodeRange) -> None:
        super().__setitem__(key, value)
        sink = self.sink
        if sink is not None and not sink.finished and id(key) in sink.wanted:
            sink.wanted.discard(id(key))
            sink.stop_when_done()


class _State(PositionProvidingCodegenState):
    """Notes where the anchor's own range starts (its end is never reached when the
    generation stops early; a definition's starts after its decorators)."""

    @contextmanager
    def record_syntactic_position(
        self,
        node: cst.CSTNode,
        *,
        start_node: cst.CSTNode | None = None,
        end_node: cst.CSTNode | None = None,
    ) -> Iterator[None]:
        sink = self.provider
        if isinstance(sink, _Sink) and node is sink.anchor and sink.anchor_start is None:
            sink.anchor_start = CodePosition(self.line, self.column)
            sink.stop_when_done()
        with super().record_syntactic_position(node, start_node=start_node, end_node=end_node):
            yield


def _anchored(
    module: cst.Module,
    tree: ast.Module,
    nodes: Sequence[cst.CSTNode],
    parent: Callable[[cst.CSTNode], cst.CSTNode | None],
) -> Callable[[cst.CSTNode], CodeRange | None]:
    # the nodes by their anchor statement, each anchor generated once, up to its last wanted
    # node (a finding in an ``if`` test does not need the code of the whole ``if``)
    groups: dict[int, tuple[cst.BaseStatement, ast.stmt, list[str], list[cst.CSTNode]]] = {}
    for node in nodes:
        chain = _chain(node, parent)
        if not chain or chain[0] is not module:
            raise LookupError("node not under the module")
        anchor, ast_anchor, indents = _find_anchor(module, tree, chain)
        groups.setdefault(id(anchor), (anchor, ast_anchor, indents, []))[3].append(node)
    computed: dict[cst.CSTNode, CodeRange] = {}
    for anchor, ast_anchor, indents, members in groups.values():
        wanted = {id(member) for member in members if member not in computed}
        if not wanted:
            continue
        sink = _Sink(anchor, wanted)
        state = _State(
            default_indent=module.default_indent,
            default_newline=module.default_newline,
            provider=sink,  # type: ignore[arg-type]
        )
        state.indent_tokens = list(indents)
        try:
            anchor._codegen(state)
        except (_Done, KeyError) as stopped:
            # stopped early; a ``finally`` of an unfinished ancestor may have failed to look up
            # the range of a child not generated yet (only once every wanted node has its own)
            if not sink.finished:
                raise
            # the stop's traceback holds the generation's finished frames, and a context
            # manager's exit among them holds the stop itself: a cycle that would keep every
            # frame's locals, up to the caller's tree, for the garbage collector
            traceback.clear_frames(stopped.__traceback__)
        start = sink.anchor_start
        if start is None:  # a statement recording no syntactic position: generated whole
            start = sink._computed[anchor].start
        offset = _first_line(ast_anchor) - start.line
        for key, code_range in sink._computed.items():
            computed[key] = CodeRange(
                start=type(code_range.start)(
                    code_range.start.line + offset, code_range.start.column
                ),
                end=type(code_range.end)(code_range.end.line + offset, code_range.end.column),
            )
        sink.release()
        if any(member not in computed for member in members):
            raise LookupError("node not positioned by its anchor")
    return computed.get


def _find_anchor(
    module: cst.Module, tree: ast.Module, chain: list[cst.CSTNode]
) -> tuple[cst.BaseStatement, ast.stmt, list[str]]:
    """The innermost statement on ``chain`` reachable through plain ``body`` blocks, with its ast
    counterpart and the indentation in force there."""
    body: Sequence[cst.BaseStatement] = module.body
    ast_body: Sequence[ast.stmt] = tree.body
    indents: list[str] = []
    position = 1
    while True:
        statement = chain[position] if position < len(chain) else None
        if statement is None or not isinstance(statement, cst.BaseStatement):
            raise LookupError("no statement on the chain")
        matched = _match(body, ast_body)
        index = next((i for i, item in enumerate(body) if item is statement), None)
        if index is None:
            raise LookupError("statement not in its body")
        ast_statement = matched[index]
        # Descend into the statement's own indented body when the node lies there.
        block = getattr(statement, "body", None)
        if (
            isinstance(statement, _BLOCK_OWNERS)
            and isinstance(block, cst.IndentedBlock)
            and position + 2 < len(chain)
            and chain[position + 1] is block
            and isinstance(chain[position + 2], cst.BaseStatement)
            and hasattr(ast_statement, "body")
        ):
            indents.append(block.indent if block.indent is not None else module.default_indent)
            body = block.body
            ast_body = ast_statement.body
            position += 2
            continue
        return statement, ast_statement, indents


def map_range(code_range: CodeRange, lines: Sequence[int]) -> CodeRange:
    """A position in a text made of some of a file's lines (``PartialSource.compacted``) as the
    file's: each line by ``lines`` (the file's number of each), and an end at the start of a
    line as the end of the line before it."""

    def line(number: int) -> int:
        if number <= len(lines):
            return lines[number - 1]
        return (lines[-1] if lines else 0) + number - len(lines)

    start, end = code_range.start, code_range.end
    end_line = line(end.line - 1) + 1 if end.column == 0 and end.line > 1 else line(end.line)
    return CodeRange(
        start=type(start)(line(start.line), start.column),
        end=type(end)(end_line, end.column),
    )
