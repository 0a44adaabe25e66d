"""The preprocessor's alternative spellings of operators (``and``, ``or``, ``not``, ``bitand``,
...) in an ``#if`` condition, rewritten to the symbols they stand for so that the condition
parses as the expression the compiler evaluates: tree-sitter's grammar reads them as names and
recovers with an error node, which would leave a guard's value unknown."""

from __future__ import annotations

import re
from typing import Any

from migrator.kernels.source import CudaSource, parse_text

#: C++'s alternative tokens ([lex.digraph]) that may appear in a preprocessor expression.
ALTERNATIVES = {
    "and": "&&",
    "or": "||",
    "not": "!",
    "not_eq": "!=",
    "bitand": "&",
    "bitor": "|",
    "xor": "^",
    "compl": "~",
}
_SPELLED = re.compile(r"\b(" + "|".join(ALTERNATIVES) + r")\b")
_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
#: Longest condition rewritten (a generated file's pathological directive is left unknown).
_MAX_CONDITION = 4096


def _condition_text(source: CudaSource, directive: Any) -> str:
    """The text after ``#if``/``#elif`` up to the end of the logical line (continuations
    joined, comments dropped)."""
    keyword = directive.children[0] if directive.children else None
    start = directive.start_byte if keyword is None else keyword.end_byte
    data = source.data
    end = start
    while True:
        newline = data.find(b"\n", end)
        if newline < 0:
            end = len(data)
            break
        end = newline
        if newline - start > _MAX_CONDITION:
            break  # read no further than the text kept
        if not data[max(start, newline - 2) : newline].rstrip(b"\r").endswith(b"\\"):
            break
        end = newline + 1  # a continuation: the condition goes on on the next line
    text = re.sub(r"\\\r?\n", " ", source.text(start, min(end, start + _MAX_CONDITION)))
    return _COMMENT.sub(" ", text)


def standard_condition(
    source: CudaSource, directive: Any, condition: Any
) -> tuple[CudaSource, Any]:
    """The source and node to evaluate for the condition of ``directive`` (a ``preproc_if`` or
    ``preproc_elif``): the original ones, or, where the condition spells an operator with an
    alternative token, a parse of the condition with the symbols in their place."""
    if condition is None:
        return source, condition
    text = _condition_text(source, directive)
    if not _SPELLED.search(text):
        return source, condition
    rewritten = _SPELLED.sub(lambda match: f" {ALTERNATIVES[match.group(1)]} ", text)
    parsed = parse_text(f"#if {' '.join(rewritten.split())}\n#endif\n", source.macros)
    node = next(iter(parsed.nodes("preproc_if")), None)
    replacement = None if node is None else node.child_by_field_name("condition")
    if replacement is None or replacement.has_error:
        return source, condition
    return parsed, replacement


__all__ = ["ALTERNATIVES", "standard_condition"]
