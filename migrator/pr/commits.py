"""Commit grouping for ``migrate pr``: one commit per rule family, with a message that can be
read back to list what each commit fixed."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import migrator
from migrator.errors import MigrateError
from migrator.model import Applicability, Finding
from migrator.pr.git import Git, PrError, dirty_paths, named_paths
from migrator.pr.options import CommitInfo, FixChoice

if TYPE_CHECKING:
    from migrator.engine.variants import Variant


def fix_order() -> list[str]:
    """Rule families (categories) in catalog order: by their lowest rule code."""
    from migrator.engine.registry import all_rules

    first: dict[str, str] = {}
    for rule in all_rules():
        first.setdefault(rule.category, rule.code)
    return sorted(first, key=lambda category: first[category])


@dataclass(slots=True)
class FixPlan:
    """What ``fix`` with ``pr``'s options would do: the families it rewrites, in catalog order,
    and the findings whose fix it withholds (each message says why)."""

    families: list[str]
    withheld: list[Finding] = field(default_factory=list)
    #: the ROCm siblings ``fix --unsafe-fixes`` writes beside NVIDIA files (``Dockerfile.rocm``)
    variants: list[Variant] = field(default_factory=list)


def plan_fixes(
    scan_path: Path,
    level: Applicability,
    choice: FixChoice | None = None,
    exclude: Sequence[str] = (),
) -> FixPlan:
    """``fix --diff`` with the same options, read for its families and withheld fixes: ``pr``
    commits what ``fix`` applies, neither more (a hygiene rule shown only when named) nor less."""
    from migrator.engine.runner import fix_tree
    from migrator.model import withheld_reason

    choice = choice or FixChoice()
    run = fix_tree(scan_path, level=level, write=False, **choice.arguments(tuple(exclude)))
    wanted = {
        finding.category for outcome in run.outcomes if outcome.written for finding in outcome.fixed
    }
    withheld = [f for f in run.scan.findings if withheld_reason(f.message) is not None]
    variants = [v for v in run.variants if v.text is not None]
    families = [category for category in fix_order() if category in wanted]
    return FixPlan(families, withheld, variants)


def commit_message(category: str, rules: Counter[str], files: Counter[str], level: str) -> str:
    """The message of one family's commit: subject, rules with counts, files, how to reproduce."""
    from migrator.engine.registry import rule_by_code

    total = sum(rules.values())
    lines = [
        f"migrate: {category} fixes for ROCm ({total} change{'s' if total != 1 else ''})",
        "",
        f"Automatic {level} fixes of the `{category}` rule family, one commit per family so each",
        "can be reviewed and reverted on its own.",
        "",
        "Rules:",
    ]
    for code, count in sorted(rules.items()):
        try:
            rule = rule_by_code(code)
            label = f"{code} {rule.name}: {rule.fix.title or rule.message}"
        except MigrateError:
            label = code
        lines.append(f"- {label} ({count}x)")
    lines += ["", "Files:"]
    lines += [f"- {path} ({count})" for path, count in sorted(files.items())]
    flag = " --unsafe-fixes" if level == "unsafe" else ""
    lines += [
        "",
        f"Reproduce: migrate fix{flag} --select {','.join(sorted(rules))} .",
        f"Generated-by: migrate {migrator.__version__}",
    ]
    return "\n".join(lines) + "\n"


