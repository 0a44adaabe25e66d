"""One finding per problem: merge the findings a rule declares to be one problem (its
``aggregate`` scope and ``problem`` key) into one, anchored where the user acts, the other
sites kept as ``related`` locations."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from migrator.model import Finding, Related, withheld_reason

#: File kinds where a project declares its dependencies (and ``setup.py``, a Python file): a
#: project-level problem is anchored at its declaration when the project has one (the user acts
#: there), else at its first use.
_DECLARATION_KINDS = frozenset({"requirements", "pyproject", "setupcfg", "conda"})
#: The group of a build-model gate report (``migrator.kernels.buildmodel.GATE``: GPU code built
#: only where the CUDA toolkit is found): the test decides what a ROCm build makes, so it
#: anchors its file's problem ahead of the builds and flags it keeps from ROCm.
_GATE_GROUP = "gate"


def problem_key(finding: Finding) -> tuple[object, ...] | None:
    """What makes findings one problem; None when the finding is a problem of its own."""
    guarded = bool(finding.guard)
    if finding.aggregate == "project":
        if finding.problem:  # a declared cross-rule problem is the whole identity
            return ("problem", finding.problem, guarded)
        return ("project", finding.rule, finding.group, guarded)
    if finding.aggregate == "file":
        if finding.problem:  # a cross-rule problem of one file (a report's own key)
            return ("file-problem", finding.problem, finding.path, finding.cell, guarded)
        return ("file", finding.rule, finding.path, finding.cell, finding.group, guarded)
    if finding.aggregate == "scope":
        return (
            "scope",
            finding.rule,
            finding.path,
            finding.cell,
            finding.scope,
            finding.group,
            guarded,
        )
    return None


def _anchor_rank(finding: Finding) -> tuple[int, tuple[str, int, int, int, str]]:
    from migrator.files.discovery import file_kind

    name = finding.path.rsplit("/", 1)[-1]
    declared = file_kind(finding.path) in _DECLARATION_KINDS or name == "setup.py"
    return (0 if declared else 1, finding.sort_key())


def _is_import(line: str) -> bool:
    """Whether a finding's source line is an import statement."""
    return line.startswith("import ") or (line.startswith("from ") and " import " in line)


def related_site(finding: Finding) -> Related:
    return Related(
        finding.path,
        finding.line,
        finding.column,
        finding.end_line,
        finding.end_column,
        finding.cell,
    )


def more_sites(count: int) -> str:
    return f" (+{count} more site{'s' if count != 1 else ''})"


def _withheld_elsewhere(anchor: Finding, members: Iterable[Finding]) -> str:
    """Why the merged sites have no fix, where the anchor's message does not say it: a site
    whose fix the engine withheld (``fix_policy``) keeps its reason in the finding it joined
    (``; no automatic fix at line 3: needs torch>=2.5; ...``; ``at PATH:LINE`` for a site in
    another file)."""
    sites: dict[str, list[Finding]] = {}
    for member in members:
        withheld = withheld_reason(member.message)
        if withheld is None:
            continue
        reason = withheld.split(" (+", 1)[0]
        if reason not in anchor.message:
            sites.setdefault(reason, []).append(member)
    parts = []
    for reason, found in sites.items():
        if all(member.path == anchor.path for member in found):
            numbers = sorted({member.line for member in found})
            where = f"line{'s' if len(numbers) > 1 else ''} {', '.join(map(str, numbers))}"
        else:
            where = ", ".join(sorted({f"{member.path}:{member.line}" for member in found}))
        parts.append(f"; no automatic fix at {where}: {reason}")
    return "".join(parts)


#: The ending of the problem key of an unguarded import of a dependency (``flash-attn``,
#: ``xformers``, ``apex``): see ``join_import_sites``.
UNGUARDED_IMPORT = "-unguarded-import"


def join_import_sites(findings: Iterable[Finding]) -> list[Finding]:
    """A file's unguarded import of a dependency that ROCm lacks and the file's uses of it are
    one problem: the import fails first, so each use is a site of the import, not a problem of
    its own. The import is a finding whose problem key ends in ``UNGUARDED_IMPORT`` on an
    import line; the findings of its category in the same file (and guard state) that offer
    no fix take its key, so ``aggregate`` merges them into it, anchored at the import (a use
    with a fix stays its own finding: the user acts there)."""
    findings = list(findings)
    keys: dict[tuple[str, int | None, str, bool], str] = {}
    for finding in findings:
        if finding.problem.endswith(UNGUARDED_IMPORT) and _is_import(finding.source_line):
            keys.setdefault(
                (finding.path, finding.cell, finding.category, bool(finding.guard)),
                finding.problem,
            )
    if not keys:
        return findings
    out: list[Finding] = []
    for finding in findings:
        key = keys.get((finding.path, finding.cell, finding.category, bool(finding.guard)))
        if (
            key is not None
            and finding.fix is None
            and finding.problem in ("", key)
            and (finding.problem != key or finding.aggregate != "file")
        ):
            finding = replace(finding, aggregate="file", problem=key)
        out.append(finding)
    return out


def aggregate(findings: Iterable[Finding]) -> list[Finding]:
    """Findings with every problem reported once, sorted; the merged finding takes the anchor's
    rule and message (with "+N more sites"), the highest severity of the group, and the other
    sites as ``related`` (a file's uses of an unguarded import join it: ``join_import_sites``)."""
    singles: list[Finding] = []
    groups: dict[tuple[object, ...], list[Finding]] = {}
    for finding in join_import_sites(findings):
        key = problem_key(finding)
        if key is None:
            singles.append(finding)
        else:
            groups.setdefault(key, []).append(finding)
    out = singles
    for key, members in groups.items():
        if len(members) == 1 and not members[0].related:
            out.append(members[0])
            continue
        if key[0] == "file-problem":
            # one problem of one file across rules: anchored at an import statement when one
            # is a site (the user acts there), else at a build's gate (the test that keeps the
            # GPU code from ROCm), else at the category's most general rule (its lowest code:
            # the extension build), the details related
            members.sort(
                key=lambda finding: (
                    not _is_import(finding.source_line),
                    finding.group != _GATE_GROUP,
                    finding.rule,
                    finding.sort_key(),
                )
            )
        else:
            members.sort(key=_anchor_rank)
        anchor = members[0]
        others: list[Related] = list(anchor.related)
        seen = {related_site(anchor)}
        for member in members[1:]:
            own = related_site(member)
            if member.rule != anchor.rule:  # another rule's site of this problem says which
                own = replace(own, rule=member.rule)
            for site in (own, *member.related):
                where = replace(site, rule="")  # one place is one site, whichever rule found it
                if where not in seen:
                    seen.add(where)
                    others.append(site)
        here = related_site(anchor)
        others = [site for site in others if replace(site, rule="") != here]
        base = anchor.message.split(" (+", 1)[0] if anchor.related else anchor.message
        out.append(
            replace(
                anchor,
                severity=max(member.severity for member in members),
                message=base
                + (more_sites(len(others)) if others else "")
                + _withheld_elsewhere(anchor, members[1:]),
                related=tuple(others),
            )
        )
    out.sort(key=Finding.sort_key)
    return out
