"""The whole file's ``ast``, for file-wide facts a rule needs beyond its parse scope.

Partial parsing (``migrator.engine.partial``) gives a rule the concrete tree of only the statements it
reads; a fact about the whole file (does it name some dtype anywhere, what does every use of a
name do, which parameters does a function of this file take) is read here instead, from the
``ast`` of the whole text. Both parse modes read it the same way, so they give the same answer.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator

from migrator.api import PythonContext
from migrator.api.syntax import parse_ast


def file_text(ctx: PythonContext) -> str:
    """The whole file's text, also when its module holds only part of it."""
    return ctx.text or ctx.module_code()


def file_nodes(ctx: PythonContext) -> list[ast.AST] | None:
    """Every node of the whole file's ``ast`` (None when ``ast`` rejects the text: callers then
    answer as if the fact were unknown), read once per file."""
    memo = ctx.memo
    if "file-ast-nodes" not in memo:
        tree = ctx.file_tree if ctx.file_tree is not None else parse_ast(file_text(ctx))
        memo["file-ast-nodes"] = list(ast.walk(tree)) if tree is not None else None
    nodes = memo["file-ast-nodes"]
    assert nodes is None or isinstance(nodes, list)
    return nodes


def resolves_anywhere(ctx: PythonContext, qualified: set[str]) -> bool:
    """Whether the file reads one of ``qualified`` anywhere: an attribute chain, or an imported
    name loaded, that its imports resolve to one (``ImportTable.resolve_ast``)."""
    key = "file-resolves:" + ",".join(sorted(qualified))
    if key in ctx.memo:
        return bool(ctx.memo[key])
    found = False
    tails = {name.rsplit(".", 1)[-1] for name in qualified}
    # a name ends in a part the file spells, or one a re-export gives it
    spelled = any(tail in file_text(ctx) for tail in tails) or ctx.imports.renames_to(tails)
    if spelled and ctx.imports.may_resolve(qualified):
        bindings = ctx.imports.bindings
        for node in file_nodes(ctx) or ():
            if isinstance(node, ast.Attribute):
                if node.attr not in tails:
                    continue
            elif not (
                isinstance(node, ast.Name)
                and node.id in bindings
                and isinstance(node.ctx, ast.Load)
            ):
                continue
            if ctx.imports.resolve_ast(node) in qualified:
                found = True
                break
    ctx.memo[key] = found
    return found


def identifiers(node: ast.AST) -> Iterator[str]:
    """The identifiers ``node`` itself spells that are not ``Name`` nodes (an attribute's name,
    a definition's, a parameter's, a keyword's, an import's parts, ``global`` names...)."""
    if isinstance(node, ast.Attribute):
        yield node.attr
    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        yield node.name
    elif isinstance(node, ast.arg):
        yield node.arg
    elif isinstance(node, ast.keyword):
        if node.arg is not None:
            yield node.arg
    elif isinstance(node, ast.alias):
        yield from node.name.split(".")
        if node.asname is not None:
            yield node.asname
    elif isinstance(node, ast.ImportFrom):
        if node.module is not None:
            yield from node.module.split(".")
    elif isinstance(node, (ast.Global, ast.Nonlocal)):
        yield from node.names
    elif isinstance(node, ast.ExceptHandler):
        if node.name is not None:
            yield node.name
    elif isinstance(node, (ast.MatchAs, ast.MatchStar)):
        if node.name is not None:
            yield node.name
    elif isinstance(node, ast.MatchMapping):
        if node.rest is not None:
            yield node.rest
    elif isinstance(node, ast.MatchClass):
        yield from node.kwd_attrs
    elif sys.version_info >= (3, 12) and isinstance(
        node, (ast.TypeVar, ast.ParamSpec, ast.TypeVarTuple)
    ):
        yield node.name


def spelled_names(node: ast.AST) -> Iterator[str]:
    """Every identifier ``node`` itself spells, a ``Name``'s included."""
    if isinstance(node, ast.Name):
        yield node.id
    else:
        yield from identifiers(node)


def code_strings(nodes: list[ast.AST]) -> Iterator[str]:
    """The string (and bytes) literals among ``nodes`` that are code: not an expression
    statement's (a docstring) and not the literal text of an f-string."""
    skipped: set[int] = set()
    for node in nodes:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            skipped.add(id(node.value))
        elif isinstance(node, ast.JoinedStr):
            skipped.update(id(value) for value in node.values if isinstance(value, ast.Constant))
    for node in nodes:
        if isinstance(node, ast.Constant) and id(node) not in skipped:
            if isinstance(node.value, str):
                yield node.value
            elif isinstance(node.value, bytes):
                yield node.value.decode("latin-1")


def parameter_names(ctx: PythonContext, function: str, index: int) -> set[str | None]:
    """The name of the ``index``-th positional parameter of each function of this file named
    ``function`` (None where it has fewer); empty when it defines none, or ``ast`` rejects it."""
    names: set[str | None] = set()
    for node in file_nodes(ctx) or ():
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == function:
            params = [*node.args.posonlyargs, *node.args.args]
            names.add(params[index].arg if index < len(params) else None)
    return names
