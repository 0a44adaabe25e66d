"""Readiness of a project for ROCm: score, verdict, breakdowns, effort and per-target impact.

Everything here is plain data computed from a scan (a list of findings) and the rule catalog's
metadata (``blocker``, ``effort_hours``, ``targets``, fix applicability, docs). The renderers in
``html.py``, ``markdown.py`` and ``report_json.py`` only format what this module computes, so the
score a user sees is the same in every format.

The score formula (also printed in every report and in ``docs/report.md``)::

    penalty = Σ weight(finding)
    weight  = 25                          for a blocker (a blocker rule's finding with no fix)
            = 6   × severity factor       for a finding with no automatic fix (manual work)
            = 2   × severity factor       for a finding with an unsafe fix (needs review)
            = 0.5 × severity factor       for a finding with a safe fix
    severity factor: error 1.0, warning 0.5, info 0.2
    score   = round(100 × 0.5 ** (penalty / 25))

so one blocker halves the score, and fifty safe-fixable info hints cost about 13 points.
"""

from __future__ import annotations

import enum
import functools
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from migrator.model import Applicability, Finding, ScanResult, Severity, Status

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
#: The GPU targets reported when ``--target`` is not given.
DEFAULT_TARGETS: tuple[str, ...] = ("gfx942", "gfx90a", "gfx950", "gfx1100")

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


@dataclass(frozen=True, slots=True)
class RuleMeta:
    """What the report needs from one rule class (or a stand-in for a code no longer known)."""

    code: str
    name: str
    category: str
    severity: Severity
    message: str
    fix_title: str | None
    applicability: Applicability
    fact: str
    targets: tuple[str, ...]
    effort_hours: float
    blocker: bool
    manual_steps: str
    references: str
    known: bool = True


def _doc_sections(doc: str) -> dict[str, str]:
    """Split a rule docstring into its ``## Section`` bodies, keyed by lower-case title."""
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in doc.splitlines():
        if line.startswith("## "):
            current = sections.setdefault(line[3:].strip().lower(), [])
        elif current is not None:
            current.append(line)
    return {title: "\n".join(lines).strip() for title, lines in sections.items()}


def meta_from_rule(rule: type) -> RuleMeta:
    """Snapshot a rule class's metadata, tolerating attributes a rule does not set."""
    doc_method = getattr(rule, "doc", None)
    doc = doc_method() if callable(doc_method) else ""
    sections = _doc_sections(doc if isinstance(doc, str) else "")
    steps = sections.get("manual migration") or sections.get("fix") or ""
    fix_title = getattr(rule, "fix_title", None)
    if not steps:
        steps = fix_title or ""
    targets = getattr(rule, "targets", ("all",)) or ("all",)
    return RuleMeta(
        code=str(getattr(rule, "code", "?")),
        name=str(getattr(rule, "name", "?")),
        category=str(getattr(rule, "category", "other")),
        severity=getattr(rule, "severity", Severity.WARNING),
        message=str(getattr(rule, "message", "")),
        fix_title=fix_title,
        applicability=getattr(rule, "applicability", Applicability.NONE),
        fact=str(getattr(rule, "fact", "")),
        targets=tuple(str(target) for target in targets),
        effort_hours=float(getattr(rule, "effort_hours", 0.5)),
        blocker=bool(getattr(rule, "blocker", False)),
        manual_steps=steps,
        references=sections.get("references", ""),
    )


@functools.cache
def catalog_meta(code: str) -> RuleMeta | None:
    """The metadata of a rule in the installed catalog, or None when the code is unknown."""
    from migrator.errors import MigrateError
    from migrator.registry import rule_by_code

    try:
        return meta_from_rule(rule_by_code(code))
    except MigrateError:
        return None


#: Looks a rule code up; injectable so tests can describe rules that are not in the catalog.
MetaLookup = Callable[[str], "RuleMeta | None"]


def meta_for(finding: Finding, lookup: MetaLookup = catalog_meta) -> RuleMeta:
    """The rule metadata behind a finding; a stand-in built from the finding when unknown."""
    meta = lookup(finding.rule)
    if meta is not None:
        return meta
    return RuleMeta(
        code=finding.rule,
        name=finding.name,
        category=finding.category,
        severity=finding.severity,
        message=finding.message,
        fix_title=finding.fix.description if finding.fix else None,
        applicability=finding.fix.applicability if finding.fix else Applicability.NONE,
        fact="",
        targets=("all",),
        effort_hours=0.5,
        blocker=False,
        manual_steps="",
        references="",
        known=False,
    )


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


def grouped(items: Iterable[Item], key: Callable[[Item], str]) -> dict[str, list[Item]]:
    """Items grouped by ``key``, in first-seen order."""
    out: dict[str, list[Item]] = defaultdict(list)
    for item in items:
        out[key(item)].append(item)
    return dict(out)


