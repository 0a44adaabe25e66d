"""The ``migrate`` command line: scan, fix, rules, explain (verify, doctor, report, pr register
themselves from their own modules). Data goes to stdout; progress and summaries to stderr."""

from __future__ import annotations

import difflib
import importlib
import json
import os
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import click

from migrator import __version__
from migrator.errors import MigrateError
from migrator.model import Applicability, ScanResult, Severity

FORMATS = ("text", "concise", "json", "sarif", "github")


def _split(values: tuple[str, ...]) -> list[str]:
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


def _console(stderr: bool = False) -> Any:
    from rich.console import Console

    return Console(stderr=stderr, highlight=False, soft_wrap=True)


LAZY_COMMANDS = {
    "verify": ("migrator.verify.cli", "verify_command"),
    "doctor": ("migrator.doctor", "doctor_command"),
    "report": ("migrator.reporting.cli", "report_command"),
    "pr": ("migrator.pr.cli", "pr_command"),
}


class _Group(click.Group):
    """Loads heavy commands on first use and turns project errors into one-line messages
    with exit code 2."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        available = [name for name, (module, _) in LAZY_COMMANDS.items() if _importable(module)]
        return sorted({*super().list_commands(ctx), *available})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in LAZY_COMMANDS:
            module_name, attribute = LAZY_COMMANDS[cmd_name]
            try:
                command = getattr(importlib.import_module(module_name), attribute)
            except ImportError:
                return None
            return command if isinstance(command, click.Command) else None
        return super().get_command(ctx, cmd_name)

    def main(
        self,
        args: Any = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        """Every usage error on one line (``migrate: error: ...``) with exit 2."""
        run = super().main
        if not standalone_mode:
            return run(args, prog_name, complete_var, False, **extra)
        try:
            code = run(args, prog_name, complete_var, False, **extra)
        except click.exceptions.Abort:
            click.echo("migrate: interrupted", err=True)
            sys.exit(130)
        except click.ClickException as error:
            message = " ".join(error.format_message().split())
            click.echo(f"migrate: error: {message}", err=True)
            sys.exit(2)
        except BrokenPipeError:
            _quiet_exit()
        sys.exit(code if isinstance(code, int) else 0)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except BrokenPipeError:
            _quiet_exit()
        except MigrateError as error:
            click.echo(f"migrate: error: {error}", err=True)
            ctx.exit(2)
        except KeyboardInterrupt:
            click.echo("migrate: interrupted", err=True)
            ctx.exit(130)
        except (click.exceptions.Exit, click.ClickException, SystemExit):
            raise
        except OSError as error:  # a path the user gave cannot be read or written
            from migrator.output.escape import safe_text

            where = f" ({safe_text(error.filename)})" if error.filename else ""
            click.echo(f"migrate: error: {safe_text(error.strerror or error)}{where}", err=True)
            ctx.exit(2)
        except Exception as error:  # a bug of ours: one line, exit 2, never a traceback
            first = str(error).splitlines()[0] if str(error) else ""
            click.echo(
                f"migrate: internal error: {type(error).__name__}: {first} "
                "(please report it; MIGRATE_DEBUG=1 shows the traceback)",
                err=True,
            )
            if os.environ.get("MIGRATE_DEBUG"):
                raise
            ctx.exit(2)


#: Exit status after stdout was closed early (``migrate scan | head -1``): 128 + SIGPIPE, as
#: for any Unix tool killed by a closed pipe; nothing is printed.
BROKEN_PIPE_EXIT = 141


def _quiet_exit() -> None:
    """Leave silently after the reader of stdout went away (no traceback, no flush error)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    os._exit(BROKEN_PIPE_EXIT)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="migrate")
def cli() -> None:
    """Find and rewrite CUDA-only code so PyTorch projects run on AMD GPUs with ROCm."""


def _set_for_this_command(name: str, value: str) -> None:
    """Set an environment variable that this process and its workers read, and put the old
    value back when the command ends (an in-process caller's later commands never see it)."""
    previous = os.environ.get(name)
    os.environ[name] = value

    def restore() -> None:
        if previous is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = previous

    click.get_current_context().call_on_close(restore)


