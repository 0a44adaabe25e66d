"""Work items: the distinct problems a team has to solve, grouped from findings.

A work item is one problem in one location tier: every finding about the same package (the
dependency line, its imports and its calls), every finding of one rule elsewhere, or one container
file. Each item carries what it does on ROCm (its consequence), where it is (core, deployment or
peripheral code), how it is fixed (a fix exists, a documented manual pattern, or a port) and an
effort estimate with that basis.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from migrator.model import Applicability, Finding
from migrator.reporting.readiness.consequences import (
    CONSEQUENCE_LABELS,
    CONSEQUENCE_POINTS,
    consequence_of,
)
from migrator.reporting.readiness.dependencies import dependency_item
from migrator.reporting.readiness.layout import ProjectLayout
from migrator.reporting.readiness.meta import (
    MetaLookup,
    RuleMeta,
    catalog_meta,
    meta_for,
    target_matches,
)
from migrator.reporting.readiness.roles import (
    CORE,
    DEPLOY,
    LAZY,
    OPT_IN,
    OPTIONAL,
    PERIPHERAL,
    PUBLIC,
    is_container_file,
    is_environment_file,
)
from migrator.reporting.readiness.roles import tier as tier_of_role

#: Weight of a work item by where it is.
LOCATION_FACTOR: dict[str, float] = {CORE: 1.0, DEPLOY: 0.5, PERIPHERAL: 0.1}
#: A problem that needs a port (no drop-in ROCm equivalent) weighs this many times more.
PORT_FACTOR = 3.0
#: How each item is fixed, least work first.
BASES: tuple[str, ...] = ("fix", "pattern", "port")
BASIS_LABELS: dict[str, str] = {
    "fix": "a fix exists (`migrate fix`)",
    "pattern": "manual, documented pattern",
    "port": "needs a port (no drop-in ROCm equivalent)",
}
#: The share of an item's weight that the project's AMD path takes off when it provides for it.
AMD_PATH_CREDIT = 0.5
#: What covers an item whose every site is in a file that dispatches on the vendor.
DISPATCHED = "vendor dispatch in the same file"
#: What covers the project's own CUDA kernels when its code dispatches on the vendor.
KERNELS_COVERED = "a HIP build of its kernels; which kernels it leaves out is not checked"
#: Hours to review the automatic fixes of one work item.
FIX_REVIEW_HOURS = 0.25
#: Hours of a port (a new backend or kernel), before the per-file increment.
PORT_HOURS = 40.0

#: Subjects that need a port when the project declares them as a required dependency and does
#: not compute on the GPU itself (the product is built on them: a GPU monitor on NVML).
PORT_WHEN_REQUIRED = frozenset({"nvml"})

#: Finding categories that are about one package: their findings group by that package.
_CATEGORY_SUBJECT: dict[str, str] = {
    "bitsandbytes": "bitsandbytes",
    "flash-attn": "flash-attn",
    "xformers": "xformers",
    "apex": "apex",
    "nvml": "nvml",
    "onnxruntime": "onnxruntime",
}
_PACKAGE_SUBJECT: dict[str, str] = {
    "nvidia-ml-py": "nvml",
    "nvidia-ml-py3": "nvml",
    "pynvml": "nvml",
    "bitsandbytes": "bitsandbytes",
    "flash-attn": "flash-attn",
    "flash_attn": "flash-attn",
    "xformers": "xformers",
    "apex": "apex",
    "onnxruntime-gpu": "onnxruntime",
}


def subject_of(finding: Finding) -> str:
    """What the problem is about: a package for package findings, the file for container
    findings, otherwise the rule itself."""
    category = finding.category.lower()
    if category in _CATEGORY_SUBJECT:
        return _CATEGORY_SUBJECT[category]
    if category in ("container", "containers") or is_container_file(finding.path):
        return f"file:{finding.path}"  # one container file is one piece of work
    if category in ("dependency", "dependencies"):
        item, kind = dependency_item(finding)
        if kind == "package":
            name = item.split("[")[0].lower()
            return _PACKAGE_SUBJECT.get(name, name)
    problem = getattr(finding, "problem", "")
    if isinstance(problem, str) and problem:
        return f"problem:{problem}"  # the findings engine's cross-rule problem key
    return f"rule:{finding.rule}"


@dataclass(frozen=True, slots=True)
class Site:
    """The scorer's view of one finding: no source text, only what the score needs."""

    rule: str
    category: str
    severity: str
    path: str
    line: int
    fixable: bool
    subject: str
    consequence: str
    tier: str
    role: str
    dispatched: bool = False
    #: In a ``try`` body whose handler goes on without the failing part: a crash degrades.
    fallback: bool = False
    #: Why the site runs only when a user asks for it (its role is then ``opt-in``), or "".
    opt_in: str = ""