_TARGET_RE = re.compile(r"^gfx[0-9a-f]{3,4}$")


def parse_targets(values: Iterable[str]) -> tuple[str, ...]:
    """Comma-separated gfx ids, validated and de-duplicated (order kept)."""
    out: list[str] = []
    for value in values:
        for part in value.split(","):
            target = part.strip().lower()
            if not target:
                continue
            if not _TARGET_RE.match(target):
                raise ValueError(
                    f"unknown GPU target {part.strip()!r} (expected a gfx id such as gfx942)"
                )
            if target not in out:
                out.append(target)
    return tuple(out) or DEFAULT_TARGETS


# --------------------------------------------------------------------------------------------
# Per GPU target


@dataclass(frozen=True, slots=True)
class Arch:
    """Facts about one AMD architecture (rocm-facts §0)."""

    gfx: str
    products: str
    family: str
    wave_size: int
    fp8: str
    capability: str


#: rocm-facts §0 (hardware reference) [D1][D2][D3][H4][L4][T1].
ARCHITECTURES: dict[str, Arch] = {
    arch.gfx: arch
    for arch in (
        Arch("gfx908", "MI100", "CDNA1", 64, "none", "(9, 0)"),
        Arch("gfx90a", "MI210, MI250(X)", "CDNA2", 64, "none", "(9, 0)"),
        Arch("gfx942", "MI300X, MI300A, MI325X", "CDNA3", 64, "FNUZ only", "(9, 4)"),
        Arch("gfx950", "MI350X, MI355X", "CDNA4", 64, "OCP + MX", "(9, 5)"),
        Arch("gfx1100", "Radeon RX 7900 (RDNA3)", "RDNA3", 32, "none", "(11, 0)"),
        Arch("gfx1101", "Radeon RX 7800/7700 (RDNA3)", "RDNA3", 32, "none", "(11, 0)"),
        Arch("gfx1102", "Radeon RX 7600 (RDNA3)", "RDNA3", 32, "none", "(11, 0)"),
        Arch(
            "gfx1200", "Radeon RX 9060 (RDNA4)", "RDNA4", 32, "OCP (Triton: e5m2 only)", "(12, 0)"
        ),
        Arch(
            "gfx1201", "Radeon RX 9070 (RDNA4)", "RDNA4", 32, "OCP (Triton: e5m2 only)", "(12, 0)"
        ),
    )
}


@dataclass(frozen=True, slots=True)
class Topic:
    """Per-architecture notes for one kind of finding, picked by keywords in the rule's name."""

    key: str
    title: str
    keywords: tuple[str, ...]
    notes: dict[str, str]
    fact: str


