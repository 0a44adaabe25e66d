"""The readiness report as JSON, following ``migrator/schemas/report.schema.json``."""

from __future__ import annotations

import json
from typing import Any

import migrator
from migrator.output.findings_json import finding_dict
from migrator.reporting.readiness import (
    EFFORT_ASSUMPTIONS,
    FORMULA_LINES,
    HALF_LIFE,
    REVIEW_HOURS,
    SAFE_HOURS,
    SEVERITY_FACTOR,
    WEIGHTS,
    BlockerGroup,
    DependencyRow,
    Effort,
    ProjectReport,
    Report,
    TargetMatrix,
    Verification,
)

SCHEMA_VERSION = "1"
SCHEMA_ID = "https://migrate.dev/schemas/report.schema.json"


def formula_dict() -> dict[str, Any]:
    """The score formula as data and as the sentences every report prints."""
    return {
        "weights": dict(WEIGHTS),
        "severity_factor": {severity.label: factor for severity, factor in SEVERITY_FACTOR.items()},
        "half_life": HALF_LIFE,
        "text": list(FORMULA_LINES),
    }


def _round(hours: float) -> float:
    return round(hours, 2)


def _blocker(group: BlockerGroup) -> dict[str, Any]:
    meta = group.meta
    return {
        "rule": meta.code,
        "name": meta.name,
        "category": meta.category,
        "kind": group.fix_class,
        "message": meta.message,
        "manual_steps": meta.manual_steps,
        "references": meta.references,
        "fact": meta.fact,
        "hours": _round(group.hours),
        "locations": [
            {"path": finding.path, "line": finding.line, "message": finding.message}
            for finding in group.findings
        ],
    }


def _dependency(row: DependencyRow) -> dict[str, Any]:
    return {
        "item": row.item,
        "kind": row.kind,
        "fix": row.fix_class,
        "rocm": row.rocm,
        "min_version": row.min_version,
        "source": row.source,
        "rules": list(row.rules),
        "locations": [{"path": path, "line": line} for path, line in row.locations],
    }


def _targets(matrix: TargetMatrix) -> dict[str, Any]:
    return {
        "summary": [
            {
                "target": summary.gfx,
                "products": summary.arch.products if summary.arch else None,
                "wave_size": summary.arch.wave_size if summary.arch else None,
                "fp8": summary.arch.fp8 if summary.arch else None,
                "findings": summary.findings,
                "blockers": summary.blockers,
                "score": summary.score,
                "verdict": summary.verdict.value,
            }
            for summary in matrix.targets
        ],
        "rules": [
            {
                "rule": row.meta.code,
                "name": row.meta.name,
                "count": row.count,
                "topic": row.topic.key if row.topic else None,
                "targets": {
                    summary.gfx: {"applies": cell.applies, "note": cell.note}
                    for summary, cell in zip(matrix.targets, row.cells, strict=True)
                },
            }
            for row in matrix.rows
        ],
    }


def _effort(effort: Effort) -> dict[str, Any]:
    return {
        "total_hours": _round(effort.total_hours),
        "review_hours_per_unsafe_fix": REVIEW_HOURS,
        "hours_per_safe_fix": SAFE_HOURS,
        "assumptions": list(EFFORT_ASSUMPTIONS),
        "by_category": [
            {
                "category": row.category,
                "manual": row.manual_count,
                "manual_hours": _round(row.manual_hours),
                "unsafe": row.review_count,
                "review_hours": _round(row.review_hours),
                "safe": row.safe_count,
                "hours": _round(row.hours),
            }
            for row in effort.rows
        ],
    }


def project_dict(project: ProjectReport) -> dict[str, Any]:
    """One project's readiness."""
    return {
        "name": project.name,
        "root": project.root,
        "score": project.score,
        "penalty": round(project.penalty, 3),
        "verdict": project.verdict.value,
        "verdict_label": project.verdict.label,
        "verdict_reason": project.verdict_reason(),
        "files": {
            "scanned": project.files_scanned,
            "skipped": [{"path": path, "reason": reason} for path, reason in project.files_skipped],
            "failed": [{"path": path, "reason": reason} for path, reason in project.files_failed],
        },
        "counts": {
            "total": len(project.items),
            "by_severity": project.severity_counts(),
            "by_fix": project.class_counts(),
        },
        "by_category": [
            {
                "category": row.category,
                "total": row.total,
                "by_severity": dict(row.by_severity),
                "by_fix": dict(row.by_class),
                "hours": _round(row.hours),
                "penalty": round(row.penalty, 3),
            }
            for row in project.categories
        ],
        "by_file": [
            {
                "path": row.path,
                "total": row.total,
                "by_fix": dict(row.by_class),
                "hours": _round(row.hours),
                "penalty": round(row.penalty, 3),
            }
            for row in project.files
        ],
        "blockers": [_blocker(group) for group in project.blockers],
        "dependencies": [_dependency(row) for row in project.dependencies],
        "targets": _targets(project.targets),
        "effort": _effort(project.effort),
        "findings": [
            {**finding_dict(item.finding), "fix_class": item.fix_class} for item in project.items
        ],
    }


def verification_dict(verification: Verification) -> dict[str, Any]:
    """The receipt as the report states it (never claims AMD hardware the receipt does not show)."""
    return {
        "receipt": verification.path,
        "project": verification.project,
        "created": verification.created,
        "passed": verification.passed,
        "amd_hardware": verification.amd_hardware,
        "emulated": verification.emulated,
        "headline": verification.headline,
        "tokens_per_second": {
            "before": verification.tokens_before,
            "after": verification.tokens_after,
        },
        "runs": [
            {
                "target": run.target,
                "tree": run.tree,
                "baseline": run.baseline,
                "emulated": run.emulated,
                "device": run.device,
                "torch_build": run.torch_build,
                "tokens_per_second": run.tokens_per_second,
                "passed": run.passed,
                "amd_hardware": run.amd_hardware,
            }
            for run in verification.runs
        ],
    }


def report_dict(report: Report) -> dict[str, Any]:
    """The whole report as JSON-ready data."""
    return {
        "$schema": SCHEMA_ID,
        "version": SCHEMA_VERSION,
        "tool": {"name": "migrate", "version": migrator.__version__},
        "generated": report.generated,
        "targets": list(report.targets),
        "formula": formula_dict(),
        "fleet": [
            {
                "name": project.name,
                "score": project.score,
                "verdict": project.verdict.value,
                "findings": len(project.items),
                "blockers": project.class_counts()["blocker"],
                "hours": _round(project.effort.total_hours),
            }
            for project in report.projects
        ],
        "projects": [project_dict(project) for project in report.projects],
        "verification": None
        if report.verification is None
        else verification_dict(report.verification),
    }


def render(report: Report) -> str:
    """Pretty-printed JSON with a trailing newline."""
    return json.dumps(report_dict(report), indent=2, ensure_ascii=False) + "\n"
