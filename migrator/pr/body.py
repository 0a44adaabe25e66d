"""The pull request's title and Markdown body, rendered from the before/after readiness."""

from __future__ import annotations

import shlex
from collections.abc import Sequence

import migrator
from migrator.model import Applicability, Finding, withheld_reason
from migrator.pr.options import DEFAULT_BRANCH, CommitInfo, PrOptions
from migrator.reporting.readiness import FORMULA_LINES, ProjectReport, Verification


def _follow_ups(project: ProjectReport, prefix: str) -> list[tuple[Finding, str]]:
    out = []
    for item in project.items:
        if item.fix_class == "safe":
            continue
        path = f"{prefix}{item.finding.path}" if prefix else item.finding.path
        out.append((item.finding, path))
    return out


def render_body(
    *,
    options: PrOptions,
    project_name: str,
    scan_prefix: str,
    base: str,
    commits: Sequence[CommitInfo],
    before: ProjectReport,
    after: ProjectReport,
    verification: Verification | None,
    verification_note: str,
    links: str,
    withheld: Sequence[Finding] = (),
) -> tuple[str, str]:
    """The pull request's title and Markdown body (``withheld``: the findings whose fix ``fix``
    withholds, each message saying why)."""
    from migrator.reporting.markdown import environment

    total = sum(commit.fixes for commit in commits if not commit.manual)
    from migrator.output.escape import safe_line

    title = (
        f"ROCm fixes for {safe_line(project_name)}: {total} automatic fix{'es' if total != 1 else ''} "
        f"(readiness {before.score} → {after.score})"
    )
    groups = [
        (group, [(finding, f"{scan_prefix}{finding.path}") for finding in group.findings])
        for group in after.manual
    ]
    unsafe_left = [
        (finding, path)
        for finding, path in _follow_ups(after, scan_prefix)
        if finding.fix is not None and finding.fix.applicability is Applicability.UNSAFE
    ]
    body = (
        environment()
        .get_template("pr_body.md.j2")
        .render(
            options=options,
            project_name=project_name,
            scan_prefix=scan_prefix,
            base=base,
            commits=commits,
            total=total,
            before=before,
            after=after,
            groups=groups,
            unsafe_left=unsafe_left,
            withheld=[
                (finding, f"{scan_prefix}{finding.path}", withheld_reason(finding.message) or "")
                for finding in withheld
            ],
            effort=effort_phrase(after),
            verification=verification,
            verification_note=verification_note,
            links=links,
            version=migrator.__version__,
            reproduce=_reproduce(options, scan_prefix, base),
            score_line=next(line for line in FORMULA_LINES if line.startswith("score =")),
        )
    )
    while "\n\n\n" in body:
        body = body.replace("\n\n\n", "\n\n")
    from migrator.reporting.markdown import fit

    return title, fit(body.strip() + "\n")


def effort_phrase(project: ProjectReport) -> str:
    """The hours left for a person, as the summary says them: never "0 h" beside real work
    (items the project's own AMD path covers, or hygiene, carry no hours)."""
    hours = project.effort.total_hours
    if hours >= 0.05:
        return f"about {hours:.1f} h"
    if project.reachable_work:
        return "no hours estimated: each is covered by the project's own AMD path or is hygiene"
    return "nothing to estimate"


def _reproduce(options: PrOptions, scan_prefix: str, base: str) -> str:
    words = ["migrate", "pr", scan_prefix.rstrip("/") or ".", "--base", base]
    words += options.choice.words()
    if options.branch != DEFAULT_BRANCH:
        words += ["--branch", options.branch]
    if options.unsafe_fixes:
        words.append("--unsafe-fixes")
    if options.verify:
        words.append("--verify")
    return shlex.join(words)