def opt_in_reason(layout: ProjectLayout, path: str, line: int, subject: str) -> str:
    """Why reachable code at ``path:line`` runs only when a user asks for it, or ``""``: a
    plugin module, a registered alternative, a default-off branch, an optional extra, or a use
    of a package the file imports only where it is installed."""
    facts = layout.facts(path)
    packages = {_PACKAGE_SUBJECT.get(name.lower(), name.lower()) for name in facts.optional_imports}
    if subject in packages:
        return f"uses `{subject}`, which this file imports only where it is installed"
    why = facts.opt_in_at(line)
    if why:
        return why
    if layout.root is None:
        return ""
    # A helper whose every call from reachable code is itself opt-in is opt-in too. A function
    # that nothing calls by name is a closure: whoever calls the function around it runs it.
    for function in facts.functions_at(line):
        if function.startswith("__"):
            return ""
        calls = [
            (caller, at)
            for caller, at in layout.callers(function)
            if tier_of_role(layout.role_of(caller)) == CORE
        ]
        if not calls:
            continue
        if all(
            layout.role_of(caller) == OPT_IN or layout.facts(caller).opt_in_at(at)
            for caller, at in calls
        ):
            return f"`{function}` is called only from opt-in code"
        return ""
    return ""


def place(site: Site, layout: ProjectLayout, path: str, line: int) -> Site:
    """``site`` at ``path:line``: its role, tier, consequence and vendor dispatch there."""
    role = layout.role_at(path, line)
    consequence = site.consequence
    why = ""
    if role == OPT_IN:
        why = layout.opt_in_modules.get(path, "a plugin or integration module")
    elif role in (CORE, PUBLIC, LAZY):
        why = opt_in_reason(layout, path, line, site.subject)
        if why:
            role = OPT_IN
    if consequence == "crash-import" and role in (PUBLIC, LAZY, OPT_IN):
        consequence = "crash-path"  # not loaded at import: only the path that imports it breaks
    fallback = layout.falls_back(path, line)
    if fallback and consequence in ("crash-import", "crash-path"):
        consequence = "performance"  # the handler goes on: the feature degrades
    return replace(
        site,
        path=path,
        line=line,
        consequence=consequence,
        tier=tier_of_role(role),
        role=role,
        dispatched=path in layout.dispatch_files,
        fallback=fallback,
        opt_in=why,
    )


def is_dependency_site(site: Site) -> bool:
    """Whether a site is a dependency declaration."""
    return site.category.lower() in ("dependency", "dependencies")


def site_of(finding: Finding, meta: RuleMeta, layout: ProjectLayout) -> Site:
    """The scorer's view of one finding in one project."""
    applicability = finding.fix.applicability if finding.fix else Applicability.NONE
    site = Site(
        rule=finding.rule,
        category=finding.category,
        severity=finding.severity.label,
        path=finding.path,
        line=finding.line,
        fixable=applicability is not Applicability.NONE,
        subject=subject_of(finding),
        consequence=consequence_of(finding, meta.consequence),
        tier=CORE,
        role=CORE,
    )
    return place(site, layout, finding.path, finding.line)


