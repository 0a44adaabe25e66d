"""The ``migrate pr`` command line: parse the options, run the transaction, print what it did."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import click

from migrator.commands.options import common_options, parse_severity, split_values
from migrator.errors import MigrateError
from migrator.pr.create import create_pr
from migrator.pr.git import NothingToApply, PrError, repository
from migrator.pr.hosting import open_pr
from migrator.pr.options import DEFAULT_BRANCH, FixChoice, PrOptions


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
@common_options
def pr_command(
    path: Path,
    branch: str,
    base: str | None,
    unsafe_fixes: bool,
    run_verify: bool,
    smoke: str | None,
    push: str | None,
    open_pr_flag: bool,
    select: tuple[str, ...],
    ignore: tuple[str, ...],
    extend_select: tuple[str, ...],
    extend_ignore: tuple[str, ...],
    exclude: tuple[str, ...],
    min_severity: str | None,
    preview: bool | None,
) -> None:
    """Apply the fixes under PATH on a branch, one commit per rule family, and write the pull
    request body to .git/migrate/PR_BODY.md.

    Refuses a dirty working tree (exit 2); on any failure the repository is left exactly as it
    was. Running it again updates the branch. Exit 0 on success and when no fix applies (no
    branch is created then, and it says so), 1 when --open could not open the pull request, 2
    on an error. The rule selection options are `fix`'s: `pr` commits exactly what `fix` with
    the same options applies.
    """
    choice = FixChoice(
        select=tuple(split_values(select)),
        ignore=tuple(split_values(ignore)),
        extend_select=tuple(split_values(extend_select)),
        extend_ignore=tuple(split_values(extend_ignore)),
        exclude=tuple(split_values(exclude)),
        min_severity=parse_severity(min_severity),
        preview=preview,
    )
    options = PrOptions(
        path, branch, base, unsafe_fixes, run_verify, smoke, push, open_pr_flag, choice
    )
    from migrator.commands.progress import steps
    from migrator.output.escape import safe_text

    try:
        with steps() as step:
            result = create_pr(options, on_step=step)
    except NothingToApply as error:
        click.echo(f"migrate pr: {safe_text(error)}", err=True)
        sys.exit(0)
    except PrError as error:
        click.echo(f"migrate pr: {safe_text(error)}", err=True)
        sys.exit(2)
    except (MigrateError, OSError, subprocess.SubprocessError) as error:
        click.echo(f"migrate pr: failed, repository restored: {safe_text(error)}", err=True)
        sys.exit(2)
    verb = "created" if result.created else "updated"
    fixes = sum(commit.fixes for commit in result.commits)
    click.echo(
        f"{verb} branch {safe_text(result.branch)} (base {safe_text(result.base)}): {len(result.commits)} new commit(s), "
        f"{fixes} fix(es); readiness {result.before.score} -> {result.after.score} "
        f"({result.after.verdict.label})",
        err=True,
    )
    for commit in result.commits:
        rules = ", ".join(f"{code}x{count}" for code, count in sorted(commit.rules.items()))
        click.echo(f"  {commit.sha[:10]} {commit.category}: {rules}", err=True)
    if result.pushed:
        click.echo(f"pushed {safe_text(result.branch)} to {safe_text(push)}", err=True)
    click.echo(f"title: {safe_text(result.title)}", err=True)
    click.echo(safe_text(result.body_path))
    if open_pr_flag:
        if not result.pushed:
            click.echo("note: the branch was not pushed in this run (use --push REMOTE)", err=True)
        git, _ = repository(path)
        opened, message = open_pr(git, result, push)
        click.echo(safe_text(message), err=True)
        if not opened:
            sys.exit(1)
