"""``migrate scan``: its options, scanning directories, files and stdin, rendering the findings
in the chosen format, and the exit status."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from migrator.commands.options import (
    check_output,
    check_paths,
    common_options,
    emit,
    make_console,
    parse_severity,
    run_with_progress,
    set_for_this_command,
    split_values,
)
from migrator.commands.progress import may_be_terminal
from migrator.commands.settings import configuration_options
from migrator.model import DEFAULT_FAIL_ON, ScanResult, Severity

if TYPE_CHECKING:
    from migrator.files.config import ConfigChoice

FORMATS = (
    "text",
    "concise",
    "json",
    "json-lines",
    "sarif",
    "github",
    "gitlab",
    "junit",
    "rdjson",
    "pylint",
    "azure",
)


@click.command()
@click.argument("paths", nargs=-1)
@click.option(
    "--format",
    "--output-format",
    "output_format",
    type=click.Choice(FORMATS),
    default="text",
    help="text (grouped, with a summary), concise (one line per finding), json, json-lines, "
    "sarif, github, gitlab (Code Quality), junit, rdjson (reviewdog), pylint, azure.",
)
@common_options
@configuration_options
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
    "--statistics",
    is_flag=True,
    help="Print how many sites each rule has (and the problems they fold into), not the "
    "findings; as JSON with --format json.",
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
    default=DEFAULT_FAIL_ON.label,
    show_default=True,
    help="Exit 1 only for findings at or above this severity (all are still reported). The "
    "default fails on problems (warning, error), never on hints (info: works on ROCm).",
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
@click.option(
    "--python",
    "python",
    metavar="PATH",
    help="The project's environment (an interpreter, a virtual environment or conda prefix, or "
    "site-packages; `active`: the one migrate runs in), read from its files and never run: "
    "each third-party package the GPU code imports is shown as a CUDA build, a ROCm build, "
    "CPU-only or pure Python instead of unknown.",
)
def scan(
    paths: tuple[str, ...],
    output_format: str,
    select: tuple[str, ...],
    ignore: tuple[str, ...],
    extend_select: tuple[str, ...],
    extend_ignore: tuple[str, ...],
    exclude: tuple[str, ...],
    min_severity: str | None,
    preview: bool | None,
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
    python: str | None,
    config_choice: ConfigChoice | None = None,
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
    paths, missing = _present(paths, bool(stdin_filename))
    inputs = [Path(p) for p in paths if p != "-"] + [
        Path(name) for name in (baseline_file,) if name
    ]
    check_output(output, inputs)
    for name in (write_baseline,):
        if name:
            check_output(name, inputs)
    if "-" in paths and not stdin_filename:
        raise click.UsageError("`-` (read stdin) needs --stdin-filename NAME")
    chosen = {
        "select": split_values(select),
        "ignore": split_values(ignore),
        "exclude": split_values(exclude),
        "min_severity": parse_severity(min_severity),
        "preview": preview,
        "extend_select": split_values(extend_select),
        "extend_ignore": split_values(extend_ignore),
        "config_choice": config_choice,
    }
    environment = _environment(python)
    stdin_data = sys.stdin.buffer.read() if stdin_filename else b""
    if no_cache:
        from migrator.files.cache import NO_CACHE_VARIABLE

        set_for_this_command(NO_CACHE_VARIABLE, "1")
    if whole_parse:
        from migrator.engine.parse_plan import PARSE_MODE_VARIABLE

        set_for_this_command(PARSE_MODE_VARIABLE, "whole")

    def collect() -> list[ScanResult]:
        results = _scan_paths(
            [p for p in paths if p != "-"],
            chosen,
            not no_cache,
            not no_prefilter,
            jobs,
            quiet,
            show_guarded,
            environment,
        )
        if stdin_filename:
            results.append(_scan_stdin(stdin_filename, stdin_data, chosen))
        if write_baseline or baseline_file or new_since:
            from migrator.commands import baseline

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

            tally = concise.statistics_json if output_format == "json" else concise.statistics
            emit(tally(results), output, inputs)
        else:
            text = _render(results, output_format, output, quiet, _given_names(stdin_filename))
            if text is not None:
                emit(text, output, inputs)
        if show_unused_suppressions:
            from migrator.engine.suppress import comment_of
            from migrator.files.paths import to_cwd
            from migrator.output.escape import safe_text

            for result in to_cwd(results, names=_given_names(stdin_filename)):
                for file in result.files:
                    for line, code in file.unused_suppressions:
                        click.echo(
                            f"{safe_text(file.path)}:{line}: unused suppression "
                            f"`{safe_text(comment_of(code))}`",
                            err=True,
                        )
        threshold = Severity.parse(fail_on)
        if threshold is Severity.INFO:  # every finding shown fails (hygiene is shown only
            threshold = Severity.HYGIENE  # when asked for: --select, --min-severity)
        failing = [
            f
            for result in results
            for f in result.findings
            if f.severity >= threshold and not f.guard  # shown guarded findings never fail
        ]
        unscanned = _unscanned(results)
        blocked = bool(unscanned) and not _unscanned_allowed(
            allow_unscanned, results, config_choice
        )
        if blocked:
            click.echo(
                f"migrate: {unscanned} file(s) could not be scanned, so the result is incomplete "
                "(their reasons are in the report; --allow-unscanned accepts this)",
                err=True,
            )
        cuda_only = any(p.status == "cuda-only" for result in results for p in result.packages)
        return 1 if ((failing or cuda_only) and not exit_zero) or blocked or missing else 0

    if watch:
        from migrator.commands.watch import watch_paths

        watch_paths([Path(p) for p in paths if p != "-"], lambda: show(collect()))
        sys.exit(0)
    sys.exit(show(collect()))


def _environment(python: str | None) -> Any:
    """The environment ``--python`` names (a one-line usage error when none is found there)."""
    if not python:
        return None
    from migrator.environment.locate import locate
    from migrator.errors import MigrateError

    try:
        return locate(python)
    except MigrateError as error:
        raise click.BadParameter(
            str(error).removeprefix(f"--python {python}: "), param_hint="--python"
        ) from None


def _present(paths: tuple[str, ...], stdin: bool) -> tuple[tuple[str, ...], list[str]]:
    """The paths that exist, and those that do not, each warned about in one line on stderr
    (as ruff does: the rest is scanned and the run exits 1). When none exists and nothing
    comes on stdin, a usage error (exit 2)."""
    present = tuple(p for p in paths if p == "-" or Path(p).exists())
    missing = [p for p in paths if p != "-" and p not in present]
    if missing and not present and not stdin:
        check_paths((missing[0],))  # the usage error, worded as for every command
    from migrator.output.escape import safe_text

    for name in missing:
        click.echo(
            f"migrate: warning: path does not exist: {safe_text(name)} (not scanned; exit 1)",
            err=True,
        )
    return present, missing


def _scan_paths(
    paths: list[str],
    chosen: dict[str, Any],
    use_cache: bool,
    prefilter: bool,
    jobs: int | None,
    quiet: bool,
    show_guarded: bool = False,
    environment: Any = None,
) -> list[ScanResult]:
    """Scan directories whole and files under their project root; paths stay relative to each
    result's root (the output's edge re-expresses them). A directory's result lists the
    third-party packages its GPU code imports, read from ``environment`` when one is given."""
    from migrator.engine.runner import scan as scan_root
    from migrator.files.paths import rebase, targets

    results: list[ScanResult] = []
    explicit: list[ScanResult] = []
    for target in targets(check_paths(tuple(paths)), chosen["config_choice"]):

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

        if quiet or not may_be_terminal():
            run = action(None, None)
        else:
            run = run_with_progress(make_console(stderr=True), action)
        if target.files is None:
            from migrator.reach.native_deps import attach

            attach(run.scan, environment)
        if target.within is not None:  # a result of the folder named, not its project root
            shown = rebase([run.scan], target.within)[0]
            shown.root = str(target.within)
            results.append(shown)
        else:
            (results if target.files is None else explicit).append(run.scan)
    if explicit:  # files named on the command line: one result from the current directory
        results.extend(rebase(explicit, Path.cwd()))
    return results


def _scan_stdin(name: str, data: bytes, chosen: dict[str, Any]) -> ScanResult:
    """The file read from stdin, scanned as ``name`` under its project root."""
    import os

    from migrator.engine.runner import scan_text
    from migrator.files.config import find_pyproject
    from migrator.files.paths import rebase

    absolute = (Path.cwd() / name).resolve()
    config = find_pyproject(absolute, chosen["config_choice"])
    cwd = Path.cwd().resolve()
    if config is not None:
        root = config.parent
    else:
        root = cwd if absolute.is_relative_to(cwd) else absolute.parent
    relative = Path(os.path.relpath(absolute, root)).as_posix()
    run = scan_text(root, relative, data, **chosen)
    return rebase([run.scan], cwd)[0]


def _given_names(stdin_filename: str | None) -> dict[Path, str]:
    """The file read from stdin under the name the user gave it, which is what is printed."""
    if not stdin_filename:
        return {}
    return {(Path.cwd() / stdin_filename).resolve(): stdin_filename}


def _unscanned(results: list[ScanResult]) -> int:
    """How many files could not be scanned (unreadable, unparsable, crashed, over budget)."""
    from migrator.model import Status

    return sum(1 for result in results for file in result.files if file.status is Status.FAILED)


def _unscanned_allowed(
    flag: bool, results: list[ScanResult], choice: ConfigChoice | None = None
) -> bool:
    """``--allow-unscanned``, or ``allow-unscanned = true`` in a scanned project's config."""
    from migrator.files.config import load_config

    return flag or any(load_config(Path(result.root), choice).allow_unscanned for result in results)


