"""``migrate pr``: apply the fixes on a branch, one commit per rule family, and write the pull
request's title and body (optionally push and open it with ``gh`` or ``glab``).

All-or-nothing: if anything fails before the branch is complete (and pushed, with ``--push``),
the original branch is checked out again, a branch created by this run is deleted, a branch
that existed is reset to where it was, and the working tree is left clean. On success the user
is put back on the branch they started from as well.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import click

import migrator
from migrator.errors import MigrateError
from migrator.model import Applicability, Finding
from migrator.reporting.readiness import ProjectReport, Verification

DEFAULT_BRANCH = "migrate/rocm"
BODY_NAME = "PR_BODY.md"


class PrError(MigrateError):
    """A reason ``migrate pr`` cannot start or finish; printed on one line, exit 2."""


class Git:
    """Runs ``git`` in one repository; failures become :class:`PrError` with git's last line."""

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd

    def run(self, *args: str, check: bool = True, stdin: str | None = None) -> str:
        """Stdout of ``git ARGS`` (stripped of its final newline)."""
        completed = subprocess.run(
            ["git", *args],
            cwd=self.cwd,
            input=stdin,
            capture_output=True,
            text=True,
            check=False,
        )
        if check and completed.returncode != 0:
            detail = (completed.stderr.strip() or completed.stdout.strip()).splitlines()
            last = detail[-1] if detail else f"exit {completed.returncode}"
            raise PrError(f"git {args[0]} failed: {last}")
        return completed.stdout.rstrip("\n")

    def ok(self, *args: str) -> bool:
        """Whether ``git ARGS`` exits 0."""
        return (
            subprocess.run(
                ["git", *args], cwd=self.cwd, capture_output=True, check=False
            ).returncode
            == 0
        )


@dataclass(frozen=True, slots=True)
class PrOptions:
    """What the command line asked for."""

    path: Path
    branch: str = DEFAULT_BRANCH
    base: str | None = None
    unsafe_fixes: bool = False
    verify: bool = False
    smoke: str | None = None
    push: str | None = None
    open_pr: bool = False


@dataclass(slots=True)
class CommitInfo:
    """One commit this run made: the rule family, its rules and counts, the files it touched."""

    sha: str
    category: str
    rules: Counter[str]
    files: list[str]
    manual: bool = False

    @property
    def fixes(self) -> int:
        return sum(self.rules.values())


@dataclass(slots=True)
class PrResult:
    """What ``migrate pr`` did."""

    branch: str
    base: str
    created: bool
    commits: list[CommitInfo]
    before: ProjectReport
    after: ProjectReport
    title: str
    body: str
    body_path: Path
    verification: Verification | None = None
    verification_note: str = ""
    pushed: bool = False
    messages: list[str] = field(default_factory=list)


@dataclass(slots=True)
class _Start:
    """Where the repository was before this run, to restore it."""

    original_branch: str | None
    original_sha: str
    branch_sha: str | None = None
    created: bool = False
    switched: bool = False


def _repository(path: Path) -> tuple[Git, Path]:
    if not path.exists():
        raise PrError(f"path does not exist: {path}")
    directory = path if path.is_dir() else path.parent
    probe = Git(directory)
    if not probe.ok("rev-parse", "--is-inside-work-tree"):
        raise PrError(f"not inside a git repository: {path}")
    top = Path(probe.run("rev-parse", "--show-toplevel")).resolve()
    return Git(top), top


def _check_clean(git: Git) -> None:
    status = git.run("status", "--porcelain", "--untracked-files=normal")
    if status:
        count = len(status.splitlines())
        raise PrError(
            f"working tree has uncommitted changes ({count} path{'s' if count != 1 else ''}); "
            "commit or stash them first"
        )
    for marker in ("MERGE_HEAD", "REBASE_HEAD", "CHERRY_PICK_HEAD"):
        if git.ok("rev-parse", "-q", "--verify", marker):
            raise PrError(
                f"a merge, rebase or cherry-pick is in progress ({marker}); finish it first"
            )


