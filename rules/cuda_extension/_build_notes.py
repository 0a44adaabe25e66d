"""What the build-model rules (ROC605-ROC607, ROC610) share: a Python rule that reports the
build model's notes on its file at the code each note names, and a CMake rule that reports
them at their lines."""

from __future__ import annotations

from typing import ClassVar

import libcst as cst

from migrator.api import Parsing, Problem, PythonRule, TextRule
from migrator.api.knowledge import BuildNote, anchor_key, notes_for

from .._literals import docstring_nodes
from ._shared import string_text


class BuildNoteRule(PythonRule, abstract=True):
    """Reports each note of ``note_kinds`` that the build model (``migrator.kernels``) makes on
    this file, at the ``if`` test, string, call or argument whose code the note names."""

    note_kinds: ClassVar[frozenset[str]]
    #: The cross-rule problem key of the reports (one finding per file with the rules sharing
    #: it), "" when each note is a problem of its own.
    note_problem: ClassVar[str] = ""

    def __init__(self, ctx: object) -> None:
        super().__init__(ctx)  # type: ignore[arg-type]
        self._notes: dict[str, list[BuildNote]] | None = None
        self._done: set[tuple[str, str]] = set()
        self._docstrings: frozenset[int] | None = None

    def _pending(self) -> dict[str, list[BuildNote]]:
        if self._notes is None:
            self._notes = {}
            for note in notes_for(
                self.ctx.project,
                self.ctx.path,
                self.ctx.text or self.ctx.module_code(),
                self.note_kinds,
            ):
                if note.anchor:
                    self._notes.setdefault(note.anchor, []).append(note)
        return self._notes

    def _match(self, node: cst.CSTNode, key: str) -> None:
        for note in self._pending().get(key, ()):
            done = (note.kind, note.message)
            if done in self._done:
                continue
            self._done.add(done)
            self.report(
                node,
                message=note.message,
                problem=Problem(key=self.note_problem, group=note.kind),
            )

    def visit_If(self, node: cst.If) -> None:
        if self._pending():
            self._match(node.test, anchor_key(self.ctx.code(node.test)))

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        if not self._pending():
            return
        if self._docstrings is None:
            self._docstrings = docstring_nodes(self.ctx.module)
        if id(node) in self._docstrings:
            return
        text = string_text(node)
        if text is not None:
            self._match(node, text)

    def visit_Call(self, node: cst.Call) -> None:
        if not self._pending():
            return
        self._match(node, anchor_key(self.ctx.code(node)))
        for argument in node.args:
            self._match(argument.value, anchor_key(self.ctx.code(argument.value)))


class CMakeNoteRule(TextRule, abstract=True):
    """Reports each note of ``note_kinds`` the build model makes on this CMake file, on its
    line."""

    parsing = Parsing(file_kinds=frozenset({"cmake"}))
    note_kinds: ClassVar[frozenset[str]]

    def check(self) -> None:
        lines = self.ctx.text.splitlines()
        seen: set[tuple[int, str]] = set()
        for note in sorted(
            notes_for(self.ctx.project, self.ctx.path, self.ctx.text, self.note_kinds),
            key=lambda n: n.line,
        ):
            if not 0 < note.line <= len(lines) or (note.line, note.message) in seen:
                continue
            seen.add((note.line, note.message))
            text = lines[note.line - 1]
            start = self.ctx.offset(note.line, len(text) - len(text.lstrip()))
            end = self.ctx.offset(note.line, len(text.rstrip()))
            self.report(
                (start, max(end, start + 1)), message=note.message, problem=Problem(group=note.kind)
            )
