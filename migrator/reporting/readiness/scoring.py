"""Per-finding breakdowns: each finding's fix class, consequence and hours, by category, file and rule.

The score and verdict are computed from work items (``score.py``); these tables list findings."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from migrator.model import MEANINGS, Applicability, Finding, is_problem
from migrator.reporting.readiness.consequences import CONSEQUENCE_POINTS, consequence_of
from migrator.reporting.readiness.meta import MetaLookup, RuleMeta, catalog_meta, meta_for

#: Hours to review one unsafe fix (read the diff, run the tests that cover it).
REVIEW_HOURS = 0.25
#: Hours per safe fix: applied by ``migrate fix``; one read of the diff covers them all.
SAFE_HOURS = 0.0
#: Fix classes, most work first. ``port``: no drop-in ROCm equivalent (a blocker only when its
#: work item decides a blocked verdict); ``hint``: works on ROCm (``model.MEANINGS``), no work.
FIX_CLASSES: tuple[str, ...] = ("port", "manual", "unsafe", "safe", "hint")


def fix_class(finding: Finding, meta: RuleMeta) -> str:
    """``port``, ``manual``, ``unsafe``, ``safe`` or ``hint``: how a finding is resolved, by its
    fix when it has one (as ``migrate fix`` counts it), else by whether it is work at all."""
    applicability = finding.fix.applicability if finding.fix else Applicability.NONE
    if applicability is Applicability.SAFE:
        return "safe"
    if applicability is Applicability.UNSAFE:
        return "unsafe"
    if not is_problem(finding.severity):
        return "hint"
    return "port" if meta.port else "manual"


def finding_hours(finding: Finding, klass: str, meta: RuleMeta) -> float:
    """Estimated hours of human work for one finding (none for a hint: ``model.MEANINGS``)."""
    if not MEANINGS[finding.severity].effort:
        return 0.0
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
    """Attach rule metadata, fix class, weight (the consequence points of its problem, for
    ordering the tables) and hours to each finding."""
    items = []
    for finding in findings:
        meta = meta_for(finding, lookup)
        klass = fix_class(finding, meta)
        items.append(
            Item(
                finding,
                meta,
                klass,
                CONSEQUENCE_POINTS[consequence_of(finding, meta.consequence)],
                finding_hours(finding, klass, meta),
            )
        )
    return items


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
class WorkGroup:
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


def work_groups(items: Sequence[Item]) -> list[WorkGroup]:
    """Problems with no automatic fix, grouped by rule: ports first, then by severity (hints
    are no work and are left out)."""
    groups: dict[str, WorkGroup] = {}
    for item in items:
        if item.fix_class not in ("port", "manual"):
            continue
        group = groups.get(item.meta.code)
        if group is None:
            group = groups[item.meta.code] = WorkGroup(item.meta, item.fix_class, [], 0.0)
        if item.fix_class == "port":
            group.fix_class = "port"
        group.findings.append(item.finding)
        group.hours += item.hours
    return sorted(
        groups.values(),
        key=lambda group: (
            group.fix_class != "port",
            -max(finding.severity for finding in group.findings),
            -len(group.findings),
            group.meta.code,
        ),
    )


def penalty_of(items: Iterable[Item]) -> float:
    """Sum of the weights."""
    return sum(item.weight for item in items)


def grouped(items: Iterable[Item], key: Callable[[Item], str]) -> dict[str, list[Item]]:
    """Items grouped by ``key``, in first-seen order."""
    out: dict[str, list[Item]] = defaultdict(list)
    for item in items:
        out[key(item)].append(item)
    return dict(out)
