"""``migrate verify`` settings: command line, then ``[tool.migrate.verify]``, then defaults."""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from migrator.errors import ConfigError

TARGETS = ("native", "rocm-sim", "docker")
DEFAULT_TARGETS = ("native", "rocm-sim")
DEFAULT_TIMEOUT = 600.0
DEFAULT_RTOL = 1e-4
DEFAULT_ATOL = 1e-4
DEFAULT_DOCKER_IMAGE = "rocm/pytorch:latest"
CONFIG_KEYS = frozenset(
    {
        "smoke",
        "timeout",
        "targets",
        "rtol",
        "atol",
        "allow-modules",
        "docker-image",
        "python",
        "env",
    }
)


@dataclass(frozen=True, slots=True)
class VerifyOptions:
    """Everything ``verify`` needs; build it with :func:`resolve_options`."""

    root: Path
    smoke: str
    targets: tuple[str, ...] = DEFAULT_TARGETS
    timeout: float = DEFAULT_TIMEOUT
    rtol: float = DEFAULT_RTOL
    atol: float = DEFAULT_ATOL
    unsafe_fixes: bool = False
    allow_modules: tuple[str, ...] = ()
    docker_image: str = DEFAULT_DOCKER_IMAGE
    python: str = field(default_factory=lambda: sys.executable)
    env: tuple[tuple[str, str], ...] = ()
    keep_workspace: bool = False


def parse_targets(value: str | Sequence[str]) -> tuple[str, ...]:
    """``"native,rocm-sim"`` or a list → validated, de-duplicated tuple (ConfigError if unknown)."""
    items = value.split(",") if isinstance(value, str) else list(value)
    targets: list[str] = []
    for item in items:
        name = str(item).strip()
        if not name:
            continue
        if name not in TARGETS:
            raise ConfigError(f"unknown verify target {name!r} (expected {', '.join(TARGETS)})")
        if name not in targets:
            targets.append(name)
    if not targets:
        raise ConfigError("no verify target given")
    return tuple(targets)


def parse_env(items: Sequence[str]) -> tuple[tuple[str, str], ...]:
    """``["NAME=value", ...]`` → pairs (ConfigError on an item without ``=``)."""
    pairs: list[tuple[str, str]] = []
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise ConfigError(f"--env expects NAME=VALUE, got {item!r}")
        pairs.append((name, value))
    return tuple(pairs)


def _number(table: Mapping[str, Any], key: str, default: float) -> float:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise ConfigError(f"[tool.migrate.verify] {key} must be a non-negative number")
    return float(value)


def _string_list(table: Mapping[str, Any], key: str) -> tuple[str, ...]:
    value = table.get(key, [])
    if isinstance(value, str):
        value = [part for part in value.split(",") if part.strip()]
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f"[tool.migrate.verify] {key} must be a list of strings")
    return tuple(item.strip() for item in value)


def resolve_options(
    root: Path, table: Mapping[str, Any], overrides: Mapping[str, Any]
) -> VerifyOptions:
    """Merge ``[tool.migrate.verify]`` (``table``) with command-line ``overrides`` (None unset)."""
    unknown = set(table) - CONFIG_KEYS
    if unknown:
        raise ConfigError(f"unknown [tool.migrate.verify] keys: {', '.join(sorted(unknown))}")

    def pick(key: str, config_key: str | None = None) -> Any:
        value = overrides.get(key)
        if value is None or value == ():
            return table.get(config_key or key)
        return value

    smoke = pick("smoke")
    if not isinstance(smoke, str) or not smoke.strip():
        raise ConfigError(
            'no smoke command: pass --smoke "python smoke.py" or set smoke in [tool.migrate.verify]'
        )
    targets = parse_targets(pick("targets") or DEFAULT_TARGETS)
    numbers = {
        key: overrides[key] for key in ("timeout", "rtol", "atol") if overrides.get(key) is not None
    }
    merged = {**table, **numbers}
    allow = tuple(overrides.get("allow_modules") or ()) + _string_list(table, "allow-modules")
    env_items = list(_string_list(table, "env")) + list(overrides.get("env") or ())
    python = pick("python") or sys.executable
    image = pick("docker_image", "docker-image") or DEFAULT_DOCKER_IMAGE
    timeout = _number(merged, "timeout", DEFAULT_TIMEOUT)
    if timeout <= 0:
        raise ConfigError("timeout must be positive")
    return VerifyOptions(
        root=root,
        smoke=smoke.strip(),
        targets=targets,
        timeout=timeout,
        rtol=_number(merged, "rtol", DEFAULT_RTOL),
        atol=_number(merged, "atol", DEFAULT_ATOL),
        unsafe_fixes=bool(overrides.get("unsafe_fixes")),
        allow_modules=tuple(dict.fromkeys(allow)),
        docker_image=str(image),
        python=str(python),
        env=parse_env(env_items),
        keep_workspace=bool(overrides.get("keep_workspace")),
    )
