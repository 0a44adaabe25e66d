"""``astutil.simple_string_value`` reads a plain literal between its quotes instead of through
``ast.literal_eval`` (which libcst's ``evaluated_value`` calls, leaving a cycle of closures per
call): the same value as libcst's for every string literal of this repository and the edge
cases, and a fallback to libcst's for prefixes, escapes and carriage returns."""

from __future__ import annotations

import libcst as cst
import pytest

from migrator.syntax.astutil import simple_string_value
from tests.conftest import ROOT
from tests.project_sources import GROUP, libcst_tree


def _literals(module: cst.Module) -> list[cst.SimpleString]:
    found: list[cst.SimpleString] = []

    class _Collect(cst.CSTVisitor):
        def visit_SimpleString(self, node: cst.SimpleString) -> None:
            found.append(node)

    module.visit(_Collect())
    return found


@GROUP
def test_equal_to_libcst_on_every_literal_of_the_repository() -> None:
    literals = [
        node
        for folder in ("migrator", "rules", "tests")
        for path in sorted((ROOT / folder).rglob("*.py"))
        for node in _literals(libcst_tree(path))
    ]
    assert len(literals) > 10_000
    for node in literals:
        value = simple_string_value(node)
        expected = node.evaluated_value
        assert (value, type(value)) == (expected, type(expected)), node.value


@pytest.mark.parametrize(
    "literal",
    [
        '""',
        "''",
        '""""""',
        "''''''",
        '"""a"b"""',
        "'''a''b'''",
        '"\'"',
        "'\"'",
        '"""\nline\n"""',
        '"tab\there"',
        '"é ünïcödé 🙂"',
        'r"\\d+"',
        'b"bytes"',
        'u"text"',
        'R"raw"',
        'rb"\\x00"',
        '"escape\\n"',
        '"""crlf\r\nline"""',
    ],
)
def test_edge_cases_equal_to_libcst(literal: str) -> None:
    node = cst.SimpleString(literal)
    value = simple_string_value(node)
    assert (value, type(value)) == (node.evaluated_value, type(node.evaluated_value))