def _render(
    results: list[ScanResult],
    output_format: str,
    output: str | None,
    quiet: bool = False,
    names: dict[Path, str] | None = None,
) -> str | None:
    """The findings in ``output_format``; None when the text format was printed or written.
    Code hosts and their CI formats (sarif, github, gitlab, rdjson) get repository-relative
    paths; every other format gets paths as the user's shell and editor see them from the
    current directory (``names``: files printed under the name the user gave them)."""
    scanned = [result.root for result in results]
    repository: Path | None = None
    if output_format in ("sarif", "github", "gitlab", "rdjson"):
        # code hosts and CI systems want paths from the repository root
        from migrator.files.paths import to_repositories

        rebased = to_repositories(results)
        results = [result for _, result in rebased]
        repository = rebased[0][0] if len(rebased) == 1 else None
    else:
        from migrator.files.paths import to_cwd

        results = to_cwd(results, names=names)
    if output_format == "concise":
        from migrator.output import concise

        lines = concise.render(results)
        if not quiet:
            from migrator.output.text import problems_and_hints

            findings = [f for result in results for f in result.findings if not f.guard]
            fixable = sum(1 for f in findings if f.fix is not None)
            lines += f"Found {problems_and_hints(findings)} ({fixable} fixable).\n"
            from migrator.output import packages

            concerns = packages.concerns(results)
            if concerns:
                environment = "; ".join(r.environment for r in results if r.environment)
                lines += f"Native dependencies: {packages.summary(concerns, environment)}.\n"
        return lines
    if output_format == "json":
        from migrator.output import findings_json

        return findings_json.render(results)
    if output_format == "json-lines":
        from migrator.output.ci_formats import json_lines

        return json_lines(results)
    if output_format == "sarif":
        from migrator.output import sarif

        return sarif.render(results, repository=repository, scanned=scanned)
    if output_format == "github":
        from migrator.output import github

        return github.render(results)
    if output_format in ("gitlab", "junit", "rdjson", "pylint", "azure"):
        from migrator.output.ci_formats import RENDERERS

        return RENDERERS[output_format](results)
    from migrator.output import text

    if output:
        import io

        from rich.console import Console

        buffer = io.StringIO()
        text.render(
            results,
            Console(file=buffer, width=120, no_color=True, highlight=False),
            summary=not quiet,
        )
        return buffer.getvalue()
    text.render(results, make_console(), summary=not quiet)
    return None
