"""Plain data passed between the engine, the fixer and the renderers (picklable, no CST nodes)."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


class Severity(enum.IntEnum):
    """How bad a finding is on ROCm; ordered so that thresholds compare with ``>=``.

    ``error``: crashes, or silently runs on the CPU, on ROCm. ``warning``: runs but behaves or
    performs differently. ``info``: works on ROCm, worth knowing. ``hygiene``: behaves the same
    on ROCm (a deprecation, a style matter); below the default threshold, never counts toward
    readiness.
    """

    HYGIENE = -1
    INFO = 0
    WARNING = 1
    ERROR = 2

    @property
    def label(self) -> str:
        return self.name.lower()

    @classmethod
    def parse(cls, text: str) -> Severity:
        try:
            return cls[text.strip().upper()]
        except KeyError:
            raise ValueError(
                f"unknown severity {text!r} (expected error, warning, info or hygiene)"
            ) from None


@dataclass(frozen=True, slots=True)
class Meaning:
    """What findings of one severity mean, read by every output so that none contradicts another:
    the scan's counts, the report's labels and effort, the score, the SARIF level and CI."""

    #: ``problem`` (migration work) or ``hint`` (true, but nothing to change on ROCm).
    kind: str
    #: What the code does on a ROCm build.
    on_rocm: str
    #: The word the readiness report shows for it.
    report_label: str
    #: Whether the report estimates hours of work for it.
    effort: bool
    #: Whether it can move the readiness score or the verdict.
    scored: bool
    #: The SARIF ``level`` (``note`` is what code hosts show as a hint).
    sarif_level: str
    #: Whether it fails ``migrate scan`` (pre-commit, the GitHub Action) by default.
    fails_ci: bool


#: The one consequence model: per severity, what it means on ROCm and how each output shows it
#: (docs/report.md prints this table; tests/test_coherence.py reads every output against it).
MEANINGS: dict[Severity, Meaning] = {
    Severity.ERROR: Meaning(
        "problem",
        "crashes, installs CUDA-only software or silently runs on the CPU",
        "work",
        True,
        True,
        "error",
        True,
    ),
    Severity.WARNING: Meaning(
        "problem",
        "runs, but behaves, installs or performs differently",
        "work",
        True,
        True,
        "warning",
        True,
    ),
    Severity.INFO: Meaning(
        "hint",
        "works on ROCm; worth knowing",
        "hint",
        False,
        False,
        "note",
        False,
    ),
    Severity.HYGIENE: Meaning(
        "hint",
        "behaves the same on ROCm (shown only when selected)",
        "hint",
        False,
        False,
        "note",
        False,
    ),
}
#: The lowest severity that fails CI by default (``--fail-on``'s default).
DEFAULT_FAIL_ON: Severity = min(severity for severity, m in MEANINGS.items() if m.fails_ci)


def is_problem(severity: Severity) -> bool:
    """Whether findings of ``severity`` are migration work (else they are hints)."""
    return MEANINGS[severity].kind == "problem"


class Applicability(enum.Enum):
    """Whether a rule's fix may be applied without review."""

    NONE = "none"
    SAFE = "safe"
    UNSAFE = "unsafe"


@dataclass(frozen=True, slots=True)
class FixInfo:
    """A fix offered for one finding: how safe it is and what it does."""

    applicability: Applicability
    description: str


@dataclass(frozen=True, slots=True)
class Related:
    """Another site of the same problem (a later call site, another flag of one flag list)."""

    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    cell: int | None = None
    #: The rule that found this site when it is not the finding's own: a kernel site folded
    #: into the problem of the extension or library port that contains it.
    rule: str = ""


#: Marker that starts the reason appended to a finding's message when the engine withholds its
#: fix (``engine.fix_policy``); ``fix`` and aggregation read the reason after it.
WITHHELD = "no automatic fix: "


def withheld_reason(message: str) -> str | None:
    """Why a finding's fix was withheld, read from its message (None when it was not)."""
    return message.split(WITHHELD, 1)[1] if WITHHELD in message else None


