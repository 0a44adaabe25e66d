"""``migrate fix``: applying (or, with ``--diff``, previewing) the fixes, and the summary of what
was fixed, withheld, unsafe or left, on stderr."""

from __future__ import annotations

import difflib
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from migrator.commands.options import (
    check_paths,
    common_options,
    make_console,
    parse_severity,
    run_with_progress,
    split_values,
)
from migrator.commands.settings import configuration_options
from migrator.files.sources import FailFile, SkipFile
from migrator.model import Applicability

if TYPE_CHECKING:
    from migrator.files.config import ConfigChoice


@click.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--diff", is_flag=True, help="Print a unified diff and write nothing.")
@click.option(
    "--unsafe-fixes", is_flag=True, help="Also apply fixes that change semantics; review them."
)
@common_options
@configuration_options
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None)
def fix(
    paths: tuple[str, ...],
    diff: bool,
    unsafe_fixes: bool,
    select: tuple[str, ...],
    ignore: tuple[str, ...],
    extend_select: tuple[str, ...],
    extend_ignore: tuple[str, ...],
    exclude: tuple[str, ...],
    min_severity: str | None,
    preview: bool | None,
    jobs: int | None,
    config_choice: ConfigChoice | None = None,
) -> None:
    """Rewrite CUDA-only code under PATHS to portable torch / ROCm equivalents.

    Safe fixes only unless --unsafe-fixes. Exit 0 when nothing at or above the threshold
    remains (with --diff: and no fix is pending), 1 otherwise, 2 on error.
    """
    from rich.markup import escape

    from migrator.engine.runner import fix_tree
    from migrator.files.discovery import OUTSIDE_FILE, OUTSIDE_FOLDER
    from migrator.files.paths import result_base, shown_path
    from migrator.model import Status
    from migrator.output.escape import safe_text, terminal_safe

    level = Applicability.UNSAFE if unsafe_fixes else Applicability.SAFE
    stderr = make_console(stderr=True)
    remaining_total = 0
    unscanned_total = 0
    fixed_counter: Counter[str] = Counter()
    here = Path.cwd().resolve()
    for root in check_paths(paths):
        base = result_base(root)

        def shown(relative: str, base: Path = base) -> str:
            """A path of this root as the user's shell sees it from the current directory."""
            return shown_path(base, relative, here)

        run = run_with_progress(
            make_console(stderr=True),
            lambda progress, total, root=root: fix_tree(
                root,
                level=level,
                select=split_values(select),
                ignore=split_values(ignore),
                exclude=split_values(exclude),
                min_severity=parse_severity(min_severity),
                preview=preview,
                extend_select=split_values(extend_select),
                extend_ignore=split_values(extend_ignore),
                write=not diff,
                jobs=jobs,
                progress=progress,
                on_total=total,
                config_choice=config_choice,
            ),
            "fixing" if not diff else "computing fixes",
        )
        not_written: list[Any] = []
        for outcome in run.outcomes:
            if outcome.error:
                stderr.print(
                    f"[red]not fixed[/red] {escape(safe_text(shown(outcome.relative)))}: "
                    f"{escape(safe_text(outcome.error))}",
                    markup=True,
                    highlight=False,
                )
            if outcome.write_error:
                stderr.print(
                    f"[red]not written[/red] {escape(safe_text(shown(outcome.relative)))}: "
                    f"{escape(safe_text(outcome.write_error))}",
                    markup=True,
                    highlight=False,
                )
                not_written.extend(outcome.fixed)
            if outcome.written and outcome.new_text is not None:
                fixed_counter.update(f"{f.rule} {f.name}" for f in outcome.fixed)
                if diff:
                    try:
                        text = unified_diff(
                            root, outcome.relative, outcome.new_text, shown(outcome.relative)
                        )
                    except (SkipFile, FailFile) as error:  # replaced since it was read
                        stderr.print(
                            f"[red]not read[/red] {escape(safe_text(shown(outcome.relative)))}: "
                            f"{escape(safe_text(str(error)))}",
                            markup=True,
                            highlight=False,
                        )
                        continue
                    if sys.stdout.isatty():  # a terminal acts on escapes; a pipe gets the patch
                        text = terminal_safe(text)
                    click.echo(text, nl=False)
                    _unsafe_reasons(stderr, outcome.fixed, shown)
        _variant_lines(stderr, run.variants, diff, shown)
        _formatter_line(stderr, run)
        for file in run.scan.files:
            if file.status is Status.FAILED:
                stderr.print(
                    f"[red]not read[/red] {escape(safe_text(shown(file.path)))}: "
                    f"{escape(safe_text(file.reason))}",
                    markup=True,
                    highlight=False,
                )
                unscanned_total += 1
            elif file.status is Status.SKIPPED and file.reason in (OUTSIDE_FOLDER, OUTSIDE_FILE):
                stderr.print(
                    f"[yellow]skipped[/yellow] {escape(safe_text(shown(file.path)))}: "
                    f"{escape(safe_text(file.reason))}",
                    markup=True,
                    highlight=False,
                )
        remaining = [*run.scan.findings, *not_written]
        _withheld(stderr, run.scan.findings, shown)
        remaining_total += len(remaining)
        _fix_summary(stderr, fixed_counter, remaining, diff, unsafe_fixes, len(not_written))
    if unscanned_total:
        click.echo(f"migrate: {unscanned_total} file(s) could not be read or parsed", err=True)
    # --diff with fixes to apply exits 1, as ruff's `check --diff` does: a CI step tells
    # "nothing to fix" from "fixes pending" by the status alone
    pending = diff and sum(fixed_counter.values()) > 0
    sys.exit(1 if remaining_total or unscanned_total or pending else 0)


