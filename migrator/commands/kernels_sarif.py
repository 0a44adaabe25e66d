"""``migrate kernels --format sarif``: the kernel sites and every compile error of every unit
(inside an extension or outside any) as SARIF 2.1.0 results, so that code scanning shows a
unit that does not compile for AMD at the line that fails."""

from __future__ import annotations

import json
from typing import Any

import migrator
from migrator.output.escape import safe_text

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_RULES = {
    "compile/fail": "does not compile for AMD with this HIP compiler",
    "compile/not-checkable": "not checkable with this ROCm (a named gap of the installed ROCm)",
    "compile/not-checked": "not compiled: the unit may read a file outside the project",
    "compile/timeout": "the compiler did not finish in time",
    "compile/crash": "the compiler crashed",
}


def _location(path: str, line: int) -> dict[str, Any]:
    region = {"startLine": max(1, line)}
    return {
        "physicalLocation": {
            "artifactLocation": {"uri": safe_text(path), "uriBaseId": "%SRCROOT%"},
            "region": region,
        }
    }


def _compile_results(report: dict[str, Any]) -> list[dict[str, Any]]:
    runs = [r for ext in report["extensions"] for r in ext["compile"]]
    return runs + list(report["unassigned"].get("compile", []))


def render_sarif(report: dict[str, Any]) -> str:
    """The report's kernel sites and compile results as one SARIF log."""
    results: list[dict[str, Any]] = []
    sites = [s for ext in report["extensions"] for s in ext["sites"]]
    sites += report["unassigned"]["sites"]
    rules: dict[str, str] = {}
    for site in sites:
        rules.setdefault(site["rule"], site["class"])
        results.append(
            {
                "ruleId": site["rule"],
                "level": "error" if site["severity"] in {"error", "critical"} else "warning",
                "message": {"text": safe_text(site["message"])},
                "locations": [_location(site["path"], site["line"])],
            }
        )
    for result in _compile_results(report):
        status = result["status"]
        if status == "pass":
            continue
        rule = "compile/" + status.replace(" ", "-")
        rules.setdefault(rule, _RULES.get(rule, status))
        level = "error" if status == "fail" else "warning"
        target = result["target"]
        diagnostics = result["diagnostics"] or [
            {"path": result["path"], "line": 1, "message": result["note"] or status}
        ]
        for diagnostic in diagnostics:
            results.append(
                {
                    "ruleId": rule,
                    "level": level,
                    "message": {
                        "text": safe_text(f"{result['path']} for {target}: {diagnostic['message']}")
                    },
                    "locations": [
                        _location(diagnostic["path"] or result["path"], diagnostic["line"])
                    ],
                }
            )
    compiler = report.get("compiler") or {}
    log = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "migrate kernels",
                        "version": migrator.__version__,
                        "rules": [
                            {"id": rule, "shortDescription": {"text": text}}
                            for rule, text in sorted(rules.items())
                        ],
                    }
                },
                "invocations": [
                    {
                        "executionSuccessful": True,
                        "properties": {
                            "compiler": compiler.get("path"),
                            "hipVersion": compiler.get("hip_version"),
                            "targets": compiler.get("targets"),
                            "notChecked": compiler.get("not_checked"),
                            "compile": report["compile"],
                        },
                    }
                ],
                "results": results,
            }
        ],
    }
    return json.dumps(log, indent=2) + "\n"


__all__ = ["render_sarif"]
