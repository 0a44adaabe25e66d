"""Throughput, time and memory side by side: the migrated/original ratio per metric and target.

A metric's figure for one run is the median of the values it printed, leaving out the first when
there are three or more (the first step usually includes compilation and warm-up). Timing-like
labels found on stdout are metrics by default; ``--metric NAME=REGEX[:higher|lower]`` adds one
(an auto-detected label that printed the same values is then dropped: each figure counts once);
the probe's peak GPU memory and ``tokens_per_second`` are metrics too.

Timings vary between processes, so each ratio is a measurement: with repeated, alternating runs
(``--timing-runs``) it carries a 95% interval (:mod:`migrator.verify.stats`). Against the change
the user cares about (``--timing-threshold`` T, default 10%) a ratio is a regression when the
whole interval lies beyond it in the metric's worse direction (a time above ``1 + T``, a
throughput below ``1 / (1 + T)``: the same slowdown), and "not judged" when the interval reaches
beyond it without lying wholly there: the runs cannot tell. The word for a change follows the
direction: a time that rose is "slower", a throughput that rose is "faster", memory is
"more"/"less", and a metric of unknown direction has only "changed".
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from migrator.errors import ConfigError
from migrator.verify.series import NUMBER, Point, is_memory
from migrator.verify.series import direction as _direction
from migrator.verify.stats import CONFIDENCE, RatioInterval, ratio_interval

DEFAULT_TIMING_THRESHOLD = 0.10
"""The slowdown the user cares about: timings are judged against it (``--timing-threshold``)."""
DEFAULT_REGRESSION_THRESHOLD = DEFAULT_TIMING_THRESHOLD  # the option's earlier name
DEFAULT_TIMING_RUNS = 5
"""Runs a side when timings are printed. A steady workload's figure varies by about 5 % from
process to process (standard deviation of its log); five runs a side then give an interval of
±7.3 %, narrow enough that a 20 % slowdown is judged beyond 10 % and an unchanged program within
it (:func:`migrator.verify.stats.runs_needed`; measurements in docs/verification.md)."""
JUDGED = "judged"
NOT_JUDGED = "not judged"
REGRESSION = "regression"
PEAK_MEMORY = "peak GPU memory (probe)"
TOKENS_PER_SECOND = "tokens_per_second"


@dataclass(frozen=True, slots=True)
class MetricSpec:
    """A user metric: ``NAME=REGEX`` with its direction."""

    name: str
    pattern: re.Pattern[str]
    better: str | None

    @property
    def higher_is_better(self) -> bool:
        """Whether a larger figure is better (throughput)."""
        return self.better == "higher"

    def describe(self) -> str:
        """``name=regex:higher`` (as given; no suffix when the direction is unknown)."""
        suffix = f":{self.better}" if self.better else ""
        return f"{self.name}={self.pattern.pattern}{suffix}"


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
    if direction is None:  # from the name, else from the pattern's own words (``(\\d+) tok/s``)
        direction = _direction(name) or _direction(rest.replace("\\", ""))
    return MetricSpec(name.strip(), pattern, direction)


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
    better: str | None
    unit: str | None = None

    @property
    def higher_is_better(self) -> bool:
        """Whether a larger figure is better (throughput)."""
        return self.better == "higher"

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
            "better": self.better,
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
    """Every metric of one run: user specs, timing-like printed labels, probe figures.

    A printed label whose values a user metric already captured is the same figure under two
    names: it is kept once, under the user's name.
    """
    metrics: dict[str, RunMetric] = {}
    for spec in specs:
        values = extract_metric(spec, stdout)
        if values:
            metrics[spec.name] = RunMetric(spec.name, tuple(values), spec.better)
    taken = {metric.values for metric in metrics.values()}
    for label, points in printed.items():
        if label in metrics or not points:
            continue
        printed_values = tuple(point.value for point in points)
        if printed_values in taken:
            continue
        unit = units.get(label)
        metrics[label] = RunMetric(label, printed_values, _direction(label, unit), unit)
        taken.add(printed_values)
    if tokens_per_second is not None and TOKENS_PER_SECOND not in metrics:
        if not any(metric.figure == tokens_per_second for metric in metrics.values()):
            metrics[TOKENS_PER_SECOND] = RunMetric(
                TOKENS_PER_SECOND, (tokens_per_second,), "higher"
            )
    if peak_memory_bytes > 0:
        metrics[PEAK_MEMORY] = RunMetric(PEAK_MEMORY, (float(peak_memory_bytes),), "lower", "B")
    return metrics


def is_timing_metric(name: str) -> bool:
    """Every metric but the probe's peak memory varies between runs: repeats measure it."""
    return name != PEAK_MEMORY


