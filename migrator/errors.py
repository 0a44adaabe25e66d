"""Errors the user can act on; the CLI prints them on one line and exits 2."""

from __future__ import annotations


class MigrateError(Exception):
    """Base of every error that is the user's to fix (bad option, config, path)."""


class ConfigError(MigrateError):
    """Invalid ``[tool.migrate]`` configuration or command-line selection."""


class RuleLoadError(MigrateError):
    """The rule catalog is inconsistent (duplicate codes, bad metadata)."""
