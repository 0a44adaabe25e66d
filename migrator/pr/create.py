"""``migrate pr``'s transaction: branch, fix family by family, commit, write the body (and
push); on any failure the repository is put back exactly as it was.

All-or-nothing: if anything fails before the branch is complete (and pushed, with ``--push``),
the original branch is checked out again, a branch created by this run is deleted, a branch
that existed is reset to where it was, and the working tree is left clean. On success the user
is put back on the branch they started from as well.
"""

from __future__ import annotations

import json
import shlex
import sys
import tarfile
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from migrator.errors import MigrateError
from migrator.model import Applicability
from migrator.pr.body import render_body
from migrator.pr.commits import (
    FixPlan,
    apply_family,
    branch_commits,
    commit_variants,
    plan_fixes,
)
from migrator.pr.git import (
    Git,
    NothingToApply,
    PrError,
    check_branch_name,
    check_clean,
    check_full_checkout,
    dirty_paths,
    link_base,
    named_paths,
    remote_url,
    repository,
)
from migrator.pr.options import BODY_NAME, CommitInfo, PrOptions, PrResult
from migrator.reporting.readiness import ProjectReport, Verification


@dataclass(slots=True)
class _Start:
    """Where the repository was before this run, to restore it."""

    original_branch: str | None
    original_sha: str
    branch_sha: str | None = None
    created: bool = False
    switched: bool = False


def _scan_report(root: Path, name: str, use_cache: bool = True) -> ProjectReport:
    from migrator.reporting.cli import make_report

    report = make_report([str(root)], use_cache=use_cache)
    project = report.projects[0]
    project.name = name
    return project


def _report_at(git: Git, commit: str, head: str, scan_path: Path, name: str) -> ProjectReport:
    """Readiness of ``scan_path`` as it is at ``commit`` (exported when it is not checked out)."""
    if commit == head:
        return _scan_report(scan_path, name)
    relative = scan_path.relative_to(git.cwd)
    with tempfile.TemporaryDirectory(prefix="migrate-pr-") as temporary:
        archive = Path(temporary) / "tree.tar"
        git.run("archive", "--format=tar", "-o", str(archive), commit)
        with tarfile.open(archive) as tar:
            try:
                tar.extractall(Path(temporary) / "tree", filter="data")
            except TypeError:  # Python < 3.10.12 has no extraction filters; git made this archive
                tar.extractall(Path(temporary) / "tree")  # noqa: S202
        return _scan_report(Path(temporary) / "tree" / relative, name, use_cache=False)


def _rollback(git: Git, start: _Start, branch: str) -> str:
    """Put the repository back as it was, judged from its actual state (a failing hook can make
    git report an error after it switched branches); every step is attempted, hooks off.
    Returns what could not be restored, with the commands that restore it ("" when all was)."""
    _restore(git, start, branch)
    left: list[str] = []
    commands: list[str] = []
    current = git.run("symbolic-ref", "-q", "--short", "HEAD", check=False) or None
    head = git.run("rev-parse", "HEAD", check=False)
    changed = dirty_paths(git, untracked=False)
    if changed:
        left.append(f"{len(changed)} changed path(s) ({named_paths(changed)})")
        commands.append("git reset --hard")
    created = dirty_paths(git, untracked=True)
    if created:  # made during the run (the tree was clean); never deleted without asking
        left.append(f"{len(created)} new untracked path(s) ({named_paths(created)})")
        commands.append("git clean -f -d -- " + " ".join(shlex.quote(path) for path in created))
    if current != start.original_branch or head != start.original_sha:
        where = f"branch {current}" if current else f"detached HEAD {head[:12]}"
        left.append(f"the work tree on {where}")
        commands.append(f"git checkout -f {start.original_branch or start.original_sha}")
    tip = git.run("rev-parse", "-q", "--verify", f"refs/heads/{branch}", check=False) or None
    if tip != start.branch_sha:
        if start.branch_sha is None:
            left.append(f"branch {branch} created")
            commands.append(f"git branch -D {branch}")
        else:
            left.append(f"branch {branch} moved from {start.branch_sha[:12]}")
            commands.append(f"git update-ref refs/heads/{branch} {start.branch_sha}")
    if not left:
        return ""
    return (
        "the repository could not be restored: "
        + "; ".join(left)
        + ". To restore it: "
        + " && ".join(commands)
    )


