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

Verdicts follow one set of stated rules (``VERDICT_RULES``, checked in order), each printed with
the items that decided it: every work item has a readiness class (``item_class``: port, breaks,
minor, none) from its basis and consequence alone, so the same kind of deciding item gives the same
verdict in every project, and the effort bounds (``READY_MAX_HOURS``, ``PORT_BLOCK_HOURS``) keep the
hours beside a verdict consistent with it.
The score never contradicts the verdict: a ready project always scores above one that needs
work, and that above a blocked one; within a verdict, less penalty scores higher.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass, field

from migrator.model import ImportedPackage
from migrator.reporting.readiness.amd_evidence import Evidence
from migrator.reporting.readiness.native import native_reason
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

#: A ready project has at most this many hours of reachable work (about one engineer-week);
#: more is "needs work" whatever the items are.
READY_MAX_HOURS = 40.0
#: Port work (no drop-in ROCm equivalent) in reachable code, from this many hours on (about two
#: engineer-weeks), makes a project that ships no AMD path blocked: weeks of porting on a path its
#: users take is not "needs work". A project with an AMD path is never blocked (a partial port,
#: whose ROCm build leaves the unported extensions out, needs work).
PORT_BLOCK_HOURS = 80.0

#: The readiness class of a work item, from its basis and consequence alone (``item_class``),
#: and what it makes of a project when it is in reachable code the AMD path does not cover.
ITEM_CLASSES: dict[str, str] = {
    "port": "needs a port and breaks (crash or silent CPU fallback) in the project's code or its "
    "declared dependencies: without an AMD path, blocked in code every run loads or from "
    f"{PORT_BLOCK_HOURS:g} h of port work on; else needs work",
    "breaks": "breaks (crash or silent CPU fallback) with a fix or a documented pattern: "
    "needs work",
    "minor": "runs, slower or degraded: ready",
    "none": "no effect on ROCm: ready",
}

#: The verdict rules by id, in the order they are checked; the first that applies decides.
VERDICT_RULE_TEXT: dict[str, str] = {
    "port-eager": "blocked: a work item in code every run loads needs a port (no drop-in ROCm "
    "equivalent), crashes, and the project ships no AMD path",
    "port-hours": f"blocked: reachable code needs {PORT_BLOCK_HOURS:g} h or more of port work "
    "(kernels or backends with no drop-in ROCm equivalent) and the project ships no AMD path",
    "breaks": "needs work: a core or deployment work item crashes or silently falls back to the "
    "CPU, and the project's AMD path does not cover it (unless the project ships an AMD path and "
    "only deployment files break; a CUDA extension build whose kernels port mechanically is a "
    "build to check, below)",
    "unknown": "needs work: nothing known breaks, but files of code users run could not be "
    "analysed (what they hold is unknown)",
    "unknown-native": "needs work (not ready until checked): nothing known breaks, but code users "
    "run imports, as a module loads, a native dependency migrate does not know (not in its "
    "tables, not read from an environment with --python) or a CUDA-only build of one; the "
    "verdict names each and what to check",
    "deploy-only": "ready (with work items): the project ships an AMD path and what still breaks "
    "is only in deployment files (container recipes, compose files, launch scripts)",
    "effort": f"needs work: nothing reachable breaks, but the reachable work exceeds "
    f"{READY_MAX_HOURS:g} h",
    "build-check": "ready (with work items): what remains on the reachable path is building the "
    "project's CUDA extensions on ROCm, whose kernels port mechanically (hipify maps every "
    "construct; no site needs a port or an edit): PyTorch's cpp_extension hipifies and builds "
    "them with hipcc; build them there and check their outputs",
    "ready": "ready: nothing reachable from the entry points breaks (at most performance or "
    "hygiene items, or items in tests, examples, benchmarks, unreachable or opt-in code)",
}
VERDICT_RULES: tuple[str, ...] = tuple(VERDICT_RULE_TEXT.values())

