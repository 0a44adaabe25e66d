"""The emulation's own cost, measured in the run: rocm-sim against native on the migrated tree.

When both targets run and print a timing, each round runs the migrated tree natively and under
``rocm-sim`` one after the other (their order alternating from round to round), so each round
gives one pair whose only difference is the emulation. The overhead is the geometric mean of the
per-pair cost ratios (rocm-sim time ÷ native time; native ÷ rocm-sim for a throughput) with a
95 % t-interval on their logs (:func:`migrator.verify.stats.paired_ratio_interval`). Without the
native target, a timing or two complete pairs, it says why it could not be measured.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from migrator.verify.metrics import RunMetric
from migrator.verify.series import is_memory
from migrator.verify.stats import paired_ratio_interval

MEASURED = "measured"
NOT_MEASURED = "not-measured"


@dataclass(frozen=True, slots=True)
class Overhead:
    """rocm-sim's cost over native on the same tree, or why it could not be measured."""

    status: str
    reason: str = ""
    metric: str | None = None
    ratio: float | None = None
    interval: tuple[float, float] | None = None
    pairs: int = 0
    per_pair: tuple[float, ...] = ()

    def text(self) -> str:
        """One summary line."""
        if self.status != MEASURED or self.ratio is None or self.interval is None:
            return f"emulation overhead: could not be measured ({self.reason})"
        low, high = self.interval
        if low > 1.0:
            word = f"costs {self.ratio - 1:.1%}"
        elif high < 1.0:
            word = "faster under the emulation (noise between processes, or a different path)"
        else:
            word = "not distinguishable from none"
        return (
            f"emulation overhead: ×{self.ratio:.3f} [×{low:.3f}–×{high:.3f}] on {self.metric} "
            f"(rocm-sim vs native, migrated tree, {self.pairs} interleaved pairs): {word}"
        )

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "status": self.status,
            "reason": self.reason,
            "metric": self.metric,
            "cost_ratio": self.ratio,
            "interval": list(self.interval) if self.interval is not None else None,
            "pairs": self.pairs,
            "per_pair": list(self.per_pair),
            "text": self.text(),
        }


def _headline(metrics: Sequence[RunMetric]) -> RunMetric | None:
    """The first time, else the first throughput (memory is not speed)."""
    speed = [m for m in metrics if m.better is not None and not is_memory(m.name, m.unit)]
    ordered = [m for m in speed if m.better == "lower"] + [m for m in speed if m.better == "higher"]
    return ordered[0] if ordered else None


def emulation_overhead(
    native_rounds: Sequence[dict[str, RunMetric] | None] | None,
    sim_rounds: Sequence[dict[str, RunMetric] | None],
) -> Overhead:
    """The cost of the emulation from per-round metrics of the two targets (None: a round that
    did not run cleanly); ``native_rounds`` None when the native target did not run."""
    if native_rounds is None:
        return Overhead(
            NOT_MEASURED,
            "the migrated tree did not also run natively; add native to --targets",
        )
    first = next((metrics for metrics in sim_rounds if metrics), None)
    metric = _headline(list(first.values())) if first else None
    if metric is None:
        return Overhead(NOT_MEASURED, "the runs printed no time or throughput")
    name = metric.name
    native: list[float] = []
    sim: list[float] = []
    for left, right in zip(native_rounds, sim_rounds, strict=False):
        old = left.get(name) if left else None
        new = right.get(name) if right else None
        if old is None or new is None or old.figure is None or new.figure is None:
            continue
        if old.figure > 0 and new.figure > 0:
            native.append(old.figure)
            sim.append(new.figure)
    if len(native) < 2:
        return Overhead(
            NOT_MEASURED,
            f"{len(native)} complete native/rocm-sim pair(s) on {name}; two or more are needed "
            "(--timing-runs 2 or more)",
            metric=name,
            pairs=len(native),
        )
    if metric.better == "higher":  # a cost: the native throughput over the emulated one
        native, sim = sim, native
    measured = paired_ratio_interval(native, sim)
    if measured is None or measured.low is None or measured.high is None:
        return Overhead(NOT_MEASURED, "no interval", metric=name, pairs=len(native))
    return Overhead(
        MEASURED,
        metric=name,
        ratio=measured.ratio,
        interval=(measured.low, measured.high),
        pairs=len(native),
        per_pair=tuple(new / old for old, new in zip(native, sim, strict=True)),
    )
