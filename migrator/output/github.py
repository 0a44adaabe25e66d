"""GitHub Actions workflow commands: one annotation per finding."""

from __future__ import annotations

from migrator.model import ScanResult, Severity
from migrator.output.escape import safe_text

_LEVEL = {
    Severity.ERROR: "error",
    Severity.WARNING: "warning",
    Severity.INFO: "notice",
    Severity.HYGIENE: "notice",
}


def _escape(value: str) -> str:
    value = value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return safe_text(value)


def _escape_property(value: str) -> str:
    return _escape(value).replace(":", "%3A").replace(",", "%2C")


def render(results: list[ScanResult]) -> str:
    lines = []
    for result in results:
        for finding in result.findings:
            title = _escape_property(f"{finding.rule} {finding.name}")
            lines.append(
                f"::{_LEVEL[finding.severity]} file={_escape_property(finding.path)},"
                f"line={finding.line},col={finding.column},endLine={finding.end_line},"
                f"endColumn={finding.end_column},title={title}::"
                f"{_escape(finding.message)}"
            )
    from migrator.output.packages import LABELS, line

    for result in results:
        for package in result.packages:  # unknown and CUDA-only native dependencies
            if not package.is_concern:
                continue
            level = "warning" if package.status == "cuda-only" else "notice"
            where = ""
            if package.sites:
                path, row = package.sites[0]
                where = f" file={_escape_property(path)},line={row},"
            title = _escape_property(LABELS[package.status])
            lines.append(f"::{level}{where or ' '}title={title}::{_escape(line(package))}")
    return "\n".join(lines) + ("\n" if lines else "")