#: Keys of ``notes`` are gfx ids or gfx prefixes (``gfx11`` covers gfx1100–gfx1102).
TOPICS: tuple[Topic, ...] = (
    Topic(
        "fp8",
        "FP8 formats",
        ("fp8", "float8", "e4m3", "e5m2"),
        {
            "gfx908": "no FP8",
            "gfx90a": "no FP8: keep bf16/fp16 weights",
            "gfx942": "FNUZ only: float8_e4m3fnuz (max 240, not 448); e4m3fn checkpoints need "
            "conversion (same bits = half the value, scales x2)",
            "gfx950": "OCP float8_e4m3fn / e5m2 as on NVIDIA, plus MX formats",
            "gfx11": "no FP8 on RDNA3",
            "gfx12": "OCP FP8 (Triton: e5m2 only)",
        },
        "rocm-facts §0, §8 [H4][L4][L5]",
    ),
    Topic(
        "sdpa",
        "SDPA fused kernels (AOTriton)",
        ("sdpa", "sdp-", "sdp_", "scaled-dot", "scaled_dot", "cudnn-attention", "aotriton"),
        {
            "gfx908": "unsupported: falls back to the math kernel",
            "gfx90a": "flash / mem-efficient: official",
            "gfx942": "flash / mem-efficient: official",
            "gfx950": "official from AOTriton 0.10b",
            "gfx1100": "experimental: needs TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL=1, else math",
            "gfx1101": "experimental (AOTriton 0.10b)",
            "gfx1200": "experimental (AOTriton 0.10b)",
            "gfx1201": "official from AOTriton 0.10b",
        },
        "rocm-facts §2 [P8][P10][P11]",
    ),
    Topic(
        "flash-attn",
        "flash-attn",
        ("flash",),
        {
            "gfx908": "not supported by ROCm/flash-attention",
            "gfx90a": "ROCm/flash-attention: CK backend (default) or Triton backend",
            "gfx942": "ROCm/flash-attention: CK backend (default) or Triton backend",
            "gfx950": "ROCm/flash-attention: CK backend (default) or Triton backend",
            "gfx11": "Triton backend only (FLASH_ATTENTION_TRITON_AMD_ENABLE=TRUE)",
            "gfx12": "Triton backend only (FLASH_ATTENTION_TRITON_AMD_ENABLE=TRUE)",
        },
        "rocm-facts §4a [F1]",
    ),
    Topic(
        "bitsandbytes",
        "bitsandbytes",
        ("bitsandbytes", "bnb", "8bit", "4bit"),
        {
            "gfx908": "only in the ROCm 7.14 build",
            "gfx90a": ">= 0.49 (preview; 4-bit blocksize 64 missing on CDNA), official in 0.50",
            "gfx942": ">= 0.49 (preview; 4-bit blocksize 64 missing on CDNA), official in 0.50",
            "gfx950": ">= 0.49 (preview; 4-bit blocksize 64 missing on CDNA), official in 0.50",
            "gfx11": ">= 0.49 (gfx110x Linux build), official in 0.50",
            "gfx12": ">= 0.49 (gfx120x Linux build), official in 0.50",
        },
        "rocm-facts §5 [B1]",
    ),
    Topic(
        "wave-size",
        "wave size",
        ("warp", "wave", "lane", "ballot", "shfl"),
        {
            "gfx9": "wavefront 64: code that assumes 32 lanes gives wrong results",
            "gfx11": "wave 32 (as on NVIDIA), but read the property instead of hard-coding it",
            "gfx12": "wave 32 (as on NVIDIA), but read the property instead of hard-coding it",
        },
        "rocm-facts §0, §7 [D2][T1][H3]",
    ),
    Topic(
        "tf32",
        "TF32",
        ("tf32", "float32-matmul", "matmul-precision"),
        {
            "gfx908": "no TF32: the flags are no-ops",
            "gfx90a": "no TF32: the flags are no-ops",
            "gfx942": "TF32 via hipBLASLt with HIPBLASLT_ALLOW_TF32=1; numerics differ from NVIDIA",
            "gfx950": "is_tf32_supported() is True on gfx95*; the docs list gfx942 only - measure",
            "gfx11": "no TF32: the flags are no-ops",
            "gfx12": "no TF32: the flags are no-ops",
        },
        "rocm-facts §1, §2 [P2][P6]",
    ),
    Topic(
        "capability",
        "capability gates",
        ("capability", "device-name", "sm90", "sm80", "hopper", "ampere"),
        {
            "gfx908": "capability (9, 0): passes >= (8, 0) gates",
            "gfx90a": "capability (9, 0): passes >= (8, 0) and >= (9, 0) gates",
            "gfx942": "capability (9, 4): passes Ampere/Hopper gates, selects Hopper-only paths",
            "gfx950": "capability (9, 5): passes Ampere/Hopper gates, selects Hopper-only paths",
            "gfx11": "capability (11, 0): passes every sm gate",
            "gfx12": "capability (12, 0): passes every sm gate",
        },
        "rocm-facts §0, §1 [D1][D3]",
    ),
)

_FAMILY_PREFIXES: dict[str, tuple[str, ...]] = {
    "cdna": ("gfx9",),
    "cdna2": ("gfx90a",),
    "cdna3": ("gfx94",),
    "cdna4": ("gfx95",),
    "rdna": ("gfx10", "gfx11", "gfx12"),
    "rdna3": ("gfx11",),
    "rdna4": ("gfx12",),
}


def target_matches(rule_targets: Sequence[str], target: str) -> bool:
    """Whether a rule's ``targets`` metadata covers one gfx id.

    Accepts ``all``, exact ids, prefixes (``gfx94``, ``gfx94x``, ``gfx11*``) and the family
    names ``cdna``, ``cdna3``, ``rdna``, ``rdna3``....
    """
    for raw in rule_targets:
        value = raw.strip().lower()
        if value in ("all", "*", target):
            return True
        if value in _FAMILY_PREFIXES and target.startswith(_FAMILY_PREFIXES[value]):
            return True
        stem = value.rstrip("x*")
        if stem != value and stem and target.startswith(stem):
            return True
        if value.startswith("gfx") and len(value) < len(target) and target.startswith(value):
            return True
    return False


def topic_for(meta: RuleMeta) -> Topic | None:
    """The topic whose keywords occur in the rule's name or category (then its message)."""
    for haystack in (f"{meta.name} {meta.category}".lower(), meta.message.lower()):
        for topic in TOPICS:
            if any(keyword in haystack for keyword in topic.keywords):
                return topic
    return None


def arch_note(topic: Topic | None, target: str) -> str | None:
    """The topic's note for a target: exact id first, then the longest matching prefix."""
    if topic is None:
        return None
    if target in topic.notes:
        return topic.notes[target]
    prefixes = [key for key in topic.notes if target.startswith(key)]
    return topic.notes[max(prefixes, key=len)] if prefixes else None


