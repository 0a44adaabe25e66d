"""Dockerfile instructions, the one reading of them: logical instructions (continuation lines
joined, positions mapped back to the text), the images ``FROM`` and ``ARG`` defaults name, the
stages, and whether a text is a Dockerfile at all (for one held in a Python string)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from migrator.syntax.shell_lex import code_lines

#: Every Dockerfile instruction keyword (Docker reads them in any case).
INSTRUCTIONS = frozenset(
    {
        "ADD",
        "ARG",
        "CMD",
        "COPY",
        "ENTRYPOINT",
        "ENV",
        "EXPOSE",
        "FROM",
        "HEALTHCHECK",
        "LABEL",
        "MAINTAINER",
        "ONBUILD",
        "RUN",
        "SHELL",
        "STOPSIGNAL",
        "USER",
        "VOLUME",
        "WORKDIR",
    }
)


@dataclass(frozen=True, slots=True)
class Instruction:
    """One logical instruction: ``text`` joins its physical lines (each continuation backslash
    read as a space); ``positions[i]`` is the offset in the whole text of ``text[i]``."""

    keyword: str
    text: str
    positions: tuple[int, ...]

    @property
    def start(self) -> int:
        return self.positions[0] if self.positions else 0


@dataclass(frozen=True, slots=True)
class ImageRef:
    """An image a Dockerfile names: its span in the text, the reference, and where (FROM, ARG)."""

    start: int
    end: int
    image: str
    where: str


_KEYWORD = re.compile(r"^[ \t]*(?P<keyword>[A-Za-z]+)(?=[ \t]|$)")
_FROM_RE = re.compile(r"^[ \t]*FROM\s+(?:--\S+\s+)*(?P<image>[^\s#\\]+)", re.IGNORECASE)
_ARG_RE = re.compile(r"^[ \t]*ARG[ \t]+\w+=(?P<q>[\"']?)(?P<image>[^\s\"'#]+)(?P=q)", re.IGNORECASE)


def instructions(text: str) -> Iterator[Instruction]:
    """The logical instructions of a Dockerfile, comments (shell-style, as the container rules
    read them) removed; a line that starts no instruction yields one with an empty keyword."""
    pending: list[tuple[int, str]] = []
    for offset, code in code_lines(text):
        if not pending and not code.strip():
            continue
        pending.append((offset, code))
        if code.rstrip().endswith("\\"):
            continue
        yield _joined(pending)
        pending = []
    if pending:
        yield _joined(pending)


def _joined(parts: list[tuple[int, str]]) -> Instruction:
    logical: list[str] = []
    positions: list[int] = []
    for offset, code in parts:
        stripped = code.rstrip()
        body = stripped[:-1] + " " if stripped.endswith("\\") else code
        logical.append(body)
        positions.extend(range(offset, offset + len(body)))
    line = "".join(logical)
    match = _KEYWORD.match(line)
    keyword = match["keyword"].upper() if match and match["keyword"].upper() in INSTRUCTIONS else ""
    return Instruction(keyword, line, tuple(positions))


def image_refs(text: str) -> Iterator[ImageRef]:
    """The images a Dockerfile names: ``FROM`` (also when the instruction continues on the next
    line, ``FROM \\`` then the image) and ``ARG`` defaults."""
    for instruction in instructions(text):
        for pattern, where in ((_FROM_RE, "FROM"), (_ARG_RE, "ARG")):
            match = pattern.match(instruction.text)
            if match is not None and match.group("image") != "\\":
                start, end = match.start("image"), match.end("image")
                yield ImageRef(
                    instruction.positions[start],
                    instruction.positions[end - 1] + 1,
                    match.group("image"),
                    where,
                )


def stage_starts(text: str) -> list[int]:
    """The offset of each ``FROM`` instruction: a stage runs from one to the next."""
    return [item.start for item in instructions(text) if item.keyword == "FROM"]


#: A line of a template that stands for instructions filled in later (``{extra}``, ``$STEPS``,
#: ``<steps>``, ``%(steps)s``).
_PLACEHOLDER = re.compile(r"^\s*(?:\{+[^{}]*\}+|\$\{?\w+\}?|<[\w -]+>|%\(\w+\)s)\s*$")
_HEREDOC = re.compile(r"<<-?[\"']?(?P<word>\w+)[\"']?")


def is_dockerfile(text: str) -> bool:
    """Whether ``text`` (such as a string in Python code) is a Dockerfile: its first instruction
    is ``FROM`` (or ``ARG`` before it) naming an image, at least one other instruction follows,
    every logical line is an instruction in upper case (or a template placeholder), and the
    bodies of ``RUN <<EOF`` here-documents are skipped. SQL (``SELECT ... FROM t``) or prose with
    a line starting "FROM" is not one."""
    if "FROM" not in text:
        return False
    seen: list[str] = []
    heredoc = ""
    for item in instructions(text):
        if heredoc:
            if item.text.strip() == heredoc:
                heredoc = ""
            continue
        if _PLACEHOLDER.match(item.text):
            continue
        keyword = item.text.split(None, 1)[0] if item.text.strip() else ""
        if not item.keyword or keyword != item.keyword:
            return False  # not an instruction, or not written in upper case
        if not seen and item.keyword not in {"FROM", "ARG"}:
            return False
        if item.keyword == "FROM" and _FROM_RE.match(item.text) is None:
            return False
        seen.append(item.keyword)
        found = _HEREDOC.search(item.text)
        if item.keyword == "RUN" and found is not None:
            heredoc = found["word"]
    return "FROM" in seen and len(seen) >= 2
