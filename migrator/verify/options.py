"""``migrate verify`` settings: command line, then ``[tool.migrate.verify]``, then defaults."""

from __future__ import annotations

import math
import re
import shlex
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from migrator.errors import ConfigError
from migrator.verify.compare import DEFAULT_NOISE_MULTIPLE
from migrator.verify.metrics import (
    DEFAULT_TIMING_RUNS,
    DEFAULT_TIMING_THRESHOLD,
    MetricSpec,
    parse_metric,
)

TARGETS = ("native", "rocm-sim", "docker")
DEFAULT_TARGETS = ("native", "rocm-sim")
DEFAULT_TIMEOUT = 600.0
DEFAULT_RTOL = 1e-4
DEFAULT_ATOL = 1e-4
DEFAULT_DOCKER_IMAGE = "rocm/pytorch:latest"
DEFAULT_SETUP_TIMEOUT = 1800.0
DEFAULT_BASELINE_RUNS = 5
"""Runs of the unchanged original: five let a median outvote one outlier run and still give a
tolerance close to the noise (docs/verification.md)."""
MAX_RUNS = 50
CONFIG_KEYS = frozenset(
    {
        "smoke",
        "pytest",
        "compare",
        "metrics",
        "regression-threshold",
        "timing-threshold",
        "require-timing",
        "allow-uncompared",
        "setup",
        "setup-timeout",
        "timeout",
        "targets",
        "rtol",
        "atol",
        "allow-modules",
        "docker-image",
        "python",
        "env",
        "baseline-runs",
        "timing-runs",
        "noise-multiple",
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
    compare: tuple[re.Pattern[str], ...] = ()
    metrics: tuple[MetricSpec, ...] = ()
    #: the slowdown the user cares about: timings are judged against it
    timing_threshold: float = DEFAULT_TIMING_THRESHOLD
    #: a run whose timing is not judged, or judged a regression, fails
    require_timing: bool = False
    allow_uncompared: bool = False
    pytest_args: str | None = None
    setup: str | None = None
    setup_timeout: float = DEFAULT_SETUP_TIMEOUT
    #: runs of the unchanged original: its own spread widens the tolerance (1 = no measurement)
    baseline_runs: int = DEFAULT_BASELINE_RUNS
    #: runs per side, alternating, when the runs print timing metrics (1 = no interval)
    timing_runs: int = DEFAULT_TIMING_RUNS
    #: a float key may differ by this many times the baseline's own noise
    noise_multiple: float = DEFAULT_NOISE_MULTIPLE

    @property
    def regression_threshold(self) -> float:
        """The option's earlier name (``regression-threshold``)."""
        return self.timing_threshold


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
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or value < 0
    ):
        raise ConfigError(f"[tool.migrate.verify] {key} must be a finite, non-negative number")
    return float(value)


def _string_list(table: Mapping[str, Any], key: str, *, split: bool = True) -> tuple[str, ...]:
    value = table.get(key, [])
    if isinstance(value, str):
        value = [part for part in value.split(",") if part.strip()] if split else [value]
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

    pytest_args = pick("pytest")
    smoke = pick("smoke")
    if overrides.get("pytest") is not None and overrides.get("smoke") is None:
        smoke = None  # --pytest on the command line wins over a configured smoke command
    elif overrides.get("smoke") is not None and overrides.get("pytest") is None:
        pytest_args = None
    if pytest_args is not None:
        if not isinstance(pytest_args, str):
            raise ConfigError("[tool.migrate.verify] pytest must be a string of pytest arguments")
        if smoke is not None:
            raise ConfigError("give either a smoke command or --pytest, not both")
        smoke = pytest_command(pytest_args)
    if not isinstance(smoke, str) or not smoke.strip():
        raise ConfigError(
            'no smoke command: pass --smoke "python smoke.py", --pytest "tests/..." or set smoke '
            "in [tool.migrate.verify]"
        )
    targets = parse_targets(pick("targets") or DEFAULT_TARGETS)
    numbers = {
        key.replace("_", "-"): overrides[key]
        for key in (
            "timeout",
            "rtol",
            "atol",
            "regression_threshold",
            "timing_threshold",
            "setup_timeout",
            "baseline_runs",
            "timing_runs",
            "noise_multiple",
        )
        if overrides.get(key) is not None
    }
    merged = {**table, **numbers}
    compare = tuple(overrides.get("compare") or ()) or _string_list(table, "compare", split=False)
    metric_texts = tuple(overrides.get("metrics") or ()) + _string_list(
        table, "metrics", split=False
    )
    setup = pick("setup")
    if setup is not None and (not isinstance(setup, str) or not setup.strip()):
        raise ConfigError("[tool.migrate.verify] setup must be a shell command")
    allow_uncompared = bool(overrides.get("allow_uncompared")) or _flag(table, "allow-uncompared")
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
        compare=compile_compare(compare),
        metrics=tuple(parse_metric(text) for text in metric_texts),
        timing_threshold=_threshold(table, overrides),
        require_timing=bool(overrides.get("require_timing")) or _flag(table, "require-timing"),
        allow_uncompared=allow_uncompared,
        pytest_args=pytest_args,
        setup=setup.strip() if isinstance(setup, str) else None,
        setup_timeout=_positive(_number(merged, "setup-timeout", DEFAULT_SETUP_TIMEOUT)),
        baseline_runs=_count(merged, "baseline-runs", DEFAULT_BASELINE_RUNS),
        timing_runs=_count(merged, "timing-runs", DEFAULT_TIMING_RUNS),
        noise_multiple=_number(merged, "noise-multiple", DEFAULT_NOISE_MULTIPLE),
    )


