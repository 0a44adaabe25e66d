"""The effort of a fleet as a distribution, not only a sum: the median project, the largest,
and the few projects that make most of the total (two kernel-heavy projects can make 90% of a
headline, and a manager reading the sum alone would plan for the wrong projects)."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field

#: The projects that together make at least this share of the total, largest first, dominate it.
DOMINANT_SHARE = 0.5


@dataclass(frozen=True, slots=True)
class EffortSpread:
    """Hours per project summarised: total, median, largest, and who dominates the total."""

    total: float
    median: float
    largest: tuple[str, float] | None
    #: (project, hours, share of the total) of the projects that make ``DOMINANT_SHARE`` of it,
    #: when they are fewer than half of the projects (else no one dominates).
    dominant: list[tuple[str, float, float]] = field(default_factory=list)
    projects: int = 0

    def sentence(self) -> str:
        """One line for a page: median, largest, and the projects that dominate the total."""
        if not self.projects:
            return "no project assessed"
        text = f"{self.total:g} h in all; median {self.median:g} h per project"
        if self.largest is not None:
            text += f"; largest {self.largest[0]} ({self.largest[1]:g} h)"
        if self.dominant:
            names = ", ".join(
                f"{name} ({hours:g} h, {share:.0%})" for name, hours, share in self.dominant
            )
            verb = "makes" if len(self.dominant) == 1 else "make"
            text += f"; {len(self.dominant)} of {self.projects} projects {verb} "
            text += f"{sum(share for _, _, share in self.dominant):.0%} of the total: {names}"
        return text


def spread(hours: Sequence[tuple[str, float]]) -> EffortSpread:
    """The distribution of ``(project, hours)``."""
    if not hours:
        return EffortSpread(0.0, 0.0, None)
    total = round(sum(value for _, value in hours), 2)
    ordered = sorted(hours, key=lambda pair: (-pair[1], pair[0]))
    median = round(statistics.median(value for _, value in hours), 2)
    dominant: list[tuple[str, float, float]] = []
    if total > 0:
        running = 0.0
        for name, value in ordered:
            if running >= DOMINANT_SHARE * total or value <= 0:
                break
            running += value
            dominant.append((name, round(value, 2), value / total))
        if len(dominant) * 2 > len(hours):
            dominant = []  # most projects share the work: no one dominates
    largest = (ordered[0][0], round(ordered[0][1], 2))
    return EffortSpread(total, median, largest, dominant, len(hours))
