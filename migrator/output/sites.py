"""Every site of a folded problem as a finding of its own (its line's code read from the file),
for the outputs that count or show places, not problems: baselines, SARIF, ``--statistics``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from migrator.model import Finding, ScanResult


def line_reader(result: ScanResult) -> Callable[[str, int], str]:
    """Reads line ``number`` of a file of ``result`` (its path relative to the result's root),
    each file once, through the project reader (never a special file, never past its limit)."""
    root = Path(result.root).resolve()
    base = root.parent if root.is_file() else root
    lines: dict[str, list[str]] = {}

    def line_of(path: str, number: int) -> str:
        if path not in lines:
            from migrator.files.sources import read_project_text

            lines[path] = (read_project_text(base / path) or "").splitlines()
        text = lines[path]
        return text[number - 1] if 0 < number <= len(text) else ""

    return line_of


def site_count(finding: Finding) -> int:
    """How many places the finding stands for: its own and each folded site."""
    return 1 + len(finding.related)


def sites_of(finding: Finding, line_of: Callable[[str, int], str]) -> list[Finding]:
    """The finding, then each of its folded sites as the same problem found at that site (same
    rule, severity and message; the site's line's code, so that its fingerprint survives line
    shifts as the finding's does)."""
    return [
        finding,
        *(
            replace(
                finding,
                path=site.path,
                line=site.line,
                column=site.column,
                end_line=site.end_line,
                end_column=site.end_column,
                cell=site.cell,
                source_line=line_of(site.path, site.line) if site.cell is None else "",
                related=(),
            )
            for site in finding.related
        ),
    ]
