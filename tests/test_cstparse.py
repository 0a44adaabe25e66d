"""Parsing without re-validating parser-built nodes (``migrator.syntax.parse``): the same trees as
libcst's own parse, and validation back in force for every node built afterwards."""

from __future__ import annotations

import libcst as cst
import pytest

from migrator.syntax.parse import parse_module
from tests.project_sources import GROUP, SOURCES, libcst_tree, text_of


@GROUP
def test_the_tree_is_libcsts_own():
    assert len(SOURCES) > 100
    for path in SOURCES:
        text = text_of(path)
        module = parse_module(text)
        assert module.code == text
        assert module.deep_equals(libcst_tree(path))


def test_the_parser_built_nodes_are_not_validated_again(monkeypatch):
    def refuse(self):
        raise cst.CSTValidationError("validated")

    monkeypatch.setattr(cst.Name, "_validate", refuse)
    assert parse_module("x = y\n").code == "x = y\n"
    with pytest.raises(cst.CSTValidationError):
        cst.parse_module("x = y\n")


def test_validation_is_back_after_a_parse_and_after_a_failed_one():
    parse_module("x = 1\n")
    with pytest.raises(cst.CSTValidationError):
        cst.Name("")
    with pytest.raises(cst.ParserSyntaxError):
        parse_module("def (:\n")
    with pytest.raises(cst.CSTValidationError):
        cst.Name("")
