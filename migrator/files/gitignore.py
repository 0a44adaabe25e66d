"""Gitignore patterns matched without backtracking regular expressions, so that a hostile
pattern (``*a*a*a*a*a*a*a*a*a*a*a*a!``) against a long name costs time proportional to their
lengths; the expressions pathspec compiles for such a pattern backtrack for hours.

The rules are those of pathspec's ``GitIgnoreSpec`` (git's, edge cases included): a pattern
without a ``/`` but at its end matches at any depth, one with a ``/`` is anchored to its
``.gitignore``'s folder, ``**`` stands for any number of whole folders, a trailing ``/`` (or
``/**``) matches what is inside a folder; the last pattern that matches the path itself wins,
else the last that matches a folder above it. A path ending in ``/`` is a folder. A pattern
git cannot read (a trailing backslash, an unclosed range) matches nothing."""

from __future__ import annotations

import re
import time
import warnings
from collections.abc import Iterable, Sequence

#: A token of a component's glob: one literal character, ``?``, ``*`` or a bracket range.
_Token = str | re.Pattern[str] | None
#: ``*`` in a component's glob (any run of characters).
_STAR: _Token = None
#: ``?`` in a component's glob (one character); literals are one-character strings.
_ANY = ""

#: No match; a match of a folder above the path (or of a folder's inside); of the path itself.
NONE, FOLDER, ITSELF = 0, 1, 2


class _Invalid(ValueError):
    """A pattern git cannot read: it matches nothing."""


class _Glob:
    """The glob of one path component (``*.py``, ``[ab]_?``); ``*`` never crosses ``/``."""

    __slots__ = ("tokens", "stars", "_regex", "_literal")

    def __init__(self, tokens: Sequence[_Token]) -> None:
        self.tokens = tuple(tokens)
        self.stars = stars = sum(1 for token in self.tokens if token is _STAR)
        self._literal: str | None = None
        self._regex: re.Pattern[str] | None = None  # compiled when first needed
        if stars == 0 and all(isinstance(token, str) and token for token in self.tokens):
            self._literal = "".join(token for token in self.tokens if isinstance(token, str))

    def matches(self, name: str) -> bool:
        if self._literal is not None:
            return name == self._literal
        if self.stars > 1:
            return _wildmatch(self.tokens, name)
        if self._regex is None:  # one unbounded run cannot backtrack more than name x glob
            self._regex = re.compile("(?s:" + "".join(map(_regex_of, self.tokens)) + r")\Z")
        return self._regex.match(name) is not None

    def path_regex(self) -> str:
        """This glob as part of an expression over a whole path: nothing crosses ``/``."""
        return "".join(map(_component_regex_of, self.tokens))

    def approximation(self) -> str:
        """An expression for one component that matches at least what this glob matches, with
        at most one unbounded run (its text before the first ``*`` and after the last)."""
        if _STAR not in self.tokens:
            return "".join(map(_component_regex_of, self.tokens))
        first = self.tokens.index(_STAR)
        last = len(self.tokens) - 1 - self.tokens[::-1].index(_STAR)
        head = "".join(map(_component_regex_of, self.tokens[:first]))
        tail = "".join(map(_component_regex_of, self.tokens[last + 1 :]))
        return head + "[^/]*" + tail


def _regex_of(token: _Token) -> str:
    if isinstance(token, str):
        return "." if token == _ANY else re.escape(token)
    return ".*" if token is None else token.pattern


def _component_regex_of(token: _Token) -> str:
    """``_regex_of`` for a whole path: ``?``, ``*`` and ranges never cross ``/``."""
    if token is _STAR:
        return "[^/]*"
    if token == _ANY:
        return "[^/]"
    if isinstance(token, re.Pattern):
        return "(?!/)" + token.pattern
    return _regex_of(token)


def _one(token: _Token, char: str) -> bool:
    if isinstance(token, str):
        return token == _ANY or token == char
    return token is not None and token.match(char) is not None


def _wildmatch(tokens: Sequence[_Token], name: str) -> bool:
    """Whether ``tokens`` match all of ``name``: on a mismatch, only the last ``*`` takes one
    more character (an earlier one never needs to), so the work is at most name x glob."""
    token = position = 0
    star = -1
    star_position = 0
    count = len(tokens)
    while position < len(name):
        if token < count:
            current = tokens[token]
            if current is _STAR:
                star, star_position = token, position
                token += 1
                continue
            if _one(current, name[position]):
                token += 1
                position += 1
                continue
        if star < 0:
            return False
        star_position += 1
        position = star_position
        token = star + 1
    while token < count and tokens[token] is _STAR:
        token += 1
    return token == count


