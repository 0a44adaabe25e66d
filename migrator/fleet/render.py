"""The fleet report as HTML (one self-contained page, autoescaped), Markdown, JSON and CSV,
rendered from the figures of ``aggregate``; every value from a scanned repository is escaped for
the format it lands in."""

from __future__ import annotations

import csv
import io
from dataclasses import asdict
from pathlib import Path
from typing import Any

import migrator
from migrator.fleet.aggregate import OK, Fleet

FORMATS = ("html", "md", "json", "csv")
TEMPLATES = Path(__file__).parent / "templates"
_CSV_FIELDS = (
    "name",
    "source",
    "ref",
    "commit",
    "status",
    "score",
    "verdict",
    "hours",
    "findings",
    "work_items",
    "class",
    "deciding",
    "verify",
    "reason",
    "report",
)


def fleet_dict(fleet: Fleet) -> dict[str, Any]:
    """The fleet report as JSON-ready data."""
    return {
        "tool": {"name": "migrate", "version": migrator.__version__},
        "generated": fleet.generated,
        "repositories": len(fleet.rows),
        "verdicts": fleet.verdicts,
        "failed": len(fleet.failed),
        "effort": {
            "total_hours": fleet.total_hours,
            "median_hours": fleet.spread.median,
            "largest": None
            if fleet.spread.largest is None
            else {"name": fleet.spread.largest[0], "hours": fleet.spread.largest[1]},
            "dominant": [
                {"name": name, "hours": hours, "share": round(share, 3)}
                for name, hours, share in fleet.spread.dominant
            ],
            "summary": fleet.spread.sentence(),
            "by_verdict": fleet.hours_by_verdict,
        },
        "classes": [{"class": name, "repositories": count} for name, count in fleet.classes],
        "work_items": [{**asdict(item), "hours": round(item.hours, 2)} for item in fleet.items],
        "projects": [asdict(row) for row in fleet.rows],
    }


def render_json(fleet: Fleet) -> str:
    """Pretty JSON with a trailing newline (``escape.json_text``: no raw control character or
    CI command from a repository's name, path or message)."""
    from migrator.output.escape import json_text

    return json_text(fleet_dict(fleet), indent=2, ensure_ascii=False) + "\n"


#: What makes a spreadsheet read a cell as a formula (OWASP's list; tab and carriage return are
#: escaped by ``safe_line`` already), with the fullwidth forms some spreadsheets accept too.
_FORMULA_START = frozenset("=+-@\t\r\uff1d\uff0b\uff0d\uff20")


def _csv_cell(value: object) -> str:
    """A cell a spreadsheet will not run as a formula: one line, escaped (``safe_line``), with
    a leading ``'`` when it starts a formula, after leading blanks too (an importer that trims
    them would otherwise see the formula)."""
    from migrator.output.escape import safe_line

    text = safe_line(value)
    return "'" + text if text.lstrip(" ")[:1] in _FORMULA_START else text


def render_csv(fleet: Fleet) -> str:
    """One row per repository."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(_CSV_FIELDS)
    for row in fleet.rows:
        values = {
            **asdict(row),
            "class": row.klass.replace("`", ""),
            "deciding": "; ".join(row.decided_by or row.deciding).replace("`", ""),
        }
        writer.writerow(
            [_csv_cell("" if values[name] is None else values[name]) for name in _CSV_FIELDS]
        )
    return out.getvalue()


def render_md(fleet: Fleet, limit: int = 100) -> str:
    """GitHub-flavoured Markdown: overview, classes, top work items, the repositories."""
    from migrator.output.escape import url_path
    from migrator.reporting.markdown import cell

    lines = [
        f"# ROCm readiness of {len(fleet.rows)} repositories",
        "",
        "Verdicts: "
        + ", ".join(f"{count} {cell(verdict)}" for verdict, count in fleet.verdicts.items())
        + f". Effort: {cell(fleet.spread.sentence())}.",
        "",
        "## What stands between them and ROCm",
        "",
        "| repositories | class |",
        "|---:|---|",
        *(f"| {count} | {cell(name)} |" for name, count in fleet.classes),
        "",
        "## Work items, by how many repositories they unblock",
        "",
        "| unblocks | in repositories | work item | on ROCm | fix | hours |",
        "|---:|---:|---|---|---|---:|",
        *(
            f"| {item.deciding} | {item.repos} | {cell(item.title)} | {cell(item.consequence)} "
            f"| {cell(item.basis)} | {item.hours:g} |"
            for item in fleet.items[:limit]
        ),
        "",
        "## Repositories",
        "",
        "| repository | score | verdict | hours | deciding | report |",
        "|---|---:|---|---:|---|---|",
    ]
    for row in fleet.rows:
        if row.status == OK:
            deciding = cell("; ".join(row.decided_by or row.deciding)) or "—"
            link = f"[report]({url_path(row.report)})"
            lines.append(
                f"| {cell(row.name)} | {row.score} | {cell(row.verdict)} | {row.hours:g} "
                f"| {deciding} | {link} |"
            )
        else:
            lines.append(
                f"| {cell(row.name)} | — | {cell(row.status)} | — | {cell(row.reason)} | |"
            )
    return "\n".join(lines) + "\n"


def render_html(fleet: Fleet) -> str:
    """One self-contained page (no scripts, no external resources)."""
    import jinja2

    from migrator.output.escape import html_document, url_path
    from migrator.reporting import html

    env = html.environment()
    env.loader = jinja2.ChoiceLoader([jinja2.FileSystemLoader(str(TEMPLATES)), env.loader])  # type: ignore[list-item]
    env.filters["url_path"] = url_path
    template = env.get_template("fleet.html.j2")
    # autoescape stops markup; html_document the controls and CI commands it lets through
    return html_document(template.render(fleet=fleet, version=migrator.__version__, ok=OK))


def render(fleet: Fleet, output_format: str) -> str:
    """The fleet report in one of ``FORMATS``."""
    if output_format == "json":
        return render_json(fleet)
    if output_format == "csv":
        return render_csv(fleet)
    if output_format == "md":
        return render_md(fleet)
    return render_html(fleet)