def apply_family(
    git: Git,
    scan_path: Path,
    category: str,
    level: Applicability,
    exclude: Sequence[str] = (),
    choice: FixChoice | None = None,
) -> CommitInfo | None:
    """Fix one family under ``scan_path`` (never inside ``exclude``, the submodules) with the
    selection ``fix`` would have (``choice``), and commit it; None when nothing changed."""
    from migrator.engine.runner import fix_tree

    choice = choice or FixChoice()
    run = fix_tree(
        scan_path,
        level=level,
        family=category,
        write=True,
        with_variants=False,  # written together by ``commit_variants``, as ``fix`` plans them
        **choice.arguments(tuple(exclude)),
    )
    rules: Counter[str] = Counter()
    per_file: Counter[str] = Counter()
    changed: list[str] = []
    prefix = scan_path.relative_to(git.cwd)
    for outcome in run.outcomes:
        if not outcome.written:
            continue
        path = (prefix / outcome.relative).as_posix()
        changed.append(path)
        rules.update(finding.rule for finding in outcome.fixed)
        per_file[path] += len(outcome.fixed)
    if not changed:
        return None
    git.run("add", "--", *changed)
    if git.ok("diff", "--cached", "--quiet"):
        return None
    message = commit_message(category, rules, per_file, level.value)
    git.run("commit", "-q", "--no-verify", "-F", "-", stdin=message)
    hooked = dirty_paths(git)
    if hooked:
        raise PrError(
            f"the repository's post-commit hook changed {named_paths(hooked)} after the "
            f"{category} commit; `pr` commits only what its fixes wrote"
        )
    return CommitInfo(git.run("rev-parse", "HEAD"), category, rules, sorted(per_file))


def commit_variants(git: Git, scan_path: Path, variants: Sequence[Variant]) -> CommitInfo | None:
    """Write the ROCm siblings ``fix --unsafe-fixes`` planned (``Dockerfile.rocm`` beside
    ``Dockerfile``, each original unchanged) and commit them as one commit; None when none."""
    from migrator.engine.variants import write_variants

    write_variants(scan_path, variants)
    prefix = scan_path.relative_to(git.cwd)
    written = [v for v in variants if v.text is not None and v.error is None]
    if not written:
        return None
    paths = [(prefix / v.relative).as_posix() for v in written]
    git.run("add", "--", *paths)
    if git.ok("diff", "--cached", "--quiet"):
        return None
    lines = [
        f"migrate: variants fixes for ROCm ({len(written)} new file{'s' if len(written) != 1 else ''})",
        "",
        "ROCm siblings of NVIDIA container and requirements files; each original stays",
        "byte-identical, so NVIDIA builds do not change.",
        "",
        "Files:",
        *(f"- {path} (1)" for path in paths),
        "",
        "Reproduce: migrate fix --unsafe-fixes .",
        f"Generated-by: migrate {migrator.__version__}",
    ]
    git.run("commit", "-q", "--no-verify", "-F", "-", stdin="\n".join(lines) + "\n")
    return CommitInfo(git.run("rev-parse", "HEAD"), "variants", Counter(), sorted(paths))


_RULE_LINE = re.compile(r"^- (ROC\d{3})\b.*\((\d+)x\)$")
_FILE_LINE = re.compile(r"^- (.+) \((\d+)\)$")
_SUBJECT = re.compile(r"^migrate: (\S+) fixes for ROCm")


def branch_commits(git: Git, base: str, tip: str) -> list[CommitInfo]:
    """Every commit on the branch since ``base``, read back from the messages this tool writes
    (commits made by hand show up with their subject as the category)."""
    log = git.run("log", "--reverse", "--format=%H%x1f%B%x1e", f"{base}..{tip}")
    commits = []
    for record in log.split("\x1e"):
        if not record.strip():
            continue
        sha, _, message = record.strip().partition("\x1f")
        lines = message.splitlines()
        subject = _SUBJECT.match(lines[0]) if lines else None
        rules: Counter[str] = Counter()
        files: list[str] = []
        section = ""
        for line in lines[1:]:
            if line in ("Rules:", "Files:"):
                section = line
                continue
            rule = _RULE_LINE.match(line) if section == "Rules:" else None
            if rule:
                rules[rule.group(1)] += int(rule.group(2))
            found = _FILE_LINE.match(line) if section == "Files:" else None
            if found:
                files.append(found.group(1))
        category = subject.group(1) if subject else (lines[0] if lines else sha[:10])
        commits.append(CommitInfo(sha, category, rules, files, manual=subject is None))
    return commits
