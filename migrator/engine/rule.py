"""The Rule base classes: a rule is data (code, name, message, severity, fix safety, fact, examples)
plus a small matcher; the engine does the traversal, suppression, fixing and reporting."""

from __future__ import annotations

import inspect
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, ClassVar

from migrator.engine.report_values import NO_PROBLEM, Problem, Rewrite
from migrator.engine.rule_parts import CallShape, Fixing, Impact, Parsing
from migrator.model import AGGREGATIONS, CONSEQUENCES, Severity

if TYPE_CHECKING:
    import libcst as cst

    from migrator.engine.context import PythonContext, TextContext
    from migrator.kernels.view import KernelView


@dataclass(frozen=True, slots=True)
class Valid:
    """Source that the rule must not flag."""

    code: str
    path: str = "example.py"


@dataclass(frozen=True, slots=True)
class Invalid:
    """Source the rule must flag; ``fixed`` is the exact text after the fix (None: no fix).

    ``path`` names the example's file (its kind for a text rule); ``line`` and ``column``
    (1-based) pin the first finding's position, ``count`` the number of findings and ``sites``
    the places they cover (an aggregating rule folds several sites into one finding), when
    given. Whether the fix needs ``--unsafe-fixes`` is the rule's ``applicability``.
    """

    code: str
    fixed: str | None = None
    path: str = "example.py"
    line: int | None = None
    column: int | None = None
    count: int | None = None
    sites: int | None = None


#: File kinds the discovery layer assigns; rules declare which they read.
FILE_KINDS = frozenset(
    {
        "python",
        "requirements",
        "pyproject",
        "setupcfg",
        "conda",
        "dockerfile",
        "compose",
        "shell",
        "ci-yaml",
        "cog",
        "cuda",
        "cmake",
    }
)

_CODE_RE = re.compile(r"^ROC\d{3}$")
_NAME_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


