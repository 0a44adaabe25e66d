"""Shell lexing for the rule catalog, one home for shell scripts, Dockerfile ``RUN`` lines,
compose commands and CI scripts: simple commands as tokens with offsets (``command_segments``),
the requirements of their ``pip install`` commands, and line-level helpers (comments, quotes,
command position, a command's arguments) for rules that edit one line in place."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from ._requirements import Req, parse_requirement


@dataclass(frozen=True, slots=True)
class Token:
    value: str
    start: int
    end: int
    quoted: bool


_OPERATORS = ("&&", "||", ";", "|", "&", "(", ")", "`", "$(")


def starts_comment(text: str, index: int) -> bool:
    """Whether the ``#`` at ``index`` starts a shell comment: it begins a word (line start,
    whitespace or an operator before it). Quotes are the caller's business."""
    return index == 0 or text[index - 1] in " \t\r\n;&|("


def command_segments(text: str) -> Iterator[list[Token]]:
    """Simple commands of shell-like text (continuations joined, comments dropped)."""
    position = 0
    current: list[Token] = []
    length = len(text)
    while position < length:
        char = text[position]
        if char == "\\" and text.startswith("\\\n", position):
            position += 2
            continue
        if char in " \t\r":
            position += 1
            continue
        if char == "\n":
            if current:
                yield current
                current = []
            position += 1
            continue
        if char == "#" and starts_comment(text, position):
            end = text.find("\n", position)
            position = length if end == -1 else end
            continue
        operator = next((op for op in _OPERATORS if text.startswith(op, position)), None)
        if operator is not None:
            if current:
                yield current
                current = []
            position += len(operator)
            continue
        start = position
        value = []
        quoted = False
        while position < length:
            char = text[position]
            if char in " \t\r\n;&|()`":
                break
            if char in "\"'":
                end = text.find(char, position + 1)
                if end == -1:
                    end = length
                value.append(text[position + 1 : end])
                quoted = True
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
        current.append(Token("".join(value), start, position, quoted))
    if current:
        yield current


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
    """Requirement tokens of the pip install commands in shell-like text."""
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
    return reqs


def code_lines(text: str) -> Iterator[tuple[int, str]]:
    """(offset, text) of the code part of each line (shell-style ``#`` comments removed)."""
    position = 0
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        yield position, code_part(body)
        position += len(line)


def code_part(line: str) -> str:
    """``line`` up to its ``#`` comment (a ``#`` that starts a word, outside quotes)."""
    quote: str | None = None
    for index, char in enumerate(line):
        if quote:
            if char == quote:
                quote = None
            continue
        if char in "\"'":
            quote = char
        elif char == "#" and starts_comment(line, index):
            return line[:index]
    return line


def iter_lines(text: str) -> Iterator[tuple[int, str, str]]:
    """(offset of the line start, line without newline, code part of the line)."""
    offset = 0
    for raw in text.splitlines(keepends=True):
        line = raw.rstrip("\r\n")
        yield offset, line, code_part(line)
        offset += len(raw)


def in_quotes(code: str, index: int) -> str | None:
    """The quote character open at ``index`` of ``code`` (None when outside quotes)."""
    quote: str | None = None
    for char in code[:index]:
        if quote:
            if char == quote:
                quote = None
        elif char in "\"'":
            quote = char
    return quote


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