def _severity(value: str | None) -> Severity | None:
    if value is None:
        return None
    try:
        return Severity.parse(value)
    except ValueError as error:
        raise click.BadParameter(str(error)) from None


_common = [
    click.option("--select", multiple=True, help="Rule codes, code prefixes, names or categories."),
    click.option("--ignore", multiple=True, help="Rules or categories to leave out."),
    click.option("--exclude", multiple=True, help="Glob of paths to skip (repeatable)."),
    click.option(
        "--min-severity",
        type=click.Choice(["hygiene", "info", "warning", "error"], case_sensitive=False),
        default=None,
        help="Report only findings at or above this severity (default info: hygiene is off).",
    ),
]


def common_options(function: Any) -> Any:
    for option in reversed(_common):
        function = option(function)
    return function


def _check_paths(paths: tuple[str, ...]) -> list[Path]:
    out = []
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            raise click.UsageError(f"path does not exist: {raw}")
        out.append(path)
    return out


@cli.command()
@click.argument("paths", nargs=-1)
@click.option(
    "--format",
    "--output-format",
    "output_format",
    type=click.Choice(FORMATS),
    default="text",
    help="text (grouped, with a summary), concise (one line per finding), json, sarif, github.",
)
@common_options
@click.option(
    "--output", "-o", type=click.Path(dir_okay=False, writable=True), help="Write to FILE."
)
@click.option("--no-cache", is_flag=True, help="Ignore and do not update the result cache.")
@click.option("--no-prefilter", is_flag=True, hidden=True, help="Parse every file (for testing).")
@click.option(
    "--whole-parse",
    is_flag=True,
    hidden=True,
    help="Parse whole files, not only the statements rules can see (for testing).",
)
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None, help="Worker processes.")
@click.option(
    "--show-unused-suppressions",
    is_flag=True,
    help="Report `# migrate: ignore` comments that silence nothing.",
)
@click.option(
    "--write-baseline",
    type=click.Path(dir_okay=False),
    help="Record every finding in FILE (then exit 0); later scans with --baseline FILE hide them.",
)
@click.option(
    "--baseline",
    "baseline_file",
    type=click.Path(dir_okay=False),
    help="Hide findings recorded in FILE (matched by rule, path and code, not line number).",
)
@click.option(
    "--new-since",
    metavar="REF",
    help="Report only findings on lines added or changed since the git REF (and in new files).",
)
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
@click.option("--quiet", "-q", is_flag=True, help="Print the findings and nothing else.")
@click.option(
    "--statistics", is_flag=True, help="Print how many findings each rule has, not the findings."
)
@click.option(
    "--stdin-filename",
    metavar="NAME",
    help="Read the file to scan from stdin, as if it were NAME (its config and ignores apply).",
)
@click.option(
    "--watch", "-w", is_flag=True, help="Scan again whenever a scanned file changes (Ctrl-C stops)."
)
@click.option(
    "--fail-on",
    type=click.Choice(["info", "warning", "error"], case_sensitive=False),
    default="info",
    show_default=True,
    help="Exit 1 only for findings at or above this severity (all are still reported).",
)
@click.option(
    "--allow-unscanned",
    is_flag=True,
    help="Exit 0 even when some files could not be scanned (config: allow-unscanned).",
)
@click.option(
    "--show-guarded",
    is_flag=True,
    help="Also report code that never runs on ROCm (NVIDIA-only branches, portable import "
    "fallbacks, availability probes, platform-only and NVIDIA-variant files), marked.",
)
def scan(
    paths: tuple[str, ...],
    output_format: str,
    select: tuple[str, ...],
    ignore: tuple[str, ...],
    exclude: tuple[str, ...],
    min_severity: str | None,
    output: str | None,
    no_cache: bool,
    no_prefilter: bool,
    whole_parse: bool,
    jobs: int | None,
    show_unused_suppressions: bool,
    write_baseline: str | None,
    baseline_file: str | None,
    new_since: str | None,
    exit_zero: bool,
    fail_on: str,
    quiet: bool,
    statistics: bool,
    stdin_filename: str | None,
    watch: bool,
    allow_unscanned: bool,
    show_guarded: bool,
) -> None:
    """Report every CUDA-only construct under PATHS.

    Exit status: 0 when nothing at or above --min-severity is found, 1 when something is or
    when a file could not be scanned (unless --allow-unscanned), 2 on a usage, configuration or
    internal error.
    """
    if not paths and not stdin_filename:
        raise click.UsageError(
            "give at least one PATH, or --stdin-filename NAME with the file on stdin"
        )
    _check_output(output)
    if "-" in paths and not stdin_filename:
        raise click.UsageError("`-` (read stdin) needs --stdin-filename NAME")
    chosen = {
        "select": _split(select),
        "ignore": _split(ignore),
        "exclude": _split(exclude),
        "min_severity": _severity(min_severity),
    }
    stdin_data = sys.stdin.buffer.read() if stdin_filename else b""
    if no_cache:
        from migrator.cache import NO_CACHE_VARIABLE

        _set_for_this_command(NO_CACHE_VARIABLE, "1")
    if whole_parse:
        from migrator.engine import PARSE_MODE_VARIABLE

        _set_for_this_command(PARSE_MODE_VARIABLE, "whole")

    def collect() -> list[ScanResult]:
        results = _scan_paths(
            [p for p in paths if p != "-"],
            chosen,
            not no_cache,
            not no_prefilter,
            jobs,
            quiet,
            show_guarded,
        )
        if stdin_filename:
            results.append(_scan_stdin(stdin_filename, stdin_data, chosen))
        if write_baseline or baseline_file or new_since:
            from migrator import baseline

            if write_baseline:
                count = baseline.write(results, Path(write_baseline))
                click.echo(
                    f"migrate: wrote {count} findings to the baseline {write_baseline}", err=True
                )
                sys.exit(0)
            if baseline_file:
                results = baseline.without_baselined(results, baseline.load(Path(baseline_file)))
            if new_since:
                results = baseline.changed_since(results, new_since)
        return results

    def show(results: list[ScanResult]) -> int:
        if statistics:
            from migrator.output import concise

            _emit(concise.statistics(results), output)
        else:
            text = _render(results, output_format, output, quiet)
            if text is not None:
                _emit(text, output)
        if show_unused_suppressions:
            for result in results:
                for file in result.files:
                    for line, code in file.unused_suppressions:
                        label = "" if code == "*" else f"[{code}]"
                        click.echo(
                            f"{file.path}:{line}: unused suppression `# migrate: ignore{label}`",
                            err=True,
                        )
        threshold = Severity.parse(fail_on)
        if threshold is Severity.INFO:  # the default: every finding shown fails (hygiene is
            threshold = Severity.HYGIENE  # shown only when asked for: --select, --min-severity)
        failing = [
            f
            for result in results
            for f in result.findings
            if f.severity >= threshold and not f.guard  # shown guarded findings never fail
        ]
        unscanned = _unscanned(results)
        blocked = bool(unscanned) and not _unscanned_allowed(allow_unscanned, results)
        if blocked:
            click.echo(
                f"migrate: {unscanned} file(s) could not be scanned, so the result is incomplete "
                "(their reasons are in the report; --allow-unscanned accepts this)",
                err=True,
            )
        return 1 if (failing and not exit_zero) or blocked else 0

    if watch:
        from migrator.watch import watch_paths

        watch_paths([Path(p) for p in paths if p != "-"], lambda: show(collect()))
        sys.exit(0)
    sys.exit(show(collect()))


