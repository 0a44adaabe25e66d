"""The readiness report as GitHub-flavoured Markdown (fits a PR or issue comment: GFM tables,
``<details>`` for long lists). Text from scanned code is escaped so it cannot open HTML tags or
break a table."""

from __future__ import annotations

import re

import jinja2

import migrator
from migrator.output.escape import markdown_code, markdown_inline, url_path
from migrator.output.rule_docs import facts_url
from migrator.reporting.html import CLASS_LABELS, TEMPLATES, hours
from migrator.reporting.readiness import (
    BASIS_LABELS,
    CONSEQUENCE_LABELS,
    EFFORT_ASSUMPTIONS,
    FIX_CLASSES,
    FORMULA_LINES,
    VERDICT_RULES,
    Report,
)

#: GitHub rejects comments over 65,536 characters; long finding lists are cut to this many rows.
MAX_FINDING_ROWS = 150
#: The most characters a rendered report may have (room left for a bot's own header).
MAX_CHARACTERS = 60_000
_DETAILS = re.compile(r"(<details><summary>.*?</summary>\n)(.*?)(\n</details>)", re.DOTALL)
_OMITTED = "\n_Omitted to fit a comment; the HTML or JSON report has it._\n"


def inline(value: object) -> str:
    """Text safe to put in Markdown prose: one line; its code spans kept, and no HTML tag, link
    or image can start outside them (``escape.markdown_inline``)."""
    return markdown_inline(value)


def short(value: object, limit: int = 220) -> str:
    """Cut long text at a clause boundary before ``limit`` characters, keeping code spans whole."""
    text = str(value)
    if len(text) <= limit:
        return text
    depth = 0
    ticks = 0
    cut = -1
    for index, char in enumerate(text[:limit]):
        if char == "`":
            ticks += 1
        elif ticks % 2 == 0 and char in "([":
            depth += 1
        elif ticks % 2 == 0 and char in ")]":
            depth = max(0, depth - 1)
        elif depth == 0 and ticks % 2 == 0 and char in ";.:" and text[index + 1 : index + 2] == " ":
            cut = index
    head = text[: cut if cut > limit // 3 else limit].rstrip(" ;.,:")
    if head.count("`") % 2:
        head = head[: head.rfind("`")].rstrip()
    return head + " …"


def block(value: object) -> str:
    """Multi-line Markdown of our own (rule documentation): HTML tags escaped outside code,
    its links kept."""
    out = []
    fenced = False
    for line in str(value).splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            out.append(line)
        elif fenced or line.startswith("    "):
            out.append(line)
        else:
            out.append(markdown_inline(line, ours=True))
    return "\n".join(out)


def cell(value: object) -> str:
    """Text safe inside a GFM table cell (pipes escaped as well)."""
    return inline(value).replace("|", "\\|")


def span(value: object) -> str:
    """An inline code span that nothing in the value can close (``escape.markdown_code``)."""
    return markdown_code(value)


def ours(value: object) -> str:
    """One line of our own Markdown (a rule's fact): HTML escaped, its links and escapes kept."""
    return markdown_inline(value, ours=True)


def code(value: object) -> str:
    """An inline code span that nothing in the value can close (``escape.markdown_code``), with
    pipes escaped so that it also stays in one table cell."""
    return markdown_code(value).replace("|", "\\|")


def environment() -> jinja2.Environment:
    """Markdown templates: no autoescape (it is not HTML); values go through ``cell``/``inline``."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        autoescape=False,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(
        cell=cell,
        inline=inline,
        code=code,
        span=span,
        ours=ours,
        block=block,
        short=short,
        hours=hours,
        urlpath=url_path,
        facts_url=facts_url,
    )
    from migrator.output.packages import LABELS

    env.globals.update(fix_classes=FIX_CLASSES, class_labels=CLASS_LABELS, package_labels=LABELS)
    return env


def render(report: Report, limit: int = MAX_CHARACTERS) -> str:
    """The whole report as Markdown, at most ``limit`` characters (a PR comment)."""
    text = (
        environment()
        .get_template("report.md.j2")
        .render(
            report=report,
            version=migrator.__version__,
            formula=FORMULA_LINES,
            verdict_rules=VERDICT_RULES,
            assumptions=EFFORT_ASSUMPTIONS,
            consequence_labels=CONSEQUENCE_LABELS,
            basis_labels=BASIS_LABELS,
            max_rows=MAX_FINDING_ROWS,
        )
    )
    while "\n\n\n" in text:
        text = text.replace("\n\n\n", "\n\n")
    return fit(text.strip() + "\n", limit)


def fit(text: str, limit: int = MAX_CHARACTERS) -> str:
    """The report cut to ``limit`` characters: first the largest folded ``<details>`` bodies are
    left out, then whole sections from the end, with a note saying how to get everything."""
    if len(text) <= limit:
        return text
    bodies = sorted(_DETAILS.finditer(text), key=lambda match: len(match.group(2)), reverse=True)
    omit: set[int] = set()
    saved = 0
    for match in bodies:
        if len(text) - saved <= limit:
            break
        omit.add(match.start())
        saved += len(match.group(2)) - len(_OMITTED)
    text = _DETAILS.sub(
        lambda m: m.group(1) + _OMITTED + m.group(3) if m.start() in omit else m.group(0), text
    )
    if len(text) <= limit:
        return text
    note = (
        f"\n\n---\n\n**Cut to fit a comment** (the full report has {len(text):,} characters). "
        "Everything is in `migrate report --format html` or `--format json`.\n"
    )
    budget = limit - len(note) - 200  # room for closing what the cut leaves open
    cut = max(text.rfind("\n#", 0, budget), text.rfind("\n\n", 0, budget))
    head = text[: cut if cut > 0 else budget].rstrip()
    if head.count("```") % 2:
        head += "\n```"
    head += "\n</details>" * max(0, head.count("<details>") - head.count("</details>"))
    return head + note
