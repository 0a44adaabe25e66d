"""What the report needs to know about a rule: a snapshot of its class's metadata."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from migrator.engine.rule_parts import Fixing, Impact, Parsing
from migrator.model import Applicability, Finding, Severity


@dataclass(frozen=True, slots=True)
class RuleMeta:
    """What the report needs from one rule class (or a stand-in for a code no longer known)."""

    code: str
    name: str
    category: str
    severity: Severity
    message: str
    fix_title: str | None
    applicability: Applicability
    fact: str
    targets: tuple[str, ...]
    effort_hours: float
    blocker: bool
    manual_steps: str
    references: str
    known: bool = True
    #: What the rule's problem does on ROCm (``consequences.CONSEQUENCE_POINTS``); ``""``: by
    #: the finding's severity.
    consequence: str = ""
    #: Whether the problem has no drop-in ROCm equivalent (a new backend or kernel).
    port: bool = False
    #: Whether the rule reads C/C++/CUDA sources: its effort is per site (a kernel to port),
    #: not per project.
    per_site: bool = False
    #: Whether a finding of the rule says what the scan could not read (a build, a dependency it
    #: does not know): an unknown that could change the verdict.
    unknown: bool = False


def _doc_sections(doc: str) -> dict[str, str]:
    """Split a rule docstring into its ``## Section`` bodies, keyed by lower-case title."""
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in doc.splitlines():
        if line.startswith("## "):
            current = sections.setdefault(line[3:].strip().lower(), [])
        elif current is not None:
            current.append(line)
    return {title: "\n".join(lines).strip() for title, lines in sections.items()}


def meta_from_rule(rule: type) -> RuleMeta:
    """Snapshot a rule class's metadata, tolerating attributes a rule does not set."""
    doc_method = getattr(rule, "doc", None)
    doc = doc_method() if callable(doc_method) else ""
    sections = _doc_sections(doc if isinstance(doc, str) else "")
    steps = sections.get("manual migration") or sections.get("fix") or ""
    impact: Impact = getattr(rule, "impact", Impact())
    fixing: Fixing = getattr(rule, "fix", Fixing())
    parsing: Parsing = getattr(rule, "parsing", Parsing())
    fix_title = fixing.title
    if not steps:
        steps = fix_title or ""
    targets = impact.targets or ("all",)
    code = str(getattr(rule, "code", "?"))
    return RuleMeta(
        code=code,
        name=str(getattr(rule, "name", "?")),
        category=str(getattr(rule, "category", "other")),
        severity=getattr(rule, "severity", Severity.WARNING),
        message=str(getattr(rule, "message", "")),
        fix_title=fix_title,
        applicability=fixing.applicability,
        fact=str(getattr(rule, "fact", "")),
        targets=tuple(str(target) for target in targets),
        effort_hours=float(impact.effort_hours),
        blocker=impact.blocker,
        manual_steps=steps,
        references=sections.get("references", ""),
        consequence=impact.consequence,
        port=impact.port,
        per_site="cuda" in parsing.file_kinds,
        unknown=impact.unknown,
    )


@functools.cache
def catalog_meta(code: str) -> RuleMeta | None:
    """The metadata of a rule in the installed catalog, or None when the code is unknown."""
    from migrator.engine.registry import rule_by_code
    from migrator.errors import MigrateError

    try:
        return meta_from_rule(rule_by_code(code))
    except MigrateError:
        return None


#: Looks a rule code up; injectable so tests can describe rules that are not in the catalog.
MetaLookup = Callable[[str], "RuleMeta | None"]


def meta_for(finding: Finding, lookup: MetaLookup = catalog_meta) -> RuleMeta:
    """The rule metadata behind a finding; a stand-in built from the finding when unknown."""
    meta = lookup(finding.rule)
    if meta is not None:
        return meta
    return RuleMeta(
        code=finding.rule,
        name=finding.name,
        category=finding.category,
        severity=finding.severity,
        message=finding.message,
        fix_title=finding.fix.description if finding.fix else None,
        applicability=finding.fix.applicability if finding.fix else Applicability.NONE,
        fact="",
        targets=("all",),
        effort_hours=0.5,
        blocker=False,
        manual_steps="",
        references="",
        known=False,
    )


_FAMILY_PREFIXES: dict[str, tuple[str, ...]] = {
    "cdna": ("gfx9",),
    "cdna2": ("gfx90a",),
    "cdna3": ("gfx94",),
    "cdna4": ("gfx95",),
    "rdna": ("gfx10", "gfx11", "gfx12"),
    "rdna3": ("gfx11",),
    "rdna4": ("gfx12",),
}


def target_matches(rule_targets: Sequence[str], target: str) -> bool:
    """Whether a rule's ``targets`` metadata covers one gfx id.

    Accepts ``all``, exact ids, prefixes (``gfx94``, ``gfx94x``, ``gfx11*``) and the family
    names ``cdna``, ``cdna3``, ``rdna``, ``rdna3``....
    """
    for raw in rule_targets:
        value = raw.strip().lower()
        if value in ("all", "*", target):
            return True
        if value in _FAMILY_PREFIXES and target.startswith(_FAMILY_PREFIXES[value]):
            return True
        stem = value.rstrip("x*")
        if stem != value and stem and target.startswith(stem):
            return True
        if value.startswith("gfx") and len(value) < len(target) and target.startswith(value):
            return True
    return False