@dataclass(frozen=True, slots=True)
class MetricRatio:
    """A metric of a migrated run against the baseline's, from one figure per run."""

    name: str
    baseline_figures: tuple[float, ...]
    migrated_figures: tuple[float, ...]
    better: str | None
    threshold: float
    unit: str | None = None

    @property
    def higher_is_better(self) -> bool:
        """Whether a larger figure is better (throughput)."""
        return self.better == "higher"

    @property
    def baseline(self) -> float:
        """The original's figure (median over its runs)."""
        return float(statistics.median(self.baseline_figures))

    @property
    def migrated(self) -> float:
        """The migrated run's figure (median over its runs)."""
        return float(statistics.median(self.migrated_figures))

    @property
    def measured(self) -> RatioInterval | None:
        """The ratio with its interval (None when the original's figure is 0)."""
        return ratio_interval(self.baseline_figures, self.migrated_figures)

    @property
    def ratio(self) -> float | None:
        """migrated / original (geometric means over runs; None when the original is 0)."""
        measured = self.measured
        return measured.ratio if measured is not None else None

    @property
    def interval(self) -> tuple[float, float] | None:
        """The 95% interval of the ratio, when both sides ran often enough to estimate noise."""
        measured = self.measured
        if measured is None or measured.low is None or measured.high is None:
            return None
        return measured.low, measured.high

    @property
    def clear(self) -> bool:
        """The interval excludes 1: the change is larger than the run-to-run noise."""
        interval = self.interval
        return interval is not None and (interval[0] > 1.0 or interval[1] < 1.0)

    @property
    def change(self) -> str:
        """``slower``/``faster`` (``more``/``less`` for memory, ``changed`` without a direction),
        ``within noise`` when the interval holds 1, ``not judged`` without an interval."""
        ratio = self.ratio
        if ratio is None or self.interval is None:
            return "not judged"
        if not self.clear:
            return "within noise"
        rose = ratio > 1.0
        if self.better is None:
            return "changed"
        if is_memory(self.name, self.unit):
            return "more" if rose else "less"
        return "faster" if rose == (self.better == "higher") else "slower"

    @property
    def limit(self) -> float:
        """The ratio at the threshold on the worse side: ``1 + T`` for a time, ``1 / (1 + T)``
        for a throughput (the same slowdown)."""
        return 1.0 / (1.0 + self.threshold) if self.better == "higher" else 1.0 + self.threshold

    @property
    def regression(self) -> bool:
        """The whole interval lies beyond the threshold, in the metric's worse direction."""
        interval = self.interval
        if interval is None or self.better is None:
            return False
        if self.better == "higher":
            return interval[1] < self.limit
        return interval[0] > self.limit

    @property
    def judgement(self) -> str | None:
        """``regression``; ``not judged`` when the interval (or its absence) cannot exclude a
        change of the threshold's size in the worse direction; ``judged`` otherwise; None for a
        metric without a direction."""
        if self.better is None:
            return None
        interval = self.interval
        if interval is None:
            return NOT_JUDGED
        if self.regression:
            return REGRESSION
        worse = interval[0] if self.better == "higher" else interval[1]
        beyond = worse < self.limit if self.better == "higher" else worse > self.limit
        return NOT_JUDGED if beyond else JUDGED

    @property
    def log_sd(self) -> float | None:
        """How much one run's figure varies (standard deviation of its log, both sides pooled)."""
        measured = self.measured
        return measured.log_sd if measured is not None else None

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        interval = self.interval
        return {
            "name": self.name,
            "baseline": self.baseline,
            "migrated": self.migrated,
            "ratio": self.ratio,
            "interval": list(interval) if interval is not None else None,
            "confidence": CONFIDENCE,
            "runs": [len(self.baseline_figures), len(self.migrated_figures)],
            "baseline_figures": list(self.baseline_figures),
            "migrated_figures": list(self.migrated_figures),
            "change": self.change,
            "unit": self.unit,
            "better": self.better,
            "threshold": self.threshold,
            "regression": self.regression,
            "judgement": self.judgement,
        }

    def text(self) -> str:
        """``time per iteration 12.1 → 24.4 ms (×2.017 [×1.96–×2.08], slower; 2+2 runs)`` with a
        flag when the interval lies beyond the threshold."""
        unit = f" {self.unit}" if self.unit else ""
        ratio = self.ratio
        interval = self.interval
        runs = f"{len(self.baseline_figures)}+{len(self.migrated_figures)} runs"
        if ratio is None:
            shown = "no ratio"
        elif interval is None:
            shown = f"×{ratio:.3f}; {runs}, too few to tell from noise"
        else:
            judged = (
                f", not judged against {self.threshold:.0%}" if self.judgement == NOT_JUDGED else ""
            )
            shown = (
                f"×{ratio:.3f} [×{interval[0]:.3f}–×{interval[1]:.3f}], {self.change}{judged}; "
                f"{runs}"
            )
        flag = f" REGRESSION (beyond {self.threshold:.0%})" if self.regression else ""
        return f"{self.name} {self.baseline:.4g} → {self.migrated:.4g}{unit} ({shown}){flag}"


def ratios(
    baseline: Sequence[Mapping[str, RunMetric]],
    migrated: Sequence[Mapping[str, RunMetric]],
    threshold: float,
) -> list[MetricRatio]:
    """Ratios for every metric both sides measured, from one figure per run of each side."""
    found: list[MetricRatio] = []
    if not baseline or not migrated:
        return found
    for name, base in baseline[0].items():
        old = _figures(baseline, name)
        new = _figures(migrated, name)
        if not old or not new:
            continue
        found.append(MetricRatio(name, old, new, base.better, threshold, base.unit))
    return found


def _figures(runs: Sequence[Mapping[str, RunMetric]], name: str) -> tuple[float, ...]:
    figures: list[float] = []
    for metrics in runs:
        metric = metrics.get(name)
        value = metric.figure if metric is not None else None
        if value is not None:
            figures.append(value)
    return tuple(figures)