def _scan_paths(
    paths: list[str],
    chosen: dict[str, Any],
    use_cache: bool,
    prefilter: bool,
    jobs: int | None,
    quiet: bool,
    show_guarded: bool = False,
) -> list[ScanResult]:
    """Scan directories whole and files under their project root (shown from the cwd)."""
    from migrator.paths import rebase, targets
    from migrator.runner import scan as scan_root

    results: list[ScanResult] = []
    explicit: list[ScanResult] = []
    stderr = _console(stderr=True)
    for target in targets(_check_paths(tuple(paths))):

        def action(progress: Any, total: Any, target: Any = target) -> Any:
            return scan_root(
                target.root,
                **chosen,
                use_cache=use_cache,
                prefilter=prefilter,
                jobs=jobs,
                progress=progress,
                on_total=total,
                only=target.files,
                within=target.within,
                show_guarded=show_guarded,
            )

        run = action(None, None) if quiet else _with_progress(stderr, action)
        if target.within is not None:  # shown from the folder named, as before
            shown = rebase([run.scan], target.within)[0]
            shown.root = str(target.within)
            results.append(shown)
        else:
            (results if target.files is None else explicit).append(run.scan)
    if explicit:  # files named on the command line show relative to the current directory
        results.extend(rebase(explicit, Path.cwd()))
    return results


