"""The readiness report for a terminal (``migrate report`` with stdout a terminal and no ``-o``):
the verdict, the items that decided it, blockers and manual work, effort and what the report
could not tell, as rich tables; the full document stays HTML, Markdown or JSON. Every name from
scanned code is a plain ``Text`` (never markup) with control characters shown escaped."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from migrator.output.escape import safe_line, safe_text
from migrator.reporting.readiness import CONSEQUENCE_LABELS, Report
from migrator.reporting.readiness.score import Verdict, item_class

#: Rows of each table; the rest is counted, and the full report has it.
MAX_ROWS = 10
_VERDICT_STYLE = {Verdict.READY: "bold green", Verdict.NEEDS_WORK: "bold yellow"}
_BASIS = {"fix": "automatic fix", "pattern": "documented pattern", "port": "needs a port"}


def _hours(value: float) -> str:
    return f"{value:.1f} h" if value else "0 h"


def styled(value: object, style: str = "") -> Text:
    """Text from the report (a title with Markdown code spans): one line, escaped, the code
    spans shown in cyan without their backticks."""
    parts = safe_line(value).split("`")
    if len(parts) % 2 == 0:  # an unmatched backtick: keep the text as it is
        return Text(safe_line(value), style=style)
    text = Text(style=style)
    for index, part in enumerate(parts):
        text.append(part, style="cyan" if index % 2 else "")
    return text


def _table(title: str, *columns: str, right: tuple[str, ...] = ()) -> Table:
    table = Table(title=title, title_justify="left", title_style="bold", show_lines=False)
    for column in columns:
        table.add_column(column, justify="right" if column in right else "left")
    return table


def _more(rows: int, what: str) -> Text | None:
    if rows <= MAX_ROWS:
        return None
    return Text(f"… and {rows - MAX_ROWS} more {what} (in the full report)", style="dim")


def _project(project: Any) -> list[Any]:
    """The sections of one project."""
    out: list[Any] = []
    headline = Text()
    headline.append("ROCm readiness: ", style="bold")
    headline.append(safe_text(project.name), style="bold")
    headline.append(f"  {project.score}/100  ")
    headline.append(
        project.verdict.label.upper(), style=_VERDICT_STYLE.get(project.verdict, "bold red")
    )
    out.append(headline)
    out.append(styled(f"{project.reason}."))
    out.append(styled(f"Rule applied: {project.rule_text}.", style="dim"))
    scanned = f"{project.files_scanned} files scanned"
    out.append(
        Text(
            f"{safe_text(project.counted)} ({scanned}); estimated effort "
            f"{_hours(project.effort.total_hours)}",
            style="dim",
        )
    )
    if project.deciding:
        table = _table(
            "Decided by",
            "Work item",
            "Where",
            "On ROCm",
            "Basis",
            "Class",
            "Files",
            "Hours",
            right=("Files", "Hours"),
        )
        for item in project.deciding[:MAX_ROWS]:
            table.add_row(
                styled(item.title),
                Text(safe_line(item.files[0]) if item.files else item.tier),
                Text(CONSEQUENCE_LABELS.get(item.consequence, item.consequence)),
                Text(_BASIS.get(item.basis, item.basis)),
                Text(item_class(item)),
                str(len(item.files)),
                _hours(item.hours),
            )
        out.extend(part for part in (table, _more(len(project.deciding), "items")) if part)
    if project.manual:
        from migrator.reporting.html import CLASS_LABELS

        title = "Blockers and manual work" if project.blockers else "Manual work"
        table = _table(
            title, "Rule", "Kind", "Sites", "First at", "Hours", right=("Sites", "Hours")
        )
        for group in project.manual[:MAX_ROWS]:
            blocker = group.meta.code in project.blocking_rules
            first = group.findings[0] if group.findings else None
            table.add_row(
                styled(f"{group.meta.code} `{group.meta.name}`"),
                Text("blocker", style="bold red")
                if blocker
                else Text(CLASS_LABELS.get(group.fix_class, group.fix_class)),
                str(len(group.findings)),
                Text(safe_text(f"{first.path}:{first.line}")) if first else Text("—"),
                _hours(group.hours),
            )
        out.extend(part for part in (table, _more(len(project.manual), "rules")) if part)
    work = project.reachable_work
    if work:
        table = _table(
            f"Effort: {_hours(project.effort.total_hours)} in {len(work)} work item(s)"
            + (
                f", {_hours(project.effort.apart_hours)} apart (tests, examples, tooling)"
                if project.peripheral_work
                else ""
            ),
            "Work item",
            "On ROCm",
            "Findings",
            "Hours",
            right=("Findings", "Hours"),
        )
        for item in work[:MAX_ROWS]:
            table.add_row(
                styled(item.title),
                Text(CONSEQUENCE_LABELS.get(item.consequence, item.consequence)),
                str(item.findings),
                _hours(item.hours),
            )
        out.extend(part for part in (table, _more(len(work), "work items")) if part)
    out.append(_unknowns(project))
    return out


def _unknowns(project: Any) -> Table:
    """What the report could not tell and that could change the verdict (the project's
    ``unknowns``: files not analysed or skipped, builds not read, native dependencies not
    cleared, kernels not compiled, no run on ROCm)."""
    table = _table("Unknowns that could change the verdict", "What", "Detail")
    for what, detail in project.unknowns:
        style = "bold red" if what in ("not analysed", "native dependency") else ""
        table.add_row(Text(safe_line(what), style=style), styled(detail))
    return table


def _fleet(report: Report) -> Table:
    table = _table(
        "Fleet",
        "Project",
        "Score",
        "Verdict",
        "Work items",
        "Effort",
        "Decided by",
        right=("Score", "Work items", "Effort"),
    )
    for project in report.projects:
        table.add_row(
            Text(safe_line(project.name)),
            str(project.score),
            Text(project.verdict.label, style=_VERDICT_STYLE.get(project.verdict, "bold red")),
            str(len(project.reachable_work)),
            _hours(project.effort.total_hours),
            styled("; ".join(item.title for item in project.deciding[:3]) or "—"),
        )
    return table


def render(report: Report, console: Console) -> None:
    """Print the report's summary on ``console``."""
    parts: list[Any] = []
    if report.is_fleet:
        parts.append(_fleet(report))
        parts.append(styled(f"Effort: {report.effort_spread.sentence()}."))
    else:
        parts.extend(_project(report.projects[0]))
    if report.verification is not None:
        parts.append(
            styled(
                f"Verification: {report.verification.result_label}: {report.verification.headline}"
            )
        )
    parts.append(
        Text(
            "The full report: migrate report PATH -o report.html (or --format md, --format json)",
            style="dim",
        )
    )
    for part in parts:
        if isinstance(part, Table):
            console.print()
        console.print(part)


def render_text(report: Report, width: int = 120) -> str:
    """The same summary as plain text (``--format text`` to a file or a pipe)."""
    import io

    buffer = io.StringIO()
    render(report, Console(file=buffer, width=width, no_color=True, highlight=False))
    return buffer.getvalue()