def _restore(git: Git, start: _Start, branch: str) -> None:
    """Every step of putting the repository back, attempted whatever fails before it."""
    quiet = ("-c", "core.hooksPath=/dev/null")
    git.run(*quiet, "reset", "-q", "--hard", check=False)
    current = git.run("symbolic-ref", "-q", "--short", "HEAD", check=False) or None
    head = git.run("rev-parse", "HEAD", check=False)
    if current != start.original_branch or (current is None and head != start.original_sha):
        target = start.original_branch or start.original_sha
        git.run(*quiet, "checkout", "-q", "-f", target, check=False)
    git.run(*quiet, "submodule", "update", "-q", "--recursive", "--force", check=False)
    tip = git.run("rev-parse", "-q", "--verify", f"refs/heads/{branch}", check=False) or None
    if start.branch_sha is None and tip is not None:
        git.run("branch", "-q", "-D", branch, check=False)
    elif start.branch_sha is not None and tip != start.branch_sha:
        git.run("update-ref", f"refs/heads/{branch}", start.branch_sha, check=False)


def submodule_paths(git: Git) -> list[str]:
    """Paths of the submodules (gitlinks) in the index: ``pr`` never edits inside them."""
    listing = git.run("ls-files", "--stage", "-z", check=False)
    return [
        line.split("\t", 1)[1]
        for line in listing.split("\0")
        if line.startswith("160000 ") and "\t" in line
    ]


def _run_verify(
    options: PrOptions, scan_path: Path, step: Callable[[str], None]
) -> tuple[Verification | None, str, dict[str, object] | None]:
    """Run ``migrate verify`` on the clean original tree; (view, note, raw receipt)."""
    try:
        from migrator.files.config import load_config
        from migrator.verify.core import verify
        from migrator.verify.options import resolve_options
    except ImportError:
        return None, "unavailable: this build of migrate has no verify engine", None
    from migrator.reporting.readiness import verification_from_dict

    try:
        table = dict(load_config(scan_path).verify)
        verify_options = resolve_options(
            scan_path, table, {"smoke": options.smoke, "unsafe_fixes": options.unsafe_fixes}
        )
    except MigrateError as error:
        return None, f"unavailable: {error}", None
    receipt = verify(verify_options, on_step=step).as_dict()
    return verification_from_dict(receipt, "receipt"), "", receipt


def _write_body(git: Git, title: str, body: str, receipt: dict[str, object] | None) -> Path:
    """The title, body and receipt under ``.git/migrate/``, written under the write policy
    (atomic, never through a link)."""
    from migrator.files.writer import WriteRefused, write_output

    directory = Path(git.run("rev-parse", "--absolute-git-dir")) / "migrate"
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / BODY_NAME
    try:
        write_output(directory / "PR_TITLE.txt", title + "\n")
        write_output(path, body)
        if receipt is not None:
            write_output(directory / "verify-receipt.json", json.dumps(receipt, indent=2) + "\n")
    except WriteRefused as error:
        raise PrError(str(error)) from None
    return path