def _threshold(table: Mapping[str, Any], overrides: Mapping[str, Any]) -> float:
    """``--timing-threshold`` (or its earlier name ``--regression-threshold``), else the same
    keys of the configuration; a positive fraction."""
    for name in ("timing_threshold", "regression_threshold"):
        if overrides.get(name) is not None:
            table = {name.replace("_", "-"): overrides[name]}
            break
    key = "timing-threshold" if "timing-threshold" in table else "regression-threshold"
    value = _number(table, key, DEFAULT_TIMING_THRESHOLD)
    if value <= 0:
        raise ConfigError(f"{key} must be a positive fraction (0.1 for 10 %)")
    return value


def _count(table: Mapping[str, Any], key: str, default: int) -> int:
    value = table.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_RUNS:
        raise ConfigError(f"{key} must be a whole number from 1 to {MAX_RUNS}")
    return value


def _positive(value: float) -> float:
    if value <= 0:
        raise ConfigError("setup-timeout must be positive")
    return value


def _flag(table: Mapping[str, Any], key: str) -> bool:
    value = table.get(key, False)
    if not isinstance(value, bool):
        raise ConfigError(f"[tool.migrate.verify] {key} must be true or false")
    return value


def compile_compare(patterns: Sequence[str]) -> tuple[re.Pattern[str], ...]:
    """Compile ``--compare`` patterns (ConfigError naming the bad one)."""
    compiled: list[re.Pattern[str]] = []
    for pattern in patterns:
        try:
            compiled.append(re.compile(pattern))
        except re.error as error:
            raise ConfigError(f"--compare {pattern!r}: bad regular expression ({error})") from None
    return tuple(compiled)


PYTEST_REPORT = "$MIGRATE_RUN_DIR/pytest-report.xml"


def pytest_command(args: str) -> str:
    """The smoke command that runs pytest with ``args`` and writes a JUnit XML report."""
    try:
        shlex.split(args)
    except ValueError as error:
        raise ConfigError(f"--pytest {args!r}: {error}") from None
    return (
        "python -m pytest -p no:cacheprovider -q -rA --color=no "
        f'--junitxml="{PYTEST_REPORT}" -o junit_family=xunit2 {args}'
    )
