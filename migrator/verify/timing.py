"""The timing verdict of one migrated run, judged against the slowdown the user cares about.

Each metric of a run carries a ratio with its 95 % interval (:mod:`migrator.verify.metrics`). The
run's timing is a **regression** when a timing metric's whole interval lies beyond the threshold
(``--timing-threshold``, default 10 %), **not judged** when an interval reaches beyond it without
lying wholly there (too few runs for the noise: the verdict names the ``--timing-runs`` that
would do), and otherwise **faster**, **slower** (within the threshold) or **within noise**, named
after its headline metric: the first time, else the first throughput. Memory is not timing. A
run that printed no timing is **not measured**. None of these fails a run unless
``--require-timing`` asks that the timing be judged and within the threshold.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from migrator.verify.metrics import (
    DEFAULT_TIMING_RUNS,
    NOT_JUDGED,
    REGRESSION,
    MetricRatio,
    is_timing_metric,
)
from migrator.verify.series import is_memory
from migrator.verify.stats import runs_needed

FASTER = "faster"
SLOWER = "slower"
WITHIN_NOISE = "within-noise"
NOT_JUDGED_STATUS = "not-judged"
REGRESSION_STATUS = "regression"
NOT_MEASURED = "not-measured"
ACCEPTABLE = frozenset({FASTER, SLOWER, WITHIN_NOISE})
"""Judged, and no slowdown beyond the threshold."""


@dataclass(frozen=True, slots=True)
class TimingVerdict:
    """What the runs say about one migrated run's speed against the original's."""

    status: str
    threshold: float
    metric: str | None = None
    ratio: float | None = None
    interval: tuple[float, float] | None = None
    runs: tuple[int, int] | None = None
    #: the ``--timing-runs`` that would judge it (not judged only); None when none would
    rerun_with: int | None = None
    #: how much one run's figure varies (standard deviation of its log)
    log_sd: float | None = None

    @property
    def acceptable(self) -> bool:
        """Judged, and no slowdown beyond the threshold (what ``--require-timing`` asks)."""
        return self.status in ACCEPTABLE

    def _measured(self) -> str:
        ratio = f"×{self.ratio:.2f}" if self.ratio is not None else "no ratio"
        if self.interval is not None:
            ratio += f" [×{self.interval[0]:.2f}–×{self.interval[1]:.2f}]"
        runs = f"; {self.runs[0]}+{self.runs[1]} runs" if self.runs else ""
        return f"{ratio} on {self.metric}{runs}"

    def text(self) -> str:
        """One summary line: ``timing: faster ×0.80 [×0.75–×0.85] on time per step; 5+5 runs``."""
        limit = f"{self.threshold:.0%}"
        if self.status == NOT_MEASURED:
            return (
                "timing: not measured (no run printed a time or throughput; --metric "
                "NAME=REGEX adds one)"
            )
        if self.status == REGRESSION_STATUS:
            return f"timing: REGRESSION {self._measured()}; beyond {limit}"
        if self.status == NOT_JUDGED_STATUS:
            if self.interval is None:
                why = f"one run a side: no interval on {self.metric}"
            else:
                low, high = self.interval
                noisy = "too few runs" if self.rerun_with is not None else "runs too noisy"
                why = (
                    f"{noisy}: interval ×{low:.2f}–×{high:.2f} on {self.metric} cannot exclude "
                    f"a {limit} slowdown"
                )
            if self.rerun_with is not None:
                return f"timing: not judged ({why}); rerun with --timing-runs {self.rerun_with}"
            spread = f"{self.log_sd:.0%}" if self.log_sd is not None else "too much"
            return (
                f"timing: not judged ({why}); one run's figure varies by {spread}, more than "
                "50 runs a side could resolve: quieten the machine or raise --timing-threshold"
            )
        word = {FASTER: "faster", SLOWER: "slower", WITHIN_NOISE: "within noise"}[self.status]
        within = f"; within {limit}" if self.status != FASTER else ""
        return f"timing: {word} {self._measured()}{within}"

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "status": self.status,
            "threshold": self.threshold,
            "metric": self.metric,
            "ratio": self.ratio,
            "interval": list(self.interval) if self.interval is not None else None,
            "runs": list(self.runs) if self.runs is not None else None,
            "rerun_with": self.rerun_with,
            "log_sd": self.log_sd,
            "acceptable": self.acceptable,
            "text": self.text(),
        }


def timing_ratios(ratios: Sequence[MetricRatio]) -> list[MetricRatio]:
    """The ratios that measure speed: a direction, not memory; times first, then throughputs."""
    speed = [
        ratio
        for ratio in ratios
        if ratio.better is not None
        and is_timing_metric(ratio.name)
        and not is_memory(ratio.name, ratio.unit)
    ]
    return [ratio for ratio in speed if ratio.better == "lower"] + [
        ratio for ratio in speed if ratio.better == "higher"
    ]


def _rerun_with(ratio: MetricRatio, most: int) -> int | None:
    runs = max(len(ratio.baseline_figures), len(ratio.migrated_figures))
    log_sd = ratio.log_sd
    if log_sd is None:  # one run a side: nothing known of the noise yet
        return min(most, max(DEFAULT_TIMING_RUNS, runs * 2))
    needed = runs_needed(log_sd, ratio.threshold, most)
    if needed is None:
        return None
    # The estimate of the noise is rough and the ratio may sit near the threshold: never
    # suggest fewer runs than would add information.
    return min(most, max(needed, runs + 1))


def judge(ratios: Sequence[MetricRatio], threshold: float, most: int) -> TimingVerdict:
    """The run's timing verdict from its metric ratios (see the module docstring)."""
    speed = timing_ratios(ratios)
    if not speed:
        return TimingVerdict(NOT_MEASURED, threshold)
    regressed = [ratio for ratio in speed if ratio.judgement == REGRESSION]
    unjudged = [ratio for ratio in speed if ratio.judgement == NOT_JUDGED]
    if regressed:
        return _verdict(REGRESSION_STATUS, regressed[0], threshold)
    if unjudged:
        return _verdict(NOT_JUDGED_STATUS, unjudged[0], threshold, _rerun_with(unjudged[0], most))
    headline = speed[0]
    change = headline.change
    status = {"faster": FASTER, "slower": SLOWER}.get(change, WITHIN_NOISE)
    return _verdict(status, headline, threshold)


def _verdict(
    status: str, ratio: MetricRatio, threshold: float, rerun_with: int | None = None
) -> TimingVerdict:
    return TimingVerdict(
        status,
        threshold,
        metric=ratio.name,
        ratio=ratio.ratio,
        interval=ratio.interval,
        runs=(len(ratio.baseline_figures), len(ratio.migrated_figures)),
        rerun_with=rerun_with,
        log_sd=ratio.log_sd,
    )