def _formatter_line(console: Any, run: Any) -> None:
    """One line when the project's formatter checks fixed Python files but was not run on them
    (not installed here, or one `fix` never runs): the command that lays them out as it does."""
    from rich.markup import escape

    from migrator.engine.formatter import RUNNABLE, executable
    from migrator.output.escape import safe_text

    formatter = run.formatter
    if formatter is None:
        return
    if formatter.tool in RUNNABLE and executable(formatter.tool) is not None:
        return
    fixed = [
        outcome.relative
        for outcome in run.outcomes
        if outcome.written
        and outcome.relative.endswith((".py", ".pyi"))
        and formatter.covers(outcome.relative)
    ]
    if not fixed:
        return
    why = "not installed here" if formatter.tool in RUNNABLE else "not run by fix"
    console.print(
        f"formatter {escape(formatter.tool)} (from {escape(safe_text(formatter.source))}) {why}: "
        f"run `{escape(safe_text(formatter.command))}` on the {len(fixed)} fixed file(s)",
        markup=True,
        highlight=False,
    )


def _unsafe_reasons(console: Any, fixed: list[Any], shown: Callable[[str], str]) -> None:
    """One line per unsafe fix in a previewed diff: where, which rule, and why it is unsafe."""
    from rich.markup import escape

    from migrator.output.escape import safe_text

    for finding in fixed:
        if finding.fix is not None and finding.fix.applicability is Applicability.UNSAFE:
            why = _unsafe_reason(finding.rule) or finding.fix.description
            console.print(
                f"  unsafe {escape(safe_text(shown(finding.path)))}:{finding.line} {finding.rule}: "
                f"{escape(why)}",
                highlight=False,
            )


def _unsafe_reason(code: str) -> str | None:
    """The first sentence of a rule's "Fix safety" section (why its fix is unsafe)."""
    import re

    from migrator.engine.registry import all_rules

    for rule in all_rules():
        if rule.code == code:
            match = re.search(
                r"## Fix safety\s+(?:Unsafe[.:]\s*)?(.+?\.)(?=\s|$)", rule.doc(), re.S
            )
            return " ".join(match.group(1).split()) if match else None
    return None


def _withheld(console: Any, remaining: list[Any], shown: Callable[[str], str]) -> None:
    """One line per fix that was withheld (declared versions, NVIDIA-only files, vendor swaps)."""
    from rich.markup import escape

    from migrator.model import withheld_reason
    from migrator.output.escape import safe_text

    for finding in remaining:
        reason = withheld_reason(finding.message)
        if reason is not None:
            console.print(
                f"  withheld {escape(safe_text(shown(finding.path)))}:{finding.line} {finding.rule}: "
                f"{escape(safe_text(reason))}",
                highlight=False,
            )


