"""Render a rule's user documentation (docstring, metadata, examples) as Markdown; the same text
feeds ``migrate explain`` and the generated ``docs/rules/``."""

from __future__ import annotations

from functools import cache

from migrator.engine.rule import Rule
from migrator.knowledge import facts_doc as facts

#: The name on the package index (the command is ``migrate``, the import package ``migrator``).
DISTRIBUTION = "migrate-rocm"

BANNER = "<!-- generated from the rule catalog by scripts/gen_rule_docs.py; edit the rule, not this file -->"


def render_rule(rule: type[Rule], facts_base: str = "") -> str:
    """The rule's page; ``facts_base`` prefixes links into the facts document."""
    anchor = _first_anchor(rule.fact)
    lines = [
        f"# {rule.code} `{rule.name}`",
        "",
        f"**{rule.message}**",
        "",
        f"- Category: `{rule.category}`",
        f"- Severity: `{rule.severity.label}`",
        f"- On ROCm: `{rule.impact.consequence}` (what the readiness report counts)",
        *(["- Preview: runs only with `--preview`"] if rule.preview else []),
        f"- Fix: {rule.fix.applicability.value} ({rule.fix_availability()})"
        + (f" — {rule.fix.title}" if rule.fix.title else ""),
        f"- Files: {', '.join(sorted(rule.parsing.file_kinds))}",
        f"- Fact: {rule.fact} ([{facts.DOC_NAME}]({facts_base}{facts.DOC_NAME}#{anchor}))",
        "",
        rule.doc(),
        "",
    ]
    if rule.invalid:
        lines += ["## Flagged", ""]
        for example in rule.invalid:
            lines += [f"```{_lang(example.path)}", example.code.rstrip(), "```", ""]
            if example.fixed is not None:
                lines += [
                    "becomes",
                    "",
                    f"```{_lang(example.path)}",
                    example.fixed.rstrip(),
                    "```",
                    "",
                ]
    if rule.valid:
        lines += ["## Not flagged", ""]
        for valid in rule.valid:
            lines += [f"```{_lang(valid.path)}", valid.code.rstrip(), "```", ""]
    lines += ["## Facts", "", facts.quote(rule.fact, facts_base), ""]
    return "\n".join(lines).rstrip() + "\n"


def _first_anchor(citation: str) -> str:
    """The anchor of the first fact (else section) a citation names."""
    resolution = facts.load().resolve(citation)
    if resolution.facts:
        return resolution.facts[0].anchor
    return resolution.sections[0].anchor if resolution.sections else "s11"


def _lang(path: str) -> str:
    if path.endswith(".py"):
        return "python"
    if path.endswith((".yml", ".yaml")):
        return "yaml"
    if path.endswith(".toml"):
        return "toml"
    if path.endswith(".sh"):
        return "bash"
    if "Dockerfile" in path:
        return "dockerfile"
    return "text"


def render_index(rules: tuple[type[Rule], ...]) -> str:
    lines = [
        BANNER,
        "",
        "# Rule catalog",
        "",
        "| code | name | category | severity | fix | message |",
        "|---|---|---|---|---|---|",
    ]
    for rule in rules:
        fix = rule.fix.applicability.value if rule.fix_availability() != "never" else "none"
        message = rule.message.replace("|", "\\|")
        lines.append(
            f"| [{rule.code}]({rule.code}.md) | `{rule.name}` | {rule.category} | {rule.severity.label} | {fix} | {message} |"
        )
    return "\n".join(lines) + "\n"


def render_code_table(rules: tuple[type[Rule], ...]) -> str:
    """The code table (``rules/codes.toml``) as a page: each family and category range with the
    codes in use and the next free one, then the retired codes."""
    from migrator.engine.registry import code_table

    table = code_table()
    used: dict[str, list[str]] = {}
    for rule in rules:
        found = table.range_of(rule.code)
        if found is not None:
            used.setdefault(found.codes, []).append(rule.code)
    lines = [
        BANNER.replace("the rule catalog", "rules/codes.toml"),
        "",
        "# Rule codes",
        "",
        "Every rule's code lies in the range of its category; ranges are grouped into families of",
        "a hundred codes. A new rule takes the next free code of its category; a new category or",
        "family is added to `rules/codes.toml` first. Codes are never renumbered or reused.",
        "",
        "| family | category | range | in use | next free |",
        "|---|---|---|---|---|",
    ]
    for family in table.families:
        label = f"{family.name}: {family.title} ({family.codes})"
        spans = [span for span in table.ranges if span.codes[:6] in family]
        if not spans:
            lines.append(f"| {label} | | | | |")
        for span in spans:
            codes = sorted(used.get(span.codes, []))
            taken = [int(code[3:]) for code in codes] + [
                int(code[3:]) for code in table.retired if code in span
            ]
            after = max(taken) + 1 if taken else span.first
            free = f"ROC{after:03d}" if after <= span.last else "full"
            lines.append(f"| {label} | {span.name} | {span.codes} | {len(codes)} | {free} |")
            label = ""
    lines += ["", "## Retired codes", ""]
    if table.retired:
        lines += [f"- {code}: {reason}" for code, reason in sorted(table.retired.items())]
    else:
        lines.append("None.")
    return "\n".join(lines) + "\n"


def render_rule_page(rule: type[Rule]) -> str:
    return BANNER + "\n\n" + render_rule(rule, facts_base="../")


def summary(rule: type[Rule]) -> str:
    """The first paragraph of the rule's "What it does", as one line of plain text."""
    doc = rule.doc()
    body = doc.split("## What it does", 1)[-1].lstrip("\n")
    paragraph = body.split("\n\n", 1)[0].split("\n## ", 1)[0]
    return " ".join(paragraph.split()) or rule.message


@cache
def project_url(label: str) -> str:
    """A URL the installed distribution declares (``[project.urls]``), or ``""``."""
    from importlib import metadata

    try:
        entries = metadata.metadata(DISTRIBUTION).get_all("Project-URL") or []
    except metadata.PackageNotFoundError:
        return ""
    for entry in map(str, entries):
        name, _, url = entry.partition(",")
        if name.strip().lower() == label.lower():
            return url.strip()
    return ""


def rule_url(code: str) -> str:
    """The rule's page in the published documentation, or ``""`` when none is declared."""
    base = project_url("Documentation")
    return f"{base.rstrip('/')}/rules/{code}.md" if base else ""


def facts_url(citation: str) -> str:
    """Link to the first fact a citation names in the published facts document, or ``""``."""
    base = project_url("Documentation")
    if not base or not citation:
        return ""
    return f"{base.rstrip('/')}/{facts.DOC_NAME}#{_first_anchor(citation)}"
