"""``[tool.migrate]`` in the scanned project's pyproject.toml, or the one configuration the
command line names (``--config FILE``, ``--isolated``: ``ConfigChoice``); the command line's own
flags win over both."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from migrator.errors import ConfigError
from migrator.files.sources import read_project_text
from migrator.files.tomlcompat import parse_toml, tomllib
from migrator.model import Severity

KNOWN_KEYS = {
    "select",
    "ignore",
    "exclude",
    "per-file-ignores",
    "min-severity",
    "verify",
    "file-timeout",
    "discovery-timeout",
    "allow-unscanned",
    "preview",
}

#: Seconds one file may take before it is given up (parse, rules and fixes together).
DEFAULT_FILE_TIMEOUT = 60.0
#: Seconds the walk of one root may take before it stops and the scan counts as incomplete:
#: a tree built to be walked forever (a hostile ``.gitignore``, millions of folders) ends.
DEFAULT_DISCOVERY_TIMEOUT = 300.0


@dataclass(frozen=True, slots=True)
class Config:
    """Settings for one scanned root."""

    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    per_file_ignores: dict[str, tuple[str, ...]] = field(default_factory=dict)
    min_severity: Severity = Severity.INFO
    verify: dict[str, Any] = field(default_factory=dict)
    source: str | None = None
    file_timeout: float = DEFAULT_FILE_TIMEOUT
    discovery_timeout: float = DEFAULT_DISCOVERY_TIMEOUT
    allow_unscanned: bool = False
    #: Rules in preview (``Rule.preview``) are chosen too.
    preview: bool = False
    #: The folder ``exclude`` and ``per-file-ignores`` are written from: the configuration
    #: file's own, or the current directory for a file named by ``--config`` (as ruff does).
    globs_from: str | None = None


@dataclass(frozen=True, slots=True)
class ConfigChoice:
    """What the command line says about configuration files, as ruff's ``--config`` and
    ``--isolated`` do: one FILE for every scanned root (no discovery; its globs relative to
    the current directory), none at all (``isolated``), and ``KEY = VALUE`` settings over
    whichever applies."""

    file: Path | None = None
    isolated: bool = False
    overrides: dict[str, Any] = field(default_factory=dict)
    #: The current directory when the choice was made (``--config FILE``'s globs start there).
    cwd: str = ""

    @property
    def fixed(self) -> bool:
        """Whether discovery is off: one configuration (or none) for every root."""
        return self.file is not None or self.isolated


def find_pyproject(start: Path, choice: ConfigChoice | None = None) -> Path | None:
    """The nearest pyproject.toml at or above ``start`` that has a ``[tool.migrate]`` table;
    None when the command line fixed the configuration (``choice``: ``--config FILE``,
    ``--isolated``), so that no project's file decides a root or a setting."""
    if choice is not None and choice.fixed:
        return None
    directory = (start if start.is_dir() else start.parent).absolute()  # `.` has no parents
    for candidate in [directory, *directory.parents]:
        path = candidate / "pyproject.toml"
        text = read_project_text(path, strict=True)
        if text is not None:
            try:
                data = parse_toml(text)
            except tomllib.TOMLDecodeError:
                continue
            if isinstance(data.get("tool"), dict) and "migrate" in data["tool"]:
                return path
        if (candidate / ".git").exists():
            break
    return None


def _strings(value: Any, key: str, path: Path) -> tuple[str, ...]:
    if isinstance(value, str):
        return tuple(part.strip() for part in value.split(",") if part.strip())
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return tuple(value)
    raise ConfigError(f"{path}: [tool.migrate] {key} must be a list of strings")


def load_config(root: Path, choice: ConfigChoice | None = None) -> Config:
    """The configuration for ``root``: its ``[tool.migrate]``, or the one the command line chose
    (``choice``; None: discover ``pyproject.toml`` per root, as always); a malformed file is a
    ConfigError (exit 2)."""
    if choice is None:
        path = find_pyproject(root)
        return Config() if path is None else _config_from(_table_of(path), path)
    if choice.file is not None:
        table = {**_table_of(choice.file), **choice.overrides}
        return _config_from(table, choice.file, globs_from=choice.cwd or None)
    path = None if choice.isolated else find_pyproject(root)
    table = {**(_table_of(path) if path is not None else {}), **choice.overrides}
    if path is None:
        return _config_from(table, Path("--config"), source=False, globs_from=choice.cwd or None)
    return _config_from(table, path)


