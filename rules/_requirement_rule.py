"""The base class of the dependency rules: one ``examine()`` per requirement, in any file format
that declares requirements."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import libcst as cst

from migrator.api import (
    NO_PROBLEM,
    Applicability,
    Impact,
    Parsing,
    Problem,
    PythonContext,
    PythonRule,
    Rewrite,
    TextContext,
    TextRule,
)

from ._dependency_files import (
    SETUP_KEYWORDS,
    conda_file,
    is_setup_call,
    pyproject_file,
    python_string_editable,
    python_string_req,
    replace_string,
    requirements_file,
    setup_strings,
    setupcfg_file,
)
from ._requirements import Change, Req, render
from ._shell import pip_requirements


@dataclass(frozen=True, slots=True)
class Verdict:
    message: str
    change: Change | None = None
    applicability: Applicability | None = None
    #: What the finding of a rule that reports several packages' verdicts (an install command)
    #: is grouped by: "" merges it with the command's others; a name keeps its problem apart.
    group: str = ""


def all_requirements(ctx: TextContext) -> list[Req]:
    """The requirements a file declares, read once per text: each dependency rule asks."""
    return list(_requirements(ctx.kind, ctx.text))


@functools.lru_cache(maxsize=4)
def _requirements(kind: str, text: str) -> tuple[Req, ...]:
    if kind == "requirements":
        return tuple(requirements_file(text)[0])
    if kind == "pyproject":
        return tuple(pyproject_file(text)[0])
    if kind == "setupcfg":
        return tuple(setupcfg_file(text))
    if kind == "conda":
        return tuple(conda_file(text)[0])
    if kind in {"dockerfile", "shell", "ci-yaml"}:
        return tuple(pip_requirements(text))
    return ()


def _element_removal(container: cst.List, element: cst.Element) -> tuple[cst.CSTNode, Any]:
    """The node to report and its replacement that drop ``element`` from a list literal.

    A middle element is removed with its comma. The last element is removed from the list node
    (so that the previous element can take over its comma and the closing bracket's layout).
    """
    elements = list(container.elements)
    index = next(i for i, item in enumerate(elements) if item is element)
    if index < len(elements) - 1:
        return element, lambda: cst.RemovalSentinel.REMOVE
    if index == 0:
        return container, container.with_changes(
            elements=[],
            lbracket=cst.LeftSquareBracket(),
            rbracket=cst.RightSquareBracket(),
        )
    previous = elements[index - 1]
    if isinstance(previous, cst.Element):
        previous = previous.with_changes(comma=element.comma)
    return container, container.with_changes(elements=[*elements[: index - 1], previous])


class RequirementRule(PythonRule, TextRule, abstract=True):
    """A rule over declared Python dependencies, in every format that declares them.

    Subclasses implement :meth:`examine`; this class finds the requirements, reports each
    verdict on the right span and turns its :class:`Change` into a text edit (or, in
    ``setup.py``, a string-literal replacement or list-element removal).
    """

    #: In Python files only ``setup()`` calls are read, and those need setuptools or distutils.
    #: ... and a requirement keyword of ``setup()``, where every Python finding starts.
    parsing = Parsing(
        file_kinds=frozenset({"python", "requirements", "pyproject", "setupcfg", "conda"}),
        kind_triggers={"python": ("setuptools", "distutils")},
        kind_requires={"python": SETUP_KEYWORDS},
    )

    ctx: Any  # a PythonContext in setup.py, a TextContext elsewhere
    #: A dependency declared in several files (requirements, pyproject, setup.py) is one problem.
    impact = Impact(aggregate="project")

    def __init__(self, ctx: Any) -> None:
        self.ctx = ctx
        self._torch_specs: list[str] | None = None
        self._setup_reqs: list[Req] = []

    def report(
        self,
        where: Any,
        message: str | None = None,
        fix: Rewrite | None = None,
        problem: Problem = NO_PROBLEM,
    ) -> None:
        """Report through the file's context, a Python or a text one (a node or a span)."""
        self.ctx.record(self, where, message, fix, problem)

    def examine(self, req: Req) -> Verdict | None:
        """The verdict on one requirement (None: nothing to report): the method subclasses
        implement; ``torch_specs`` is there to help them, the rest is machinery."""
        raise NotImplementedError

    def torch_specs(self) -> list[str]:
        """Specifiers of the torch requirements declared in this file."""
        if self._torch_specs is None:
            self._torch_specs = [req.spec for req in self._requirements() if req.name == "torch"]
        return self._torch_specs

    def _requirements(self) -> list[Req]:
        if isinstance(self.ctx, TextContext):
            return all_requirements(self.ctx)
        return self._setup_reqs

    def check(self) -> None:
        ctx: TextContext = self.ctx
        for req in all_requirements(ctx):
            if req.source == "command" or not req.on_linux:
                continue
            verdict = self.examine(req)
            if verdict is not None:
                self._report_text(req, verdict)

    def _report_text(self, req: Req, verdict: Verdict) -> None:
        start, end = req.span()
        replacement = None
        if verdict.change is not None and verdict.change.remove:
            if req.remove is not None:
                start, end = req.remove
                replacement = ""
        elif verdict.change is not None:
            edit = self._text_edit(req, verdict.change)
            if edit is not None:
                start, end, replacement = edit
        self.report(
            (start, end),
            verdict.message,
            Rewrite(replacement, applicability=verdict.applicability),
            Problem(group=req.name),
        )

    def _text_edit(self, req: Req, change: Change) -> tuple[int, int, str] | None:
        if req.source == "poetry":
            assert req.poetry_spans is not None
            name_span, spec_span = req.poetry_spans
            if change.extras is not None:
                return None
            if change.name is not None and change.spec is None and name_span is not None:
                return name_span[0], name_span[1], change.name
            if change.spec is not None and change.name is None and spec_span is not None:
                return spec_span[0], spec_span[1], change.spec
            return None
        if req.offset is None:
            return None
        edit = render(req, change)
        if edit is None:
            return None
        start, end, new = edit
        return req.offset + start, req.offset + end, new

    def visit_Call(self, node: cst.Call) -> None:
        ctx: PythonContext = self.ctx
        if not is_setup_call(ctx, node):
            return
        reqs = []
        for string, element, container in setup_strings(ctx.module, node):
            parsed = python_string_req(string)
            if parsed is None:
                continue
            reqs.append(
                Req(parsed, "setup.py", None, node=string, element=element, container=container)
            )
        self._setup_reqs = reqs
        self._torch_specs = None
        for req in reqs:
            if not req.on_linux:
                continue
            verdict = self.examine(req)
            if verdict is not None:
                self._report_python(req, verdict)

    def _report_python(self, req: Req, verdict: Verdict) -> None:
        string = req.node
        assert isinstance(string, cst.SimpleString)
        change = verdict.change
        if change is not None and change.remove:
            if req.element is not None and req.container is not None:
                node, replacement = _element_removal(req.container, req.element)
                self.report(
                    node,
                    verdict.message,
                    Rewrite(replacement, applicability=verdict.applicability),
                    Problem(group=req.name),
                )
                return
            change = None
        replacement = None
        if change is not None and python_string_editable(string):
            edit = render(req, change)
            if edit is not None:
                start, end, new = edit
                text = req.parsed.text
                replacement = replace_string(string, text[:start] + new + text[end:])
        self.report(
            string,
            verdict.message,
            Rewrite(replacement, applicability=verdict.applicability),
            Problem(group=req.name),
        )