#: Aggregation scopes a rule may declare: how many findings one problem yields.
AGGREGATIONS = ("none", "scope", "file", "project")
#: What a rule's problem does on a ROCm build, worst first (every rule declares one; readiness
#: weighs them): crashes at import, crashes or is wrong on a code path, silently runs without the
#: GPU, runs slower or degraded, or ``hygiene``: no effect on ROCm, no action needed.
CONSEQUENCES = ("crash-import", "crash-path", "cpu-fallback", "performance", "hygiene")


@dataclass(frozen=True, slots=True)
class Finding:
    """One place in one file that depends on CUDA-only software or behaves differently on ROCm."""

    rule: str
    name: str
    category: str
    severity: Severity
    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    message: str
    fix: FixInfo | None = None
    cell: int | None = None
    source_line: str = ""
    #: Why the code never runs on a ROCm build ("" when it does): see ``migrator.reach.guards``.
    guard: str = ""
    #: The function or class path the finding sits in ("" at module level or in a text file).
    scope: str = ""
    #: What makes two findings the same problem, beyond the rule and its aggregation scope.
    group: str = ""
    #: Rule-declared aggregation scope (``AGGREGATIONS``) and cross-rule problem key.
    aggregate: str = "none"
    problem: str = ""
    #: The other sites of this problem, once findings are aggregated.
    related: tuple[Related, ...] = ()

    def sort_key(self) -> tuple[str, int, int, int, str]:
        return (self.path, self.cell or 0, self.line, self.column, self.rule)


class Status(enum.Enum):
    """What happened to one file."""

    SCANNED = "scanned"
    SKIPPED = "skipped"
    FAILED = "failed"


@dataclass(frozen=True, slots=True)
class FileResult:
    """The outcome for one file: findings, or a one-line reason it was skipped or failed."""

    path: str
    status: Status
    findings: tuple[Finding, ...] = ()
    reason: str = ""
    unused_suppressions: tuple[tuple[int, str], ...] = ()


@dataclass(frozen=True, slots=True)
class ImportedPackage:
    """A third-party package the project imports on a GPU path, and what is known of its native
    code: ``status`` is one of ``PACKAGE_STATUSES``; ``evidence`` says what was read (a shared
    object's needed library, a fat-binary section, a requirement), ``check`` what the user should
    check; ``sites`` are the import statements, root-relative like findings."""

    name: str
    status: str
    distribution: str = ""
    version: str = ""
    evidence: tuple[str, ...] = ()
    check: str = ""
    sites: tuple[tuple[str, int], ...] = ()
    #: whether a site imports it when its module loads (not only inside a function)
    eager: bool = True

    @property
    def is_concern(self) -> bool:
        """Whether it keeps a verdict from "ready": unknown, or shown to be CUDA-only."""
        return self.status in CONCERN_STATUSES


#: What ``ImportedPackage.status`` can be: ``unknown`` (nothing read, or not installed where
#: the environment was read), ``cuda-only`` (its native code needs CUDA and has no ROCm build),
#: ``rocm`` (a ROCm build), ``cuda-and-rocm`` (both), ``native-cpu`` (native code with no GPU
#: library), ``pure-python`` (no native code), ``known`` (in migrate's knowledge tables).
PACKAGE_STATUSES = (
    "unknown",
    "cuda-only",
    "rocm",
    "cuda-and-rocm",
    "native-cpu",
    "pure-python",
    "known",
)
#: The statuses that keep a readiness verdict from "ready" and are shown in every output.
CONCERN_STATUSES = frozenset({"unknown", "cuda-only"})


@dataclass(slots=True)
class ScanResult:
    """All file results of one scan of one root, and the third-party packages its GPU code
    imports (``migrator.reach.native_deps``; empty unless a command asked for them)."""

    root: str
    files: list[FileResult] = field(default_factory=list)
    packages: list[ImportedPackage] = field(default_factory=list)
    #: the environment the packages were read from ("" when none was)
    environment: str = ""

    @property
    def findings(self) -> list[Finding]:
        out = [finding for result in self.files for finding in result.findings]
        out.sort(key=Finding.sort_key)
        return out