def _scan_stdin(name: str, data: bytes, chosen: dict[str, Any]) -> ScanResult:
    """The file read from stdin, scanned as ``name`` under its project root."""
    import os

    from migrator.config import find_pyproject
    from migrator.paths import rebase
    from migrator.runner import scan_text

    absolute = (Path.cwd() / name).resolve()
    config = find_pyproject(absolute)
    cwd = Path.cwd().resolve()
    if config is not None:
        root = config.parent
    else:
        root = cwd if absolute.is_relative_to(cwd) else absolute.parent
    relative = Path(os.path.relpath(absolute, root)).as_posix()
    run = scan_text(root, relative, data, **chosen)
    return rebase([run.scan], cwd)[0]


def _unscanned(results: list[ScanResult]) -> int:
    """How many files could not be scanned (unreadable, unparsable, crashed, over budget)."""
    from migrator.model import Status

    return sum(1 for result in results for file in result.files if file.status is Status.FAILED)


def _unscanned_allowed(flag: bool, results: list[ScanResult]) -> bool:
    """``--allow-unscanned``, or ``allow-unscanned = true`` in a scanned project's config."""
    from migrator.config import load_config

    return flag or any(load_config(Path(result.root)).allow_unscanned for result in results)


def _check_output(output: str | None) -> None:
    """A one-line usage error, before any work, when ``-o`` cannot be written."""
    if output is None:
        return
    folder = Path(output).parent
    if not folder.is_dir():
        raise click.UsageError(f"cannot write {output}: folder {folder} does not exist")
    if Path(output).is_dir():
        raise click.UsageError(f"cannot write {output}: it is a folder")


def _with_progress(console: Any, action: Any, description: str = "scanning") -> Any:
    from migrator.progress import with_progress

    return with_progress(console, action, description)


def _render(
    results: list[ScanResult], output_format: str, output: str | None, quiet: bool = False
) -> str | None:
    if output_format == "concise":
        from migrator.output import concise

        lines = concise.render(results)
        if not quiet:
            count = sum(len(result.findings) for result in results)
            fixable = sum(1 for r in results for f in r.findings if f.fix is not None)
            lines += f"Found {count} finding{'s' if count != 1 else ''} ({fixable} fixable).\n"
        return lines
    if output_format == "json":
        from migrator.output import findings_json

        return findings_json.render(results)
    if output_format in ("sarif", "github"):  # code hosts want paths from the repository root
        from migrator.paths import to_repositories

        rebased = to_repositories(results)
        results = [result for _, result in rebased]
    if output_format == "sarif":
        from migrator.output import sarif

        return sarif.render(results, repository=rebased[0][0] if len(rebased) == 1 else None)
    if output_format == "github":
        from migrator.output import github

        return github.render(results)
    from migrator.output import text

    if output:
        from rich.console import Console

        try:
            with open(output, "w", encoding="utf-8") as handle:
                text.render(
                    results,
                    Console(file=handle, width=120, no_color=True, highlight=False),
                    summary=not quiet,
                )
        except OSError as error:
            raise MigrateError(f"cannot write {output}: {error.strerror}") from None
        return None
    text.render(results, _console(), summary=not quiet)
    return None


def _emit(text: str, output: str | None) -> None:
    if output:
        try:
            Path(output).write_text(text, encoding="utf-8")
        except OSError as error:
            raise MigrateError(f"cannot write {output}: {error.strerror}") from None
    else:
        click.echo(text, nl=False)