class Rule:
    """Base of every rule. Subclasses set the class attributes; the docstring is the user doc."""

    code: ClassVar[str]
    name: ClassVar[str]
    category: ClassVar[str]
    severity: ClassVar[Severity]
    message: ClassVar[str]
    #: Citation into ``docs/rocm-facts.md``: ``§N`` plus the fact's key words, and source ids.
    fact: ClassVar[str]
    #: What the engine reads for the rule (triggers, file kinds, parse scope...).
    parsing: ClassVar[Parsing] = Parsing()
    #: What a finding means for readiness (consequence, effort, port, aggregation...).
    impact: ClassVar[Impact] = Impact()
    #: How the rule's fixes are offered (title, safety, version floors...).
    fix: ClassVar[Fixing] = Fixing()
    valid: ClassVar[Sequence[Valid]] = ()
    invalid: ClassVar[Sequence[Invalid]] = ()

    #: A rule in preview ships opt-in: chosen only with ``--preview`` (or ``preview = true`` in
    #: ``[tool.migrate]``), so that a new rule can be tried on real projects before it is on.
    preview: ClassVar[bool] = False

    #: Set for each class: a base other rules build on (``class X(Rule, abstract=True)``),
    #: which the registry never runs.
    _abstract: ClassVar[bool] = True
    #: The parts each class declares itself (before merging with its bases').
    _declared: ClassVar[dict[str, Parsing | Impact | Fixing]] = {}

    def __init_subclass__(cls, abstract: bool = False, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # Each class declares the fields it changes; a field's value is that of the first class
        # in the method resolution order declaring it, as for plain class attributes.
        cls._declared = {
            part: cls.__dict__[part]
            for part in ("parsing", "impact", "fix")
            if part in cls.__dict__
        }
        for part in ("parsing", "impact", "fix"):
            merged = getattr(Rule, part)
            for klass in reversed(cls.__mro__):
                declared = klass.__dict__.get("_declared", {}).get(part)
                if declared is not None:
                    merged = declared.over(merged)
            setattr(cls, part, merged)
        cls._abstract = abstract or inspect.isabstract(cls)
        if cls._abstract:
            return
        for attribute in ("code", "name", "category", "severity", "message", "fact"):
            if not hasattr(cls, attribute):
                raise TypeError(f"rule {cls.__name__} lacks {attribute!r}")
        if not cls.parsing.triggers and not cls.parsing.kind_triggers:
            raise TypeError(f"rule {cls.__name__} declares no triggers")
        if not _CODE_RE.match(cls.code):
            raise TypeError(f"rule {cls.__name__}: code {cls.code!r} is not ROC + three digits")
        if not _NAME_RE.match(cls.name):
            raise TypeError(f"rule {cls.__name__}: name {cls.name!r} is not kebab-case")
        parsing, impact = cls.parsing, cls.impact
        unknown = parsing.file_kinds - FILE_KINDS
        if unknown:
            raise TypeError(f"rule {cls.__name__}: unknown file kinds {sorted(unknown)}")
        if not set(parsing.unpaired_triggers) <= set(parsing.triggers) or (
            parsing.unpaired_triggers and not parsing.statement_requires
        ):
            raise TypeError(
                f"rule {cls.__name__}: unpaired_triggers must be triggers of a rule with "
                "statement_requires"
            )
        if parsing.statement_calls and (parsing.scope != "statement" or parsing.statement_requires):
            raise TypeError(
                f"rule {cls.__name__}: statement_calls needs scope 'statement' and no "
                "statement_requires"
            )
        if parsing.statement_requires and parsing.scope != "statement":
            raise TypeError(f"rule {cls.__name__}: statement_requires needs scope 'statement'")
        if impact.consequence not in CONSEQUENCES:
            raise TypeError(
                f"rule {cls.__name__}: consequence {impact.consequence!r} not in {CONSEQUENCES}"
            )
        if impact.aggregate not in AGGREGATIONS:
            raise TypeError(
                f"rule {cls.__name__}: aggregate {impact.aggregate!r} not in {AGGREGATIONS}"
            )

    @classmethod
    def fix_availability(cls) -> str:
        """Derived from the examples: ``always``, ``sometimes`` or ``never`` (Ruff's FixAvailability)."""
        fixed = [example.fixed is not None for example in cls.invalid]
        if fixed and all(fixed):
            return "always"
        if any(fixed):
            return "sometimes"
        return "never"

    @classmethod
    def doc(cls) -> str:
        return inspect.cleandoc(cls.__doc__ or "")


class PythonRule(Rule, abstract=True):
    """A rule over Python source. Define ``visit_<Node>`` methods; call ``self.ctx.report``.

    One instance is made per file, so a rule may keep per-file state on ``self``.
    """

    def __init__(self, ctx: PythonContext) -> None:
        self.ctx = ctx

    def report(
        self,
        node: cst.CSTNode,
        message: str | None = None,
        fix: Rewrite | None = None,
        problem: Problem = NO_PROBLEM,
    ) -> None:
        """Report ``node`` with ``message`` (the rule's when None), optionally with its ``fix``
        and the ``problem`` it is one site of (``Rewrite`` and ``Problem`` say what each part
        means)."""
        self.ctx.record(self, node, message, fix, problem)


class QualifiedCallRule(PythonRule, abstract=True):
    """A rule that is a table row: calls of qualified names, however they are imported
    (``import cupy as cp; cp.linalg.eig(a)``, ``from cupy.linalg import eig``), each with the
    message of its findings. TorchFix's kind of rule, declared as data plus examples.

    ``calls`` maps a qualified name, or a prefix ending in ``.*`` (every call under it), to the
    message (``{name}``: the qualified name called, ``{short}``: its last part); the longest
    matching entry wins. The class derives
    what a hand-written rule declares for the engine: ``triggers`` (the top-level packages),
    ``parse_scope = "statement"``, ``statement_calls`` and ``requires_imports``, so that a scan
    reads only the statements that can hold such a call. ``visit_Call`` is the whole matcher.
    """

    calls: ClassVar[Mapping[str, str]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        if "calls" in cls.__dict__:
            exact = [name for name in cls.calls if not name.endswith(".*")]
            prefixes = [name[:-1] for name in cls.calls if name.endswith(".*")]
            if not cls.calls or any("*" in name for name in exact):
                raise TypeError(f"rule {cls.__name__}: calls must name x.y or x.y.* entries")
            own = cls.__dict__.get("parsing", Parsing())
            cls.parsing = replace(
                own,
                triggers=own.triggers
                or tuple(sorted({name.split(".", 1)[0] for name in cls.calls})),
                scope="statement",
                statement_calls=(
                    CallShape(
                        names=frozenset(name.rsplit(".", 1)[-1] for name in exact),
                        prefixes=tuple(prefixes),
                    ),
                ),
                requires_imports=tuple(
                    sorted({*exact, *(prefix.rstrip(".") for prefix in prefixes)})
                ),
            )
        super().__init_subclass__(**kwargs)

    def visit_Call(self, node: cst.Call) -> None:
        name = self.ctx.call_name(node)
        if name is None:
            return
        best = ""
        for entry in self.calls:
            matched = name == entry or (entry.endswith(".*") and name.startswith(entry[:-1]))
            if matched and len(entry) > len(best):
                best = entry
        if best:
            short = name.rsplit(".", 1)[-1]
            self.report(node, message=self.calls[best].format(name=name, short=short))


class TextRule(Rule, abstract=True):
    """A rule over a non-Python file (requirements, Dockerfile, compose, shell, TOML, YAML).

    ``check`` sees the decoded text of one file through ``ctx`` and reports spans with optional
    replacement text.
    """

    parsing = Parsing(file_kinds=frozenset())

    def __init__(self, ctx: TextContext) -> None:
        self.ctx = ctx

    def check(self) -> None:
        raise NotImplementedError

    def report(
        self,
        span: tuple[int, int],
        message: str | None = None,
        fix: Rewrite | None = None,
        problem: Problem = NO_PROBLEM,
    ) -> None:
        """Report the file's text ``span`` (start, end offsets) with ``message`` (the rule's when
        None), optionally with its ``fix`` (replacement text for the span) and the ``problem``
        it is one site of."""
        self.ctx.record(self, span, message, fix, problem)


class KernelRule(TextRule, abstract=True):
    """A rule over a C/C++/CUDA source (``cuda`` kind): ``check`` reads ``self.view`` (the
    tree-sitter parse and the preprocessor's branches on HIP) and reports with
    ``report_bytes`` at byte offsets of the parse. Comments and strings never reach it."""

    parsing = Parsing(file_kinds=frozenset({"cuda"}))

    @property
    def view(self) -> KernelView:
        from migrator.kernels.source import ProjectMacros
        from migrator.kernels.view import KernelView

        return KernelView.of(self.ctx.text, ProjectMacros.of(self.ctx.project, self.ctx.path))

    def report_bytes(
        self,
        span: tuple[int, int],
        message: str | None = None,
        fix: Rewrite | None = None,
        problem: Problem = NO_PROBLEM,
    ) -> None:
        """Report the parse's bytes ``span`` (start, end; a ``fix`` gives replacement text for
        them), unless the code sits in a branch only ROCm builds compile (the project wrote it
        for AMD); where it sits in an NVIDIA-architecture branch with nothing for AMD, the
        message says so. ``problem``: see ``TextRule.report``."""
        view = self.view
        start, end = span
        if view.rocm_only(start):
            return  # code the project wrote for ROCm builds
        why = view.no_amd_path(start)
        text = message or self.message
        if why is not None:
            text = f"{text} ({why}: on AMD the code compiles to nothing)"
        self.report((view.char(start), view.char(end)), text, fix, problem)
