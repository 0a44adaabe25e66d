"""Small statistics for run-to-run noise: t quantiles and ratio intervals, without scipy.

Timings vary between processes on the same machine, so a ratio of two single runs says little.
Runs are the unit: each run gives one figure, and the migrated/original ratio is estimated on
the log scale (a two-sample t-interval with pooled variance), which keeps it symmetric in
"×2 slower" and "×0.5 faster". The benchmark script pairs alternating runs instead
(:func:`paired_ratio_interval`).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

CONFIDENCE = 0.95
_T975 = (
    12.706,
    4.303,
    3.182,
    2.776,
    2.571,
    2.447,
    2.365,
    2.306,
    2.262,
    2.228,
    2.201,
    2.179,
    2.160,
    2.145,
    2.131,
    2.120,
    2.110,
    2.101,
    2.093,
    2.086,
    2.080,
    2.074,
    2.069,
    2.064,
    2.060,
    2.056,
    2.052,
    2.048,
    2.045,
    2.042,
)
"""Two-sided 95% quantiles of Student's t for 1..30 degrees of freedom."""


def t_quantile(df: int) -> float:
    """The two-sided 95% quantile of Student's t with ``df`` degrees of freedom (df >= 1)."""
    if df < 1:
        raise ValueError("a t quantile needs at least one degree of freedom")
    if df <= len(_T975):
        return _T975[df - 1]
    return 1.96 + 2.5 / df


@dataclass(frozen=True, slots=True)
class RatioInterval:
    """A ratio (migrated/original) with its 95% interval; ``low``/``high`` None without one."""

    ratio: float
    low: float | None
    high: float | None
    runs: tuple[int, int]
    #: the standard deviation of one run's log figure (pooled over both sides; per pair for a
    #: paired interval): what :func:`runs_needed` plans from
    log_sd: float | None = None

    @property
    def has_interval(self) -> bool:
        """Enough runs to estimate the noise (three or more figures, at least one per side)."""
        return self.low is not None and self.high is not None


def ratio_interval(baseline: Sequence[float], migrated: Sequence[float]) -> RatioInterval | None:
    """migrated/original from per-run figures: geometric means, pooled log-scale t-interval.

    None when either side has no figure or the original's is 0. Non-positive figures fall back to
    a ratio of means without an interval.
    """
    if not baseline or not migrated:
        return None
    runs = (len(baseline), len(migrated))
    if min(baseline) <= 0 or min(migrated) <= 0:
        base_mean = statistics.fmean(baseline)
        if base_mean == 0:
            return None
        return RatioInterval(statistics.fmean(migrated) / base_mean, None, None, runs)
    logs_b = [math.log(value) for value in baseline]
    logs_m = [math.log(value) for value in migrated]
    diff = statistics.fmean(logs_m) - statistics.fmean(logs_b)
    df = len(logs_b) + len(logs_m) - 2
    if df < 1:
        return RatioInterval(math.exp(diff), None, None, runs)
    squares = sum((x - statistics.fmean(logs_b)) ** 2 for x in logs_b) + sum(
        (x - statistics.fmean(logs_m)) ** 2 for x in logs_m
    )
    pooled = squares / df
    error = math.sqrt(pooled * (1 / len(logs_b) + 1 / len(logs_m)))
    half = t_quantile(df) * error
    return RatioInterval(
        math.exp(diff), math.exp(diff - half), math.exp(diff + half), runs, math.sqrt(pooled)
    )


def paired_ratio_interval(
    baseline: Sequence[float], migrated: Sequence[float]
) -> RatioInterval | None:
    """migrated/original from alternating pairs: the geometric mean of per-pair ratios with a
    t-interval on their logs (n - 1 degrees of freedom); None with no complete pair."""
    pairs = [(b, m) for b, m in zip(baseline, migrated, strict=False) if b > 0 and m > 0]
    if not pairs:
        return None
    logs = [math.log(m / b) for b, m in pairs]
    mean = statistics.fmean(logs)
    if len(logs) < 2:
        return RatioInterval(math.exp(mean), None, None, (len(pairs), len(pairs)))
    spread = statistics.stdev(logs)
    half = t_quantile(len(logs) - 1) * spread / math.sqrt(len(logs))
    return RatioInterval(
        math.exp(mean),
        math.exp(mean - half),
        math.exp(mean + half),
        (len(pairs), len(pairs)),
        spread / math.sqrt(2),
    )


def half_width(log_sd: float, runs: int) -> float:
    """The half-width, on the log scale, of the two-sample interval of :func:`ratio_interval`
    with ``runs`` figures a side whose logs vary by ``log_sd``."""
    return t_quantile(2 * runs - 2) * log_sd * math.sqrt(2 / runs)


def runs_needed(log_sd: float, threshold: float, most: int) -> int | None:
    """Runs a side for an interval narrow enough to judge against ``threshold`` T: a half-width of
    at most ``log((1 + 2T) / (1 + T))``, so that a program slower by 2T is judged beyond T and an
    unchanged one within it. None when even ``most`` runs are not enough."""
    target = math.log((1 + 2 * threshold) / (1 + threshold))
    for runs in range(2, most + 1):
        if half_width(log_sd, runs) <= target:
            return runs
    return None
