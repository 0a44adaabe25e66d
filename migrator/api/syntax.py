"""Syntax helpers for rules: reading calls, literals and names in libcst trees, walking them
fast, building replacement nodes, the standard ``ast`` of a file, the shell lexer and the
Dockerfile reader. Pure
functions of text and nodes; what needs the file's imports is a method of ``PythonContext``."""

from migrator.syntax.astutil import (
    arg,
    child_nodes,
    expr,
    fast_visit,
    handler_types,
    has_star_args,
    is_node_type,
    iter_nodes,
    keyword_arg,
    literal_value,
    positional_arg,
    replace_call,
    simple_string_value,
    string_value,
    syntax_children,
    with_comma,
)
from migrator.syntax.dockerfile import ImageRef
from migrator.syntax.dockerfile import image_refs as dockerfile_images
from migrator.syntax.imports import dotted_name
from migrator.syntax.parse import parse_ast
from migrator.syntax.shell_lex import code_lines, code_part, lex, starts_comment

__all__ = [
    "ImageRef",
    "arg",
    "child_nodes",
    "code_lines",
    "code_part",
    "dockerfile_images",
    "dotted_name",
    "expr",
    "fast_visit",
    "handler_types",
    "has_star_args",
    "is_node_type",
    "iter_nodes",
    "keyword_arg",
    "lex",
    "literal_value",
    "parse_ast",
    "positional_arg",
    "replace_call",
    "simple_string_value",
    "starts_comment",
    "string_value",
    "syntax_children",
    "with_comma",
]
