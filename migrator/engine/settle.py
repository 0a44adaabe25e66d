"""From every rule's findings of every file to the findings a user sees: the selection,
file-level and project-level guards, guarded code hidden unless asked, kernel sites folded
into their build, and one finding per problem across the root."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import replace

from migrator.engine.kernel_folding import ASSEMBLY_RULES, KERNEL_SITE_RULES
from migrator.engine.moot import MootFiles
from migrator.engine.selection import Selection
from migrator.knowledge.versions import ProjectFacts
from migrator.model import FileResult, Finding
from migrator.syntax.reexports import ProjectIndex


def settle(
    results: Sequence[FileResult],
    selection: Selection,
    paths: Sequence[str],
    show_guarded: bool = False,
    facts: ProjectFacts | None = None,
    use_cache: bool = True,
    index: ProjectIndex | None = None,
    moot_files: MootFiles | None = None,
) -> list[FileResult]:
    """The findings a user sees, from every rule's findings of every file: the selection,
    file-level guards (platform-only files, NVIDIA variants with an AMD twin, modules written
    on a CUDA-only kernel toolkit, found from ``index``), project-level guards (a dependency
    the project is, or declares at a ROCm-capable version), guarded code hidden unless
    ``show_guarded``, and one finding per problem across the root (``moot_files``: the
    file-level guards, when the caller found them already)."""
    from migrator.engine.aggregate import aggregate
    from migrator.engine.kernel_folding import fold
    from migrator.engine.registry import catalog_entries, dependency_entries
    from migrator.files.paths import is_test_path
    from migrator.reach.callers import unguard_if_called_elsewhere
    from migrator.reach.cuda_only import rocm_path, settle_finding
    from migrator.reach.project import (
        MASK_TEST_INPUT,
        dependency_guard,
        own_packages,
        resolves_device_masks,
        uses_guard,
    )

    codes = selection.codes(use_cache)
    paths = list(paths)
    if moot_files is None:
        moot_files = MootFiles.find(paths, index)
    guarded_files = moot_files.guarded
    own = own_packages(paths)
    dependencies = dependency_entries(use_cache)
    mask_rules = (
        mask_rule_codes()
        if index is not None and resolves_device_masks(index.sources)
        else frozenset()
    )
    cuda_only = moot_files.cuda_only
    rocm = functools.cache(lambda: rocm_path(index, cuda_only) if index is not None else "")
    kept: list[Finding] = []
    for result in results:
        file_guard = guarded_files.get(result.path, "")
        for finding in result.findings:
            if not selection.keep(finding, codes):
                continue
            finding = selection.offered(finding)
            if finding.guard and index is not None:
                # before the file's own guard, which a dispatch guard must not hide once lifted
                finding = unguard_if_called_elsewhere(finding, index.sources)
            if file_guard and not finding.guard:
                finding = replace(finding, guard=file_guard)
            if finding.rule in mask_rules and not finding.guard and is_test_path(result.path):
                finding = replace(finding, guard=MASK_TEST_INPUT)
            if result.path in cuda_only:
                finding = settle_finding(finding, cuda_only, rocm)
            if finding.rule in KERNEL_SITE_RULES and not finding.guard:
                assembly = finding.rule in ASSEMBLY_RULES
                unused = moot_files.unused_at(result.path, finding.line, assembly)
                if unused:
                    finding = replace(finding, guard=unused)
            dependency, rocm_release = dependencies.get(finding.rule, (None, None))
            if dependency and not finding.guard:
                why = dependency_guard(dependency, rocm_release, own, facts)
                if why:
                    finding = replace(finding, guard=why)
            kept.append(finding)
    used = frozenset(finding.category for finding in kept if not finding.guard)
    ran = frozenset(category for code, _, category in catalog_entries(use_cache) if code in codes)
    kept = [
        replace(finding, guard=why)
        if not finding.guard and (why := uses_guard(finding, used, ran))
        else finding
        for finding in kept
    ]
    if not show_guarded:
        kept = [finding for finding in kept if not finding.guard]
    # kernel sites inside a CUTLASS port or an optional extension with no ROCm build: one
    # problem with it (``engine.kernel_folding``)
    kept = fold(kept, moot_files.kernels, index.sources if index is not None else {})
    by_path: dict[str, list[Finding]] = {}
    for finding in aggregate(kept):
        by_path.setdefault(finding.path, []).append(finding)
    return [replace(result, findings=tuple(by_path.get(result.path, ()))) for result in results]


def mask_rule_codes() -> frozenset[str]:
    """The rules that report a CUDA_VISIBLE_DEVICES set without its HIP counterpart."""
    from migrator.engine.registry import all_rules

    return frozenset(
        rule.code for rule in all_rules() if rule.name.endswith("cuda-visible-devices-without-hip")
    )
