"""``migrate report``: readiness of one project or a fleet, as HTML, Markdown or JSON, or its
summary as tables (``text``: what a terminal gets when no ``-o`` and no ``--format`` is given)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from pathlib import Path

import click

from migrator.errors import MigrateError
from migrator.reporting.readiness import (
    DEFAULT_TARGETS,
    ReceiptError,
    Report,
    Verification,
    build_report,
    parse_targets,
    read_receipt,
    unique_names,
)

FORMATS = ("html", "md", "json", "text")


def read_repos_file(path: str) -> list[str]:
    """One project path per line; blank lines and ``#`` comments are skipped. Relative paths are
    taken relative to the file's folder."""
    from migrator.files.sources import FailFile, SkipFile, read_regular

    base = Path(path).resolve().parent
    try:
        text = read_regular(path).decode("utf-8")
    except (SkipFile, FailFile) as error:
        raise MigrateError(f"cannot read repository list {path}: {error}") from None
    except UnicodeDecodeError:
        raise MigrateError(f"cannot read repository list {path}: not UTF-8 text") from None
    out = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        candidate = Path(line).expanduser()
        out.append(str(candidate if candidate.is_absolute() else base / candidate))
    return out


def make_report(
    roots: Sequence[str],
    *,
    targets: Sequence[str] = DEFAULT_TARGETS,
    verification: Verification | None = None,
    select: Sequence[str] | None = None,
    ignore: Sequence[str] | None = None,
    exclude: Sequence[str] = (),
    preview: bool | None = None,
    use_cache: bool = True,
    jobs: int | None = None,
    on_step: Callable[[str], None] | None = None,
    python: str | None = None,
) -> Report:
    """Scan every root and compute the report (shared by ``report`` and ``pr``); ``on_step``
    hears which project is being scanned (progress). The third-party packages each project's
    GPU code imports are read from the environment ``python`` names (``--python``), or listed
    as unknown."""
    from migrator.engine.runner import scan
    from migrator.reach.native_deps import attach

    environment = None
    if python:
        from migrator.environment.locate import locate

        environment = locate(python)

    names = unique_names(roots)
    scans = []
    for position, (name, root) in enumerate(zip(names, roots, strict=True), start=1):
        if on_step:
            of = f" ({position}/{len(roots)})" if len(roots) > 1 else ""
            on_step(f"scanning {name}{of}")
        run = scan(
            Path(root),
            select=select,
            ignore=ignore,
            exclude=exclude,
            preview=preview,
            use_cache=use_cache,
            jobs=jobs,
        )
        scans.append((name, attach(run.scan, environment)))
    generated = datetime.now(timezone.utc).isoformat(timespec="seconds")
    return build_report(scans, targets=targets, verification=verification, generated=generated)


def render(report: Report, output_format: str) -> str:
    """The report in ``html``, ``md`` or ``json``, as text that encodes as UTF-8 (``valid_utf8``:
    each renderer escapes names, this is the last guard)."""
    from migrator.output.escape import valid_utf8

    if output_format == "json":
        from migrator.reporting import report_json

        return valid_utf8(report_json.render(report))
    if output_format == "md":
        from migrator.reporting import markdown

        return valid_utf8(markdown.render(report))
    if output_format == "text":
        from migrator.reporting import terminal

        return valid_utf8(terminal.render_text(report))
    from migrator.reporting import html

    return valid_utf8(html.render(report))


def _is_terminal(stream: object) -> bool:
    """Whether ``stream`` is a terminal (a closed or replaced stream is not)."""
    try:
        return bool(stream.isatty())  # type: ignore[attr-defined]
    except (AttributeError, ValueError, OSError):
        return False


def _split(values: Sequence[str]) -> list[str]:
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


