"""Readiness of a project for ROCm: score, verdict, breakdowns, effort and per-target impact.

One module per concern: ``meta`` (what a rule declares), ``scoring`` (score, verdict, effort),
``targets`` (per GPU target), ``dependencies`` (the dependency table), ``receipts`` (verification
receipts) and ``assembly`` (a project's report and a fleet). This package re-exports their names.

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

from migrator.reporting.readiness.assembly import (
    ProjectReport,
    Report,
    build_project,
    build_report,
    unique_names,
)
from migrator.reporting.readiness.dependencies import (
    DEPENDENCY_CATEGORIES,
    DEPENDENCY_FILE_KINDS,
    FALLBACK_PACKAGES,
    DependencyRow,
    PackageInfo,
    PackageTable,
    dependency_item,
    dependency_rows,
    is_dependency,
    package_info,
    package_table,
)
from migrator.reporting.readiness.meta import (
    MetaLookup,
    RuleMeta,
    catalog_meta,
    meta_for,
    meta_from_rule,
)
from migrator.reporting.readiness.receipts import (
    ReceiptError,
    RunView,
    Verification,
    read_receipt,
    verification_from_dict,
)
from migrator.reporting.readiness.scoring import (
    EFFORT_ASSUMPTIONS,
    FIX_CLASSES,
    FORMULA_LINES,
    HALF_LIFE,
    REVIEW_HOURS,
    SAFE_HOURS,
    SEVERITY_FACTOR,
    WEIGHTS,
    BlockerGroup,
    CategoryRow,
    Effort,
    EffortRow,
    FileRow,
    Item,
    Verdict,
    blocker_groups,
    category_rows,
    classify,
    effort,
    file_rows,
    finding_hours,
    finding_weight,
    fix_class,
    grouped,
    penalty_of,
    score_from_penalty,
    verdict_for,
)
from migrator.reporting.readiness.targets import (
    ARCHITECTURES,
    DEFAULT_TARGETS,
    TOPICS,
    Arch,
    TargetCell,
    TargetMatrix,
    TargetRow,
    TargetSummary,
    Topic,
    arch_note,
    parse_targets,
    target_matches,
    target_matrix,
    topic_for,
)

__all__ = [
    "ARCHITECTURES",
    "Arch",
    "BlockerGroup",
    "CategoryRow",
    "DEFAULT_TARGETS",
    "DEPENDENCY_CATEGORIES",
    "DEPENDENCY_FILE_KINDS",
    "DependencyRow",
    "EFFORT_ASSUMPTIONS",
    "Effort",
    "EffortRow",
    "FALLBACK_PACKAGES",
    "FIX_CLASSES",
    "FORMULA_LINES",
    "FileRow",
    "HALF_LIFE",
    "Item",
    "MetaLookup",
    "PackageInfo",
    "PackageTable",
    "ProjectReport",
    "REVIEW_HOURS",
    "ReceiptError",
    "Report",
    "RuleMeta",
    "RunView",
    "SAFE_HOURS",
    "SEVERITY_FACTOR",
    "TOPICS",
    "TargetCell",
    "TargetMatrix",
    "TargetRow",
    "TargetSummary",
    "Topic",
    "Verdict",
    "Verification",
    "WEIGHTS",
    "arch_note",
    "blocker_groups",
    "build_project",
    "build_report",
    "catalog_meta",
    "category_rows",
    "classify",
    "dependency_item",
    "dependency_rows",
    "effort",
    "file_rows",
    "finding_hours",
    "finding_weight",
    "fix_class",
    "grouped",
    "is_dependency",
    "meta_for",
    "meta_from_rule",
    "package_info",
    "package_table",
    "parse_targets",
    "penalty_of",
    "read_receipt",
    "score_from_penalty",
    "target_matches",
    "target_matrix",
    "topic_for",
    "unique_names",
    "verdict_for",
    "verification_from_dict",
]
