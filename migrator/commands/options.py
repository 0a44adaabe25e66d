"""What the ``migrate`` commands share (the rule-selection options and their parsing, path and
``-o`` checks, consoles, progress, writing the output), so each command says them once."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from migrator.errors import MigrateError
from migrator.model import Severity


def split_values(values: tuple[str, ...]) -> list[str]:
    """The values of a repeatable option, each split at commas (``--select A,B --select C``)."""
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


def make_console(stderr: bool = False) -> Any:
    """A rich console on stdout (or stderr) that highlights nothing and never wraps lines."""
    from rich.console import Console

    return Console(stderr=stderr, highlight=False, soft_wrap=True)


def set_for_this_command(name: str, value: str) -> None:
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


def parse_severity(value: str | None) -> Severity | None:
    """The ``--min-severity`` value as a ``Severity`` (None when not given)."""
    if value is None:
        return None
    try:
        return Severity.parse(value)
    except ValueError as error:
        raise click.BadParameter(str(error)) from None


_common = [
    click.option("--select", multiple=True, help="Rule codes, code prefixes, names or categories."),
    click.option("--ignore", multiple=True, help="Rules or categories to leave out."),
    click.option(
        "--extend-select",
        multiple=True,
        help="Rules to add to those selected (by the configuration or the default).",
    ),
    click.option(
        "--extend-ignore",
        multiple=True,
        help="Rules to leave out on top of those the configuration ignores.",
    ),
    click.option("--exclude", multiple=True, help="Glob of paths to skip (repeatable)."),
    click.option(
        "--min-severity",
        type=click.Choice(["hygiene", "info", "warning", "error"], case_sensitive=False),
        default=None,
        help="Report only findings at or above this severity (default info: hygiene is off).",
    ),
    click.option(
        "--preview",
        is_flag=True,
        default=None,
        help="Also run the rules in preview (new rules that ship opt-in).",
    ),
]


def common_options(function: Any) -> Any:
    """Add ``--select``, ``--ignore``, ``--extend-select``, ``--extend-ignore``, ``--exclude``,
    ``--min-severity`` and ``--preview`` to a command."""
    for option in reversed(_common):
        function = option(function)
    return function


def check_paths(paths: tuple[str, ...]) -> list[Path]:
    """The paths given, or a usage error naming the first that does not exist."""
    out = []
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            raise click.UsageError(f"path does not exist: {raw}")
        out.append(path)
    return out


def check_output(output: str | None, inputs: Sequence[Path] = ()) -> None:
    """A one-line usage error, before any work, when ``-o`` cannot be written."""
    if output is None:
        return
    from migrator.files.writer import output_refusal

    refusal = output_refusal(output, inputs)
    if refusal is not None:
        raise click.UsageError(refusal)
    folder = Path(output).parent
    if not folder.is_dir():
        raise click.UsageError(f"cannot write {output}: folder {folder} does not exist")
    if Path(output).is_dir():
        raise click.UsageError(f"cannot write {output}: it is a folder")


def run_with_progress(console: Any, action: Any, description: str = "scanning") -> Any:
    """Run ``action`` under a progress bar on ``console`` (see ``migrator.commands.progress``)."""
    from migrator.commands.progress import with_progress

    return with_progress(console, action, description)


def emit(text: str, output: str | None, inputs: Sequence[Path] = ()) -> None:
    """Write ``text`` to the ``-o`` file (``migrator.files.writer.write_output``: atomic, never through
    a symlink, never over an input of the run), or to stdout when there is none; always as valid
    UTF-8 (``valid_utf8``: a byte of a file name that no format escaped is shown as ``\\xNN``)."""
    from migrator.output.escape import valid_utf8

    text = valid_utf8(text)
    if output:
        from migrator.files.writer import WriteRefused, write_output

        try:
            write_output(output, text, inputs)
        except WriteRefused as error:
            raise MigrateError(str(error)) from None
    else:
        click.echo(text, nl=False)
