"""The readiness score and verdict of a project, computed from its work items.

::

    weight(item) = consequence points x location factor x size factor (x 3 for a port)
        consequence points: crash at import 12, crash on a path 6, silent CPU fallback 6,
                            performance 1.5, hygiene 0
        location factor:    core (reachable from entry points) 1, deployment files 0.5,
                            tests / examples / benchmarks / docs / tooling / unreachable /
                            opt-in code 0.1
        size factor:        1 + 0.25 x log2(files), at most 2
        x 0.5 when the project's AMD path provides for the item
    penalty = sum of the core and deployment weights, heaviest first, the n-th (from 0) times
              0.75 ** n, then the heaviest peripheral weight as one more term of that series
              (peripheral items are shown apart; the worst of them counts, not their number)
    score   = the verdict's band, placed in it by the penalty:
              low + (high - low) x 0.5 ^ (penalty / 12)
              ready 70-100, needs work 35-69, blocked 0-34

Verdicts follow stated rules, each printed with the one or two items that decided it:
``blocked`` when an item in code every run loads needs a port, crashes and the project ships
no AMD path;
``needs work`` when a core or deployment item breaks something (crash or silent CPU fallback);
``ready`` otherwise (only performance, hygiene, peripheral or opt-in items).
The score never contradicts the verdict: a ready project always scores above one that needs
work, and that above a blocked one; within a verdict, less penalty scores higher.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass, field

from migrator.reporting.readiness.amd_evidence import Evidence
from migrator.reporting.readiness.roles import CORE, DEPLOY, PERIPHERAL
from migrator.reporting.readiness.workitems import AMD_PATH_CREDIT, WorkItem

#: Penalty that halves the score.
HALF_LIFE = 12.0
#: Each further work item (heaviest first) counts this much less than the one before: the worst
#: problems decide readiness; the volume of work shows in the effort, not in the score.
RANK_DECAY = 0.75
#: Score range (lowest, highest) of each verdict: the verdict decides the band, the penalty the
#: place in it, so scores spread across the range and never contradict the verdict.
BANDS: dict[str, tuple[int, int]] = {
    "ready": (70, 100),
    "needs-work": (35, 69),
    "blocked": (0, 34),
}

FORMULA_LINES: tuple[str, ...] = (
    "work item = one distinct problem (one package, one container file, or one rule) in one "
    "location tier, after grouping its findings",
    "weight = consequence points x location factor x size factor x share of the requested GPU "
    "targets it matters on (x 3 when it needs a port in code every run loads)",
    "consequence points = 12 crash at import, 6 crash on a path, 6 silent CPU fallback, "
    "1.5 performance, 0 hygiene",
    "location factor = 1 core (reachable from entry points), 0.5 deployment files, "
    "0.1 tests/examples/benchmarks/docs/tooling/unreachable modules/opt-in code "
    "(plugins, registered alternatives, default-off branches, optional extras)",
    "size factor = 1 + 0.25 x log2(files), at most 2",
    f"x {1 - AMD_PATH_CREDIT:g} when the project's AMD path provides for the item",
    f"penalty = sum of the core and deployment weights, heaviest first, the n-th (from 0) times "
    f"{RANK_DECAY:g}^n, then the heaviest peripheral weight as one more term (the worst "
    "peripheral item counts, not how many there are)",
    f"score = low + (high - low) x 0.5 ^ (penalty / {HALF_LIFE:g}), in the verdict's band: "
    + ", ".join(
        f"{verdict.replace('-', ' ')} {low}-{high}" for verdict, (low, high) in BANDS.items()
    ),
)

VERDICT_RULES: tuple[str, ...] = (
    "blocked: a work item in code every run loads needs a port (no drop-in ROCm equivalent), "
    "crashes, and the project ships no AMD path",
    "needs work: a core or deployment work item crashes or silently falls back to the CPU, "
    "and the project's AMD path does not cover it",
    "ready: nothing reachable from the entry points breaks (at most performance or hygiene "
    "items, or items in tests, examples, benchmarks, unreachable or opt-in code)",
    "not ready until checked: a project that would be ready needs work while its GPU code "
    "imports an unknown native dependency (not in the knowledge tables, not read from an "
    "environment with --python) or a CUDA-only build of one; the verdict names each and what "
    "to check",
)

EFFORT_ASSUMPTIONS: tuple[str, ...] = (
    "Hours are per work item, not per finding: one pattern applied across its files.",
    "A fix exists: 0.25 h to review the `migrate fix` diff of the item.",
    "Documented pattern: the rule's estimate, +50% per further file (at most 5x).",
    "Port: 40 h, +8 h per further file (a new backend or kernel; weeks when it is the core).",
    "Peripheral items (tests, examples, benchmarks, unreachable code) are counted apart.",
    "Not included: building ROCm containers, CI on AMD hardware, performance tuning.",
)


class Verdict(enum.Enum):
    """Where a project stands; ordered from best to worst."""

    READY = "ready"
    NEEDS_WORK = "needs-work"
    BLOCKED = "blocked"

    @property
    def label(self) -> str:
        """The words shown to users."""
        return self.value.replace("-", " ")


@dataclass(slots=True)
class Readiness:
    """Score, verdict and the items that decided it."""

    score: int
    penalty: float
    verdict: Verdict
    deciding: list[WorkItem]
    reason: str
    items: list[WorkItem] = field(default_factory=list)


def score_from_penalty(penalty: float, verdict: Verdict = Verdict.READY) -> int:
    """Map penalty points into the verdict's band of 0-100."""
    low, high = BANDS[verdict.value]
    factor: float = 0.5 ** (max(penalty, 0.0) / HALF_LIFE)
    return max(low, min(high, round(low + (high - low) * factor)))