def create_pr(options: PrOptions, on_step: Callable[[str], None] | None = None) -> PrResult:
    """Branch, fix per family, commit, write the body (and push); roll back on any failure.
    ``on_step`` hears each stage (progress display)."""
    step = on_step or (lambda message: None)
    git, top = repository(options.path)
    check_branch_name(git, options.branch)
    check_clean(git)
    check_full_checkout(git)
    if not git.ok("rev-parse", "-q", "--verify", "HEAD^{commit}"):
        raise PrError("the repository has no commits yet")
    scan_path = options.path.resolve()
    if not scan_path.is_dir():
        raise PrError(f"{options.path} is not a directory")
    original_branch = git.run("symbolic-ref", "-q", "--short", "HEAD", check=False) or None
    head = git.run("rev-parse", "HEAD")
    base = options.base or original_branch or head
    if not git.ok("rev-parse", "-q", "--verify", f"{base}^{{commit}}"):
        raise PrError(f"base {base!r} is not a branch or commit in this repository")
    base_sha = git.run("rev-parse", f"{base}^{{commit}}")
    if base == options.branch:
        raise PrError(f"the branch and the base are both {base!r}; pass --branch or --base")
    prefix = scan_path.relative_to(top).as_posix()
    scan_prefix = "" if prefix == "." else prefix + "/"
    from migrator.pr.naming import project_name

    name = project_name(scan_path, scan_path.name or top.name)

    verification, note, receipt = (None, "not run (pass --verify)", None)
    if options.verify:
        verification, note, receipt = _run_verify(options, scan_path, step)

    step(f"scanning {name} at the base")
    before = _report_at(git, base_sha, head, scan_path, name)
    start = _Start(original_branch, head)
    excluded = [
        Path(path).relative_to(prefix).as_posix() if prefix != "." else path
        for path in submodule_paths(git)
        if prefix == "." or Path(path).is_relative_to(prefix)
    ]
    level = Applicability.UNSAFE if options.unsafe_fixes else Applicability.SAFE
    existing = git.run("rev-parse", "-q", "--verify", f"refs/heads/{options.branch}", check=False)
    plan: FixPlan | None = None
    if not existing and base_sha == head:  # the branch starts from this very tree
        plan = plan_fixes(scan_path, level, options.choice, excluded)
    if plan is not None and not plan.families and not plan.variants:
        kind = "safe or unsafe" if options.unsafe_fixes else "safe"
        raise NothingToApply(
            f"nothing to apply: no {kind} fix applies to {name}; no branch was created"
            + ("" if options.unsafe_fixes else " (--unsafe-fixes applies reviewed fixes too)")
        )
    try:
        if existing:
            start.branch_sha = existing
            start.switched = True
            git.run("checkout", "-q", options.branch)
        else:
            start.created = start.switched = True
            git.run("checkout", "-q", "-b", options.branch, base_sha)
        hooked = dirty_paths(git)
        if hooked:
            raise PrError(
                f"the repository's post-checkout hook changed {named_paths(hooked)}; `pr` needs "
                "a checkout that its hooks leave as git made it"
            )
        commits: list[CommitInfo] = []
        if plan is None:  # the branch's tree: what `fix` would do there
            plan = plan_fixes(scan_path, level, options.choice, excluded)
        for category in plan.families:
            step(f"fixing and committing {category}")
            commit = apply_family(
                git, scan_path, category, level, exclude=excluded, choice=options.choice
            )
            if commit is not None:
                commits.append(commit)
        if plan.variants:
            step("writing and committing the ROCm variants")
            commit = commit_variants(git, scan_path, plan.variants)
            if commit is not None:
                commits.append(commit)
        leftover = dirty_paths(git)
        if leftover:
            raise PrError(
                f"fixes left uncommitted changes behind ({named_paths(leftover)}): a fix wrote "
                "outside the files it reported"
            )
        step(f"scanning {name} after the fixes")
        after = _scan_report(scan_path, name)
        tip = git.run("rev-parse", "HEAD")
        links = link_base(remote_url(git, options.push), tip)
        title, body = render_body(
            options=options,
            project_name=name,
            scan_prefix=scan_prefix,
            base=base,
            commits=branch_commits(git, base_sha, tip),
            before=before,
            after=after,
            verification=verification,
            verification_note=note,
            links=links,
            withheld=plan.withheld,
        )
        body_path = _write_body(git, title, body, receipt)
        pushed = False
        if options.push:
            git.run(
                "push",
                "-q",
                options.push,
                f"refs/heads/{options.branch}:refs/heads/{options.branch}",
            )
            pushed = True
        if start.switched:
            git.run("checkout", "-q", original_branch or head)
            start.switched = False
    except Exception as error:
        left = _rollback(git, start, options.branch)
        if left:
            raise PrError(f"{error}; {left}") from error
        raise
    except BaseException:  # an interrupt: restore, say what could not be, then stop as asked
        left = _rollback(git, start, options.branch)
        if left:
            sys.stderr.write(f"migrate: {left}\n")
        raise
    return PrResult(
        branch=options.branch,
        base=base,
        created=start.created,
        commits=commits,
        before=before,
        after=after,
        title=title,
        body=body,
        body_path=body_path,
        verification=verification,
        verification_note=note,
        pushed=pushed,
    )