def _check_branch_name(git: Git, branch: str) -> None:
    if not git.ok("check-ref-format", "--branch", branch):
        raise PrError(f"invalid branch name: {branch!r}")


def fix_order() -> list[str]:
    """Rule families (categories) in catalog order: by their lowest rule code."""
    from migrator.registry import all_rules

    first: dict[str, str] = {}
    for rule in all_rules():
        first.setdefault(rule.category, rule.code)
    return sorted(first, key=lambda category: first[category])


def _fixable_families(scan_path: Path, level: Applicability) -> list[str]:
    """Families with at least one finding that ``fix`` at ``level`` rewrites, in catalog order."""
    from migrator.runner import scan

    allowed = {Applicability.SAFE} | (
        {Applicability.UNSAFE} if level is Applicability.UNSAFE else set()
    )
    wanted = {
        finding.category
        for finding in scan(scan_path).scan.findings
        if finding.fix is not None and finding.fix.applicability in allowed
    }
    return [category for category in fix_order() if category in wanted]


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


def _commit_message(category: str, rules: Counter[str], files: Counter[str], level: str) -> str:
    from migrator.registry import rule_by_code

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
            label = f"{code} {rule.name}: {rule.fix_title or rule.message}"
        except MigrateError:
            label = code
        lines.append(f"- {label} ({count}x)")
    lines += ["", "Files:"]
    lines += [f"- {path} ({count})" for path, count in sorted(files.items())]
    flag = " --unsafe-fixes" if level == "unsafe" else ""
    lines += [
        "",
        f"Reproduce: migrate fix{flag} --select {category} .",
        f"Generated-by: migrate {migrator.__version__}",
    ]
    return "\n".join(lines) + "\n"


def _apply_family(
    git: Git, scan_path: Path, category: str, level: Applicability
) -> CommitInfo | None:
    from migrator.runner import fix_tree

    run = fix_tree(scan_path, level=level, select=[category], write=True)
    rules: Counter[str] = Counter()
    per_file: Counter[str] = Counter()
    changed: list[str] = []
    prefix = scan_path.relative_to(git.cwd)
    for outcome in run.outcomes:
        if outcome.new_text is None or outcome.error is not None:
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
    message = _commit_message(category, rules, per_file, level.value)
    git.run("commit", "-q", "--no-verify", "-F", "-", stdin=message)
    return CommitInfo(git.run("rev-parse", "HEAD"), category, rules, sorted(per_file))


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


def _rollback(git: Git, start: _Start, branch: str) -> None:
    """Put the repository back as it was; every step is attempted even if one fails."""
    git.run("reset", "-q", "--hard", check=False)
    if start.switched:
        target = start.original_branch or start.original_sha
        git.run("checkout", "-q", "-f", target, check=False)
    if start.created:
        git.run("branch", "-D", branch, check=False)
    elif start.branch_sha is not None:
        git.run("update-ref", f"refs/heads/{branch}", start.branch_sha, check=False)


def _run_verify(
    options: PrOptions, scan_path: Path
) -> tuple[Verification | None, str, dict[str, object] | None]:
    """Run ``migrate verify`` on the clean original tree; (view, note, raw receipt)."""
    try:
        from migrator.config import load_config
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
    receipt = verify(verify_options).as_dict()
    return verification_from_dict(receipt, "receipt"), "", receipt


def _remote_url(git: Git, remote: str | None) -> str:
    name = remote or "origin"
    return git.run("remote", "get-url", name, check=False)


_WEB_REMOTE = re.compile(
    r"^(?:https?://|ssh://)?(?:[^@/]+@)?(github\.com|gitlab\.com)[:/](.+?)(?:\.git)?/?$"
)


