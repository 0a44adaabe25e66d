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


def _counts(results: list[ScanResult]) -> list[tuple[str, int, int, bool]]:
    """Per rule: its sites, its findings (folded problems), whether some are fixable; most
    sites first."""
    from migrator.output.sites import site_count

    findings = _findings(results)
    sites: Counter[str] = Counter()
    problems: Counter[str] = Counter()
    for finding in findings:
        sites[finding.rule] += site_count(finding)
        problems[finding.rule] += 1
    fixable = {finding.rule for finding in findings if finding.fix is not None}
    ordered = sorted(sites.items(), key=lambda item: (-item[1], item[0]))
    return [(rule, count, problems[rule], rule in fixable) for rule, count in ordered]


def statistics(results: list[ScanResult]) -> str:
    """How many sites each rule has, most first, as ruff counts its diagnostics (``[*]``: some
    of them are fixable); where sites were folded into fewer problems (one finding each), how
    many problems they make, labelled."""
    from migrator.engine.registry import all_rules

    messages = {rule.code: rule.message for rule in all_rules()}
    lines = []
    for rule, count, problems, fixable in _counts(results):
        mark = "[*]" if fixable else "   "
        folded = (
            f" ({count} sites in {problems} problem{'s' if problems != 1 else ''})"
            if problems != count
            else ""
        )
        lines.append(f"{count:>6}\t{rule}\t{mark} {_printable(messages.get(rule, ''))}{folded}")
    return "\n".join(lines) + ("\n" if lines else "")


def statistics_json(results: list[ScanResult]) -> str:
    """``--statistics --format json``: ruff's shape (``code``, ``name``, ``count``, ``fixable``)
    with ``count`` the sites and ``problems`` the findings they are folded into."""
    from migrator.engine.registry import all_rules
    from migrator.output.escape import json_text

    names = {rule.code: rule.name for rule in all_rules()}
    rows = [
        {
            "code": rule,
            "name": names.get(rule, ""),
            "count": count,
            "problems": problems,
            "fixable": fixable,
        }
        for rule, count, problems, fixable in _counts(results)
    ]
    return json_text(rows, indent=2) + "\n"
