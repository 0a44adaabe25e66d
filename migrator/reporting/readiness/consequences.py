"""What each problem does on a ROCm build: crash at import, crash on a path, silent CPU
fallback, performance, or nothing (hygiene), with the penalty points of each."""

from __future__ import annotations

from migrator.model import CONSEQUENCES, Finding, Severity

#: What a problem does on a ROCm build, worst first, with its penalty points per work item.
CONSEQUENCE_POINTS: dict[str, float] = {  # keys: model.CONSEQUENCES, in order
    "crash-import": 12.0,
    "crash-path": 6.0,
    "cpu-fallback": 6.0,
    "performance": 1.5,
    "hygiene": 0.0,
}
CONSEQUENCE_LABELS: dict[str, str] = {
    "crash-import": "crashes at import",
    "crash-path": "crashes or is wrong on a code path",
    "cpu-fallback": "silently runs without the GPU",
    "performance": "runs, slower or degraded",
    "hygiene": "no effect on ROCm (hygiene)",
}


def consequence_of(finding: Finding, declared: str) -> str:
    """What the finding's problem does on ROCm: nothing at info or hygiene severity (it works
    there), else what its rule declares (``Rule.consequence``), else, for a code the catalog does
    not know, by severity (error: crashes on a path; warning: runs but differs)."""
    if finding.severity < Severity.WARNING:
        return "hygiene"
    if declared in CONSEQUENCE_POINTS:
        return declared
    return "crash-path" if finding.severity >= Severity.ERROR else "performance"


assert tuple(CONSEQUENCE_POINTS) == CONSEQUENCES == tuple(CONSEQUENCE_LABELS)
