"""Shell lexing for the rule catalog, one home for shell scripts, Dockerfile ``RUN`` lines,
compose commands and CI scripts. The one lexer (``lex``, in ``migrator.syntax.shell_lex``, shared with
the engine) reads quotes, escapes, comments and separators; built on it: simple commands as
tokens with offsets (``command_segments``), the requirements of their ``pip install`` commands,
and line-level helpers (a line's code part, the quote open at an offset, command position, a
command's arguments) for rules that edit one line in place."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass

from migrator.api.syntax import code_part, lex

from ._requirements import Req, parse_requirement


@dataclass(frozen=True, slots=True)
class Token:
    value: str
    start: int
    end: int
    quoted: bool


def command_segments(text: str) -> Iterator[list[Token]]:
    """Simple commands of shell-like text (continuations joined, comments dropped), found once
    per text however many rules read them."""
    return (list(segment) for segment in _segments(text))


@functools.lru_cache(maxsize=8)
def _segments(text: str) -> tuple[tuple[Token, ...], ...]:
    segments: list[tuple[Token, ...]] = []
    current: list[Token] = []
    for lexeme in lex(text):
        if lexeme.kind == "word":
            current.append(Token(lexeme.value, lexeme.start, lexeme.end, lexeme.quoted))
        elif lexeme.kind != "comment" and current:
            segments.append(tuple(current))
            current = []
    if current:
        segments.append(tuple(current))
    return tuple(segments)


_PIP_VALUE_OPTIONS = {
    "-i",
    "--index-url",
    "--extra-index-url",
    "-f",
    "--find-links",
    "-r",
    "--requirement",
    "-c",
    "--constraint",
    "-t",
    "--target",
    "--prefix",
    "--root",
    "--upgrade-strategy",
    "--python",
    "-p",
    "--platform",
    "--python-version",
    "--implementation",
    "--abi",
    "--config-settings",
    "-C",
    "--cache-dir",
    "--src",
    "--trusted-host",
    "--progress-bar",
    "--root-user-action",
    "--only-binary",
    "--no-binary",
    "-e",
    "--editable",
    "--index",
    "--default-index",
    "--index-strategy",
    "--torch-backend",
    "--extra",
    "--group",
}


def _is_pip(token: str) -> bool:
    base = token.rsplit("/", 1)[-1]
    return re.fullmatch(r"pip(3(\.\d+)?)?", base) is not None


def pip_install_args(segment: list[Token]) -> list[Token] | None:
    """Argument tokens after ``pip install``, ``uv pip install`` or ``python -m pip install``."""
    values = [token.value for token in segment]
    for index, value in enumerate(values):
        if index + 1 < len(values) and values[index + 1] == "install":
            if _is_pip(value) or (
                value == "pip" and index > 0 and values[index - 1] in {"uv", "-m"}
            ):
                return segment[index + 2 :]
    return None


def pip_requirements(text: str) -> list[Req]:
    """Requirement tokens of the pip install commands in shell-like text (lexed once per text:
    every dependency rule reading a script asks for them)."""
    return list(_pip_requirements(text))


@functools.lru_cache(maxsize=4)
def _pip_requirements(text: str) -> tuple[Req, ...]:
    reqs: list[Req] = []
    for segment in command_segments(text):
        args = pip_install_args(segment)
        if args is None:
            continue
        skip = False
        for token in args:
            if skip:
                skip = False
                continue
            if token.value.startswith("-"):
                if token.value in _PIP_VALUE_OPTIONS:
                    skip = True
                continue
            parsed = parse_requirement(token.value)
            if parsed is None or "$" in parsed.raw_name:
                continue
            raw = text[token.start : token.end]
            if not token.quoted and raw == token.value:
                offset: int | None = token.start
            elif raw[1:-1] == token.value and raw[:1] in "\"'":
                offset = token.start + 1
            else:
                offset = None
            reqs.append(Req(parsed, "command", offset, report_span=(token.start, token.end)))
    return tuple(reqs)


def iter_lines(text: str) -> Iterator[tuple[int, str, str]]:
    """(offset of the line start, line without newline, code part of the line)."""
    offset = 0
    for raw in text.splitlines(keepends=True):
        line = raw.rstrip("\r\n")
        yield offset, line, code_part(line)
        offset += len(raw)


def in_quotes(code: str, index: int) -> str | None:
    """The quote character open at ``index`` of ``code`` (None when outside quotes)."""
    if "'" not in code[:index] and '"' not in code[:index]:
        return None
    for lexeme in lex(code[:index]):
        for _open, close, quote in lexeme.quotes:
            if close == index:  # the span runs to the end: the quote is still open
                return quote
    return None


_SEPARATORS = ("&&", "||", ";", "|", "(", "$(", "`", "{", "!", "&")
_COMMAND_WORDS = frozenset(
    {
        "then",
        "do",
        "else",
        "exec",
        "sudo",
        "time",
        "nohup",
        "RUN",
        "CMD",
        "ENTRYPOINT",
        "run:",
        "-",
        "script:",
        "command:",
        "test:",
        "entrypoint:",
        "cmd:",
    }
)
_WRAPPERS = re.compile(
    r"(?:^|\s)(?:watch|timeout)(?:\s+-{1,2}[\w-]+(?:[= ]\S+)?)*(?:\s+\d+\S*)?\s*$"
)


def command_position(before: str) -> bool:
    """Whether a word preceded by ``before`` (text on the same line) is in command position."""
    stripped = before.rstrip()
    if not stripped:
        return True
    if stripped.endswith(_SEPARATORS):
        return True
    last = stripped.split()[-1]
    if last in _COMMAND_WORDS:
        return True
    return bool(_WRAPPERS.search(stripped))


_END_OF_COMMAND = re.compile(r"[;&|)`<>]")


def command_args(code: str, start: int, quote: str | None) -> tuple[list[str], int]:
    """The argument words following a command name that ends at ``start`` and the offset (in
    ``code``) where the command ends: a shell separator, a redirection, the closing quote."""
    end = len(code)
    if quote:
        closing = code.find(quote, start)
        if closing != -1:
            end = closing
    match = _END_OF_COMMAND.search(code, start, end)
    if match:
        end = match.start()
    segment = code[start:end]
    if segment.rstrip().endswith("\\"):
        segment = segment.rstrip()[:-1]
    return segment.split(), start + len(segment.rstrip())
