"""Report assembly: one project's readiness, and a report over one project or a fleet."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from migrator.model import Finding, ImportedPackage, ScanResult, Status
from migrator.reporting.readiness.amd_evidence import Evidence
from migrator.reporting.readiness.dependencies import DependencyRow, dependency_rows
from migrator.reporting.readiness.distribution import EffortSpread, spread
from migrator.reporting.readiness.layout import ProjectLayout, analyze
from migrator.reporting.readiness.meta import MetaLookup, catalog_meta
from migrator.reporting.readiness.native import counting, native_unknown
from migrator.reporting.readiness.receipts import Verification
from migrator.reporting.readiness.roles import PERIPHERAL
from migrator.reporting.readiness.score import (
    EFFORT_ASSUMPTIONS,
    VERDICT_RULE_TEXT,
    Verdict,
    readiness,
)
from migrator.reporting.readiness.scoring import (
    FIX_CLASSES,
    CategoryRow,
    FileRow,
    Item,
    WorkGroup,
    category_rows,
    classify,
    file_rows,
    work_groups,
)
from migrator.reporting.readiness.targets import DEFAULT_TARGETS, TargetMatrix, target_matrix
from migrator.reporting.readiness.unknowns import unknowns_of
from migrator.reporting.readiness.workitems import WorkItem, sites_of, work_items


@dataclass(slots=True)
class Effort:
    """Hours per work item: reachable and deployment items, and peripheral items apart."""

    rows: list[WorkItem]
    apart: list[WorkItem]
    assumptions: tuple[str, ...] = EFFORT_ASSUMPTIONS

    @property
    def total_hours(self) -> float:
        return sum(item.hours for item in self.rows)

    @property
    def apart_hours(self) -> float:
        return sum(item.hours for item in self.apart)


def effort_of(work: Sequence[WorkItem]) -> Effort:
    """Work items with hours, most hours first; peripheral ones apart."""
    costly = [item for item in work if item.hours > 0 and not item.covered_by]
    costly.sort(key=lambda item: (-item.hours, -item.weight, item.key))
    return Effort(
        [item for item in costly if item.tier != PERIPHERAL],
        [item for item in costly if item.tier == PERIPHERAL],
    )


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
    #: Problems that need a person, grouped by rule (``port`` or ``manual``).
    manual: list[WorkGroup]
    effort: Effort
    dependencies: list[DependencyRow]
    targets: TargetMatrix
    work: list[WorkItem] = field(default_factory=list)
    deciding: list[WorkItem] = field(default_factory=list)
    reason: str = ""
    amd_path: list[Evidence] = field(default_factory=list)
    entry_points: int = 0
    #: the project's CUDA extensions (``migrator.kernels.project.ExtensionRow``)
    extensions: list[Any] = field(default_factory=list)
    #: The id of the verdict rule that applied (``score.VERDICT_RULE_TEXT``).
    rule: str = "ready"
    #: What the report could not tell and that could change the verdict: (what, detail), one
    #: entry per ``native_unknowns`` package among them.
    unknowns: list[tuple[str, str]] = field(default_factory=list)
    #: third-party packages the GPU code imports (``migrator.reach.native_deps``)
    packages: list[ImportedPackage] = field(default_factory=list)
    #: the unknown and CUDA-only ones imported from code users run: they keep it from "ready"
    native_unknowns: list[ImportedPackage] = field(default_factory=list)
    #: the environment the packages were read from ("" when none was)
    environment: str = ""

    @property
    def findings(self) -> list[Finding]:
        return [item.finding for item in self.items]

    @property
    def counted(self) -> str:
        """``2 problems (6 sites) and 1 hint in 1 file``: findings, their sites, their files."""
        from migrator.output.text import problems_and_hints

        files = len(self.files)
        return f"{problems_and_hints(self.findings)} in {files} file{'s' if files != 1 else ''}"

    @property
    def reachable_work(self) -> list[WorkItem]:
        """Work items in core code or deployment files, heaviest first."""
        return [item for item in self.work if item.tier != PERIPHERAL]

    @property
    def peripheral_work(self) -> list[WorkItem]:
        """Work items in tests, examples, benchmarks, docs, tooling or unreachable modules."""
        return [item for item in self.work if item.tier == PERIPHERAL]

    @property
    def blockers(self) -> list[WorkItem]:
        """The work items that block the project: exactly those that decide a blocked verdict,
        so that no output counts a blocker beside another verdict."""
        return list(self.deciding) if self.verdict is Verdict.BLOCKED else []

    @property
    def blocking_rules(self) -> frozenset[str]:
        """Rule codes of the blockers' findings (their groups are labelled blockers)."""
        return frozenset(code for item in self.blockers for code in item.rules)

    def class_counts(self) -> dict[str, int]:
        """Findings per fix class (``port``, ``manual``, ``unsafe``, ``safe``, ``hint``)."""
        counts = Counter(item.fix_class for item in self.items)
        return {klass: counts.get(klass, 0) for klass in FIX_CLASSES}

    def severity_counts(self) -> dict[str, int]:
        """Findings per severity label."""
        counts = Counter(item.finding.severity.label for item in self.items)
        return {label: counts.get(label, 0) for label in ("error", "warning", "info")}

    @property
    def rule_text(self) -> str:
        """The stated verdict rule that applied (``score.VERDICT_RULE_TEXT``)."""
        return VERDICT_RULE_TEXT[self.rule]

    def verdict_reason(self) -> str:
        """One sentence on why the verdict is what it is, naming the deciding items (the
        unknowns that could change it are listed apart: ``unknowns``)."""
        if not self.deciding:
            return self.reason
        decided = "; ".join(item.describe() for item in self.deciding)
        return f"{self.reason} — decided by: {decided}"