def link_base(url: str, commit: str) -> str:
    """``https://github.com/o/r/blob/<commit>/`` for GitHub/GitLab remotes, else ``""``."""
    match = _WEB_REMOTE.match(url.strip())
    if not match:
        return ""
    host, project = match.groups()
    separator = "/-/blob/" if host == "gitlab.com" else "/blob/"
    return f"https://{host}/{project}{separator}{commit}/"


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
) -> tuple[str, str]:
    """The pull request's title and Markdown body."""
    from migrator.reporting.markdown import environment

    total = sum(commit.fixes for commit in commits if not commit.manual)
    title = (
        f"Migrate {project_name} to ROCm: {total} automatic fix{'es' if total != 1 else ''} "
        f"(readiness {before.score} → {after.score})"
    )
    groups = [
        (group, [(finding, f"{scan_prefix}{finding.path}") for finding in group.findings])
        for group in after.blockers
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
            verification=verification,
            verification_note=verification_note,
            links=links,
            version=migrator.__version__,
            reproduce=_reproduce(options, scan_prefix, base),
        )
    )
    while "\n\n\n" in body:
        body = body.replace("\n\n\n", "\n\n")
    return title, body.strip() + "\n"


def _reproduce(options: PrOptions, scan_prefix: str, base: str) -> str:
    words = ["migrate", "pr", scan_prefix.rstrip("/") or ".", "--base", base]
    if options.branch != DEFAULT_BRANCH:
        words += ["--branch", options.branch]
    if options.unsafe_fixes:
        words.append("--unsafe-fixes")
    if options.verify:
        words.append("--verify")
    return shlex.join(words)


def create_pr(options: PrOptions) -> PrResult:
    """Branch, fix per family, commit, write the body (and push); roll back on any failure."""
    git, top = _repository(options.path)
    _check_branch_name(git, options.branch)
    _check_clean(git)
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
    name = scan_path.name or top.name

    verification, note, receipt = (None, "not run (pass --verify)", None)
    if options.verify:
        verification, note, receipt = _run_verify(options, scan_path)

    before = _report_at(git, base_sha, head, scan_path, name)
    start = _Start(original_branch, head)
    level = Applicability.UNSAFE if options.unsafe_fixes else Applicability.SAFE
    try:
        existing = git.run(
            "rev-parse", "-q", "--verify", f"refs/heads/{options.branch}", check=False
        )
        if existing:
            start.branch_sha = existing
            git.run("checkout", "-q", options.branch)
        else:
            git.run("checkout", "-q", "-b", options.branch, base_sha)
            start.created = True
        start.switched = True
        commits = []
        for category in _fixable_families(scan_path, level):
            commit = _apply_family(git, scan_path, category, level)
            if commit is not None:
                commits.append(commit)
        if git.run("status", "--porcelain", "--untracked-files=normal"):
            raise PrError(
                "fixes left uncommitted changes behind (a fix wrote outside the scanned files)"
            )
        after = _scan_report(scan_path, name)
        tip = git.run("rev-parse", "HEAD")
        links = link_base(_remote_url(git, options.push), tip)
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
    except BaseException:
        _rollback(git, start, options.branch)
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


def _write_body(git: Git, title: str, body: str, receipt: dict[str, object] | None) -> Path:
    import json

    directory = Path(git.run("rev-parse", "--absolute-git-dir")) / "migrate"
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "PR_TITLE.txt").write_text(title + "\n", encoding="utf-8")
    path = directory / BODY_NAME
    path.write_text(body, encoding="utf-8")
    if receipt is not None:
        (directory / "verify-receipt.json").write_text(
            json.dumps(receipt, indent=2) + "\n", encoding="utf-8"
        )
    return path


def open_command(git: Git, result: PrResult, remote: str | None) -> list[str]:
    """The ``gh pr create`` (or ``glab mr create`` for GitLab remotes) command line."""
    url = _remote_url(git, remote)
    if "gitlab" in url:
        return [
            "glab",
            "mr",
            "create",
            "--title",
            result.title,
            "--description",
            result.body,
            "--source-branch",
            result.branch,
            "--target-branch",
            result.base,
            "--yes",
        ]
    return [
        "gh",
        "pr",
        "create",
        "--title",
        result.title,
        "--body-file",
        str(result.body_path),
        "--base",
        result.base,
        "--head",
        result.branch,
    ]