def penalty_of_items(items: Sequence[WorkItem]) -> float:
    """Penalty points of work items: core and deployment items heaviest first with a decay, then
    the heaviest peripheral item as one more term. Tests, examples, benchmarks and unreachable
    code are many small items in a large repository; counting each would rank a project by the
    size of its examples folder rather than by what its users run."""
    weights = sorted((item.weight for item in items if item.tier != PERIPHERAL), reverse=True)
    apart = max((item.weight for item in items if item.tier == PERIPHERAL), default=0.0)
    weights.append(apart)
    return sum(weight * RANK_DECAY**rank for rank, weight in enumerate(weights))


def readiness(items: Sequence[WorkItem], amd_path: Sequence[Evidence] = ()) -> Readiness:
    """Score and verdict of a project's work items."""
    penalty = penalty_of_items(items)
    reachable = [item for item in items if item.tier in (CORE, DEPLOY) and not item.covered_by]
    ports = [
        item
        for item in reachable
        if item.tier == CORE
        and item.eager
        and item.basis == "port"
        and item.breaks
        and item.crashes
    ]
    if ports and not amd_path:
        return Readiness(
            score_from_penalty(penalty, Verdict.BLOCKED),
            penalty,
            Verdict.BLOCKED,
            ports[:2],
            "a core path depends on something with no drop-in ROCm equivalent",
            list(items),
        )
    breaking = [item for item in reachable if item.breaks]
    if breaking:
        reason = "reachable code or its deployment breaks on ROCm"
        if ports:
            reason += " (the port it needs is covered by the project's AMD path)"
        return Readiness(
            score_from_penalty(penalty, Verdict.NEEDS_WORK),
            penalty,
            Verdict.NEEDS_WORK,
            breaking[:2],
            reason,
            list(items),
        )
    minor = [item for item in reachable if item.weight > 0]
    reason = "nothing reachable from the entry points breaks on ROCm"
    if amd_path:
        reason += "; the project ships an AMD path"
        if not minor:  # what the AMD path takes care of is then what decided it
            minor = [
                item
                for item in items
                if item.tier in (CORE, DEPLOY) and item.covered_by and item.weight > 0
            ]
    return Readiness(
        score_from_penalty(penalty, Verdict.READY),
        penalty,
        Verdict.READY,
        minor[:2],
        reason,
        list(items),
    )
