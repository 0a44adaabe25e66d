"""Python's own ``ast`` of a text, for readers that must not load libcst (a warm scan loads
neither the rules nor libcst)."""

from __future__ import annotations

import ast
import warnings


def parse_ast(text: str) -> ast.Module | None:
    """``text``'s ``ast`` (syntax warnings silenced), None when ``ast`` rejects it."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