def counted(findings: Sequence[Finding]) -> list[Finding]:
    """The findings that are migration work: not those in code that never runs on ROCm (the
    engine's guards) and not those at hygiene severity (behaves the same on ROCm)."""
    return [
        finding
        for finding in findings
        if not getattr(finding, "guard", "") and finding.severity.label != "hygiene"
    ]


def coverage(evidence: Sequence[Evidence]) -> dict[str, str]:
    """Package subject -> the AMD-path evidence that provides for it (the first that names it)."""
    out: dict[str, str] = {}
    for item in evidence:
        for subject in item.covers:
            out.setdefault(subject, f"{item.detail} in `{item.path}`")
    return out


def layout_of(scan: ScanResult) -> ProjectLayout:
    """The project's layout read from its root, or path rules alone when the root is gone."""
    root = Path(scan.root)
    if not root.is_dir():
        return ProjectLayout(known=False)
    return analyze(root, [file.path for file in scan.files])


def build_project(
    scan: ScanResult,
    *,
    name: str | None = None,
    targets: Sequence[str] = DEFAULT_TARGETS,
    lookup: MetaLookup = catalog_meta,
    layout: ProjectLayout | None = None,
) -> ProjectReport:
    """Compute a project's readiness from one scan."""
    findings = counted(scan.findings)
    items = classify(findings, lookup)
    layout = layout if layout is not None else layout_of(scan)
    sites, metas = sites_of(findings, layout, lookup)
    kinds = frozenset(evidence.kind for evidence in layout.amd_path)
    work = work_items(
        sites,
        metas,
        amd_kinds=kinds,
        computes=layout.computes,
        targets=targets,
        covers=coverage(layout.amd_path),
        kernels=layout.kernel_sources,
    )
    concerns = counting(scan.packages, layout)
    skipped = [(file.path, file.reason) for file in scan.files if file.status is Status.SKIPPED]
    failed = [(file.path, file.reason) for file in scan.files if file.status is Status.FAILED]
    # a file of code users run that could not be analysed keeps the project from "ready"
    unread = [path for path, _ in failed if layout.tier_of(path) != PERIPHERAL]
    extensions = _extensions(scan, findings)
    work = mark_build_checks(work, extensions)
    state = readiness(work, layout.amd_path, unread, concerns)
    return ProjectReport(
        name=name or _project_name(scan.root),
        root=scan.root,
        items=items,
        files_scanned=sum(file.status is Status.SCANNED for file in scan.files),
        files_skipped=skipped,
        files_failed=failed,
        score=state.score,
        penalty=state.penalty,
        verdict=state.verdict,
        categories=category_rows(items),
        files=file_rows(items),
        manual=deciding_first(work_groups(items), state.deciding, work),
        effort=effort_of(work),
        dependencies=list(dependency_rows(items)),
        targets=target_matrix(items, targets, work, layout.amd_path),
        work=work,
        deciding=state.deciding,
        reason=state.reason,
        amd_path=list(layout.amd_path),
        entry_points=len(layout.entry_points),
        extensions=extensions,
        rule=state.rule,
        unknowns=unknowns_of(
            state.verdict,
            findings,
            skipped,
            failed,
            extensions,
            lookup,
            [native_unknown(package, scan.environment) for package in concerns],
        ),
        packages=list(scan.packages),
        native_unknowns=concerns,
        environment=scan.environment,
    )