@dataclass(frozen=True, slots=True)
class TargetCell:
    """Whether one rule's findings matter on one target, and the arch note if there is one."""

    applies: bool
    note: str | None


@dataclass(slots=True)
class TargetRow:
    """One rule with findings, against every requested target."""

    meta: RuleMeta
    count: int
    topic: Topic | None
    cells: list[TargetCell]


@dataclass(slots=True)
class TargetSummary:
    """One target: its facts, how many findings matter there, and the score restricted to them."""

    gfx: str
    arch: Arch | None
    findings: int
    blockers: int
    score: int
    verdict: Verdict


@dataclass(slots=True)
class TargetMatrix:
    """Targets (columns) against rules with findings (rows)."""

    targets: list[TargetSummary]
    rows: list[TargetRow]


def target_matrix(items: Sequence[Item], targets: Sequence[str]) -> TargetMatrix:
    """Which findings matter on which AMD architecture, with a score per target."""
    rows = []
    for code, group in grouped(items, lambda item: item.meta.code).items():
        del code
        meta = group[0].meta
        topic = topic_for(meta)
        cells = [
            TargetCell(target_matches(meta.targets, target), arch_note(topic, target))
            for target in targets
        ]
        rows.append(TargetRow(meta, len(group), topic, cells))
    rows.sort(key=lambda row: (-sum(cell.applies for cell in row.cells), -row.count, row.meta.code))
    summaries = []
    for target in targets:
        relevant = [item for item in items if target_matches(item.meta.targets, target)]
        summaries.append(
            TargetSummary(
                gfx=target,
                arch=ARCHITECTURES.get(target),
                findings=len(relevant),
                blockers=sum(item.fix_class == "blocker" for item in relevant),
                score=score_from_penalty(penalty_of(relevant)),
                verdict=verdict_for(relevant),
            )
        )
    return TargetMatrix(summaries, rows)


# --------------------------------------------------------------------------------------------
# Dependencies

#: Finding categories that describe declared dependencies, images or package indexes.
DEPENDENCY_CATEGORIES = frozenset(
    {
        "dependency",
        "dependencies",
        "container",
        "containers",
        "packaging",
        "package",
        "packages",
        "docker",
        "image",
        "images",
        "index",
        "wheels",
        "environment-files",
    }
)
#: File kinds (see ``migrator.discovery.file_kind``) that declare dependencies or images.
DEPENDENCY_FILE_KINDS = frozenset({"requirements", "pyproject", "setupcfg", "conda"})


@dataclass(frozen=True, slots=True)
class PackageInfo:
    """The ROCm side of one CUDA-specific package, image or index."""

    rocm: str
    min_version: str
    source: str


