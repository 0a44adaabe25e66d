"""The readiness report as JSON, following ``migrator/schemas/report.schema.json``."""

from __future__ import annotations

from typing import Any

import migrator
from migrator.output.findings_json import finding_dict
from migrator.reporting.readiness import (
    AMD_PATH_CREDIT,
    BANDS,
    BASIS_LABELS,
    CONSEQUENCE_LABELS,
    CONSEQUENCE_POINTS,
    EFFORT_ASSUMPTIONS,
    FORMULA_LINES,
    HALF_LIFE,
    LOCATION_FACTOR,
    PORT_FACTOR,
    VERDICT_RULES,
    DependencyRow,
    Effort,
    Evidence,
    ProjectReport,
    Report,
    TargetMatrix,
    Verification,
    WorkGroup,
    WorkItem,
)
from migrator.reporting.readiness.score import (
    ITEM_CLASSES,
    PORT_BLOCK_HOURS,
    READY_MAX_HOURS,
    item_class,
)

SCHEMA_VERSION = "1"
SCHEMA_ID = "https://migrate.dev/schemas/report.schema.json"


def formula_dict() -> dict[str, Any]:
    """The score formula as data and as the sentences every report prints."""
    return {
        "consequence_points": dict(CONSEQUENCE_POINTS),
        "location_factor": dict(LOCATION_FACTOR),
        "port_factor": PORT_FACTOR,
        "amd_path_credit": AMD_PATH_CREDIT,
        "half_life": HALF_LIFE,
        "bands": {verdict: [low, high] for verdict, (low, high) in BANDS.items()},
        "text": list(FORMULA_LINES),
        "verdict_rules": list(VERDICT_RULES),
        "item_classes": dict(ITEM_CLASSES),
        "thresholds": {"ready_max_hours": READY_MAX_HOURS, "port_block_hours": PORT_BLOCK_HOURS},
    }


def _round(hours: float) -> float:
    return round(hours, 2)


def _work_group(group: WorkGroup) -> dict[str, Any]:
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


def work_item_dict(item: WorkItem) -> dict[str, Any]:
    """One distinct problem: what it does on ROCm, where, how it is fixed and its hours."""
    return {
        "key": item.key,
        "title": item.title,
        "tier": item.tier,
        "consequence": item.consequence,
        "consequence_label": CONSEQUENCE_LABELS[item.consequence],
        "basis": item.basis,
        "basis_label": BASIS_LABELS[item.basis],
        "class": item_class(item),
        "rules": list(item.rules),
        "files": item.files,
        "findings": item.findings,
        "hours": _round(item.hours),
        "weight": round(item.weight, 3),
        "covered_by": item.covered_by or None,
        "opt_in": item.opt_in or None,
        "summary": item.describe(),
    }


def _evidence(evidence: Evidence) -> dict[str, Any]:
    return {"kind": evidence.kind, "path": evidence.path, "detail": evidence.detail}


def _effort(effort: Effort) -> dict[str, Any]:
    return {
        "total_hours": _round(effort.total_hours),
        "peripheral_hours": _round(effort.apart_hours),
        "assumptions": list(EFFORT_ASSUMPTIONS),
        "by_work_item": [
            {"key": item.key, "title": item.title, "basis": item.basis, "hours": _round(item.hours)}
            for item in effort.rows
        ],
        "peripheral": [
            {"key": item.key, "title": item.title, "basis": item.basis, "hours": _round(item.hours)}
            for item in effort.apart
        ],
    }


def project_dict(project: ProjectReport) -> dict[str, Any]:
    """One project's readiness."""
    from migrator.output.packages import package_dict

    return {
        "name": project.name,
        "root": project.root,
        "score": project.score,
        "penalty": round(project.penalty, 3),
        "verdict": project.verdict.value,
        "verdict_label": project.verdict.label,
        "verdict_reason": project.verdict_reason(),
        "verdict_rule": project.reason,
        "verdict_rule_id": project.rule,
        "verdict_rule_text": project.rule_text,
        "unknowns": [{"what": what, "detail": detail} for what, detail in project.unknowns],
        "band": list(BANDS[project.verdict.value]),
        "deciding": [work_item_dict(item) for item in project.deciding],
        "amd_path": [_evidence(evidence) for evidence in project.amd_path],
        "entry_points": project.entry_points,
        "extensions": [row.as_dict() for row in project.extensions],
        "packages": [package_dict(package) for package in project.packages],
        "native_unknowns": [package.name for package in project.native_unknowns],
        "environment": project.environment or None,
        "work_items": [work_item_dict(item) for item in project.reachable_work],
        "peripheral_work_items": [work_item_dict(item) for item in project.peripheral_work],
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
        "blockers": [item.key for item in project.blockers],
        "manual_work": [_work_group(group) for group in project.manual],
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
                "work_items": len(project.reachable_work),
                "blockers": len(project.blockers),
                "hours": _round(project.effort.total_hours),
                "deciding": [item.describe() for item in project.deciding],
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
    from migrator.output.escape import json_text

    return json_text(report_dict(report), indent=2, ensure_ascii=False) + "\n"