@cli.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--diff", is_flag=True, help="Print a unified diff and write nothing.")
@click.option(
    "--unsafe-fixes", is_flag=True, help="Also apply fixes that change semantics; review them."
)
@common_options
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None)
def fix(
    paths: tuple[str, ...],
    diff: bool,
    unsafe_fixes: bool,
    select: tuple[str, ...],
    ignore: tuple[str, ...],
    exclude: tuple[str, ...],
    min_severity: str | None,
    jobs: int | None,
) -> None:
    """Rewrite CUDA-only code under PATHS to portable torch / ROCm equivalents.

    Safe fixes only unless --unsafe-fixes. Exit 0 when nothing at or above the threshold
    remains, 1 otherwise, 2 on error.
    """
    from rich.markup import escape

    from migrator.model import Status
    from migrator.output.escape import safe_text
    from migrator.runner import fix_tree

    level = Applicability.UNSAFE if unsafe_fixes else Applicability.SAFE
    stderr = _console(stderr=True)
    remaining_total = 0
    unscanned_total = 0
    fixed_counter: Counter[str] = Counter()
    for root in _check_paths(paths):
        run = _with_progress(
            _console(stderr=True),
            lambda progress, total, root=root: fix_tree(
                root,
                level=level,
                select=_split(select),
                ignore=_split(ignore),
                exclude=_split(exclude),
                min_severity=_severity(min_severity),
                write=not diff,
                jobs=jobs,
                progress=progress,
                on_total=total,
            ),
            "fixing" if not diff else "computing fixes",
        )
        not_written: list[Any] = []
        for outcome in run.outcomes:
            if outcome.error:
                stderr.print(
                    f"[red]not fixed[/red] {escape(safe_text(outcome.relative))}: "
                    f"{escape(safe_text(outcome.error))}",
                    markup=True,
                    highlight=False,
                )
            if outcome.write_error:
                stderr.print(
                    f"[red]not written[/red] {escape(safe_text(outcome.relative))}: "
                    f"{escape(safe_text(outcome.write_error))}",
                    markup=True,
                    highlight=False,
                )
                not_written.extend(outcome.fixed)
            if outcome.written and outcome.new_text is not None:
                fixed_counter.update(f"{f.rule} {f.name}" for f in outcome.fixed)
                if diff:
                    click.echo(_unified_diff(root, outcome.relative, outcome.new_text), nl=False)
                    _unsafe_reasons(stderr, outcome.fixed)
        _variant_lines(stderr, run.variants, diff)
        for file in run.scan.files:
            if file.status is Status.FAILED:
                stderr.print(
                    f"[red]not read[/red] {escape(safe_text(file.path))}: "
                    f"{escape(safe_text(file.reason))}",
                    markup=True,
                    highlight=False,
                )
                unscanned_total += 1
        remaining = [*run.scan.findings, *not_written]
        _withheld(stderr, run.scan.findings)
        remaining_total += len(remaining)
        _fix_summary(stderr, fixed_counter, remaining, diff, unsafe_fixes, len(not_written))
    if unscanned_total:
        click.echo(f"migrate: {unscanned_total} file(s) could not be read or parsed", err=True)
    sys.exit(1 if remaining_total or unscanned_total else 0)


def _unsafe_reasons(console: Any, fixed: list[Any]) -> None:
    """One line per unsafe fix in a previewed diff: where, which rule, and why it is unsafe."""
    from rich.markup import escape

    from migrator.output.escape import safe_text

    for finding in fixed:
        if finding.fix is not None and finding.fix.applicability is Applicability.UNSAFE:
            why = _unsafe_reason(finding.rule) or finding.fix.description
            console.print(
                f"  unsafe {escape(safe_text(finding.path))}:{finding.line} {finding.rule}: "
                f"{escape(why)}",
                highlight=False,
            )


def _unsafe_reason(code: str) -> str | None:
    """The first sentence of a rule's "Fix safety" section (why its fix is unsafe)."""
    import re

    from migrator.registry import all_rules

    for rule in all_rules():
        if rule.code == code:
            match = re.search(
                r"## Fix safety\s+(?:Unsafe[.:]\s*)?(.+?\.)(?=\s|$)", rule.doc(), re.S
            )
            return " ".join(match.group(1).split()) if match else None
    return None


