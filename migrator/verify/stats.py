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
    return RatioInterval(math.exp(diff), math.exp(diff - half), math.exp(diff + half), runs)


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
    half = t_quantile(len(logs) - 1) * statistics.stdev(logs) / math.sqrt(len(logs))
    return RatioInterval(
        math.exp(mean), math.exp(mean - half), math.exp(mean + half), (len(pairs), len(pairs))
    )
