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
#: What each rule's problem does on ROCm (rocm-facts), for rules whose findings break, slow or
#: (advisories, no-op flags, deprecations) do nothing at warning or error severity. Findings at
#: info or hygiene severity never count (the findings engine's word for "works on ROCm"); rules
#: not listed follow their severity: error = crash on a path, warning = runs but differs. An NVML
#: binding (ROC812) installs anywhere: its calls (ROC200-202) are what break. flash-attn and xformers
#: calls (ROC400/401/410) run unchanged on the ROCm builds of those libraries (rocm-facts 4a, 4d):
#: what breaks is a CUDA wheel (ROC808/809) or an unguarded import without the package (ROC402/411).
RULE_CONSEQUENCE: dict[str, str] = {
    "ROC101": "cpu-fallback",
    "ROC102": "crash-path",
    "ROC113": "crash-path",
    "ROC120": "crash-path",
    "ROC121": "crash-path",
    "ROC131": "hygiene",
    "ROC140": "performance",
    "ROC141": "hygiene",
    "ROC150": "hygiene",
    "ROC151": "crash-path",
    "ROC152": "crash-path",
    "ROC200": "crash-path",
    "ROC201": "crash-path",
    "ROC202": "crash-path",
    "ROC210": "crash-path",
    "ROC211": "crash-path",
    "ROC301": "crash-path",
    "ROC302": "crash-path",
    "ROC400": "performance",
    "ROC401": "performance",
    "ROC402": "crash-import",
    "ROC403": "crash-path",
    "ROC404": "crash-path",
    "ROC410": "performance",
    "ROC411": "crash-import",
    "ROC500": "crash-path",
    "ROC501": "crash-path",
    "ROC502": "crash-path",
    "ROC503": "crash-path",
    "ROC504": "crash-import",
    "ROC510": "performance",
    "ROC511": "performance",
    "ROC520": "hygiene",
    "ROC600": "crash-path",
    "ROC601": "crash-path",
    "ROC602": "crash-path",
    "ROC603": "crash-path",
    "ROC700": "hygiene",
    "ROC701": "hygiene",
    "ROC702": "crash-path",
    "ROC703": "hygiene",
    "ROC710": "hygiene",
    "ROC711": "hygiene",
    "ROC712": "crash-path",
    "ROC713": "hygiene",
    "ROC800": "hygiene",
    "ROC801": "cpu-fallback",
    "ROC802": "cpu-fallback",
    "ROC803": "crash-path",
    "ROC804": "cpu-fallback",
    "ROC805": "cpu-fallback",
    "ROC806": "cpu-fallback",
    "ROC807": "crash-path",
    "ROC808": "crash-path",
    "ROC809": "crash-path",
    "ROC810": "crash-path",
    "ROC811": "crash-path",
    "ROC812": "performance",
    "ROC813": "crash-path",
    "ROC814": "crash-path",
    "ROC850": "cpu-fallback",
    "ROC851": "cpu-fallback",
    "ROC860": "crash-path",
    "ROC861": "crash-path",
    "ROC862": "crash-path",
    "ROC863": "crash-path",
    "ROC864": "crash-path",
    "ROC865": "crash-path",
    "ROC866": "crash-path",
    "ROC867": "crash-path",
    "ROC900": "crash-import",
    "ROC901": "performance",
}
#: Rules whose problem has no drop-in ROCm equivalent: a port (new backend, kernel rewrite).
PORT_RULES = frozenset({"ROC900", "ROC811", "ROC601"})


def consequence_of(finding: Finding, meta: RuleMeta) -> str:
    """What the finding's problem does on ROCm: nothing at info or hygiene severity (it works
    there), else what its rule declares (``RuleMeta.consequence``), else by severity (error:
    crashes on a path; warning: runs but differs)."""
    if finding.severity < Severity.WARNING:
        return "hygiene"
    if meta.consequence in CONSEQUENCE_POINTS:
        return meta.consequence
    return "crash-path" if finding.severity >= Severity.ERROR else "performance"
