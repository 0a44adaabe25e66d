"""The score, the verdict and the effort of a project, computed from its findings."""

from __future__ import annotations

import enum
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from migrator.model import Applicability, Finding, Severity
from migrator.reporting.readiness.meta import MetaLookup, RuleMeta, catalog_meta, meta_for

#: Penalty points per finding, by fix class (before the severity factor).
WEIGHTS: dict[str, float] = {"blocker": 25.0, "manual": 6.0, "unsafe": 2.0, "safe": 0.5}
#: Multiplies the weight of non-blocker findings.
SEVERITY_FACTOR: dict[Severity, float] = {
    Severity.ERROR: 1.0,
    Severity.WARNING: 0.5,
    Severity.INFO: 0.2,
}
#: Penalty that halves the score.
HALF_LIFE = 25.0
#: Hours to review one unsafe fix (read the diff, run the tests that cover it).
REVIEW_HOURS = 0.25
#: Hours per safe fix: applied by ``migrate fix``; one read of the diff covers them all.
SAFE_HOURS = 0.0
#: Fix classes, most work first.
FIX_CLASSES: tuple[str, ...] = ("blocker", "manual", "unsafe", "safe")

FORMULA_LINES: tuple[str, ...] = (
    "penalty = sum of one weight per finding",
    "weight = 25 for a blocker (a finding of a blocker rule that has no automatic fix)",
    "weight = 6 x severity factor for a finding with no automatic fix (manual work)",
    "weight = 2 x severity factor for a finding whose fix is unsafe (applied with "
    "--unsafe-fixes, needs review)",
    "weight = 0.5 x severity factor for a finding that `migrate fix` rewrites safely",
    "severity factor = 1.0 for error, 0.5 for warning, 0.2 for info",
    "score = round(100 x 0.5 ^ (penalty / 25)): one blocker halves the score",
)

EFFORT_ASSUMPTIONS: tuple[str, ...] = (
    "Manual findings and blockers cost the rule's own estimate (`effort_hours`) each.",
    f"Each unsafe fix costs {REVIEW_HOURS:g} h of review (read the diff, run the covering tests).",
    "Safe fixes cost nothing beyond one read of the `migrate fix --diff` output.",
    "Hours are per finding and add up; shared root causes make real effort lower.",
    "Not included: building ROCm containers, CI on AMD hardware, performance tuning.",
)


class Verdict(enum.Enum):
    """Where a project stands; ordered from best to worst."""

    READY = "ready"
    READY_AFTER_FIXES = "ready-after-fixes"
    NEEDS_MANUAL_WORK = "needs-manual-work"
    BLOCKED = "blocked"

    @property
    def label(self) -> str:
        """The words shown to users."""
        return {
            Verdict.READY: "ready",
            Verdict.READY_AFTER_FIXES: "ready after automatic fixes",
            Verdict.NEEDS_MANUAL_WORK: "needs manual work",
            Verdict.BLOCKED: "blocked",
        }[self]


def fix_class(finding: Finding, meta: RuleMeta) -> str:
    """``blocker``, ``manual``, ``unsafe`` or ``safe``: how much human work one finding needs."""
    applicability = finding.fix.applicability if finding.fix else Applicability.NONE
    if applicability is Applicability.SAFE:
        return "safe"
    if applicability is Applicability.UNSAFE:
        return "unsafe"
    return "blocker" if meta.blocker else "manual"


def finding_weight(finding: Finding, klass: str) -> float:
    """Penalty points of one finding (see the module docstring)."""
    if klass == "blocker":
        return WEIGHTS["blocker"]
    return WEIGHTS[klass] * SEVERITY_FACTOR.get(finding.severity, 1.0)


def score_from_penalty(penalty: float) -> int:
    """Map penalty points to 0–100."""
    factor: float = 0.5 ** (penalty / HALF_LIFE)
    return max(0, min(100, round(100.0 * factor)))


def finding_hours(finding: Finding, klass: str, meta: RuleMeta) -> float:
    """Estimated hours of human work for one finding."""
    if klass == "safe":
        return SAFE_HOURS
    if klass == "unsafe":
        return REVIEW_HOURS
    return meta.effort_hours


@dataclass(frozen=True, slots=True)
class Item:
    """One finding with what the report derives from it."""

    finding: Finding
    meta: RuleMeta
    fix_class: str
    weight: float
    hours: float


def classify(findings: Iterable[Finding], lookup: MetaLookup = catalog_meta) -> list[Item]:
    """Attach rule metadata, fix class, weight and hours to each finding."""
    items = []
    for finding in findings:
        meta = meta_for(finding, lookup)
        klass = fix_class(finding, meta)
        items.append(
            Item(
                finding,
                meta,
                klass,
                finding_weight(finding, klass),
                finding_hours(finding, klass, meta),
            )
        )
    return items


