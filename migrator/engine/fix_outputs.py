"""What a fix run writes beside the analysis: every fixed text under the write policy, and the
ROCm siblings of NVIDIA container files (``--unsafe-fixes``) kept consistent with each other."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from migrator.engine.rule import Rule
from migrator.files.discovery import SourceFile
from migrator.files.sources import FailFile, SkipFile, decode_text, read_regular
from migrator.knowledge.versions import ProjectFacts

if TYPE_CHECKING:
    # Imported where used: the fix policy behind it loads libcst, which a warm scan never needs.
    from migrator.engine.variants import Variant
from migrator.engine.outcomes import FileOutcome


def _variants(
    root: Path,
    sources: Sequence[SourceFile],
    outcomes: Sequence[FileOutcome],
    guarded: Mapping[str, str],
    rules: tuple[type[Rule], ...],
    facts: ProjectFacts,
) -> list[Variant]:
    """ROCm siblings for the container files whose vendor swap fix withheld."""
    by_path = {outcome.relative: outcome for outcome in outcomes}
    from migrator.engine.variants import (
        VARIANT_KINDS,
        Variant,
        plan_variant,
        sibling_name,
        wants_variant,
    )

    planned: list[Variant] = []
    for source in sources:
        outcome = by_path.get(source.relative)
        if source.kind not in VARIANT_KINDS or source.relative in guarded or outcome is None:
            continue
        if not wants_variant([finding.message for finding in outcome.result.findings]):
            continue
        target = sibling_name(source.relative)
        if os.path.lexists(root / target):
            planned.append(
                Variant(source.relative, target, reason=f"{target} exists; left as it is")
            )
            continue
        try:
            text = decode_text(read_regular(str(source.path))).text
        except (SkipFile, FailFile):
            continue
        variant = plan_variant(source.relative, source.kind, text, rules, facts)
        if variant is not None:
            planned.append(variant)
    return _consistent(root, planned, by_path)


def _consistent(
    root: Path, planned: list[Variant], by_path: Mapping[str, FileOutcome]
) -> list[Variant]:
    """The planned variants, each pointing at the siblings of the files it includes (``-r``),
    with none written where an included file still installs NVIDIA builds, nor where the
    variants of the project would use different ROCm releases."""
    from migrator.engine.variants import include_problem, rocm_versions_across, wants_variant
    from migrator.model import Severity

    def needs_rocm(relative: str) -> str | None:
        outcome = by_path.get(relative)
        if outcome is None:
            return None
        messages = [finding.message for finding in outcome.result.findings]
        blocking = [f for f in outcome.result.findings if f.severity >= Severity.WARNING]
        if wants_variant(messages) or blocking:
            first = (blocking or list(outcome.result.findings))[0]
            return f"has line {first.line} {first.rule} ({first.message.split(';')[0]})"
        return None

    siblings = {v.original: v.relative for v in planned if v.text is not None}
    for variant in planned:
        if variant.text is None:
            continue
        problem = include_problem(root, variant, needs_rocm, siblings)
        if problem:
            variant.text, variant.reason = None, problem
            siblings.pop(variant.original, None)
    disagreement = rocm_versions_across(planned)
    if disagreement:
        for variant in planned:
            if variant.text is not None:
                variant.text, variant.reason = None, disagreement
    return planned


def write_outcomes(root: Path, outcomes: Sequence[FileOutcome]) -> None:
    """Write every fixed text under ``migrator.files.writer``'s policy; a file that may not be
    written (symlink, outside the root, edited since it was read, unwritable) keeps its text and
    its outcome's ``write_error`` says why."""
    from migrator.files.writer import WriteRefused, write_checked

    for outcome in outcomes:
        if outcome.new_text is None or outcome.error is not None:
            continue
        try:
            write_checked(root, outcome.relative, outcome.new_text, outcome.encoding, outcome.key)
        except WriteRefused as refused:
            outcome.write_error = str(refused)
