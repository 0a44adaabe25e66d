"""The one shell lexer of the product, shared by the engine (``migrator.reach.text_guards``) and the
rule catalog (``rules/_shell``): shell scripts, Dockerfile ``RUN`` lines, compose commands and CI
scripts are read with the same quotes, escapes, comments and separators."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass

_OPERATORS = ("&&", "||", ";", "|", "&", "(", ")", "`", "$(")
_WORD_END = " \t\r\n;&|()`"


@dataclass(frozen=True, slots=True)
class Lexeme:
    """One item of shell-like text: a ``word`` (``value`` with quotes removed and escapes
    resolved, ``quotes`` the (open, close, quote character) spans inside it), an ``operator``,
    a ``comment`` or a ``newline`` (an unescaped line end)."""

    kind: str
    start: int
    end: int
    value: str = ""
    quoted: bool = False
    quotes: tuple[tuple[int, int, str], ...] = ()


def starts_comment(text: str, index: int) -> bool:
    """Whether the ``#`` at ``index`` starts a shell comment: it begins a word (line start,
    whitespace or an operator before it). Quotes are the caller's business."""
    return index == 0 or text[index - 1] in " \t\r\n;&|("


_DOUBLE_QUOTE_ESCAPES = '$`"\\\n'


def _quoted(text: str, start: int) -> tuple[int, str]:
    """Where the quoted span opening at ``start`` closes (the end of ``text`` when it never
    does) and what it holds: nothing escapes inside single quotes; inside double quotes a
    backslash escapes ``$``, a backquote, ``"``, a backslash and a line end (as in POSIX sh)."""
    quote = text[start]
    end = text.find(quote, start + 1)
    if end == -1:
        end = len(text)
    if quote == "'" or text.find("\\", start + 1, end) == -1:
        return end, text[start + 1 : end]
    content: list[str] = []
    position = start + 1
    while position < len(text):
        char = text[position]
        if char == quote:
            return position, "".join(content)
        if char == "\\" and text[position + 1 : position + 2] in _DOUBLE_QUOTE_ESCAPES:
            following = text[position + 1 : position + 2]
            if following and following != "\n":
                content.append(following)
            position += 2
            continue
        content.append(char)
        position += 1
    return len(text), "".join(content)


def lex(text: str) -> Iterator[Lexeme]:
    """The lexemes of shell-like text, the one shell lexer of the catalog: quotes (a quoted
    span runs to the same unescaped quote character, over line ends), backslash escapes,
    line continuations, ``#`` comments that begin a word, and command separators. A text is
    lexed once however many rules read it (the last few long texts' lexemes are kept)."""
    if len(text) < _KEPT_FROM:
        return _lex(text)  # a line or a command: lexed again rather than kept
    return iter(_lexemes(text))


#: The length from which a text's lexemes are kept for the next rule that reads it.
_KEPT_FROM = 2048


@functools.lru_cache(maxsize=8)
def _lexemes(text: str) -> tuple[Lexeme, ...]:
    return tuple(_lex(text))


#: A run of word characters that need no care (no quote, escape or word end).
_PLAIN = re.compile(r"[^ \t\r\n;&|()`\"'\\]+")
#: A run of blanks between lexemes.
_BLANKS = re.compile(r"[ \t\r]+")
#: The characters an operator starts with.
_OPERATOR_STARTS = frozenset(op[0] for op in _OPERATORS)


def _lex(text: str) -> Iterator[Lexeme]:
    position = 0
    length = len(text)
    plain = _PLAIN.match
    while position < length:
        char = text[position]
        if char == "\\" and text.startswith("\\\n", position):
            position += 2
            continue
        if char in " \t\r":
            blanks = _BLANKS.match(text, position)
            assert blanks is not None
            position = blanks.end()
            continue
        if char == "\n":
            yield Lexeme("newline", position, position + 1)
            position += 1
            continue
        if char == "#" and starts_comment(text, position):
            end = text.find("\n", position)
            end = length if end == -1 else end
            yield Lexeme("comment", position, end)
            position = end
            continue
        operator = (
            next((op for op in _OPERATORS if text.startswith(op, position)), None)
            if char in _OPERATOR_STARTS
            else None
        )
        if operator is not None:
            yield Lexeme("operator", position, position + len(operator), operator)
            position += len(operator)
            continue
        start = position
        value = []
        quotes: list[tuple[int, int, str]] = []
        while position < length:
            run = plain(text, position)
            if run is not None:
                value.append(run.group())
                position = run.end()
                if position >= length:
                    break
            char = text[position]
            if char in _WORD_END:
                break
            if char in "\"'":
                end, content = _quoted(text, position)
                value.append(content)
                quotes.append((position, end, char))
                position = min(length, end + 1)
                continue
            if char == "\\" and position + 1 < length:
                if text[position + 1] == "\n":
                    break
                value.append(text[position + 1])
                position += 2
                continue
            value.append(char)
            position += 1
        if position == start:  # a character no rule above consumed: skip it
            position += 1
            continue
        yield Lexeme("word", start, position, "".join(value), bool(quotes), tuple(quotes))


def code_lines(text: str) -> Iterator[tuple[int, str]]:
    """(offset, text) of the code part of each line (shell-style ``#`` comments removed)."""
    position = 0
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        yield position, code_part(body)
        position += len(line)


#: What changes how the lexer reads the rest of a line: a quote or an escape.
_QUOTING = re.compile(r"[\"'\\]")


def code_part(line: str) -> str:
    """``line`` up to its ``#`` comment (a ``#`` that starts a word, outside quotes)."""
    index = line.find("#")
    while index >= 0 and not _QUOTING.search(line, 0, index):
        # no quote or escape before it: the lexer is at a word's start exactly where a
        # ``#`` starts a comment (after a blank or a separator)
        if starts_comment(line, index):
            return line[:index]
        index = line.find("#", index + 1)
    if index < 0:
        return line
    for lexeme in lex(line):
        if lexeme.kind == "comment":
            return line[: lexeme.start]
    return line
