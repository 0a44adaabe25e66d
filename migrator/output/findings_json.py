"""The JSON contract other tools read (pinned by tests): version, tool, findings, files, summary."""

from __future__ import annotations

from collections import Counter
from typing import Any

import migrator
from migrator.model import Finding, Related, ScanResult, Status, is_problem

SCHEMA_VERSION = "1"


def finding_dict(finding: Finding) -> dict[str, Any]:
    data: dict[str, Any] = {
        "rule": finding.rule,
        "name": finding.name,
        "category": finding.category,
        "severity": finding.severity.label,
        "path": finding.path,
        "line": finding.line,
        "column": finding.column,
        "end_line": finding.end_line,
        "end_column": finding.end_column,
        "message": finding.message,
        "fix": None
        if finding.fix is None
        else {
            "applicability": finding.fix.applicability.value,
            "description": finding.fix.description,
        },
    }
    if finding.cell is not None:
        data["cell"] = finding.cell
    data["related"] = [_related_dict(site) for site in finding.related]
    if finding.guard:
        data["guard"] = finding.guard
    return data


def _related_dict(site: Related) -> dict[str, Any]:
    data: dict[str, Any] = {
        "path": site.path,
        "line": site.line,
        "column": site.column,
        "end_line": site.end_line,
        "end_column": site.end_column,
    }
    if site.cell is not None:
        data["cell"] = site.cell
    if site.rule:
        data["rule"] = site.rule
    return data


def summary(findings: list[Finding]) -> dict[str, Any]:
    by_category = Counter(finding.category for finding in findings)
    by_severity = Counter(finding.severity.label for finding in findings)
    fixable = Counter(
        finding.fix.applicability.value if finding.fix else "none" for finding in findings
    )
    problems = sum(is_problem(finding.severity) for finding in findings)
    return {
        "total": len(findings),
        # the consequence model's split (``model.MEANINGS``): problems are work, hints are not
        "problems": problems,
        "hints": len(findings) - problems,
        "by_category": dict(sorted(by_category.items())),
        "by_severity": {
            level: by_severity.get(level, 0) for level in ("error", "warning", "info", "hygiene")
        },
        "by_fix": {key: fixable.get(key, 0) for key in ("safe", "unsafe", "none")},
    }


def scan_dict(results: list[ScanResult]) -> dict[str, Any]:
    findings: list[Finding] = []
    scanned = 0
    skipped: list[dict[str, str]] = []
    failed: list[dict[str, str]] = []
    for result in results:
        for file in result.files:
            path = file.path
            if file.status is Status.SCANNED:
                scanned += 1
            elif file.status is Status.SKIPPED:
                skipped.append({"path": path, "reason": file.reason})
            else:
                failed.append({"path": path, "reason": file.reason})
        for finding in result.findings:
            findings.append(finding)
    from migrator.output.packages import package_dict

    packages = [package for result in results for package in result.packages]
    environments = [result.environment for result in results if result.environment]
    return {
        "version": SCHEMA_VERSION,
        "tool": {"name": "migrate", "version": migrator.__version__},
        "findings": [finding_dict(finding) for finding in findings],
        "files": {"scanned": scanned, "skipped": skipped, "failed": failed},
        "summary": summary(findings),
        # third-party packages the GPU code imports: unknown and CUDA-only ones keep a
        # readiness verdict from "ready" (``environment``: what `--python` read, else null)
        "packages": [package_dict(package) for package in packages],
        "environment": "; ".join(environments) or None,
    }


def render(results: list[ScanResult]) -> str:
    from migrator.output.escape import json_text

    return json_text(scan_dict(results), indent=2) + "\n"