#: Used only for names that ``rules/data/packages.toml`` does not describe (rocm-facts §4–§5, §9).
FALLBACK_PACKAGES: dict[str, PackageInfo] = {
    "torch": PackageInfo(
        "ROCm wheel (+rocmX.Y) from download.pytorch.org/whl/rocmX.Y",
        "torch 2.0 (ROCm 5.4); pair versions: 2.7->6.3, 2.9->6.4, 2.11->7.2",
        "rocm-facts §9 [P17][K1]",
    ),
    "download.pytorch.org": PackageInfo(
        "https://download.pytorch.org/whl/rocmX.Y matching the torch version",
        "torch 2.0 (ROCm 5.4)",
        "rocm-facts §9 [P17][K1]",
    ),
    "nvidia-*": PackageInfo(
        "drop it: ROCm wheels carry their own ROCm libraries", "n/a", "rocm-facts §9 [K2]"
    ),
    "triton": PackageInfo(
        "pytorch-triton-rocm (pulled in by ROCm torch)", "torch 2.0", "rocm-facts §9 [P17]"
    ),
    "cupy-cuda*": PackageInfo(
        "cupy-rocm-7-0 (14.x) or cupy-rocm-5-0 (13.x)", "13.x", "rocm-facts §9 [K3]"
    ),
    "onnxruntime-gpu": PackageInfo(
        "onnxruntime-migraphx (MIGraphXExecutionProvider)",
        "onnxruntime-rocm ended at 1.22.x",
        "rocm-facts §9 [K4][K3]",
    ),
    "jax": PackageInfo(
        "jax[rocm7-local] (jax-rocm7-plugin + jax-rocm7-pjrt)",
        "needs local ROCm",
        "rocm-facts §9 [K5]",
    ),
    "tensorflow": PackageInfo("tensorflow-rocm", "2.14.0.600 on PyPI", "rocm-facts §9 [K3]"),
    "tensorrt": PackageInfo(
        "none: MIGraphX (torch-migraphx) or torch.compile",
        "no ROCm support",
        "rocm-facts §9 [R1][K3]",
    ),
    "torch-tensorrt": PackageInfo(
        "none: MIGraphX (torch-migraphx) or torch.compile",
        "no ROCm support",
        "rocm-facts §9 [R1][K3]",
    ),
    "pycuda": PackageInfo(
        "hip-python (hip-python-interop for CUDA names)", "no ROCm support", "rocm-facts §9 [K3]"
    ),
    "cuda-python": PackageInfo(
        "hip-python (hip-python-interop for CUDA names)", "no ROCm support", "rocm-facts §9 [K3]"
    ),
    "nvidia-dali": PackageInfo(
        "none: AMD rocAL / MIVisionX", "no ROCm support", "rocm-facts §9 [R1]"
    ),
    "flash-attn": PackageInfo(
        "ROCm/flash-attention (source build, CK or Triton backend), or SDPA",
        "ROCm/flash-attention 2.x, ROCm >= 6.0",
        "rocm-facts §4a [F1]",
    ),
    "xformers": PackageInfo(
        "xformers ROCm wheels (whl/rocmX.Y index, experimental) or SDPA",
        "0.0.28",
        "rocm-facts §4d [X3]",
    ),
    "bitsandbytes": PackageInfo(
        "bitsandbytes (same package, ROCm binaries in the PyPI wheel)",
        "0.49.0 (preview); 0.50.0 official",
        "rocm-facts §5 [B1]",
    ),
    "vllm": PackageInfo(
        "vllm ROCm build or the rocm/vllm images", "0.2.4", "rocm-facts §9 [L1][L2]"
    ),
    "deepspeed": PackageInfo(
        "deepspeed (ops JIT-built through hipify)", "unverified", "rocm-facts §9 [L3]"
    ),
    "auto-gptq": PackageInfo(
        "GPTQModel (AutoGPTQ is deprecated)", "unverified", "rocm-facts §9 [Q2][Q3]"
    ),
    "autoawq": PackageInfo(
        "llm-compressor (AutoAWQ is deprecated)", "unverified", "rocm-facts §9 [Q2][Q3]"
    ),
    "pynvml": PackageInfo(
        "amdsmi (matching the installed ROCm)", "ROCm 6.0", "rocm-facts §3a [A1]"
    ),
    "nvidia-ml-py": PackageInfo(
        "amdsmi (matching the installed ROCm)", "ROCm 6.0", "rocm-facts §3a [A1]"
    ),
    "apex": PackageInfo(
        "ROCm/apex, or torch.nn / torch.optim equivalents", "unverified", "rocm-facts §5 [AP1][AP2]"
    ),
    "nvidia/cuda": PackageInfo(
        "rocm/dev-ubuntu-22.04 or -24.04 (e.g. :6.3.4-complete)", "n/a", "rocm-facts §9 [B1][C1]"
    ),
    "nvcr.io/nvidia/pytorch": PackageInfo(
        "rocm/pytorch:rocmX.Y_ubuntuYY.MM_pyZ_pytorch_release_A.B.C", "n/a", "rocm-facts §9 [R1]"
    ),
}


@dataclass(slots=True)
class DependencyRow:
    """One CUDA-specific package, image or index URL, wherever it is declared."""

    item: str
    kind: str
    locations: list[tuple[str, int]]
    rules: list[str]
    fix_class: str
    rocm: str
    min_version: str
    source: str
    message: str


_FROM = re.compile(r"^\s*FROM\s+(?:--platform=\S+\s+)?(\S+)", re.IGNORECASE)
_IMAGE = re.compile(r"\bimage:\s*['\"]?([^\s'\"]+)")
_URL = re.compile(r"https?://[^\s'\",;)\]]+")
_REQUIREMENT = re.compile(
    r"^\s*['\"]?([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?\s*(?:[=<>!~@;,'\"]|$)"
)


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name.strip().lower())


_BACKTICK = re.compile(r"`([^`]+)`")
_PACKAGE = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?\s*(?:[=<>!~@;]|$)")
_QUOTED = re.compile(r"[\"']([^\"']+)[\"']")
_NOT_PACKAGES = frozenset(
    {"run", "env", "pip", "pip3", "from", "arg", "python", "apt-get", "conda"}
)


def _package(text: str) -> str | None:
    match = _PACKAGE.match(text.strip())
    if not match or match.group(1).lower() in _NOT_PACKAGES:
        return None
    return _normalize(match.group(1)) + (match.group(2) or "")