def deciding_first(
    groups: Sequence[WorkGroup], deciding: Sequence[WorkItem], work: Sequence[WorkItem]
) -> list[WorkGroup]:
    """Manual work in the order a reader needs it: the rules of the items that decided the
    verdict first, then those of reachable code and deployment files, then tests, examples,
    benchmarks and tooling (a benchmark script's card never leads a page whose verdict comes
    from the kernels); each group keeps its place otherwise."""
    decided = {code for item in deciding for code in item.rules}
    reachable = {code for item in work if item.tier != PERIPHERAL for code in item.rules}
    order = {id(group): index for index, group in enumerate(groups)}
    return sorted(
        groups,
        key=lambda group: (
            0 if group.meta.code in decided else 1 if group.meta.code in reachable else 2,
            order[id(group)],
        ),
    )


#: The rule of a CUDA extension build: on ROCm, cpp_extension hipifies and builds it itself.
_BUILD_RULES = frozenset({"ROC600"})


def mark_build_checks(work: list[WorkItem], extensions: Sequence[Any]) -> list[WorkItem]:
    """The work items whose only work is to build, on ROCm, extensions that port mechanically
    (every extension built in the item's files is labelled so: no blocking or edit site, the
    whole build read): such an item is a build to check, not a break (``build_check``)."""
    mechanical: dict[str, list[str]] = {}
    importers: set[str] = set()  # a build's sites name the modules importing it as well
    failing: set[str] = set()
    for extension in extensions:
        path = extension.build.rsplit(":", 1)[0]
        if extension.label == "ports mechanically":
            mechanical.setdefault(path, []).append(extension.name)
            importers.update(site.rsplit(":", 1)[0] for site in extension.imports)
        else:
            failing.add(path)
    out: list[WorkItem] = []
    for item in work:
        built = {site.path for site in item.sites if site.rule}
        if (
            set(item.rules) <= _BUILD_RULES
            and built & set(mechanical)
            and not built & failing
            and built <= set(mechanical) | importers
        ):
            names = dict.fromkeys(name for path in built for name in mechanical.get(path, ()))
            item = replace(item, build_check=", ".join(names))
        out.append(item)
    return out


def _extensions(scan: ScanResult, findings: Sequence[Finding]) -> list[Any]:
    """The project's CUDA extensions with their kernel findings (none without kernel files)."""
    from migrator.kernels.builds import KERNEL_SUFFIXES

    paths = [file.path for file in scan.files]
    if not any(path.lower().endswith(KERNEL_SUFFIXES) for path in paths):
        return []
    root = Path(scan.root)
    if not root.is_dir():
        return []
    from migrator.kernels.project import extension_rows

    def is_port(code: str) -> bool:
        meta = catalog_meta(code)
        return meta is not None and meta.port

    return list(extension_rows(root, paths, findings, is_port))


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

    @property
    def effort_spread(self) -> EffortSpread:
        """The projects' effort as a distribution (median, largest, who dominates the total)."""
        return spread([(project.name, project.effort.total_hours) for project in self.projects])


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