@dataclass(slots=True)
class WorkItem:
    """One distinct problem in one location tier, with what decides its weight."""

    key: str
    title: str
    tier: str
    consequence: str
    basis: str
    sites: list[Site]
    rules: list[str]
    hours: float
    weight: float
    covered_by: str = ""
    #: The share of the requested GPU targets on which the item matters.
    share: float = 1.0
    #: Why the item needs a port when its rules alone do not say so (a GPU tool built on NVML).
    port_reason: str = ""
    #: The extensions (by name) this item's only work is to build on ROCm: a CUDA extension
    #: build whose kernels port mechanically (hipify maps them; no blocking or edit site).
    build_check: str = ""

    @property
    def files(self) -> list[str]:
        """The files the item touches, in first-seen order."""
        return list(dict.fromkeys(site.path for site in self.sites))

    @property
    def findings(self) -> int:
        """How many findings the item groups (its own kernels are sites no rule raised)."""
        return sum(bool(site.rule) for site in self.sites)

    @property
    def breaks(self) -> bool:
        """Whether the item breaks something (not only performance or hygiene) on at least half
        of the requested GPU targets; narrower breaks show in the per-target verdicts."""
        return self.share >= 0.5 and self.consequence in (
            "crash-import",
            "crash-path",
            "cpu-fallback",
        )

    @property
    def eager(self) -> bool:
        """Whether a site is in code every run loads (or a dependency declaration), not only in
        a module loaded later or an optional public module."""
        return any(site.role == CORE for site in self.sites)

    @property
    def crashes(self) -> bool:
        """Whether one of its findings is an error (the tool's word for a crash or no GPU)."""
        return any(site.severity == "error" for site in self.sites)

    @property
    def opt_in(self) -> str:
        """Why the item runs only when a user asks for it (when every site is opt-in), or ``""``."""
        reasons = [site.opt_in for site in self.sites]
        return reasons[0] if reasons and all(reasons) else ""

    def describe(self) -> str:
        """One line: title, where, what it does on ROCm and how it is fixed."""
        files = self.files
        where = files[0] if len(files) == 1 else f"{files[0]} and {len(files) - 1} more file(s)"
        text = (
            f"{self.title} ({where}): {CONSEQUENCE_LABELS[self.consequence]}; "
            f"{BASIS_LABELS[self.basis]}"
        )
        if self.port_reason:
            text += f" ({self.port_reason})"
        if self.opt_in:
            text += f"; opt-in: {self.opt_in}"
        if self.covered_by:
            text += f"; covered by the project's AMD path ({self.covered_by})"
        if self.build_check:
            text += f"; its kernels port mechanically ({self.build_check}): build and check on ROCm"
        return text


def _title(subject: str, metas: Sequence[RuleMeta]) -> str:
    """What a user reads for the item: a container file, a package, or the rules' names; never
    the internal key (``problem:...`` is the findings engine's grouping key)."""
    if subject.startswith("file:"):
        return f"container file `{subject[5:]}`"
    if subject.startswith(("rule:", "problem:")):
        ordered = sorted(metas, key=lambda meta: meta.code)
        codes = ", ".join(meta.code for meta in ordered)
        return f"{ordered[0].name} ({codes})"
    return f"`{subject}`"


def _basis(
    sites: Sequence[Site],
    subject: str,
    required: set[str],
    computes: bool,
    metas_port: Mapping[str, bool],
) -> str:
    if any(metas_port.get(site.rule, False) for site in sites):
        return "port"
    if subject in PORT_WHEN_REQUIRED and subject in required and not computes:
        return "port"
    if all(site.fixable for site in sites):
        return "fix"
    return "pattern"


#: Kernel effort beyond a rule's first site: each further file with its sites costs this share
#: of the rule's hours, each further site in a file already counted this share (a construct
#: ported once is repeated, not re-invented).
KERNEL_FILE_SHARE = 0.5
KERNEL_SITE_SHARE = 0.1


def _port_reason(basis: str, subject: str, ports: Mapping[str, bool], rules: Sequence[str]) -> str:
    """Why an item needs a port when none of its rules declares one: the project is a tool built
    on the package (a required dependency, no GPU compute of its own), so the package is its
    product, not a call to replace."""
    if basis != "port" or any(ports.get(rule, False) for rule in rules):
        return ""
    return (
        f"the project is a GPU tool built on {subject}: a required dependency and no GPU compute "
        "of its own"
    )


def _kernel_hours(sites: Sequence[Site], metas: Mapping[str, RuleMeta]) -> float:
    """Effort of kernel work, per rule (a class of construct: a PTX block, a CUTLASS include, a
    lane mask): its hours for the first site, ``KERNEL_FILE_SHARE`` of them for each further
    file, ``KERNEL_SITE_SHARE`` for each further site in a file already counted; so fifty
    tensor-core PTX blocks over ten files weigh weeks and one lane-id read a day."""
    total = 0.0
    for rule in dict.fromkeys(site.rule for site in sites):
        own = [site for site in sites if site.rule == rule]
        files = len({site.path for site in own})
        hours = metas[rule].effort_hours
        total += hours * (
            1 + KERNEL_FILE_SHARE * (files - 1) + KERNEL_SITE_SHARE * (len(own) - files)
        )
    return round(total, 2)