def dependency_item(finding: Finding) -> tuple[str, str]:
    """``(item, kind)``: the package, image, index URL or setting a dependency finding is about.

    Tried in order: a ``FROM``/``image:`` reference, a URL, the first package named in
    backticks in the message, a quoted requirement on the line, a requirement at the start of
    the line; otherwise the line itself (a container setting) or the rule name.
    """
    line = finding.source_line.strip()
    match = _FROM.match(line) or _IMAGE.search(line)
    if match:
        return match.group(1), "image"
    url = _URL.search(line)
    if url:
        return url.group(0), "index"
    from migrator.discovery import file_kind

    candidates = list(_BACKTICK.findall(finding.message))
    start = [] if "--index-url" in line else [line.split("#", 1)[0]]
    quoted = _QUOTED.findall(line)
    toml = file_kind(finding.path) in {"pyproject", "conda"} or line.startswith(("'", '"'))
    candidates += quoted + start if toml else start + quoted
    for candidate in candidates:
        name = _package(candidate)
        if name and (candidate in finding.source_line or name.split("[")[0] in _normalize(line)):
            return name, "package"
    if line:
        return (line if len(line) <= 60 else line[:57] + "..."), "setting"
    return finding.name, "other"


def is_dependency(finding: Finding) -> bool:
    """Whether a finding is about a declared package, container image or package index."""
    from migrator.discovery import file_kind

    return (
        finding.category.lower() in DEPENDENCY_CATEGORIES
        or file_kind(finding.path) in DEPENDENCY_FILE_KINDS
    )


_ROCM_KEYS = (
    "rocm",
    "rocm_equivalent",
    "equivalent",
    "counterpart",
    "replacement",
    "rocm_package",
    "rocm_name",
    "alternative",
    "rocm_side",
    "to",
    "by_major",
)
_VERSION_KEYS = (
    "min_version",
    "rocm_min_version",
    "min_rocm_version",
    "minimum_version",
    "first_rocm",
    "first_rocm_version",
    "rocm_since",
    "since",
    "min_rocm",
)
_OFFICIAL_KEYS = ("official", "official_version", "stable")
_SOURCE_KEYS = ("source", "sources", "reference", "references", "fact", "url", "link")
_NAME_KEYS = ("name", "package", "names", "aliases", "packages")
_PATTERN_KEYS = ("pattern", "patterns", "match", "regex")


def _text(value: object) -> str:
    if isinstance(value, (list, tuple)):
        return ", ".join(_text(part) for part in value)
    if isinstance(value, dict):
        return ", ".join(f"{key}: {_text(part)}" for key, part in value.items())
    return "" if value is None else str(value)


def _first(entry: dict[str, object], keys: Sequence[str]) -> str:
    for key in keys:
        if key in entry and entry[key] not in (None, ""):
            return _text(entry[key])
    return ""


def _listed(entry: dict[str, object], keys: Sequence[str]) -> list[str]:
    out: list[str] = []
    for key in keys:
        value = entry.get(key)
        for part in value if isinstance(value, list) else [value]:
            if isinstance(part, str) and part:
                out.append(part)
    return out


@dataclass(frozen=True, slots=True)
class PackageTable:
    """``packages.toml`` as exact names and regular expressions, each with its ROCm side."""

    names: dict[str, PackageInfo] = field(default_factory=dict)
    patterns: tuple[tuple[re.Pattern[str], PackageInfo], ...] = ()

    def get(self, name: str) -> PackageInfo | None:
        """The entry for a normalised package name, exact names first."""
        if name in self.names:
            return self.names[name]
        for pattern, info in self.patterns:
            if pattern.search(name):
                return info
        return None


def _info(entry: dict[str, object]) -> PackageInfo:
    version = _first(entry, _VERSION_KEYS)
    official = _first(entry, _OFFICIAL_KEYS)
    if official and official != version:
        version = f"{version} (official {official})" if version else f"official {official}"
    return PackageInfo(_first(entry, _ROCM_KEYS), version, _first(entry, _SOURCE_KEYS))


def _collect(
    data: object,
    key: str,
    names: dict[str, PackageInfo],
    patterns: list[tuple[re.Pattern[str], PackageInfo]],
) -> None:
    """Walk the TOML: described tables, ``name = "description"`` tables, nested tables."""
    if isinstance(data, list):
        for element in data:
            _collect(element, key, names, patterns)
        return
    if not isinstance(data, dict):
        return
    if any(k in data for k in _ROCM_KEYS + _VERSION_KEYS):
        info = _info(data)
        listed = _listed(data, _NAME_KEYS) or (
            [key] if key and not _listed(data, _PATTERN_KEYS) else []
        )
        for name in listed:
            names.setdefault(_normalize(name), info)
        for raw in _listed(data, _PATTERN_KEYS):
            try:
                patterns.append((re.compile(raw), info))
            except re.error:
                continue
        return
    strings = {k: v for k, v in data.items() if isinstance(v, str)}
    if strings and len(strings) == len(data) and not set(strings) & set(_PATTERN_KEYS + _NAME_KEYS):
        for name, description in strings.items():
            names.setdefault(_normalize(name), PackageInfo(description, "", ""))
        return
    for child_key, child in data.items():
        _collect(child, str(child_key), names, patterns)


