"""Container recipes a Python file holds in a string literal and writes out (a Dockerfile
template, a conda environment): each is read by the rules of its file kind, and the findings are
placed on the literal's own lines and columns in the Python file. No fix is offered inside such
a string: the finding says to edit the template by hand."""

from __future__ import annotations

import ast
import bisect
import io
import re
import tokenize
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Protocol, TypeVar

from migrator.engine.suppress import Suppressions
from migrator.model import WITHHELD, Finding
from migrator.syntax.dockerfile import is_dockerfile
from migrator.syntax.markdown import shell_blocks


class _Analysed(Protocol):
    """What of an analysis (``engine.Analysis``) the recipes add to."""

    findings: list[Finding]
    unused_suppressions: list[tuple[int, str]]


_A = TypeVar("_A", bound=_Analysed)

#: What a Python text must hold for a string in it to be a recipe: a ``FROM`` at the start of a
#: line of a string, or a conda ``dependencies:`` key (``_hinted``).
_HINTS = ("FROM", "dependencies:")
_OTHER_INSTRUCTIONS = ("RUN ", "ENV ", "COPY ", "CMD ", "WORKDIR ", "ENTRYPOINT ", "ADD ", "ARG ")
_CONDA_KEYS = re.compile(r"^dependencies:[ \t]*$", re.MULTILINE)
_CONDA_OTHER = re.compile(r"^(?:channels|name):", re.MULTILINE)
_CONDA_ITEM = re.compile(r"^[ \t]*-[ \t]*\S", re.MULTILINE)
_FSTRING_START = getattr(tokenize, "FSTRING_START", -1)
_FSTRING_END = getattr(tokenize, "FSTRING_END", -1)
_SIMPLE_ESCAPES = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "v": "\v",
}
_NUMERIC_ESCAPE = re.compile(
    r"x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|N\{[^}]*\}|[0-7]{1,3}"
)
MANUAL_STEP = (
    "the recipe is a string the Python code writes out: edit that template by hand (or add a "
    "ROCm one beside it)"
)

#: The manual step of a finding in a command a Markdown document tells users to run.
DOC_STEP = (
    "the command is in documentation users copy: edit it by hand (or add the ROCm command "
    "beside it)"
)


@dataclass(frozen=True, slots=True)
class Recipe:
    """A string literal's value, read as a file of ``kind``; ``offsets[i]`` is the offset in the
    Python text of ``value[i]`` (one more entry: the offset after the last character)."""

    kind: str
    value: str
    offsets: tuple[int, ...]


def recipes(text: str) -> list[Recipe]:
    """The Dockerfiles and conda environments held in the string literals of a Python text
    (adjacent literals joined, as Python joins them)."""
    if not _hinted(text):
        return []
    found: list[Recipe] = []
    for value, offsets in _literals(text):
        kind = _kind_of(value)
        if kind:
            found.append(Recipe(kind, value, tuple(offsets)))
    return found


def doc_commands(text: str) -> list[Recipe]:
    """The shell blocks of a Markdown text, each read as a shell script."""
    return [Recipe("shell", value, tuple(offsets)) for value, offsets in shell_blocks(text)]


def with_doc_commands(analysis: _A, text: str, read: Callable[[str, str], _Analysed]) -> _A:
    """``analysis`` of a Markdown text with the findings of its shell blocks, placed in it; one
    command written in several pages (a README and its translations, an install page) is one
    problem, anchored at the first page, the others its related sites."""
    placed = with_placed(analysis, text, doc_commands(text), read, DOC_STEP)
    lines = text.splitlines()
    placed.findings[:] = [
        replace(finding, aggregate="project", problem=_doc_problem(finding, lines))
        for finding in placed.findings
    ]
    return placed


def _doc_problem(finding: Finding, lines: list[str]) -> str:
    """What makes two findings in documentation one problem: the rule and the text it points
    at (``flash-attn``, ``--gpus all``, the flag, a variable's name), or the whole line when the
    span is longer."""
    what = finding.source_line
    if finding.end_line == finding.line and 0 < finding.line <= len(lines):
        span = lines[finding.line - 1][finding.column - 1 : finding.end_column - 1]
        # a variable is one problem whether set or read: ``CUDA_HOME=...``, ``$CUDA_HOME``
        what = span.lstrip("${").split("=", 1)[0].rstrip("}") or what
    return f"doc-command:{finding.rule}:{' '.join(what.split())}"