def read_config_file(path: Path) -> dict[str, Any]:
    """The settings of a file named by ``--config``: ``[tool.migrate]`` of a ``pyproject.toml``,
    the top-level table of any other TOML file (``migrate.toml``), as ruff reads ``ruff.toml``;
    checked as the project's would be (ConfigError, one line)."""
    table = _table_of(path)
    _config_from(table, path)
    return table


def _table_of(path: Path) -> dict[str, Any]:
    """The raw settings table of a configuration file (see ``read_config_file``)."""
    text = read_project_text(path, strict=True)
    if text is None:
        raise ConfigError(f"{path}: cannot be read as UTF-8 text (or is not a regular file)")
    try:
        data = parse_toml(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: invalid TOML: {error}") from None
    if path.name != "pyproject.toml":
        return data
    tool = data.get("tool")
    if not isinstance(tool, dict) or "migrate" not in tool:
        raise ConfigError(f"{path}: has no [tool.migrate] table")
    table = tool["migrate"]
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.migrate] must be a table")
    return table


def parse_overrides(text: str) -> dict[str, Any]:
    """One ``--config KEY = VALUE`` (TOML, as ruff's), checked as a configuration would be."""
    try:
        table = parse_toml(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(
            f"--config {text!r} is neither a configuration file nor a TOML `KEY = VALUE` "
            f"setting ({error})"
        ) from None
    _config_from(table, Path("--config"), source=False)
    return table


def _config_from(
    table: dict[str, Any], path: Path, *, source: bool = True, globs_from: str | None = None
) -> Config:
    """A Config from a settings table read from ``path`` (named in every error)."""
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.migrate] must be a table")
    unknown = set(table) - KNOWN_KEYS
    if unknown:
        raise ConfigError(f"{path}: unknown [tool.migrate] keys: {', '.join(sorted(unknown))}")
    per_file: dict[str, tuple[str, ...]] = {}
    raw_per_file = table.get("per-file-ignores", {})
    if not isinstance(raw_per_file, dict):
        raise ConfigError(f"{path}: [tool.migrate] per-file-ignores must be a table")
    for pattern, codes in raw_per_file.items():
        per_file[pattern] = _strings(codes, f"per-file-ignores.{pattern}", path)
    try:
        severity = Severity.parse(str(table.get("min-severity", "info")))
    except ValueError as error:
        raise ConfigError(f"{path}: {error}") from None
    verify = table.get("verify", {})
    if not isinstance(verify, dict):
        raise ConfigError(f"{path}: [tool.migrate.verify] must be a table")
    allow_unscanned = table.get("allow-unscanned", False)
    if not isinstance(allow_unscanned, bool):
        raise ConfigError(f"{path}: [tool.migrate] allow-unscanned must be true or false")
    preview = table.get("preview", False)
    if not isinstance(preview, bool):
        raise ConfigError(f"{path}: [tool.migrate] preview must be true or false")
    return Config(
        select=_strings(table.get("select", []), "select", path),
        ignore=_strings(table.get("ignore", []), "ignore", path),
        exclude=_strings(table.get("exclude", []), "exclude", path),
        per_file_ignores=per_file,
        min_severity=severity,
        verify=verify,
        source=str(path) if source else None,
        file_timeout=_seconds(table, "file-timeout", DEFAULT_FILE_TIMEOUT, path),
        discovery_timeout=_seconds(table, "discovery-timeout", DEFAULT_DISCOVERY_TIMEOUT, path),
        allow_unscanned=allow_unscanned,
        preview=preview,
        globs_from=globs_from,
    )


def _seconds(table: dict[str, Any], key: str, default: float, path: Path) -> float:
    """``key`` of ``table``: a finite, positive number of seconds (``nan`` and ``inf`` would
    mean no limit), ``default`` when absent."""
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(f"{path}: [tool.migrate] {key} must be a number of seconds")
    if not math.isfinite(value) or value <= 0 or value > MAX_FILE_TIMEOUT:
        raise ConfigError(
            f"{path}: [tool.migrate] {key} must be a positive number of seconds, at most "
            f"{MAX_FILE_TIMEOUT:g}"
        )
    return float(value)


#: A day (per file, or for discovery) is more than any needs; larger values overflow timers.
MAX_FILE_TIMEOUT = 86400.0