@functools.cache
def package_table(path: str | None = None) -> PackageTable:
    """``rules/data/packages.toml`` read tolerantly (empty when absent or broken)."""
    import sys

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    location = Path(path) if path else _packages_path()
    if location is None or not location.is_file():
        return PackageTable()
    try:
        data = tomllib.loads(location.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return PackageTable()
    names: dict[str, PackageInfo] = {}
    patterns: list[tuple[re.Pattern[str], PackageInfo]] = []
    _collect(data, "", names, patterns)
    return PackageTable(names, tuple(patterns))


def _packages_path() -> Path | None:
    import importlib

    try:
        package = importlib.import_module("migrator.rules")
    except ImportError:
        return None
    for directory in getattr(package, "__path__", []):
        candidate = Path(directory) / "data" / "packages.toml"
        if candidate.is_file():
            return candidate
    return None


def _fallback(item: str) -> PackageInfo | None:
    lowered = item.lower()
    name = _normalize(item.split("[", 1)[0])
    if name in FALLBACK_PACKAGES:
        return FALLBACK_PACKAGES[name]
    for key, info in FALLBACK_PACKAGES.items():
        if key.endswith("*") and name.startswith(key[:-1]):
            return info
        if ("/" in key or "." in key) and key in lowered and ("/" in item or ":" in item):
            return info
    return None


def package_info(item: str, table: PackageTable | None = None) -> PackageInfo | None:
    """The ROCm side of a package, image or URL: ``packages.toml`` first, field by field
    completed from the fallback table (keys there match exactly, as ``prefix*`` globs, or as a
    substring of an image name or URL)."""
    lookup = package_table() if table is None else table
    declared = lookup.get(_normalize(item.split("[", 1)[0]))
    fallback = _fallback(item)
    if declared is None or fallback is None:
        return declared or fallback
    return PackageInfo(
        declared.rocm or fallback.rocm,
        declared.min_version or fallback.min_version,
        declared.source or fallback.source,
    )


def dependency_rows(
    items: Sequence[Item], table: PackageTable | None = None
) -> list[DependencyRow]:
    """Dependency findings merged per item, with the ROCm counterpart and first ROCm version."""
    rows: dict[tuple[str, str], DependencyRow] = {}
    for item in items:
        finding = item.finding
        if not is_dependency(finding):
            continue
        name, kind = dependency_item(finding)
        row = rows.get((name, kind))
        if row is None:
            info = package_info(name, table)
            fallback_fix = finding.fix.description if finding.fix else item.meta.fix_title
            row = rows[(name, kind)] = DependencyRow(
                item=name,
                kind=kind,
                locations=[],
                rules=[],
                fix_class=item.fix_class,
                rocm=(info.rocm if info and info.rocm else fallback_fix or finding.message),
                min_version=(info.min_version if info and info.min_version else "unknown"),
                source=(info.source if info and info.source else item.meta.fact),
                message=finding.message,
            )
        row.locations.append((finding.path, finding.line))
        if finding.rule not in row.rules:
            row.rules.append(finding.rule)
        if FIX_CLASSES.index(item.fix_class) < FIX_CLASSES.index(row.fix_class):
            row.fix_class = item.fix_class
    order = {"index": 0, "image": 1, "package": 2, "setting": 3, "other": 4}
    return sorted(
        rows.values(), key=lambda row: (FIX_CLASSES.index(row.fix_class), order[row.kind], row.item)
    )


# --------------------------------------------------------------------------------------------
# Verification receipts (``migrate verify --receipt``), read tolerantly


@dataclass(frozen=True, slots=True)
class RunView:
    """One run in a verify receipt, worded so that emulation is never mistaken for hardware."""

    target: str
    tree: str
    baseline: bool
    emulated: bool
    device: str
    torch_build: str
    tokens_per_second: float | None
    passed: bool | None
    amd_hardware: bool


@dataclass(frozen=True, slots=True)
class Verification:
    """What a receipt says: overall result, runs, throughput before and after."""

    path: str
    project: str
    created: str
    passed: bool | None
    runs: list[RunView]
    tokens_before: float | None
    tokens_after: float | None
    amd_hardware: bool
    emulated: bool
    headline: str

    @property
    def speedup(self) -> float | None:
        """tokens/s after divided by before, when both are known."""
        if self.tokens_before and self.tokens_after is not None:
            return self.tokens_after / self.tokens_before
        return None

    @property
    def result_label(self) -> str:
        return {True: "PASS", False: "FAIL", None: "unknown"}[self.passed]


class ReceiptError(ValueError):
    """The receipt file cannot be read or is not a verify receipt."""


def _bool(value: object) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in {"true", "yes", "pass", "passed"}:
        return True
    if isinstance(value, str) and value.lower() in {"false", "no", "fail", "failed"}:
        return False
    return None


def _float(value: object) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


def _build_kind(build: object) -> str | None:
    if isinstance(build, dict):
        kind = build.get("kind")
        if isinstance(kind, str) and kind:
            return kind.lower()
        if build.get("hip"):
            return "rocm"
        if build.get("cuda"):
            return "cuda"
        return "cpu" if build.get("torch") else None
    if isinstance(build, str):
        lower = build.lower()
        if "rocm" in lower or "hip" in lower:
            return "rocm"
        if "cu" in lower:
            return "cuda"
        return "cpu" if lower else None
    return None


def _build_text(build: object) -> str:
    if isinstance(build, dict):
        kind = _build_kind(build)
        version = build.get("torch") or build.get("version") or "?"
        detail = {
            "rocm": f"ROCm/HIP {build.get('hip')}",
            "cuda": f"CUDA {build.get('cuda')}",
            "cpu": "CPU-only",
        }.get(kind or "", kind or "unknown")
        return f"torch {version} ({detail} build)"
    if isinstance(build, str) and build:
        return build
    return "torch not imported"


def _run_view(raw: dict[str, object]) -> RunView:
    emulated = _bool(raw.get("emulated")) is True
    real_device = _text(raw.get("real_device") or raw.get("device") or "unknown")
    device_name = _text(raw.get("device_name") or "")
    target = _text(raw.get("target") or "?")
    build = raw.get("torch_build")
    ran_on_gpu = _bool(raw.get("ran_on_gpu"))
    amd = (
        not emulated
        and _bool(raw.get("emulated")) is False
        and _build_kind(build) == "rocm"
        and ran_on_gpu is not False
        and (
            ran_on_gpu is True
            or any(
                word in f"{real_device} {device_name}".lower()
                for word in ("amd", "instinct", "radeon", "gfx")
            )
        )
    )
    if emulated:
        emulation = _text(raw.get("emulation") or f"ROCm on {target}")
        device = f"emulated ROCm ({emulation}) over {real_device}"
    elif amd:
        device = f"{device_name or real_device} (ROCm build on an AMD GPU)"
    else:
        device = (
            real_device
            if not device_name or device_name == real_device
            else f"{device_name} ({real_device})"
        )
    tree = _text(raw.get("tree") or ("original" if raw.get("baseline") else "migrated"))
    baseline = _bool(raw.get("baseline")) is True or tree.lower() in {
        "original",
        "before",
        "baseline",
    }
    return RunView(
        target=target,
        tree=tree,
        baseline=baseline,
        emulated=emulated,
        device=device,
        torch_build=_build_text(build),
        tokens_per_second=_float(raw.get("tokens_per_second")),
        passed=_bool(raw.get("passed")),
        amd_hardware=amd,
    )


def read_receipt(path: str) -> Verification:
    """Load a verify receipt; unknown or missing fields degrade to "unknown", never to a claim."""
    import json

    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ReceiptError(f"cannot read verify receipt {path}: {error}") from error
    if not isinstance(data, dict):
        raise ReceiptError(f"{path} is not a verify receipt (expected a JSON object)")
    return verification_from_dict(data, path)


def verification_from_dict(data: dict[str, object], path: str = "") -> Verification:
    """Build the report's view of a receipt already parsed from JSON."""
    raw_runs = data.get("runs")
    runs = (
        [_run_view(run) for run in raw_runs if isinstance(run, dict)]
        if isinstance(raw_runs, list)
        else []
    )
    declared = _bool(data.get("amd_gpu_used"))
    amd = any(run.amd_hardware for run in runs) and declared is not False
    emulated = any(run.emulated for run in runs)
    baseline = next((run for run in runs if run.baseline), None)
    migrated = [run for run in runs if not run.baseline]
    preferred = sorted(
        migrated, key=lambda run: (not run.amd_hardware, run.tokens_per_second is None)
    )
    after = next(
        (run.tokens_per_second for run in preferred if run.tokens_per_second is not None), None
    )
    passed = _bool(data.get("passed"))
    if passed is None and runs and all(run.passed is not None for run in migrated) and migrated:
        passed = all(run.passed for run in migrated)
    if amd:
        hardware = next(run.device for run in runs if run.amd_hardware)
        headline = f"a ROCm build of torch ran on an AMD GPU: {hardware}"
    elif emulated:
        emulated_run = next(run for run in runs if run.emulated)
        headline = f"{emulated_run.device}; no AMD GPU ran"
    elif runs:
        headline = f"native run on {runs[0].device}; no AMD GPU ran"
    else:
        headline = "the receipt lists no runs; no AMD GPU ran"
    return Verification(
        path=path,
        project=_text(data.get("project") or ""),
        created=_text(data.get("created") or ""),
        passed=passed,
        runs=runs,
        tokens_before=baseline.tokens_per_second if baseline else None,
        tokens_after=after,
        amd_hardware=amd,
        emulated=emulated,
        headline=headline,
    )


# --------------------------------------------------------------------------------------------
# The whole report


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