def _variant_lines(
    console: Any, variants: list[Any], diff: bool, shown: Callable[[str], str]
) -> None:
    """What became of each ROCm sibling of an NVIDIA container file: created (with --diff, its
    diff from /dev/null), not written and why, or not offered and why."""
    from rich.markup import escape

    from migrator.output.escape import safe_text, terminal_safe

    for variant in variants:
        new = escape(safe_text(shown(variant.relative)))
        original = escape(safe_text(shown(variant.original)))
        if variant.text is None:
            console.print(
                f"no ROCm variant for {original}: {escape(safe_text(variant.reason))}",
                highlight=False,
            )
        elif variant.error:
            console.print(
                f"[red]not written[/red] {new}: {escape(safe_text(variant.error))}",
                markup=True,
                highlight=False,
            )
        else:
            if diff:
                _, tofile = _diff_names(shown(variant.relative))
                lines = difflib.unified_diff(
                    [], variant.text.splitlines(keepends=True), "/dev/null", tofile
                )
                text = "".join(lines)
                click.echo(terminal_safe(text) if sys.stdout.isatty() else text, nl=False)
            verb = "would create" if diff else "created"
            console.print(
                f"{verb} ROCm variant {new} beside {original} ({original} is unchanged)",
                highlight=False,
            )


def _diff_names(name: str) -> tuple[str, str]:
    """A diff's file names as git writes them (``a/``, ``b/`` before a relative path, so that
    ``git apply`` and ``patch -p1`` in the current directory apply it); an absolute path as it is;
    quoted as git quotes a name with a control character or a byte that is not UTF-8."""
    from migrator.output.escape import diff_name

    if Path(name).is_absolute():
        return diff_name(name), diff_name(name)
    return diff_name(f"a/{name}"), diff_name(f"b/{name}")


def unified_diff(root: Path, relative: str, new_text: str, shown: str | None = None) -> str:
    """The unified diff from a file as it is on disk to ``new_text``, headed by ``shown`` (its
    path from the current directory; ``relative`` when not given)."""
    from migrator.files.sources import NOTEBOOK_MAX_BYTES, decode_python, read_regular

    path = root / relative if root.is_dir() else root
    data = read_regular(str(path), NOTEBOOK_MAX_BYTES)  # the largest limit a scanned file has
    if relative.endswith(".py"):
        old = decode_python(data).text
    else:
        old = data.decode("utf-8", errors="surrogateescape")
        if old.startswith("\ufeff"):
            old = old[1:]
    lines = difflib.unified_diff(
        old.splitlines(keepends=True),
        new_text.splitlines(keepends=True),
        fromfile=_diff_names(shown or relative)[0],
        tofile=_diff_names(shown or relative)[1],
    )
    out = "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines
    )
    return out


def _fix_summary(
    console: Any,
    fixed: Counter[str],
    remaining: list[Any],
    diff: bool,
    unsafe: bool,
    unwritten: int = 0,
) -> None:
    """How many findings were (or would be) fixed, by rule, and why the others remain."""
    from rich.markup import escape

    verb = "Would fix" if diff else "Fixed"
    total = sum(fixed.values())
    console.print(f"{verb} {total} findings.", highlight=False)
    for rule, count in sorted(fixed.items()):
        console.print(f"  {count:4d}  {escape(rule)}", highlight=False)
    if not remaining:
        return
    reasons: Counter[str] = Counter()
    total_remaining = len(remaining)
    if unwritten:
        reasons["file not written (see `not written` above)"] = unwritten
        remaining = remaining[: len(remaining) - unwritten]
    for finding in remaining:
        if finding.fix is None:
            reasons["no automatic fix (manual migration; see `migrate explain CODE`)"] += 1
        elif finding.fix.applicability is Applicability.UNSAFE and not unsafe:
            reasons["unsafe fix not enabled (use --unsafe-fixes)"] += 1
        else:
            reasons["fix could not be applied"] += 1
    console.print(f"{total_remaining} findings remain:", highlight=False)
    for reason, count in reasons.most_common():
        console.print(f"  {count:4d}  {escape(reason)}", highlight=False)