def _withheld(console: Any, remaining: list[Any]) -> None:
    """One line per fix that was withheld (declared versions, NVIDIA-only files, vendor swaps)."""
    from rich.markup import escape

    from migrator.fixpolicy import WITHHELD
    from migrator.output.escape import safe_text

    for finding in remaining:
        if WITHHELD in finding.message:
            reason = finding.message.split(WITHHELD, 1)[1]
            console.print(
                f"  withheld {escape(safe_text(finding.path))}:{finding.line} {finding.rule}: "
                f"{escape(safe_text(reason))}",
                highlight=False,
            )


def _variant_lines(console: Any, variants: list[Any], diff: bool) -> None:
    """What became of each ROCm sibling of an NVIDIA container file: created (with --diff, its
    diff from /dev/null), not written and why, or not offered and why."""
    from rich.markup import escape

    from migrator.output.escape import safe_text

    for variant in variants:
        new = escape(safe_text(variant.relative))
        original = escape(safe_text(variant.original))
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
                lines = difflib.unified_diff(
                    [], variant.text.splitlines(keepends=True), "/dev/null", f"b/{variant.relative}"
                )
                click.echo("".join(lines), nl=False)
            verb = "would create" if diff else "created"
            console.print(
                f"{verb} ROCm variant {new} beside {original} ({original} is unchanged)",
                highlight=False,
            )


def _unified_diff(root: Path, relative: str, new_text: str) -> str:
    path = root / relative if root.is_dir() else root
    old = path.read_bytes().decode("utf-8", errors="surrogateescape")
    if old.startswith("\ufeff"):
        old = old[1:]
    if relative.endswith(".py"):
        from migrator.sources import decode_python

        old = decode_python(path.read_bytes()).text
    lines = difflib.unified_diff(
        old.splitlines(keepends=True),
        new_text.splitlines(keepends=True),
        fromfile=f"a/{relative}",
        tofile=f"b/{relative}",
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


@cli.command("rules")
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text")
def rules_command(output_format: str) -> None:
    """List the rule catalog."""
    from migrator.registry import all_rules

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
            rule.code,
            rule.name,
            rule.category,
            rule.severity.label,
            rule.applicability.value if rule.fix_availability() != "never" else "none",
            rule.message,
        )
    console = _console()
    if not console.is_terminal:
        console.width = max(console.width, 200)  # piped: one row per rule, not folded columns
    console.print(table)


def rule_summary(rule: Any) -> dict[str, Any]:
    return {
        "code": rule.code,
        "name": rule.name,
        "category": rule.category,
        "severity": rule.severity.label,
        "message": rule.message,
        "fix_title": rule.fix_title,
        "fix_safety": rule.applicability.value,
        "fix_availability": rule.fix_availability(),
        "fact": rule.fact,
        "file_kinds": sorted(rule.file_kinds),
    }


@cli.command()
@click.argument("code")
def explain(code: str) -> None:
    """Print a rule's documentation."""
    from migrator.registry import rule_by_code
    from migrator.ruledocs import render_rule

    rule = rule_by_code(code)
    from rich.markdown import Markdown

    console = _console()
    if not console.is_terminal:  # piped: the Markdown itself, never cropped to 80 columns
        click.echo(render_rule(rule), nl=False)
        return
    console.print(Markdown(render_rule(rule)))


def _importable(module: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(module) is not None
    except ImportError:
        return False


def _exit_on_signals() -> None:
    """Turn SIGTERM and SIGHUP into a normal exit, so that every ``finally`` runs (temporary
    workspaces removed, worker processes stopped, a ``pr`` rolled back)."""
    import signal

    def leave(signum: int, _frame: object) -> None:
        raise SystemExit(128 + signum)

    for name in ("SIGTERM", "SIGHUP"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), leave)


def main() -> None:
    """Console-script entry point."""
    _exit_on_signals()
    cli()


if __name__ == "__main__":
    main()