EFFORT_ASSUMPTIONS: tuple[str, ...] = (
    "Hours are per work item, not per finding: one pattern applied across its files.",
    "A fix exists: 0.25 h to review the `migrate fix` diff of the item.",
    "Documented pattern: the rule's estimate, +50% per further file (at most 5x).",
    "Port: 40 h, +8 h per further file (a new backend or kernel; weeks when it is the core).",
    "Kernel code (rules that read C/C++/CUDA sources), per site and class: each rule's hours for "
    "its first site, half of them for each further file, a tenth for each further site in a "
    "file already counted (a construct ported once is repeated, not re-invented).",
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
    """Score, verdict, the items that decided it and the stated rule that applied."""

    score: int
    penalty: float
    verdict: Verdict
    deciding: list[WorkItem]
    reason: str
    items: list[WorkItem] = field(default_factory=list)
    #: The id of the rule that decided (``VERDICT_RULE_TEXT``).
    rule: str = "ready"


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


def item_class(item: WorkItem) -> str:
    """``port``, ``breaks``, ``minor`` or ``none`` (``ITEM_CLASSES``): what kind of problem a work
    item is, from its basis, consequence and tier alone, whatever project it is in (a port
    declared only in a deployment file is a recipe to change: it breaks, it is not a port)."""
    if item.breaks:
        return "port" if item.basis == "port" and item.tier == CORE else "breaks"
    return "minor" if item.consequence == "performance" else "none"


def port_hours(items: Sequence[WorkItem]) -> float:
    """Hours of port work in reachable code (core tier: not tests, examples or opt-in code) that
    the project's AMD path does not cover."""
    return sum(
        item.hours
        for item in items
        if item.tier == CORE and not item.covered_by and item_class(item) == "port"
    )


def reachable_hours(items: Sequence[WorkItem]) -> float:
    """Hours of the core and deployment work items the AMD path does not cover (the effort)."""
    return sum(item.hours for item in items if item.tier != PERIPHERAL and not item.covered_by)


def _decide(
    verdict: Verdict,
    rule: str,
    penalty: float,
    deciding: Sequence[WorkItem],
    reason: str,
    items: Sequence[WorkItem],
) -> Readiness:
    return Readiness(
        score_from_penalty(penalty, verdict),
        penalty,
        verdict,
        list(deciding),
        reason,
        list(items),
        rule,
    )


def readiness(
    items: Sequence[WorkItem],
    amd_path: Sequence[Evidence] = (),
    unread: Sequence[str] = (),
    native: Sequence[ImportedPackage] = (),
) -> Readiness:
    """Score and verdict of a project's work items, by the first rule of ``VERDICT_RULE_TEXT``
    that applies; ``unread``: files of core code the scan could not analyse, ``native``: unknown
    or CUDA-only native dependencies imported as a module loads from code users run
    (``native.counting``). Unknown is not fine: both keep the project from "ready"."""
    penalty = penalty_of_items(items)
    reachable = [item for item in items if item.tier in (CORE, DEPLOY) and not item.covered_by]
    ports = [
        item
        for item in reachable
        if item.tier == CORE and item.eager and item_class(item) == "port" and item.crashes
    ]
    if ports and not amd_path:
        return _decide(
            Verdict.BLOCKED,
            "port-eager",
            penalty,
            ports[:2],
            "a core path depends on something with no drop-in ROCm equivalent",
            items,
        )
    porting = port_hours(items)
    if porting >= PORT_BLOCK_HOURS and not amd_path:
        heaviest = sorted(
            (item for item in reachable if item.tier == CORE and item_class(item) == "port"),
            key=lambda item: (-item.hours, item.key),
        )
        return _decide(
            Verdict.BLOCKED,
            "port-hours",
            penalty,
            heaviest[:2],
            f"reachable code needs {porting:g} h of port work (at least {PORT_BLOCK_HOURS:g} h: "
            "weeks of porting on a path its users take)",
            items,
        )
    builds = [item for item in reachable if item.breaks and item.build_check]
    breaking = [item for item in reachable if item.breaks and not item.build_check]
    deploy_only = bool(breaking and amd_path and all(item.tier == DEPLOY for item in breaking))
    if breaking and not deploy_only:
        reason = "reachable code or its deployment breaks on ROCm"
        if ports:
            reason += " (the port it needs is covered by the project's AMD path)"
        return _decide(Verdict.NEEDS_WORK, "breaks", penalty, breaking[:2], reason, items)
    if unread:
        named = ", ".join(f"`{path}`" for path in unread[:3])
        more = f" and {len(unread) - 3} more" if len(unread) > 3 else ""
        return _decide(
            Verdict.NEEDS_WORK,
            "unknown",
            penalty,
            breaking[:2],
            f"{len(unread)} file(s) of code users run could not be analysed ({named}{more}): "
            "what they hold is unknown",
            items,
        )
    if native:
        return _decide(
            Verdict.NEEDS_WORK,
            "unknown-native",
            penalty,
            breaking[:2],
            native_reason(native),
            items,
        )
    if deploy_only:
        return _decide(
            Verdict.READY,
            "deploy-only",
            penalty,
            breaking[:2],
            "ready with work items: the project ships an AMD path; what still breaks is in its "
            "deployment files",
            items,
        )
    minor = [item for item in reachable if item.weight > 0 and not item.build_check]
    total = reachable_hours(items)
    if total > READY_MAX_HOURS:
        costly = sorted(reachable, key=lambda item: (-item.hours, item.key))
        return _decide(
            Verdict.NEEDS_WORK,
            "effort",
            penalty,
            costly[:2],
            f"nothing reachable breaks, but its work adds up to {total:g} h (more than "
            f"{READY_MAX_HOURS:g} h)",
            items,
        )
    if builds:
        return _decide(
            Verdict.READY,
            "build-check",
            penalty,
            builds[:2],
            "ready with work items: the CUDA extensions on the reachable path port mechanically; "
            "build them on ROCm and check their outputs",
            items,
        )
    reason = "nothing reachable from the entry points breaks on ROCm"
    if amd_path:
        reason += "; the project ships an AMD path"
        if not minor:  # what the AMD path takes care of is then what decided it
            minor = [
                item
                for item in items
                if item.tier in (CORE, DEPLOY) and item.covered_by and item.weight > 0
            ]
    return _decide(Verdict.READY, "ready", penalty, minor[:2], reason, items)