def _parse_glob(text: str) -> _Glob:
    """The glob of one component, read as git reads it (backslash escapes, ``[!…]`` and
    ``[^…]`` negated ranges); consecutive ``*`` are one."""
    tokens: list[_Token] = []
    index = 0
    while index < len(text):
        char = text[index]
        index += 1
        if char == "\\":
            if index >= len(text):
                raise _Invalid("a trailing backslash")
            tokens.append(text[index])
            index += 1
        elif char == "*":
            if not tokens or tokens[-1] is not _STAR:
                tokens.append(_STAR)
        elif char == "?":
            tokens.append(_ANY)
        elif char == "[":
            end = index
            if end < len(text) and text[end] in "!^":
                end += 1
            if end < len(text) and text[end] == "]":
                end += 1
            end = text.find("]", end)
            if end < 0:
                raise _Invalid("an unclosed range")
            negated = text[index] in "!^"
            body = text[index + 1 if negated else index : end + 1].replace("\\", "\\\\")
            try:
                with warnings.catch_warnings():  # ``[[:alpha:]]`` warns of a nested set
                    warnings.simplefilter("ignore")
                    tokens.append(re.compile("[" + ("^" if negated else "") + body))
            except re.error:
                raise _Invalid("a range that cannot be read") from None
            index = end + 1
        else:
            tokens.append(char)
    return _Glob(tokens)


#: A segment of a pattern: a component's glob, or ``**`` (None): any number of whole folders.
_Segment = _Glob | None


class _Pattern:
    """One pattern of a ``.gitignore``: its segments, whether a match ignores the path
    (``!`` negates), and whether it names only folders (a trailing ``/``). Nearly every
    pattern (at most one ``**`` before its end, at most one ``*`` per component) is also one
    expression over the whole path that cannot backtrack more than path x pattern; the rest
    are matched component by component."""

    __slots__ = (
        "segments",
        "include",
        "folders_only",
        "special",
        "itself",
        "inside",
        "inside_found",
    )

    def __init__(
        self,
        segments: tuple[_Segment, ...],
        include: bool,
        folders_only: bool,
        special: str = "",
    ) -> None:
        self.segments = segments
        self.include = include
        self.folders_only = folders_only
        #: "any": every path; "nested": every path below the top folder (``**/``, ``*/``)
        self.special = special
        #: the expressions of the path itself, and of what is inside a folder the pattern
        #: matches (the folder itself too, its path ending in ``/``), with what a match of the
        #: latter is: None when the pattern is matched component by component
        self.itself: re.Pattern[str] | None = None
        self.inside: re.Pattern[str] | None = None
        self.inside_found = NONE
        if special or not _expressible(segments):
            return
        contents = segments[-1] is None  # ``dir/`` and ``dir/**``: what is inside the folder
        body = _path_regex(segments[:-1] if contents else segments)
        self.inside = re.compile(body + "/")
        self.inside_found = ITSELF if contents and not folders_only else FOLDER
        if not contents:
            self.itself = re.compile(body + r"\Z")

    def match(self, path: str, parts: Sequence[str], folder: bool) -> int:
        """NONE, FOLDER (a folder above the path, or the folder the path names) or ITSELF;
        ``parts``: the path's components, ``folder``: the path ends in ``/``."""
        if self.special == "any":
            return ITSELF
        if self.special == "nested":
            if len(parts) < 2 and not folder:
                return NONE
            return FOLDER if self.folders_only else ITSELF
        if self.inside is not None:
            if self.itself is not None and not folder and self.itself.match(path):
                return ITSELF
            return NONE if self.inside.match(path) is None else self.inside_found
        count = len(parts)
        if self.segments[-1] is None:
            ends = _prefix_ends(self.segments[:-1], parts)
            if any(end < count or folder for end in ends):
                return FOLDER if self.folders_only else ITSELF
            return NONE
        ends = _prefix_ends(self.segments, parts)
        if not ends:
            return NONE
        return ITSELF if count in ends and not folder else FOLDER

    def last_glob(self) -> _Glob | None:
        """The last component glob every match must meet (None for the special patterns)."""
        for segment in reversed(self.segments):
            if segment is not None:
                return segment
        return None


def _expressible(segments: Sequence[_Segment]) -> bool:
    """Whether one expression over the whole path matches ``segments`` without backtracking
    more than path x pattern: one ``**`` at most (a trailing one is only a ``/``), one ``*``
    at most in each component."""
    runs = sum(1 for segment in segments[:-1] if segment is None)
    return runs <= 1 and all(segment is None or segment.stars <= 1 for segment in segments)


