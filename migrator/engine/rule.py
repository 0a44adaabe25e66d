"""The Rule base classes: a rule is data (code, name, message, severity, fix safety, fact, examples)
plus a small matcher; the engine does the traversal, suppression, fixing and reporting."""

from __future__ import annotations

import inspect
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from migrator.engine.report_values import NO_PROBLEM, Problem, Rewrite
from migrator.model import AGGREGATIONS, CONSEQUENCES, Applicability, Severity

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


@dataclass(frozen=True, slots=True)
class CallShape:
    """A call that a finding's statement holds (``Rule.statement_calls``): its callee, resolved
    through the file's imports, ends in one of ``names``, starts with one of ``prefixes``, or
    is an attribute named in ``attributes``; and, when ``keywords`` is given, it passes one of
    them."""

    names: frozenset[str] = frozenset()
    prefixes: tuple[str, ...] = ()
    attributes: frozenset[str] = frozenset()
    keywords: frozenset[str] = frozenset()


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
    fix_title: ClassVar[str | None] = None
    applicability: ClassVar[Applicability] = Applicability.NONE
    #: Minimum versions of the APIs the fix emits (package → version); a fix is withheld where the
    #: project (or the version branch the code sits in) supports an older version.
    fix_requires: ClassVar[dict[str, str]] = {}
    #: True when the fix swaps an NVIDIA artefact for the AMD one (image, wheel index, device
    #: reservation, CUDA wheel): never applied in place, since the file serves NVIDIA too; the
    #: examples' ``fixed`` text is the content of the ROCm variant to put beside it.
    replaces_vendor: ClassVar[bool] = False
    #: Citation into ``docs/rocm-facts.md``: ``§N`` plus the fact's key words, and source ids.
    fact: ClassVar[str]
    #: Strings of which at least one must occur in a file for the rule to fire (the prefilter).
    triggers: ClassVar[tuple[str, ...]]
    file_kinds: ClassVar[frozenset[str]] = frozenset({"python"})
    #: Per-kind trigger overrides, for rules that read several kinds of file (a dependency rule
    #: needs a package name in requirements files but ``setuptools`` in a Python file).
    kind_triggers: ClassVar[dict[str, tuple[str, ...]]] = {}
    valid: ClassVar[Sequence[Valid]] = ()
    invalid: ClassVar[Sequence[Invalid]] = ()
    #: Which GPU targets a finding of this rule matters on (``all`` or gfx ids); used by reports.
    targets: ClassVar[tuple[str, ...]] = ("all",)
    #: Rough hours of manual work per finding when no automatic fix applies (report estimates).
    effort_hours: ClassVar[float] = 0.5
    #: True when a finding means the project cannot run on ROCm until someone acts by hand.
    blocker: ClassVar[bool] = False
    #: What a finding does on a ROCm build, for the readiness report: one of
    #: ``model.CONSEQUENCES`` (``crash-import``, ``crash-path``, ``cpu-fallback``,
    #: ``performance``, or ``hygiene`` for "no action needed"). Required; a finding reported
    #: below warning severity counts as ``hygiene`` whatever the rule declares.
    consequence: ClassVar[str] = ""
    #: The problem needs a port, not an edit: nothing drop-in exists on ROCm (inline PTX,
    #: CUTLASS, a package with no ROCm build). In code every run loads it blocks the project.
    port: ClassVar[bool] = False
    #: Whether a finding says what the scan could not read (a build, an unknown dependency): the
    #: readiness report lists it with the unknowns that could change the verdict.
    unknown: ClassVar[bool] = False
    #: How many findings one problem yields (the engine merges the rest into ``related``):
    #: ``none`` (every report is its own problem), ``scope`` (one per rule, group and enclosing
    #: function or class), ``file`` (one per rule and group in a file), ``project`` (one per
    #: ``problem`` key, or rule and group, in the whole scanned root).
    aggregate: ClassVar[str] = "none"
    #: Cross-rule key of a project-level problem: findings of every rule declaring the same key
    #: are one problem, anchored where the user acts (a dependency declaration, else the first
    #: use). None: the rule code.
    problem: ClassVar[str | None] = None
    #: For a container rule, its part in a Dockerfile's image: ``base`` (a CUDA base image) or
    #: ``part`` (a line that exists for that image: ``CUDA_HOME``, a CUDA apt package). In a
    #: Dockerfile stage whose base image is reported, the parts without a fix of their own are
    #: that finding's related sites (``migrator.engine.image_folding``): one problem, one edit.
    container_image: ClassVar[str] = ""
    #: True for rules about guards themselves (their findings sit in guarded code on purpose),
    #: which the engine then does not hide.
    sees_guarded: ClassVar[bool] = False
    #: Import name of the package whose CUDA-only build the rule reports: inside the project
    #: that is this package (its own top-level package) its own build provides it, so the
    #: engine hides the findings (``--show-guarded`` shows them, marked).
    dependency: ClassVar[str | None] = None
    #: The first release of ``dependency`` with ROCm support, for rules reporting its uses: the
    #: uses are no problem (hidden, marked) when the project's declared range admits that
    #: release, or declares none (pip installs the latest).
    rocm_release: ClassVar[str | None] = None
    #: What of a file a Python rule must see (``migrator.engine.partial`` parses only that on a scan):
    #: ``statement`` (the statements holding its triggers and the uses of the names they
    #: import), ``definition`` (their whole top-level statements), ``names`` (also every use of
    #: any name they bind, transitively: for rules that follow values through assignments; a
    #: class counts by its methods, with its header and class attributes) or
    #: ``module`` (the whole file: for rules whose answer depends on what a file lacks).
    parse_scope: ClassVar[str] = "module"
    #: Identifiers (the short names of the functions a rule reports calls of) whose whole
    #: enclosing top-level statement a rule reads on top of its ``parse_scope`` (the function
    #: around a call); where one occurs in module-level code the whole file is parsed.
    function_words: ClassVar[tuple[str, ...]] = ()
    #: Strings whose statements the rule also reads, under its ``parse_scope``, without being
    #: triggers (they do not make the rule active): what a rule reads besides its triggers,
    #: such as ``version.hip`` (``t.version.hip`` with ``import torch as t``) for a rule that
    #: stays silent in a file that checks for a ROCm build.
    scope_triggers: ClassVar[tuple[str, ...]] = ()
    #: Strings of which a text must also hold one for the rule to be active, besides a trigger
    #: (empty: none needed): what every finding of the rule needs as well, such as a kernel
    #: marker or a kernel compiler's name for a rule reading warp masks in kernel sources.
    requires: ClassVar[tuple[str, ...]] = ()
    #: Qualified names of which every finding of a Python rule resolves one through the file's
    #: imports (``torch.utils.cpp_extension.CUDA_HOME``): the rule does not run on a file whose
    #: imports can resolve none (``ImportTable.may_resolve``), such as an installer naming the
    #: ``CUDA_HOME`` variable without importing torch.
    requires_imports: ClassVar[tuple[str, ...]] = ()
    #: A pattern whose match anywhere in a text means the rule reports nothing there: the rule
    #: does not run on such a text (the FP8 rules on a file naming a block-scaled format, whose
    #: own element type OCP FP8 is). Share the pattern with the code that decides so.
    silenced_by: ClassVar[re.Pattern[str] | None] = None
    #: Per-kind ``requires`` overrides, like ``kind_triggers``: a dependency rule reads a Python
    #: file only through a ``setup()`` keyword (``install_requires=``), so a Python file
    #: without one cannot hold its findings.
    kind_requires: ClassVar[dict[str, tuple[str, ...]]] = {}
    #: For a ``statement`` rule: strings of which the statement holding a finding also holds
    #: one, where a token starts (not after a letter, digit, underscore or dot: ``32`` in
    #: ``n * 32``, not in ``Int32``), next to a trigger (empty: none needed). Partial parsing
    #: then keeps only the statements holding both (a compound statement's header counts
    #: alone), without the uses of the names their imports bind, and a file lacking them all is
    #: not read: for a rule whose findings are import statements (``import``), or literals of
    #: one value.
    statement_requires: ClassVar[tuple[str, ...]] = ()
    #: Triggers of a rule with ``statement_requires`` that are read as a plain ``statement``
    #: rule's (their statements without the requirement, and the uses of the names their
    #: imports bind): for findings of another kind than the required one, such as a package's
    #: attribute used through its import next to findings on imports. A file holding no required
    #: string is still not read: every finding must imply one in the file.
    unpaired_triggers: ClassVar[tuple[str, ...]] = ()
    #: For a ``statement`` rule that reports calls: the calls of which the statement holding a
    #: finding holds one (a compound statement's header counts alone). Partial parsing then
    #: keeps, of the statements holding a trigger or using a name its imports bind, only those
    #: holding such a call: a trigger passed as a value (``dict(type=BitsAndBytesConfig)`` in
    #: a config file) leaves the statement out however long it is.
    statement_calls: ClassVar[tuple[CallShape, ...]] = ()

    #: A rule in preview ships opt-in: chosen only with ``--preview`` (or ``preview = true`` in
    #: ``[tool.migrate]``), so that a new rule can be tried on real projects before it is on.
    preview: ClassVar[bool] = False

    abstract: ClassVar[bool] = True

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if inspect.isabstract(cls) or cls.__dict__.get("abstract", False):
            return
        cls.abstract = False
        for attribute in ("code", "name", "category", "severity", "message", "fact", "triggers"):
            if not hasattr(cls, attribute):
                raise TypeError(f"rule {cls.__name__} lacks {attribute!r}")
        if not _CODE_RE.match(cls.code):
            raise TypeError(f"rule {cls.__name__}: code {cls.code!r} is not ROC + three digits")
        if not _NAME_RE.match(cls.name):
            raise TypeError(f"rule {cls.__name__}: name {cls.name!r} is not kebab-case")
        unknown = cls.file_kinds - FILE_KINDS
        if unknown:
            raise TypeError(f"rule {cls.__name__}: unknown file kinds {sorted(unknown)}")
        if not set(cls.unpaired_triggers) <= set(cls.triggers) or (
            cls.unpaired_triggers and not cls.statement_requires
        ):
            raise TypeError(
                f"rule {cls.__name__}: unpaired_triggers must be triggers of a rule with "
                "statement_requires"
            )
        if cls.statement_calls and (cls.parse_scope != "statement" or cls.statement_requires):
            raise TypeError(
                f"rule {cls.__name__}: statement_calls needs parse_scope 'statement' and no "
                "statement_requires"
            )
        if cls.statement_requires and cls.parse_scope != "statement":
            raise TypeError(
                f"rule {cls.__name__}: statement_requires needs parse_scope 'statement'"
            )
        if cls.consequence not in CONSEQUENCES:
            raise TypeError(
                f"rule {cls.__name__}: consequence {cls.consequence!r} not in {CONSEQUENCES}"
            )
        if cls.aggregate not in AGGREGATIONS:
            raise TypeError(
                f"rule {cls.__name__}: aggregate {cls.aggregate!r} not in {AGGREGATIONS}"
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


class PythonRule(Rule):
    """A rule over Python source. Define ``visit_<Node>`` methods; call ``self.ctx.report``.

    One instance is made per file, so a rule may keep per-file state on ``self``.
    """

    abstract = True

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


class QualifiedCallRule(PythonRule):
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

    abstract = True
    calls: ClassVar[Mapping[str, str]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        if "calls" in cls.__dict__:
            exact = [name for name in cls.calls if not name.endswith(".*")]
            prefixes = [name[:-1] for name in cls.calls if name.endswith(".*")]
            if not cls.calls or any("*" in name for name in exact):
                raise TypeError(f"rule {cls.__name__}: calls must name x.y or x.y.* entries")
            if "triggers" not in cls.__dict__:
                cls.triggers = tuple(sorted({name.split(".", 1)[0] for name in cls.calls}))
            cls.parse_scope = "statement"
            cls.statement_calls = (
                CallShape(
                    names=frozenset(name.rsplit(".", 1)[-1] for name in exact),
                    prefixes=tuple(prefixes),
                ),
            )
            cls.requires_imports = tuple(
                sorted({*exact, *(prefix.rstrip(".") for prefix in prefixes)})
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


class TextRule(Rule):
    """A rule over a non-Python file (requirements, Dockerfile, compose, shell, TOML, YAML).

    ``check`` sees the decoded text of one file through ``ctx`` and reports spans with optional
    replacement text.
    """

    abstract = True
    file_kinds: ClassVar[frozenset[str]] = frozenset()

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


class KernelRule(TextRule):
    """A rule over a C/C++/CUDA source (``cuda`` kind): ``check`` reads ``self.view`` (the
    tree-sitter parse and the preprocessor's branches on HIP) and reports with
    ``report_bytes`` at byte offsets of the parse. Comments and strings never reach it."""

    abstract = True
    file_kinds: ClassVar[frozenset[str]] = frozenset({"cuda"})

    @property
    def view(self) -> KernelView:
        from migrator.kernels.source import ProjectMacros
        from migrator.kernels.view import KernelView

        return KernelView.of(self.ctx.text, ProjectMacros.of(self.ctx.project))

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