@click.command("report")
@click.argument("paths", nargs=-1)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(FORMATS),
    default=None,
    help="html: one self-contained file (the default for a file or a pipe); md: GitHub comment; "
    "json: see report.schema.json; text: the summary as tables (the default on a terminal "
    "with no -o).",
)
@click.option(
    "--output", "-o", type=click.Path(dir_okay=False), help="Write to FILE instead of stdout."
)
@click.option(
    "--receipt",
    type=click.Path(dir_okay=False, exists=True),
    help="A `migrate verify` receipt (JSON) to include.",
)
@click.option(
    "--target",
    "targets",
    multiple=True,
    metavar="GFX[,GFX...]",
    help=f"AMD GPU targets to report on (default {','.join(DEFAULT_TARGETS)}).",
)
@click.option(
    "--repos",
    type=click.Path(dir_okay=False, exists=True),
    help="File with one project path per line (a fleet report).",
)
@click.option("--select", multiple=True, help="Rule codes, code prefixes, names or categories.")
@click.option("--ignore", multiple=True, help="Rules or categories to leave out.")
@click.option("--exclude", multiple=True, help="Glob of paths to skip (repeatable).")
@click.option(
    "--preview",
    is_flag=True,
    default=None,
    help="Also run the rules in preview (new rules that ship opt-in).",
)
@click.option("--no-cache", is_flag=True, help="Ignore and do not update the result cache.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None, help="Worker processes.")
@click.option(
    "--python",
    "python",
    metavar="PATH",
    help="The projects' environment (an interpreter, a virtual environment or conda prefix, or "
    "site-packages; `active`: the one migrate runs in), read from its files and never run, to "
    "tell the native dependencies of the GPU code apart (CUDA build, ROCm build, CPU-only, pure "
    "Python) instead of listing them as unknown.",
)
def report_command(
    paths: tuple[str, ...],
    output_format: str | None,
    output: str | None,
    receipt: str | None,
    targets: tuple[str, ...],
    repos: str | None,
    select: tuple[str, ...],
    ignore: tuple[str, ...],
    exclude: tuple[str, ...],
    preview: bool | None,
    no_cache: bool,
    jobs: int | None,
    python: str | None,
) -> None:
    """Readiness report for PATHS: score, verdict, blockers, dependencies, GPU targets, effort.

    Several PATHS (or --repos FILE) give one fleet report with a row per project. On a
    terminal, with no -o and no --format, the summary is shown as tables; a file or a pipe gets
    HTML. Exit status 0 when the report was written, 2 on a usage error.
    """
    import sys

    on_terminal = output_format is None and output is None and _is_terminal(sys.stdout)
    output_format = output_format or ("text" if on_terminal else "html")
    roots = list(paths) + (read_repos_file(repos) if repos else [])
    inputs = [Path(root) for root in roots] + [Path(name) for name in (receipt, repos) if name]
    if output:
        from migrator.commands.options import check_output

        check_output(output, inputs)
    if not roots:
        raise click.UsageError("give at least one PATH or --repos FILE")
    for root in roots:
        if not Path(root).exists():
            raise click.UsageError(f"path does not exist: {root}")
    try:
        chosen = parse_targets(targets)
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint="--target") from None
    try:
        verification = read_receipt(receipt) if receipt else None
    except ReceiptError as error:
        raise click.BadParameter(str(error), param_hint="--receipt") from None
    from migrator.commands.progress import steps

    with steps() as step:
        report = make_report(
            roots,
            targets=chosen,
            verification=verification,
            select=_split(select) or None,
            ignore=_split(ignore) or None,
            exclude=_split(exclude),
            preview=preview,
            use_cache=not no_cache,
            jobs=jobs,
            on_step=step,
            python=python,
        )
        step(f"rendering {output_format}")
        text = "" if on_terminal else render(report, output_format)
    if on_terminal:
        from rich.console import Console

        from migrator.reporting import terminal

        terminal.render(report, Console(highlight=False))
    elif output:
        from migrator.files.writer import WriteRefused, write_output

        try:
            write_output(output, text, inputs)
        except WriteRefused as error:
            raise MigrateError(str(error)) from None
        from migrator.output.escape import safe_text

        summary = ", ".join(f"{p.name} {p.score} ({p.verdict.label})" for p in report.projects[:5])
        more = f", +{len(report.projects) - 5} more" if len(report.projects) > 5 else ""
        click.echo(safe_text(f"wrote {output}: {summary}{more}"), err=True)
    else:
        click.echo(text, nl=False)