def _hours(basis: str, metas: Sequence[RuleMeta], files: int) -> float:
    if basis == "fix":
        return FIX_REVIEW_HOURS
    if basis == "port":
        return PORT_HOURS + 8.0 * min(files - 1, 15)
    base = max(meta.effort_hours for meta in metas)
    return round(base * (1.0 + 0.5 * min(files - 1, 8)), 2)


def _target_share(metas: Sequence[RuleMeta], targets: Sequence[str]) -> float:
    """The share of the requested GPU targets on which the item matters (rules' ``targets``)."""
    if not targets:
        return 1.0
    hit = sum(any(target_matches(meta.targets, target) for meta in metas) for target in targets)
    return hit / len(targets)


def _size(files: int) -> float:
    """More files make an item heavier, slowly (a pattern repeats)."""
    return min(2.0, 1.0 + 0.25 * math.log2(max(files, 1)))


def required_subjects(sites: Iterable[Site]) -> set[str]:
    """Subjects the project declares as required dependencies (in a core declaration file)."""
    return {
        site.subject
        for site in sites
        if site.tier == CORE and site.category.lower() in ("dependency", "dependencies")
    }


def work_items(
    sites: Sequence[Site],
    metas: Mapping[str, RuleMeta],
    *,
    amd_kinds: frozenset[str] = frozenset(),
    computes: bool = True,
    targets: Sequence[str] = (),
    covers: Mapping[str, str] | None = None,
    kernels: Sequence[str] = (),
) -> list[WorkItem]:
    """Group sites into work items (heaviest first) and weigh them; ``covers`` maps a subject
    (package) to the AMD-path evidence that provides for it; ``kernels`` are the project's own
    CUDA kernel sources in core locations (an item when its code dispatches to a HIP build)."""
    covers = covers or {}
    groups: dict[tuple[str, str], list[Site]] = {}
    for site in sites:
        groups.setdefault((site.tier, site.subject), []).append(site)
    required = required_subjects(sites)
    ports = {code: meta.port for code, meta in metas.items()}
    items = []
    for (tier, subject), group in groups.items():
        rules = list(dict.fromkeys(site.rule for site in group))
        group_metas = [metas[rule] for rule in rules]
        consequence = min((site.consequence for site in group), key=list(CONSEQUENCE_POINTS).index)
        basis = _basis(group, subject, required, computes, ports)
        files = len({site.path for site in group})
        share = _target_share(group_metas, targets)
        weight = CONSEQUENCE_POINTS[consequence] * LOCATION_FACTOR[tier] * _size(files) * share
        if basis == "port" and any(site.role == CORE for site in group):
            weight *= PORT_FACTOR  # the port is on the path every run takes
        covered = _covered(group, amd_kinds) or covers.get(subject, "")
        if covered == DISPATCHED:
            weight = 0.0  # the code itself takes the ROCm branch
        elif covered:
            # The AMD path provides for it, but it is a separate path to take (a ROCm container,
            # a ROCm build of the package) and the default stays CUDA-only.
            weight *= 1.0 - AMD_PATH_CREDIT
        items.append(
            WorkItem(
                key=f"{tier}:{subject}",
                title=_title(subject, group_metas),
                tier=tier,
                consequence=consequence,
                basis=basis,
                sites=group,
                rules=rules,
                hours=0.0
                if consequence == "hygiene"
                else _kernel_hours(group, metas)
                if all(meta.per_site for meta in group_metas)
                else _hours(basis, group_metas, files),
                weight=round(weight, 3),
                covered_by=covered,
                share=share,
                port_reason=_port_reason(basis, subject, ports, rules),
            )
        )
    if kernels and "dispatch" in amd_kinds:
        items.append(kernel_item(kernels))
    items.sort(
        key=lambda item: (-item.weight, list(CONSEQUENCE_POINTS).index(item.consequence), item.key)
    )
    return items


