"""``--config``, ``--isolated``, ``--show-settings`` and ``--show-files`` of ``scan`` and ``fix``,
as ruff's ``check`` has them: which configuration applies (one file for every root, none, or
``KEY = VALUE`` settings over the discovered one), and what a run would use, printed instead of
running it."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from migrator.commands.options import check_paths, parse_severity, split_values
from migrator.files.config import ConfigChoice, parse_overrides, read_config_file

_OPTIONS = [
    click.option(
        "--config",
        "config_values",
        multiple=True,
        metavar="FILE|KEY=VALUE",
        help="Use this configuration file for every scanned path instead of each project's "
        "(a pyproject.toml's [tool.migrate], or the top level of another TOML file such as "
        "migrate.toml; its globs relative to the current directory), or set one KEY = VALUE "
        "(TOML) over the configuration in force. Repeatable.",
    ),
    click.option(
        "--isolated",
        is_flag=True,
        help="Ignore every configuration file (pyproject.toml [tool.migrate]).",
    ),
    click.option(
        "--show-settings",
        is_flag=True,
        help="Print the settings resolved for the first Python file to scan, then exit.",
    ),
    click.option(
        "--show-files",
        is_flag=True,
        help="Print the files that would be scanned, one per line, then exit.",
    ),
]


def configuration_options(function: Callable[..., Any]) -> Callable[..., Any]:
    """Add the four options to a command whose parameters include ``paths`` and the common
    selection options; the command receives the configuration chosen as ``config_choice``
    (None: each project's own), which it hands to everything that reads configuration."""

    @functools.wraps(function)
    def run(
        *args: Any,
        config_values: tuple[str, ...],
        isolated: bool,
        show_settings: bool,
        show_files: bool,
        **kwargs: Any,
    ) -> Any:
        choice = _choice(config_values, isolated)
        if show_files or show_settings:
            _show(kwargs, files=show_files, settings=show_settings, choice=choice)
            click.get_current_context().exit(0)
        return function(*args, config_choice=choice, **kwargs)

    for option in reversed(_OPTIONS):
        run = option(run)
    return run


def _choice(values: tuple[str, ...], isolated: bool) -> ConfigChoice | None:
    """The configuration the options ask for (None: discover each project's, as always)."""
    if not values and not isolated:
        return None
    files: list[Path] = []
    overrides: dict[str, Any] = {}
    for value in values:
        path = Path(value).expanduser()
        if path.is_file() or (value.endswith(".toml") and "=" not in value):
            if not path.is_file():
                raise click.UsageError(f"--config {value}: no such configuration file")
            files.append(path.absolute())
        else:
            overrides.update(parse_overrides(value))
    if len(files) > 1:
        raise click.UsageError("--config FILE may be given once (settings: --config KEY=VALUE)")
    if files and isolated:
        raise click.UsageError(f"--config {files[0]} cannot be used with --isolated")
    if files:
        read_config_file(files[0])  # a malformed file: one line, exit 2, before any work
    return ConfigChoice(
        file=files[0] if files else None,
        isolated=isolated,
        overrides=overrides,
        cwd=str(Path.cwd()),
    )


def _show(
    kwargs: dict[str, Any], *, files: bool, settings: bool, choice: ConfigChoice | None
) -> None:
    """Print the files a run would scan (absolute, sorted, as ruff's ``--show-files``) and/or
    the settings resolved for the first of them (ruff's ``--show-settings``)."""
    from migrator.engine.runner import plan
    from migrator.files.paths import targets
    from migrator.output.escape import safe_text

    paths = [p for p in kwargs.get("paths", ()) if p != "-"]
    if not paths:
        raise click.UsageError("--show-files and --show-settings need a PATH")
    chosen: dict[str, Any] = {
        "select": split_values(kwargs.get("select", ())),
        "ignore": split_values(kwargs.get("ignore", ())),
        "exclude": split_values(kwargs.get("exclude", ())),
        "min_severity": parse_severity(kwargs.get("min_severity")),
        "preview": kwargs.get("preview"),
        "extend_select": split_values(kwargs.get("extend_select", ())),
        "extend_ignore": split_values(kwargs.get("extend_ignore", ())),
    }
    plans = []
    for target in targets(check_paths(tuple(paths)), choice):
        planned = plan(
            target.root,
            **chosen,
            only=target.files,
            within=target.within,
            config_choice=choice,
        )
        plans.append((target, planned))
    listed = sorted(
        {
            (os.path.abspath(source.path), source.relative, index)
            for index, (_, planned) in enumerate(plans)
            for source in planned.sources
        }
    )
    if files:
        for absolute, _, _ in listed:
            click.echo(safe_text(absolute))
    if not settings:
        return
    if files:
        click.echo("")
    if listed:  # the first Python file, else the first file
        kinds = {
            (os.path.abspath(source.path), index): source.kind
            for index, (_, planned) in enumerate(plans)
            for source in planned.sources
        }
        absolute, relative, index = min(
            listed, key=lambda entry: kinds[(entry[0], entry[2])] != "python"
        )
        target, planned = plans[index]
    else:
        target, planned = plans[0]
        absolute, relative = str(target.root.absolute()), ""
    click.echo(_settings_text(absolute, relative, target.root, planned, choice))


def _settings_text(
    shown: str, relative: str, root: Path, planned: Any, choice: ConfigChoice | None
) -> str:
    """The resolved settings as TOML-like lines (values JSON-quoted, names escaped)."""
    from migrator.engine.registry import all_rules
    from migrator.files.paths import glob_matches
    from migrator.output.escape import json_text, safe_text

    config, selection = planned.config, planned.selection
    if config.source is not None:
        origin = json_text(config.source)
    elif choice is not None and choice.isolated:
        origin = "none (--isolated)"
    else:
        origin = "none (defaults)"
    if choice is not None and choice.overrides:
        origin += f", with --config {json_text(sorted(choice.overrides))}"
    codes = selection.codes()
    rules = {rule.code: rule for rule in all_rules()}
    if relative:
        for pattern, ignored in selection.per_file_ignores:
            if glob_matches(relative, pattern):
                codes = frozenset(
                    code
                    for code in codes
                    if not (
                        code in ignored
                        or (code in rules and rules[code].category in ignored)
                        or any(code.startswith(prefix) for prefix in ignored)
                    )
                )
    per_file = {pattern: list(ignored) for pattern, ignored in selection.per_file_ignores}
    lines = [
        f"Resolved settings for: {json_text(safe_text(shown))}",
        f"Settings path: {origin}",
        f"Project root: {json_text(safe_text(str(root.absolute())))}",
        "",
        f"select = {json_text(list(selection.select))}",
        f"extend-select = {json_text(list(selection.extend_select))}",
        f"ignore = {json_text(list(selection.ignore))}",
        f"exclude = {json_text(list(selection.exclude))}",
        f"per-file-ignores = {json_text(per_file)}",
        f'min-severity = "{selection.min_severity.label}"',
        f"preview = {json_text(selection.preview)}",
        f"file-timeout = {config.file_timeout:g}",
        f"allow-unscanned = {json_text(config.allow_unscanned)}",
        f"rules = {json_text(sorted(codes))}",
    ]
    return "\n".join(lines)
