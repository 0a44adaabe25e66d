"""Report assembly: one project's readiness, and a report over one project or a fleet."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from migrator.model import Finding, ScanResult, Status
from migrator.reporting.readiness.dependencies import DependencyRow, dependency_rows
from migrator.reporting.readiness.meta import MetaLookup, catalog_meta
from migrator.reporting.readiness.receipts import Verification
from migrator.reporting.readiness.scoring import (
    FIX_CLASSES,
    BlockerGroup,
    CategoryRow,
    Effort,
    FileRow,
    Item,
    Verdict,
    blocker_groups,
    category_rows,
    classify,
    effort,
    file_rows,
    penalty_of,
    score_from_penalty,
    verdict_for,
)
from migrator.reporting.readiness.targets import DEFAULT_TARGETS, TargetMatrix, target_matrix


@dataclass(slots=True)
class ProjectReport:
    """Everything the renderers show for one scanned project."""

    name: str
    root: str
    items: list[Item]
    files_scanned: int
    files_skipped: list[tuple[str, str]]
    files_failed: list[tuple[str, str]]
    score: int
    penalty: float
    verdict: Verdict
    categories: list[CategoryRow]
    files: list[FileRow]
    blockers: list[BlockerGroup]
    effort: Effort
    dependencies: list[DependencyRow]
    targets: TargetMatrix

    @property
    def findings(self) -> list[Finding]:
        return [item.finding for item in self.items]

    def class_counts(self) -> dict[str, int]:
        """Findings per fix class (``blocker``, ``manual``, ``unsafe``, ``safe``)."""
        counts = Counter(item.fix_class for item in self.items)
        return {klass: counts.get(klass, 0) for klass in FIX_CLASSES}

    def severity_counts(self) -> dict[str, int]:
        """Findings per severity label."""
        counts = Counter(item.finding.severity.label for item in self.items)
        return {label: counts.get(label, 0) for label in ("error", "warning", "info")}

    def verdict_reason(self) -> str:
        """One sentence on why the verdict is what it is."""
        counts = self.class_counts()
        if self.verdict is Verdict.BLOCKED:
            return (
                f"{counts['blocker']} finding(s) of blocker rules have no ROCm equivalent or "
                "automatic fix"
            )
        if self.verdict is Verdict.NEEDS_MANUAL_WORK:
            return f"{counts['manual']} finding(s) need a manual change"
        if self.verdict is Verdict.READY_AFTER_FIXES:
            unsafe = (
                f", {counts['unsafe']} of them with --unsafe-fixes (review)"
                if counts["unsafe"]
                else ""
            )
            fixable = counts["safe"] + counts["unsafe"]
            return f"`migrate fix` rewrites the remaining {fixable} finding(s){unsafe}"
        if self.items:
            return "only informational hints remain"
        return "no CUDA-only construct found"


def build_project(
    scan: ScanResult,
    *,
    name: str | None = None,
    targets: Sequence[str] = DEFAULT_TARGETS,
    lookup: MetaLookup = catalog_meta,
) -> ProjectReport:
    """Compute a project's readiness from one scan."""
    items = classify(scan.findings, lookup)
    penalty = penalty_of(items)
    skipped = [(file.path, file.reason) for file in scan.files if file.status is Status.SKIPPED]
    failed = [(file.path, file.reason) for file in scan.files if file.status is Status.FAILED]
    return ProjectReport(
        name=name or _project_name(scan.root),
        root=scan.root,
        items=items,
        files_scanned=sum(file.status is Status.SCANNED for file in scan.files),
        files_skipped=skipped,
        files_failed=failed,
        score=score_from_penalty(penalty),
        penalty=penalty,
        verdict=verdict_for(items),
        categories=category_rows(items),
        files=file_rows(items),
        blockers=blocker_groups(items),
        effort=effort(items),
        dependencies=list(dependency_rows(items)),
        targets=target_matrix(items, targets),
    )


def _project_name(root: str) -> str:
    path = Path(root).resolve()
    return path.name or str(path)


def unique_names(roots: Sequence[str]) -> list[str]:
    """Short project names for a fleet; parents are added where two roots share a basename."""
    resolved = [Path(root).resolve() for root in roots]
    names = [path.name or str(path) for path in resolved]
    depth = 1
    while len(set(names)) < len(names) and depth < 6:
        depth += 1
        counts = Counter(names)
        names = [
            "/".join(path.parts[-depth:]) if counts[name] > 1 else name
            for name, path in zip(names, resolved, strict=True)
        ]
    return names


@dataclass(slots=True)
class Report:
    """One report over one or more projects (a fleet), most ready first."""

    projects: list[ProjectReport]
    targets: tuple[str, ...]
    verification: Verification | None = None
    generated: str = ""

    @property
    def is_fleet(self) -> bool:
        return len(self.projects) > 1


def build_report(
    scans: Sequence[tuple[str, ScanResult]],
    *,
    targets: Sequence[str] = DEFAULT_TARGETS,
    verification: Verification | None = None,
    lookup: MetaLookup = catalog_meta,
    generated: str = "",
) -> Report:
    """Readiness of every ``(name, scan)``, sorted by score (most ready first), then name."""
    projects = [
        build_project(scan, name=name, targets=targets, lookup=lookup) for name, scan in scans
    ]
    projects.sort(key=lambda project: (-project.score, project.name))
    return Report(projects, tuple(targets), verification, generated)
