"""Throughput, time and memory side by side: the migrated/original ratio per metric and target.

A metric's figure for one run is the median of the values it printed, leaving out the first when
there are three or more (the first step usually includes compilation and warm-up). Timing-like
labels found on stdout are metrics by default; ``--metric NAME=REGEX[:higher|lower]`` adds one;
the probe's peak GPU memory and ``tokens_per_second`` are metrics too. A regression is a ratio
worse than ``1 ± threshold`` in the metric's direction (default 5%): flagged, never hidden.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from migrator.errors import ConfigError
from migrator.verify.series import NUMBER, Point, higher_is_better

DEFAULT_REGRESSION_THRESHOLD = 0.05
PEAK_MEMORY = "peak GPU memory (probe)"
TOKENS_PER_SECOND = "tokens_per_second"


@dataclass(frozen=True, slots=True)
class MetricSpec:
    """A user metric: ``NAME=REGEX`` with its direction."""

    name: str
    pattern: re.Pattern[str]
    higher_is_better: bool

    def describe(self) -> str:
        """``name=regex:higher`` (as given)."""
        return (
            f"{self.name}={self.pattern.pattern}:{'higher' if self.higher_is_better else 'lower'}"
        )


def parse_metric(text: str) -> MetricSpec:
    """``"step_ms=time (\\d+) ms:lower"`` → :class:`MetricSpec` (ConfigError when malformed)."""
    name, sep, rest = text.partition("=")
    if not sep or not name.strip() or not rest:
        raise ConfigError(f"--metric expects NAME=REGEX[:higher|lower], got {text!r}")
    direction: str | None = None
    head, colon, tail = rest.rpartition(":")
    if colon and tail in ("higher", "lower"):
        rest, direction = head, tail
    try:
        pattern = re.compile(rest)
    except re.error as error:
        raise ConfigError(f"--metric {name}: bad regular expression ({error})") from None
    better = higher_is_better(name) if direction is None else direction == "higher"
    return MetricSpec(name.strip(), pattern, better)


def extract_metric(spec: MetricSpec, stdout: str) -> list[float]:
    """Every number the metric's pattern captures (group ``value``, the first group, or all)."""
    values: list[float] = []
    number = re.compile(rf"^\s*(?:{NUMBER})\s*$", re.IGNORECASE)
    for match in spec.pattern.finditer(stdout):
        if "value" in match.groupdict():
            text = match["value"]
        elif match.re.groups:
            text = match.group(1)
        else:
            text = match.group(0)
        if text is not None and number.match(text):
            values.append(float(text))
    return values


def figure(values: Sequence[float]) -> float | None:
    """The median, leaving out the first value when there are three or more."""
    if not values:
        return None
    kept = list(values[1:]) if len(values) >= 3 else list(values)
    return float(statistics.median(kept))


@dataclass(frozen=True, slots=True)
class RunMetric:
    """One metric as measured in one run."""

    name: str
    values: tuple[float, ...]
    higher_is_better: bool
    unit: str | None = None

    @property
    def figure(self) -> float | None:
        """See :func:`figure`."""
        return figure(self.values)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "name": self.name,
            "figure": self.figure,
            "values": list(self.values),
            "unit": self.unit,
            "better": "higher" if self.higher_is_better else "lower",
        }


def run_metrics(
    stdout: str,
    printed: Mapping[str, Sequence[Point]],
    units: Mapping[str, str],
    specs: Sequence[MetricSpec],
    *,
    peak_memory_bytes: int = 0,
    tokens_per_second: float | None = None,
) -> dict[str, RunMetric]:
    """Every metric of one run: user specs, timing-like printed labels, probe figures."""
    metrics: dict[str, RunMetric] = {}
    for spec in specs:
        values = extract_metric(spec, stdout)
        if values:
            metrics[spec.name] = RunMetric(spec.name, tuple(values), spec.higher_is_better)
    for label, points in printed.items():
        if label in metrics or not points:
            continue
        unit = units.get(label)
        metrics[label] = RunMetric(
            label, tuple(point.value for point in points), higher_is_better(label, unit), unit
        )
    if tokens_per_second is not None and TOKENS_PER_SECOND not in metrics:
        metrics[TOKENS_PER_SECOND] = RunMetric(TOKENS_PER_SECOND, (tokens_per_second,), True)
    if peak_memory_bytes > 0:
        metrics[PEAK_MEMORY] = RunMetric(PEAK_MEMORY, (float(peak_memory_bytes),), False, "B")
    return metrics


@dataclass(frozen=True, slots=True)
class MetricRatio:
    """A metric of a migrated run against the baseline's."""

    name: str
    baseline: float
    migrated: float
    higher_is_better: bool
    threshold: float
    unit: str | None = None

    @property
    def ratio(self) -> float | None:
        """migrated / original (None when the original is 0)."""
        return self.migrated / self.baseline if self.baseline else None

    @property
    def regression(self) -> bool:
        """Worse than the threshold allows, in the metric's direction."""
        ratio = self.ratio
        if ratio is None:
            return False
        if self.higher_is_better:
            return ratio < 1.0 - self.threshold
        return ratio > 1.0 + self.threshold

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "name": self.name,
            "baseline": self.baseline,
            "migrated": self.migrated,
            "ratio": self.ratio,
            "unit": self.unit,
            "better": "higher" if self.higher_is_better else "lower",
            "threshold": self.threshold,
            "regression": self.regression,
        }

    def text(self) -> str:
        """``time per iteration 12.1 → 12.4 ms (×1.025)`` with a flag when it regressed."""
        unit = f" {self.unit}" if self.unit else ""
        ratio = self.ratio
        shown = f"×{ratio:.3f}" if ratio is not None else "no ratio"
        flag = f" REGRESSION (beyond {self.threshold:.0%})" if self.regression else ""
        return f"{self.name} {self.baseline:.4g} → {self.migrated:.4g}{unit} ({shown}){flag}"


def ratios(
    baseline: Mapping[str, RunMetric], migrated: Mapping[str, RunMetric], threshold: float
) -> list[MetricRatio]:
    """Ratios for every metric both runs measured."""
    found: list[MetricRatio] = []
    for name, base in baseline.items():
        new = migrated.get(name)
        if new is None:
            continue
        old_figure, new_figure = base.figure, new.figure
        if old_figure is None or new_figure is None:
            continue
        found.append(
            MetricRatio(name, old_figure, new_figure, base.higher_is_better, threshold, base.unit)
        )
    return found