def kernel_item(kernels: Sequence[str]) -> WorkItem:
    """The project's own CUDA kernels, built for ROCm by its own HIP path: credited as covered by
    that path, but still weighed, because the scan does not read kernels and cannot tell which of
    them the HIP build leaves out or runs slower (a kernel library's ROCm port has its own gaps)."""
    sites = [
        Site(
            rule="",
            category="kernels",
            severity="warning",
            path=path,
            line=0,
            fixable=False,
            subject="kernels",
            consequence="crash-path",
            tier=CORE,
            role=CORE,
        )
        for path in kernels
    ]
    weight = CONSEQUENCE_POINTS["crash-path"] * _size(len(kernels)) * (1.0 - AMD_PATH_CREDIT)
    return WorkItem(
        key=f"{CORE}:kernels",
        title=f"the project's own CUDA kernels ({len(kernels)} source file(s))",
        tier=CORE,
        consequence="crash-path",
        basis="port",
        sites=sites,
        rules=[],
        hours=0.0,
        weight=round(weight, 3),
        covered_by=KERNELS_COVERED,
    )


def _covered(group: Sequence[Site], amd_kinds: frozenset[str]) -> str:
    """The AMD-path evidence that already covers a group (code in files that dispatch on the
    vendor; an AMD container covers container files; ROCm requirements cover dependency
    declarations), or ``""``."""
    categories = {site.category.lower() for site in group}
    if all(site.dispatched for site in group):
        return DISPATCHED
    containers = all(
        is_container_file(site.path) or is_environment_file(site.path) for site in group
    )
    if (containers or categories <= {"container", "containers"}) and "container" in amd_kinds:
        return "an AMD container"
    if categories <= {"dependency", "dependencies"} and "requirements" in amd_kinds:
        return "ROCm requirements"
    return ""


def sites_of(
    findings: Iterable[Finding], layout: ProjectLayout, lookup: MetaLookup = catalog_meta
) -> tuple[list[Site], dict[str, RuleMeta]]:
    """The scorer's view of a scan's findings, with the metadata of each rule seen."""
    from migrator.engine.kernel_folding import EMPTY_RULE

    sites = []
    metas: dict[str, RuleMeta] = {}
    for finding in findings:
        meta = meta_for(finding, lookup)
        metas.setdefault(finding.rule, meta)
        site = site_of(finding, meta, layout)
        sites.append(site)
        # An aggregated finding lists the other sites of its problem: each counts where it is,
        # except that uses of a package whose pin sits in an optional extra break only for users
        # of that extra.
        extra = site.role == OPTIONAL and is_dependency_site(site)
        for related in getattr(finding, "related", ()):
            path = getattr(related, "path", None)
            folded = getattr(related, "rule", "")
            if isinstance(path, str) and path and folded:
                # a site another rule found (a kernel site folded into its extension's build):
                # scored as that rule's own finding, so folding changes the listing, not the work
                member = meta_for(replace(finding, rule=folded, related=()), lookup)
                metas.setdefault(folded, member)
                own = replace(
                    finding,
                    rule=folded,
                    name=member.name,
                    category=member.category,
                    severity=member.severity,
                    path=path,
                    line=int(getattr(related, "line", 0)),
                    fix=None,
                    problem="",
                    group="",
                    scope="",
                    related=(),
                )
                folded_site = site_of(own, member, layout)
                if finding.rule == EMPTY_RULE:
                    # PTX in a function hipcc compiles to nothing never reaches hipcc: it does
                    # what the function does there (nothing), and its port is still work
                    folded_site = replace(folded_site, consequence=site.consequence)
                if site.subject.startswith("file:") and path == finding.path:
                    # a container image's own line (``CUDA_HOME`` in a Dockerfile template a
                    # Python file holds): part of that container file's work item
                    folded_site = replace(folded_site, subject=site.subject)
                sites.append(folded_site)
                continue
            if isinstance(path, str) and path:
                original = replace(site, consequence=consequence_of(finding, meta.consequence))
                placed = place(original, layout, path, int(getattr(related, "line", 0)))
                if extra and placed.tier == CORE:
                    placed = replace(
                        placed,
                        role=OPT_IN,
                        tier=PERIPHERAL,
                        opt_in=f"the pin it needs is in an optional extra (`{site.path}`)",
                    )
                sites.append(placed)
    return sites, metas
