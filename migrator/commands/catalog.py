"""``migrate rules`` and ``migrate explain``: the rule catalog as a table or JSON, and one rule's
documentation."""

from __future__ import annotations

import json
from typing import Any

import click

from migrator.commands.options import make_console


@click.command("rules")
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text")
def rules_command(output_format: str) -> None:
    """List the rule catalog."""
    from migrator.engine.registry import all_rules

    rules = all_rules()
    if output_format == "json":
        click.echo(json.dumps([rule_summary(rule) for rule in rules], indent=2))
        return
    from rich.table import Table

    table = Table(show_lines=False)
    for column in ("code", "name", "category", "severity", "fix", "message"):
        table.add_column(column)
    for rule in rules:
        table.add_row(
            f"{rule.code} (preview)" if rule.preview else rule.code,
            rule.name,
            rule.category,
            rule.severity.label,
            rule.fix.applicability.value if rule.fix_availability() != "never" else "none",
            rule.message,
        )
    console = make_console()
    if not console.is_terminal:
        console.width = max(console.width, 200)  # piped: one row per rule, not folded columns
    console.print(table)


def rule_summary(rule: Any) -> dict[str, Any]:
    """One rule of ``migrate rules --format json``."""
    return {
        "code": rule.code,
        "name": rule.name,
        "category": rule.category,
        "severity": rule.severity.label,
        "message": rule.message,
        "fix_title": rule.fix.title,
        "fix_safety": rule.fix.applicability.value,
        "fix_availability": rule.fix_availability(),
        "fact": rule.fact,
        "file_kinds": sorted(rule.parsing.file_kinds),
        "consequence": rule.impact.consequence,
        "preview": rule.preview,
    }


@click.command()
@click.argument("code")
def explain(code: str) -> None:
    """Print a rule's documentation."""
    from migrator.engine.registry import rule_by_code
    from migrator.output.rule_docs import render_rule

    rule = rule_by_code(code)
    from rich.markdown import Markdown

    console = make_console()
    if not console.is_terminal:  # piped: the Markdown itself, never cropped to 80 columns
        click.echo(render_rule(rule), nl=False)
        return
    console.print(Markdown(render_rule(rule)))
