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


@dataclass(slots=True)
class ScanResult:
    """All file results of one scan of one root."""

    root: str
    files: list[FileResult] = field(default_factory=list)

    @property
    def findings(self) -> list[Finding]:
        out = [finding for result in self.files for finding in result.findings]
        out.sort(key=Finding.sort_key)
        return out