def _hinted(text: str) -> bool:
    """Whether a line of ``text`` starts with a hint, or has one after a quote or a ``\\n``
    (plain substring search: a regular expression here costs more than the rest of a scan)."""
    for hint in _HINTS:
        index = text.find(hint)
        if index >= 0 and hint == "FROM" and not any(o in text for o in _OTHER_INSTRUCTIONS):
            continue  # a Dockerfile has another instruction
        while index >= 0:
            before = text[text.rfind("\n", 0, index) + 1 : index].rstrip(" \t")
            if not before or before.endswith(("\\n", '"', "'")):
                return True
            index = text.find(hint, index + 1)
    return False


def _kind_of(value: str) -> str:
    if is_dockerfile(value):
        return "dockerfile"
    if (
        _CONDA_KEYS.search(value)
        and _CONDA_OTHER.search(value)
        and _CONDA_ITEM.search(value)
        and "\nFROM " not in value
    ):
        return "conda"
    return ""


def _literals(text: str) -> Iterator[tuple[str, list[int]]]:
    """(value, offsets) of each string literal, or run of adjacent literals, of a Python text."""
    starts = [0]
    for line in io.StringIO(text).readlines():
        starts.append(starts[-1] + len(line))

    def offset(position: tuple[int, int]) -> int:
        return starts[position[0] - 1] + position[1]

    depth, begin = 0, 0
    run: list[tuple[int, int]] = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == _FSTRING_START:
                if depth == 0:
                    begin = offset(token.start)
                depth += 1
                continue
            if token.type == _FSTRING_END:
                depth -= 1
                if depth == 0:
                    run.append((begin, offset(token.end)))
                continue
            if depth:
                continue
            if token.type == tokenize.STRING:
                run.append((offset(token.start), offset(token.end)))
            elif token.type not in (tokenize.NL, tokenize.COMMENT) and run:
                yield _joined(text, run)
                run = []
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return
    if run:
        yield _joined(text, run)


def _joined(text: str, run: list[tuple[int, int]]) -> tuple[str, list[int]]:
    value: list[str] = []
    offsets: list[int] = []
    for start, end in run:
        part, where = _decode(text, start, end)
        value.append(part)
        offsets.extend(where[:-1])
    offsets.append(run[-1][1])
    return "".join(value), offsets


def _decode(text: str, start: int, end: int) -> tuple[str, list[int]]:
    """The value of the literal ``text[start:end]`` with the offset of each character (f-string
    fields kept as written, so ``FROM {image}`` names no image); bytes give nothing."""
    source = text[start:end]
    prefix = len(source) - len(source.lstrip("rRbBuUfF"))
    flags = source[:prefix].lower()
    quote = (
        source[prefix : prefix + 3]
        if source[prefix : prefix + 3] in ('"""', "'''")
        else source[prefix]
    )
    body_start, body_end = start + prefix + len(quote), end - len(quote)
    if "b" in flags:
        return "", [body_end]
    raw, formatted = "r" in flags, "f" in flags
    out: list[str] = []
    where: list[int] = []
    i = body_start
    while i < body_end:
        char = text[i]
        following = text[i + 1] if i + 1 < body_end else ""
        if formatted and char in "{}" and following == char:
            out.append(char)
            where.append(i)
            i += 2
        elif formatted and char == "{":
            close = _field_end(text, i, body_end)
            out.extend(text[i:close])
            where.extend(range(i, close))
            i = close
        elif char == "\\" and not raw and following:
            i = _escape(text, i, body_end, out, where)
        elif char == "\r" and following == "\n":
            i += 1
        else:
            out.append(char)
            where.append(i)
            i += 1
    where.append(body_end)
    return "".join(out), where


def _field_end(text: str, start: int, end: int) -> int:
    """The offset after the ``}`` closing the f-string field opened at ``start``."""
    depth = 0
    for index in range(start, end):
        if text[index] == "{":
            depth += 1
        elif text[index] == "}":
            depth -= 1
            if depth == 0:
                return index + 1
    return end