def _path_regex(segments: Sequence[_Segment]) -> str:
    """The expression of ``segments`` from the start of a path up to the end of the last one
    (a leading ``**``: any folders before; an inner one: any folders between)."""
    out = ["(?s)"]
    slash = False
    for index, segment in enumerate(segments):
        if segment is None:
            out.append("(?:.+/)?" if index == 0 else "(?:/.+)?")
            slash = index > 0
            continue
        if slash:
            out.append("/")
        out.append(segment.path_regex())
        slash = True
    return "".join(out)


def _prefix_ends(segments: Sequence[_Segment], parts: Sequence[str]) -> set[int]:
    """Every ``k`` for which ``segments`` match ``parts[:k]``: a set of positions carried
    through the segments, so that nothing is tried twice."""
    positions = {0}
    count = len(parts)
    for segment in segments:
        if segment is None:
            positions = set(range(min(positions), count + 1))
        else:
            positions = {p + 1 for p in positions if p < count and segment.matches(parts[p])}
        if not positions:
            break
    return positions


def parse_pattern(line: str) -> _Pattern | None:
    """One line of a ``.gitignore``; None for a blank line, a comment or a pattern git cannot
    read."""
    if not line.endswith("\\ "):
        line = line.rstrip()
    if not line or line.startswith("#") or line == "/":
        return None
    include = not line.startswith("!")
    if not include:
        line = line[1:]
    pieces = line.split("/")
    folders_only = not pieces[-1]
    if not pieces[0]:
        del pieces[0]  # a leading `/` anchors the pattern to the .gitignore's folder
    elif len(pieces) == 1 or (len(pieces) == 2 and not pieces[1]):
        if pieces[0] != "**":
            pieces.insert(0, "**")  # a name alone matches at any depth
    if not pieces:
        return None
    if not pieces[-1]:
        pieces[-1] = "**"
    collapsed = [
        piece for i, piece in enumerate(pieces) if not (i and piece == pieces[i - 1] == "**")
    ]
    if collapsed == ["**"]:
        return _Pattern((), include, folders_only, "nested" if folders_only else "any")
    if collapsed == ["**", "*"]:
        return _Pattern((), include, folders_only, "any")
    if collapsed == ["**", "*", "**"]:
        return _Pattern((), include, folders_only, "nested")
    try:
        segments = tuple(None if piece == "**" else _parse_glob(piece) for piece in collapsed)
    except _Invalid:
        return None
    return _Pattern(segments, include, folders_only)


class GitIgnore:
    """The patterns of one ``.gitignore`` (or of ``exclude`` globs), in order."""

    def __init__(self, patterns: Iterable[_Pattern]) -> None:
        self.patterns = tuple(patterns)
        self._candidates = _candidates(self.patterns)

    @classmethod
    def from_lines(cls, lines: Iterable[str], deadline: float | None = None) -> GitIgnore:
        """The patterns of ``lines``; those read by the ``time.monotonic()`` ``deadline`` only
        (a caller past its deadline stops before it matches anything)."""
        patterns: list[_Pattern] = []
        for number, line in enumerate(lines):
            if deadline is not None and number % 1024 == 0 and time.monotonic() > deadline:
                break
            pattern = parse_pattern(line)
            if pattern is not None:
                patterns.append(pattern)
        return cls(patterns)

    def match_file(self, path: str) -> bool:
        """Whether ``path`` (relative, ``/``-separated; a folder ends in ``/``) is ignored."""
        if path.startswith("/"):
            path = path[1:]
        elif path.startswith("./"):
            path = path[2:]
        if self._candidates is not None and self._candidates.search(path) is None:
            return False
        folder = path.endswith("/")
        parts = (path[:-1] if folder else path).split("/")
        verdict: bool | None = None
        for pattern in reversed(self.patterns):
            # the expressions inline (``_Pattern.match`` gives the same answer): most paths
            # that get this far are tried against every pattern
            inside = pattern.inside
            if inside is not None:
                itself = pattern.itself
                if itself is not None and not folder and itself.match(path) is not None:
                    return pattern.include
                if inside.match(path) is None:
                    continue
                found = pattern.inside_found
            else:
                found = pattern.match(path, parts, folder)
            if found == ITSELF:
                return pattern.include
            if found == FOLDER and verdict is None:
                verdict = pattern.include
        return bool(verdict)


def _candidates(patterns: Sequence[_Pattern]) -> re.Pattern[str] | None:
    """One expression that finds, in a whole path, a component that some pattern's last glob
    could match (each glob approximated with at most one unbounded run, so it cannot
    backtrack): most paths match none and are answered by one search. None when a pattern
    matches everything anyway."""
    alternatives: list[str] = []
    for pattern in patterns:
        glob = pattern.last_glob()
        if glob is None:
            return None
        alternatives.append(glob.approximation())
    if not alternatives:
        return re.compile("(?!)")
    return re.compile("(?:^|/)(?:" + "|".join(alternatives) + r")(?=/|\Z)")
