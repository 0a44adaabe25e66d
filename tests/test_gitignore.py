"""The gitignore matcher (``migrator.files.gitignore``): the answers of pathspec's
GitIgnoreSpec on every pattern and path drawn, without its backtracking expressions."""

from __future__ import annotations

import copy
import re
import warnings

import pathspec
from hypothesis import given, settings
from hypothesis import strategies as st

from migrator.files.gitignore import GitIgnore

PIECES = ["a", "b", "*", "?", "**", "[ab]", "[a-c]", "\\*", "x", "/", "c*", "*.py", "a?", "\\"]
NAMES = ["a", "b", "ab", "ba", "x", "c", "cc", "a.py", "*", "aa", "b.py", "[ab]", "a b"]
LINES = st.lists(
    st.tuples(st.booleans(), st.lists(st.sampled_from(PIECES), min_size=1, max_size=5)).map(
        lambda drawn: ("!" if drawn[0] else "") + "".join(drawn[1])
    ),
    min_size=1,
    max_size=5,
)
PATHS = st.lists(
    st.tuples(st.lists(st.sampled_from(NAMES), min_size=1, max_size=4), st.booleans()).map(
        lambda drawn: "/".join(drawn[0]) + ("/" if drawn[1] else "")
    ),
    min_size=1,
    max_size=20,
)
#: Where pathspec's expressions part from git, the matcher follows git: a component made of
#: three or more stars alone matches the empty name after a folder's trailing ``/``.
_STARS_ALONE = re.compile(r"(^|/|!)\*\*\*+(/|$)")


@settings(max_examples=400, deadline=None)
@given(LINES, PATHS)
def test_answers_equal_pathspecs(lines, paths):
    if any(_STARS_ALONE.search(line) for line in lines):
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            spec = pathspec.GitIgnoreSpec.from_lines(lines)
        except (ValueError, re.error):
            return  # pathspec refuses the file; the matcher drops the bad pattern only
    ignore = GitIgnore.from_lines(lines)
    for path in paths:
        assert ignore.match_file(path) == spec.match_file(path), (lines, path)


def test_a_backtracking_pattern_is_answered_at_once():
    ignore = GitIgnore.from_lines(["*a*a*a*a*a*a*a*a*a*a*a*a!", "ignored_*.py"])
    assert not ignore.match_file("a" * 250)
    assert not ignore.match_file("a" * 250 + "/" + "a" * 250 + ".py")
    assert ignore.match_file("a" * 250 + "!")
    assert ignore.match_file("pkg/ignored_1.py")
    exclude = GitIgnore.from_lines(["**/*a*a*a*a*a*a*a*a*a*a*a*a!/**"])
    assert not exclude.match_file("a" * 250 + "/b.py")


def test_ranges_never_match_a_slash():
    """git's ``[!a]`` matches one character of a name, never ``/`` (pathspec's does)."""
    assert not GitIgnore.from_lines(["*[!a]"]).match_file("a/")
    assert GitIgnore.from_lines(["*[!a]"]).match_file("ab")


def test_patterns_git_cannot_read_match_nothing():
    ignore = GitIgnore.from_lines(["foo\\", "[a-", "!", "[z-a]", "kept"])
    assert len(ignore.patterns) == 1
    assert ignore.match_file("kept") and not ignore.match_file("foo")


@settings(max_examples=300, deadline=None)
@given(LINES, PATHS)
def test_expressions_and_components_agree(lines, paths):
    """A pattern matched by its whole-path expressions answers as it does component by
    component (the way patterns with several ``*`` in a name are matched)."""
    for pattern in GitIgnore.from_lines(lines).patterns:
        by_components = copy.copy(pattern)
        by_components.itself = by_components.inside = None
        for path in paths:
            folder = path.endswith("/")
            parts = (path[:-1] if folder else path).split("/")
            expected = by_components.match(path, parts, folder)
            assert pattern.match(path, parts, folder) == expected, (pattern, path)