def verdict_for(items: Sequence[Item]) -> Verdict:
    """Blocked > needs manual work > ready after automatic fixes > ready.

    Info-level findings without a fix are portability hints: they are listed but do not keep a
    project from being ``ready``.
    """
    classes = Counter(item.fix_class for item in items)
    if classes["blocker"]:
        return Verdict.BLOCKED
    if any(
        item.fix_class == "manual" and item.finding.severity >= Severity.WARNING for item in items
    ):
        return Verdict.NEEDS_MANUAL_WORK
    if classes["unsafe"] or classes["safe"]:
        return Verdict.READY_AFTER_FIXES
    return Verdict.READY


@dataclass(slots=True)
class CategoryRow:
    """Counts and hours for one rule category."""

    category: str
    total: int = 0
    by_severity: dict[str, int] = field(
        default_factory=lambda: {"error": 0, "warning": 0, "info": 0}
    )
    by_class: dict[str, int] = field(default_factory=lambda: dict.fromkeys(FIX_CLASSES, 0))
    hours: float = 0.0
    penalty: float = 0.0


@dataclass(slots=True)
class FileRow:
    """Counts for one file; files are sorted by penalty so the most work comes first."""

    path: str
    total: int = 0
    by_class: dict[str, int] = field(default_factory=lambda: dict.fromkeys(FIX_CLASSES, 0))
    hours: float = 0.0
    penalty: float = 0.0


@dataclass(slots=True)
class BlockerGroup:
    """All findings of one rule that need a person, with the rule's manual migration steps."""

    meta: RuleMeta
    fix_class: str
    findings: list[Finding]
    hours: float


def category_rows(items: Sequence[Item]) -> list[CategoryRow]:
    """Per-category counts, most penalty first."""
    rows: dict[str, CategoryRow] = {}
    for item in items:
        row = rows.setdefault(item.finding.category, CategoryRow(item.finding.category))
        row.total += 1
        row.by_severity[item.finding.severity.label] += 1
        row.by_class[item.fix_class] += 1
        row.hours += item.hours
        row.penalty += item.weight
    return sorted(rows.values(), key=lambda row: (-row.penalty, -row.total, row.category))


def file_rows(items: Sequence[Item]) -> list[FileRow]:
    """Per-file counts, most work first."""
    rows: dict[str, FileRow] = {}
    for item in items:
        row = rows.setdefault(item.finding.path, FileRow(item.finding.path))
        row.total += 1
        row.by_class[item.fix_class] += 1
        row.hours += item.hours
        row.penalty += item.weight
    return sorted(rows.values(), key=lambda row: (-row.penalty, -row.total, row.path))


def blocker_groups(items: Sequence[Item]) -> list[BlockerGroup]:
    """Findings with no automatic fix, grouped by rule: blocker rules first, then by severity."""
    groups: dict[str, BlockerGroup] = {}
    for item in items:
        if item.fix_class not in ("blocker", "manual"):
            continue
        group = groups.get(item.meta.code)
        if group is None:
            group = groups[item.meta.code] = BlockerGroup(item.meta, item.fix_class, [], 0.0)
        if item.fix_class == "blocker":
            group.fix_class = "blocker"
        group.findings.append(item.finding)
        group.hours += item.hours
    return sorted(
        groups.values(),
        key=lambda group: (
            group.fix_class != "blocker",
            -max(finding.severity for finding in group.findings),
            -len(group.findings),
            group.meta.code,
        ),
    )


@dataclass(slots=True)
class EffortRow:
    """Estimated hours for one category, split by the kind of work."""

    category: str
    manual_count: int = 0
    manual_hours: float = 0.0
    review_count: int = 0
    review_hours: float = 0.0
    safe_count: int = 0

    @property
    def hours(self) -> float:
        return self.manual_hours + self.review_hours


@dataclass(slots=True)
class Effort:
    """Estimated hours per category, the total and the assumptions behind them."""

    rows: list[EffortRow]
    assumptions: tuple[str, ...] = EFFORT_ASSUMPTIONS

    @property
    def total_hours(self) -> float:
        return sum(row.hours for row in self.rows)


def effort(items: Sequence[Item]) -> Effort:
    """Hours per category (manual work, review of unsafe fixes), most hours first."""
    rows: dict[str, EffortRow] = {}
    for item in items:
        row = rows.setdefault(item.finding.category, EffortRow(item.finding.category))
        if item.fix_class in ("blocker", "manual"):
            row.manual_count += 1
            row.manual_hours += item.hours
        elif item.fix_class == "unsafe":
            row.review_count += 1
            row.review_hours += item.hours
        else:
            row.safe_count += 1
    return Effort(sorted(rows.values(), key=lambda row: (-row.hours, row.category)))


def penalty_of(items: Iterable[Item]) -> float:
    """Sum of the weights."""
    return sum(item.weight for item in items)


def grouped(items: Iterable[Item], key: Callable[[Item], str]) -> dict[str, list[Item]]:
    """Items grouped by ``key``, in first-seen order."""
    out: dict[str, list[Item]] = defaultdict(list)
    for item in items:
        out[key(item)].append(item)
    return dict(out)
