"""Continuation lines aligned under a bracket that a fix moved stay aligned under it
(``migrator.engine.visual_indent``); hanging indents and lines aligned elsewhere are kept."""

from __future__ import annotations

from migrator.engine.visual_indent import keep_visual_indent


def _rewrite(old: str, before: str, after: str) -> str:
    return keep_visual_indent(old, old.replace(before, after, 1))


def test_aligned_arguments_follow_the_moved_bracket():
    old = "x = fooooo(a,\n           b,\n           c)\ny = 1\n"
    assert _rewrite(old, "fooooo(", "f(") == "x = f(a,\n      b,\n      c)\ny = 1\n"
    assert _rewrite(old, "fooooo(", "fooooooo(") == (
        "x = fooooooo(a,\n             b,\n             c)\ny = 1\n"
    )


def test_hanging_indent_and_other_lines_are_kept():
    hanging = "x = fooooo(\n    a,\n    b)\n"
    assert _rewrite(hanging, "fooooo(", "f(") == "x = f(\n    a,\n    b)\n"
    elsewhere = "x = fooooo(a,\n    b)\nz = g(1,\n      2)\n"
    assert _rewrite(elsewhere, "fooooo(", "f(") == "x = f(a,\n    b)\nz = g(1,\n      2)\n"


def test_brackets_in_strings_and_comments_do_not_count():
    old = 'x = fooooo("(", a,  # )\n           b)\n'
    assert _rewrite(old, "fooooo(", "f(") == 'x = f("(", a,  # )\n      b)\n'


def test_lines_after_the_bracket_closes_are_kept():
    old = "x = fooooo(a,\n           b)\n           # aligned by chance\n"
    assert _rewrite(old, "fooooo(", "f(") == (
        "x = f(a,\n      b)\n           # aligned by chance\n"
    )
