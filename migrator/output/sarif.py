"""SARIF 2.1.0 for GitHub code scanning and other SARIF consumers."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import migrator
from migrator.model import MEANINGS, Finding, ScanResult, Severity
from migrator.output.escape import safe_text, url_path
from migrator.output.fingerprint import VERSION as FINGERPRINT
from migrator.output.fingerprint import fingerprints
from migrator.output.rule_docs import project_url, rule_url, summary

_LEVEL = {severity: meaning.sarif_level for severity, meaning in MEANINGS.items()}
SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def _prefix(root: str) -> str:
    """A repository's folder name, which tells apart the paths of a log over several."""
    name = Path(root).name
    return f"{name}/" if name else ""


def _with_prefix(finding: Finding, prefix: str) -> Finding:
    """The finding with ``prefix`` before its path and its sites' paths."""
    if not prefix:
        return finding
    related = tuple(replace(site, path=prefix + site.path) for site in finding.related)
    return replace(finding, path=prefix + finding.path, related=related)


def render(
    results: list[ScanResult], repository: Path | None = None, scanned: Sequence[str] = ()
) -> str:
    """The SARIF log; with ``repository``, URIs are relative to it (``%SRCROOT%``). ``scanned``
    names the folders scanned (the results' own roots when not given), for the run's
    ``automationDetails``."""
    from migrator.engine.registry import all_rules

    # only the rules with results are described: a log is read per result, and every rule's
    # full help made a 23-result log 270 KB
    reported = {finding.rule for result in results for finding in result.findings}
    rules = [rule for rule in all_rules() if rule.code in reported]
    index = {rule.code: position for position, rule in enumerate(rules)}
    sarif_results: list[dict[str, Any]] = []
    multiple = len(results) > 1
    for result in results:
        prefix = _prefix(result.root) if multiple else ""
        findings = [_with_prefix(finding, prefix) for finding in result.findings]
        for finding, fingerprint in zip(findings, fingerprints(findings), strict=True):
            entry: dict[str, Any] = {
                "ruleId": finding.rule,
                "ruleIndex": index.get(finding.rule, 0),
                "level": _LEVEL[finding.severity],
                "message": {"text": safe_text(finding.message)},
                "locations": [
                    {
                        "physicalLocation": {
                            "artifactLocation": {
                                "uri": url_path(finding.path),
                                "uriBaseId": "%SRCROOT%",
                            },
                            "region": {
                                "startLine": finding.line,
                                "startColumn": finding.column,
                                "endLine": finding.end_line,
                                "endColumn": finding.end_column,
                            },
                        }
                    }
                ],
            }
            entry["partialFingerprints"] = {FINGERPRINT: fingerprint}
            if finding.related:
                entry["relatedLocations"] = [
                    {
                        "id": number,
                        "physicalLocation": {
                            "artifactLocation": {"uri": site.path, "uriBaseId": "%SRCROOT%"},
                            "region": {
                                "startLine": site.line,
                                "startColumn": site.column,
                                "endLine": site.end_line,
                                "endColumn": site.end_column,
                            },
                        },
                        "message": {
                            "text": f"{site.rule}: a site of this problem"
                            if site.rule
                            else "another site of this problem"
                        },
                    }
                    for number, site in enumerate(finding.related, start=1)
                ]
            properties: dict[str, Any] = {}
            if finding.cell is not None:
                properties["notebookCell"] = finding.cell
            if finding.guard:
                properties["guard"] = finding.guard
            if finding.severity is Severity.HYGIENE:
                properties["severity"] = "hygiene"
            if properties:
                entry["properties"] = properties
            sarif_results.append(entry)
    document = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "migrate",
                        "version": migrator.__version__,
                        "informationUri": project_url("Homepage"),
                        "rules": [_rule(rule) for rule in rules],
                    }
                },
                "automationDetails": {
                    "id": _automation_id(list(scanned) or [r.root for r in results], repository)
                },
                "results": sarif_results,
                **(
                    {"originalUriBaseIds": {"%SRCROOT%": {"uri": repository.as_uri() + "/"}}}
                    if repository is not None
                    else {}
                ),
            }
        ],
    }
    from migrator.output.escape import json_text

    return json_text(document, indent=2) + "\n"


def _automation_id(roots: list[str], repository: Path | None) -> str:
    """``migrate/<scanned folder>/``: the category that tells this analysis apart from others of
    the same repository in code scanning (the trailing ``/`` leaves the run id to the host)."""
    if len(roots) != 1:
        return "migrate/several/"
    root = Path(roots[0]).absolute()
    folder = root if root.is_dir() else root.parent
    if repository is not None:
        try:
            relative = folder.resolve().relative_to(repository.resolve()).as_posix()
        except ValueError:
            relative = folder.name
    else:
        relative = folder.name
    relative = url_path(relative.strip("/")) if relative not in ("", ".") else ""
    return f"migrate/{relative}/" if relative else "migrate/"


def _rule(rule: Any) -> dict[str, Any]:
    """A reporting descriptor: a one-line description, the rule's page and its Markdown help."""
    descriptor: dict[str, Any] = {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.message},
        "fullDescription": {"text": summary(rule)},
        "help": {
            "text": f"{summary(rule)} See `migrate explain {rule.code}`.",
            "markdown": rule.doc(),
        },
        "defaultConfiguration": {"level": _LEVEL[rule.severity]},
        "properties": {"category": rule.category, "fact": rule.fact},
    }
    url = rule_url(rule.code)
    if url:
        descriptor["helpUri"] = url
    return descriptor