def open_pr(git: Git, result: PrResult, remote: str | None) -> tuple[bool, str]:
    """Run ``gh``/``glab`` when installed; (opened, message). Never raises for a tool failure."""
    command = open_command(git, result, remote)
    shown = (
        shlex.join(command)
        if command[0] == "gh"
        else shlex.join([*command[:5], f'"$(cat {result.body_path})"', *command[7:]])
    )
    if shutil.which(command[0]) is None:
        return False, f"{command[0]} is not installed; open the pull request with:\n  {shown}"
    completed = subprocess.run(command, cwd=git.cwd, capture_output=True, text=True, check=False)
    if completed.returncode == 0:
        return True, completed.stdout.strip() or f"opened with {command[0]}"
    error = (completed.stderr or completed.stdout).strip()
    if command[0] == "gh" and "already exists" in error:
        edit = [
            "gh",
            "pr",
            "edit",
            result.branch,
            "--title",
            result.title,
            "--body-file",
            str(result.body_path),
        ]
        edited = subprocess.run(edit, cwd=git.cwd, capture_output=True, text=True, check=False)
        if edited.returncode == 0:
            return True, edited.stdout.strip() or "updated the existing pull request"
        error = (edited.stderr or edited.stdout).strip()
    last = error.splitlines()[-1] if error else f"exit {completed.returncode}"
    return False, f"{command[0]} failed: {last}\n  run it yourself: {shown}"


@click.command("pr")
@click.argument("path", type=click.Path(path_type=Path), default=Path("."))
@click.option(
    "--branch", default=DEFAULT_BRANCH, show_default=True, help="Branch to create or update."
)
@click.option("--base", help="Branch the pull request merges into [default: the current branch].")
@click.option("--unsafe-fixes", is_flag=True, help="Also apply fixes that need review.")
@click.option(
    "--verify",
    "run_verify",
    is_flag=True,
    help="Run `migrate verify` and put the receipt in the body.",
)
@click.option("--smoke", help="Smoke command for --verify (else [tool.migrate.verify] smoke).")
@click.option("--push", metavar="REMOTE", help="Push the branch to REMOTE.")
@click.option(
    "--open", "open_pr_flag", is_flag=True, help="Open the pull request with gh (or glab)."
)
def pr_command(
    path: Path,
    branch: str,
    base: str | None,
    unsafe_fixes: bool,
    run_verify: bool,
    smoke: str | None,
    push: str | None,
    open_pr_flag: bool,
) -> None:
    """Apply the fixes under PATH on a branch, one commit per rule family, and write the pull
    request body to .git/migrate/PR_BODY.md.

    Refuses a dirty working tree (exit 2); on any failure the repository is left exactly as it
    was. Running it again updates the branch. Exit 0 on success, 1 when --open could not open
    the pull request, 2 on an error.
    """
    options = PrOptions(path, branch, base, unsafe_fixes, run_verify, smoke, push, open_pr_flag)
    try:
        result = create_pr(options)
    except PrError as error:
        click.echo(f"migrate pr: {error}", err=True)
        sys.exit(2)
    except (MigrateError, OSError, subprocess.SubprocessError) as error:
        click.echo(f"migrate pr: failed, repository restored: {error}", err=True)
        sys.exit(2)
    verb = "created" if result.created else "updated"
    fixes = sum(commit.fixes for commit in result.commits)
    click.echo(
        f"{verb} branch {result.branch} (base {result.base}): {len(result.commits)} new commit(s), "
        f"{fixes} fix(es); readiness {result.before.score} -> {result.after.score} "
        f"({result.after.verdict.label})",
        err=True,
    )
    for commit in result.commits:
        rules = ", ".join(f"{code}x{count}" for code, count in sorted(commit.rules.items()))
        click.echo(f"  {commit.sha[:10]} {commit.category}: {rules}", err=True)
    if result.pushed:
        click.echo(f"pushed {result.branch} to {push}", err=True)
    click.echo(f"title: {result.title}", err=True)
    click.echo(str(result.body_path))
    if open_pr_flag:
        if not result.pushed:
            click.echo("note: the branch was not pushed in this run (use --push REMOTE)", err=True)
        git, _ = _repository(path)
        opened, message = open_pr(git, result, push)
        click.echo(message, err=True)
        if not opened:
            sys.exit(1)
