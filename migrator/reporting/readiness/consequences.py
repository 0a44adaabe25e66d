"""What each problem does on a ROCm build: crash at import, crash on a path, silent CPU
fallback, performance, or nothing (hygiene), with the penalty points of each."""

from __future__ import annotations

from typing import TYPE_CHECKING

from migrator.model import Finding, Severity

if TYPE_CHECKING:
    from migrator.reporting.readiness.meta import RuleMeta

#: What a problem does on a ROCm build, worst first, with its penalty points per work item.
CONSEQUENCE_POINTS: dict[str, float] = {
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
#: Consequence of each rule on ROCm (rocm-facts); rules not listed fall back on their severity.
RULE_CONSEQUENCE: dict[str, str] = {
    "ROC101": "cpu-fallback",
    "ROC103": "performance",
    "ROC111": "performance",
    "ROC112": "performance",
    "ROC130": "performance",
    "ROC131": "hygiene",
    "ROC140": "performance",
    "ROC141": "hygiene",
    "ROC150": "hygiene",
    "ROC402": "crash-import",
    "ROC411": "crash-import",
    "ROC504": "crash-import",
    "ROC510": "performance",
    "ROC511": "performance",
    "ROC520": "hygiene",
    "ROC700": "hygiene",
    "ROC701": "hygiene",
    "ROC703": "hygiene",
    "ROC710": "hygiene",
    "ROC711": "hygiene",
    "ROC713": "hygiene",
    "ROC800": "hygiene",
    "ROC801": "cpu-fallback",
    "ROC802": "cpu-fallback",
    "ROC804": "cpu-fallback",
    "ROC805": "cpu-fallback",
    "ROC806": "cpu-fallback",
    "ROC850": "cpu-fallback",
    "ROC851": "cpu-fallback",
    "ROC900": "crash-import",
    "ROC901": "performance",
}


#: Rules whose problem has no drop-in ROCm equivalent: a port (new backend, kernel rewrite).
PORT_RULES = frozenset({"ROC900", "ROC811", "ROC601"})


def consequence_of(finding: Finding, meta: RuleMeta) -> str:
    """What the finding's problem does on ROCm: none at hygiene severity, else what its rule
    declares (``RuleMeta.consequence``), else by severity (error and warning break a path)."""
    if finding.severity.label == "hygiene":
        return "hygiene"
    if meta.consequence in CONSEQUENCE_POINTS:
        return meta.consequence
    return "crash-path" if finding.severity >= Severity.WARNING else "hygiene"
