"""One line per finding (``path:line:col: RULE [*] message``), and per-rule statistics."""

from __future__ import annotations

from collections import Counter

from migrator.model import Finding, ScanResult, Status
from migrator.output.escape import safe_text


def _findings(results: list[ScanResult]) -> list[Finding]:
    return [finding for result in results for finding in result.findings]


def _printable(text: str) -> str:
    """Scanned code must not move the cursor, start a new line or a CI command in a terminal or
    log (``safe_text``), nor carry anything else unprintable."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in safe_text(text))


def render(results: list[ScanResult]) -> str:
    """Every finding on one line, sorted by path and position."""
    lines = []
    for finding in _findings(results):
        cell = f"[cell {finding.cell}]" if finding.cell is not None else ""
        mark = " [*]" if finding.fix is not None else ""
        lines.append(
            f"{_printable(finding.path)}{cell}:{finding.line}:{finding.column}: "
            f"{finding.rule}{mark} {_printable(finding.message)}"
        )
    for result in results:
        for file in result.files:
            if file.status is Status.SKIPPED or file.status is Status.FAILED:
                word = "skipped" if file.status is Status.SKIPPED else "not scanned"
                lines.append(f"{_printable(file.path)}: {word}: {_printable(file.reason)}")
    return "\n".join(lines) + ("\n" if lines else "")


def statistics(results: list[ScanResult]) -> str:
    """How many findings each rule has, most first (``[*]``: some of them are fixable)."""
    findings = _findings(results)
    counts = Counter(finding.rule for finding in findings)
    fixable = {finding.rule for finding in findings if finding.fix is not None}
    from migrator.engine.registry import all_rules

    messages = {rule.code: rule.message for rule in all_rules()}
    lines = []
    for rule, count in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        mark = "[*]" if rule in fixable else "   "
        lines.append(f"{count:>6}\t{rule}\t{mark} {_printable(messages.get(rule, ''))}")
    return "\n".join(lines) + ("\n" if lines else "")