def _escape(text: str, start: int, end: int, out: list[str], where: list[int]) -> int:
    """Append the character of the escape at ``start``; the offset after it."""
    following = text[start + 1]
    if following == "\n":
        return start + 2  # a backslash-newline continues the line: no character
    if following in _SIMPLE_ESCAPES:
        out.append(_SIMPLE_ESCAPES[following])
        where.append(start)
        return start + 2
    match = _NUMERIC_ESCAPE.match(text, start + 1, end)
    if match is not None:
        try:
            out.append(ast.literal_eval(f'"\\{match.group(0)}"'))
        except (ValueError, SyntaxError):
            out.append("?")
        where.append(start)
        return match.end()
    out.extend(("\\", following))  # an unknown escape keeps its backslash
    where.extend((start, start + 1))
    return start + 2


def with_recipes(analysis: _A, text: str, read: Callable[[str, str], _Analysed]) -> _A:
    """``analysis`` of a Python text with the findings of the recipes its strings hold
    (``read(value, kind)`` analyses one), placed in the Python text, without fixes, and subject
    to the Python file's suppression comments."""
    return with_placed(analysis, text, recipes(text), read, MANUAL_STEP)


def with_placed(
    analysis: _A,
    text: str,
    found: list[Recipe],
    read: Callable[[str, str], _Analysed],
    manual_step: str,
) -> _A:
    """``analysis`` with the findings of each of ``found`` (texts held inside ``text``: recipes
    in Python strings, shell blocks in Markdown) placed in ``text``, their fixes replaced by
    ``manual_step``, and subject to ``text``'s suppression comments."""
    if not found:
        return analysis
    place = _Placer(text, manual_step)
    suppressions = Suppressions.parse(text)
    for recipe in found:
        for finding in read(recipe.value, recipe.kind).findings:
            moved = place.finding(finding, recipe)
            if moved.aggregate in ("file", "scope") and not moved.problem:
                # two recipes in one Python file are two files' problems
                moved = replace(moved, group=f"{moved.group}@{recipe.offsets[0]}")
            if not suppressions.suppresses(moved.line, moved.rule):
                analysis.findings.append(moved)
    if suppressions.used:
        used = {(line, code) for line, code in suppressions.used}
        analysis.unused_suppressions = [
            entry for entry in analysis.unused_suppressions if entry not in used
        ]
    return analysis


class _Placer:
    """Maps positions of a recipe's value to lines and columns of the Python text."""

    def __init__(self, text: str, manual_step: str) -> None:
        self.manual_step = manual_step
        self.lines = text.splitlines()
        self.starts = [0]
        for line in io.StringIO(text).readlines():
            self.starts.append(self.starts[-1] + len(line))

    def _position(
        self, value_starts: list[int], recipe: Recipe, line: int, column: int
    ) -> tuple[int, int]:
        index = value_starts[min(line, len(value_starts)) - 1] + column - 1
        offset = recipe.offsets[max(0, min(index, len(recipe.offsets) - 1))]
        number = bisect.bisect_right(self.starts, offset) - 1
        return number + 1, offset - self.starts[number] + 1

    def finding(self, finding: Finding, recipe: Recipe) -> Finding:
        value_starts = [0]
        for physical in io.StringIO(recipe.value).readlines():
            value_starts.append(value_starts[-1] + len(physical))
        line, column = self._position(value_starts, recipe, finding.line, finding.column)
        end_line, end_column = self._position(
            value_starts, recipe, finding.end_line, finding.end_column
        )
        related = tuple(
            replace(
                site,
                line=self._position(value_starts, recipe, site.line, site.column)[0],
                column=self._position(value_starts, recipe, site.line, site.column)[1],
                end_line=self._position(value_starts, recipe, site.end_line, site.end_column)[0],
                end_column=self._position(value_starts, recipe, site.end_line, site.end_column)[1],
            )
            for site in finding.related
        )
        message = finding.message
        if finding.fix is not None or WITHHELD in message:
            message = f"{message.split('; ' + WITHHELD, 1)[0]}; {WITHHELD}{self.manual_step}"
        return replace(
            finding,
            line=line,
            column=column,
            end_line=end_line,
            end_column=end_column,
            source_line=self.lines[line - 1].strip() if 0 < line <= len(self.lines) else "",
            message=message,
            fix=None,
            related=related,
        )


__all__ = [
    "DOC_STEP",
    "MANUAL_STEP",
    "doc_commands",
    "Recipe",
    "recipes",
    "with_placed",
    "with_recipes",
]
