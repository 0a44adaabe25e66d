"""Output formats CI systems read, one renderer each: JSON Lines, JUnit XML, GitLab Code
Quality, reviewdog's rdjson, pylint's parseable lines and Azure Pipelines logging commands.
Every value taken from scanned code is escaped for its format."""

from __future__ import annotations

from collections.abc import Callable
from xml.sax.saxutils import escape as xml_escape
from xml.sax.saxutils import quoteattr

from migrator.model import Finding, ScanResult, Severity
from migrator.output.escape import json_text, safe_line, safe_text
from migrator.output.fingerprint import fingerprints

_GITLAB = {
    Severity.ERROR: "critical",
    Severity.WARNING: "major",
    Severity.INFO: "info",
    Severity.HYGIENE: "info",
}
_RDJSON = {
    Severity.ERROR: "ERROR",
    Severity.WARNING: "WARNING",
    Severity.INFO: "INFO",
    Severity.HYGIENE: "INFO",
}
_PYLINT = {Severity.ERROR: "E", Severity.WARNING: "W", Severity.INFO: "I", Severity.HYGIENE: "C"}
_AZURE = {Severity.ERROR: "error", Severity.WARNING: "warning"}


def _findings(results: list[ScanResult]) -> list[Finding]:
    return [finding for result in results for finding in result.findings]


def json_lines(results: list[ScanResult]) -> str:
    """One JSON object per finding per line (the fields of ``--format json``'s findings)."""
    from migrator.output.findings_json import scan_dict

    lines = [json_text(item, separators=(",", ":")) for item in scan_dict(results)["findings"]]
    return "\n".join(lines) + ("\n" if lines else "")


def junit(results: list[ScanResult]) -> str:
    """JUnit XML: a test suite per file, a failing test case per finding."""
    findings = _findings(results)
    by_file: dict[str, list[Finding]] = {}
    for finding in findings:
        by_file.setdefault(finding.path, []).append(finding)
    out = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<testsuites name="migrate" tests="{len(findings)}" failures="{len(findings)}">',
    ]
    for path, items in sorted(by_file.items()):
        name = quoteattr(safe_text(path))
        out.append(f'  <testsuite name={name} tests="{len(items)}" failures="{len(items)}">')
        for finding in items:
            case = quoteattr(f"{finding.rule} {finding.name} at line {finding.line}")
            message = quoteattr(safe_line(finding.message))
            where = xml_escape(safe_text(f"{finding.path}:{finding.line}:{finding.column}"))
            out.append(f"    <testcase name={case} classname={name}>")
            out.append(
                f"      <failure message={message} type={quoteattr(finding.severity.name.lower())}>"
                f"{where}: {xml_escape(safe_line(finding.message))}</failure>"
            )
            out.append("    </testcase>")
        out.append("  </testsuite>")
    out.append("</testsuites>")
    return "\n".join(out) + "\n"


def gitlab(results: list[ScanResult]) -> str:
    """GitLab Code Quality: a JSON array of issues with stable fingerprints."""
    findings = _findings(results)
    issues = [
        {
            "type": "issue",
            "check_name": f"{finding.rule} {finding.name}",
            "description": f"{finding.rule}: {finding.message}",
            "categories": ["Compatibility"],
            "severity": _GITLAB[finding.severity],
            "fingerprint": fingerprint,
            "location": {
                "path": finding.path,
                "lines": {"begin": finding.line, "end": finding.end_line},
            },
        }
        for finding, fingerprint in zip(findings, fingerprints(findings), strict=True)
    ]
    return json_text(issues, indent=2) + "\n"


def rdjson(results: list[ScanResult]) -> str:
    """reviewdog's Diagnostic Format (rdjson), with the fix's text where one applies."""
    diagnostics = []
    for finding in _findings(results):
        diagnostic: dict[str, object] = {
            "message": finding.message,
            "location": {
                "path": finding.path,
                "range": {
                    "start": {"line": finding.line, "column": finding.column},
                    "end": {"line": finding.end_line, "column": finding.end_column},
                },
            },
            "severity": _RDJSON[finding.severity],
            "code": {"value": finding.rule, "url": _url(finding.rule)},
        }
        diagnostics.append(diagnostic)
    document = {
        "source": {"name": "migrate", "url": "https://github.com/migrate-rocm/migrate-rocm"}
    }
    document["diagnostics"] = diagnostics  # type: ignore[assignment]
    return json_text(document, indent=2) + "\n"


def pylint(results: list[ScanResult]) -> str:
    """pylint's parseable format: ``path:line: [C0000(name), ] message``."""
    lines = [
        f"{safe_text(finding.path)}:{finding.line}: [{_PYLINT[finding.severity]}{finding.rule[3:]}"
        f"({finding.name}), ] {safe_line(finding.message)} ({finding.rule})"
        for finding in _findings(results)
    ]
    return "\n".join(lines) + ("\n" if lines else "")


def azure(results: list[ScanResult]) -> str:
    """Azure Pipelines logging commands: ``##vso[task.logissue ...]message`` per finding."""

    def prop(value: str) -> str:
        return safe_text(value).replace("%", "%AZP25").replace(";", "%3B").replace("]", "%5D")

    lines = []
    for finding in _findings(results):
        kind = _AZURE.get(finding.severity, "warning")
        message = safe_line(finding.message).replace("%", "%AZP25")
        lines.append(
            f"##vso[task.logissue type={kind};sourcepath={prop(finding.path)};"
            f"linenumber={finding.line};columnnumber={finding.column};code={finding.rule}]"
            f"{message}"
        )
    return "\n".join(lines) + ("\n" if lines else "")


def _url(code: str) -> str:
    return f"https://github.com/migrate-rocm/migrate-rocm/blob/main/docs/rules/{code}.md"


RENDERERS: dict[str, Callable[[list[ScanResult]], str]] = {
    "json-lines": json_lines,
    "junit": junit,
    "gitlab": gitlab,
    "rdjson": rdjson,
    "pylint": pylint,
    "azure": azure,
}
