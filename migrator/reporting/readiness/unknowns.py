"""The third-party packages a project's GPU code imports that migrate could not clear (unknown
native dependencies, CUDA-only builds read from an environment): which of them count (imported
from code users run, not only tests or examples) and how they keep the verdict from "ready"."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from migrator.model import ImportedPackage
from migrator.reporting.readiness.layout import ProjectLayout
from migrator.reporting.readiness.roles import PERIPHERAL, tier
from migrator.reporting.readiness.score import Readiness, Verdict, score_from_penalty


def counting(packages: Sequence[ImportedPackage], layout: ProjectLayout) -> list[ImportedPackage]:
    """The unknown and CUDA-only packages imported, as a module loads, from core or deployment
    code (an import inside a function is listed but, as for ROC900, does not decide)."""
    return [
        package
        for package in packages
        if package.is_concern
        and package.eager
        and any(tier(layout.role_of(path)) != PERIPHERAL for path, _ in package.sites)
    ]


def describe(package: ImportedPackage) -> str:
    """``cpm_kernels (unknown: check ...)``: one package and what to check."""
    if package.status == "cuda-only":
        shown = "; ".join(package.evidence[:1])
        return f"`{package.name}` (CUDA-only build installed{': ' + shown if shown else ''})"
    return f"`{package.name}` (unknown native dependency)"


def what_to_check(packages: Sequence[ImportedPackage]) -> str:
    """One sentence on what the user should check about ``packages``."""
    if any(package.status == "unknown" for package in packages):
        return (
            "check that each has a ROCm build or carries no CUDA code (`--python PATH` reads the "
            "project's environment: its shared objects' CUDA or ROCm libraries)"
        )
    return "install a ROCm build of each, build it for ROCm from source, or replace it"


def apply(state: Readiness, packages: Sequence[ImportedPackage]) -> Readiness:
    """``state`` kept from "ready" by ``packages`` (the counting ones): a project whose GPU code
    imports a package migrate cannot clear needs that package checked before it is ready."""
    if not packages or state.verdict is not Verdict.READY:
        return state
    cuda = [package for package in packages if package.status == "cuda-only"]
    shown = cuda or list(packages)
    names = ", ".join(describe(package) for package in shown[:3])
    more = f" and {len(shown) - 3} more" if len(shown) > 3 else ""
    if cuda:
        reason = f"the GPU code imports a CUDA-only native dependency: {names}{more}"
    else:
        reason = (
            f"not ready until checked: the GPU code imports native dependencies migrate does not "
            f"know, {names}{more}; {what_to_check(shown)}"
        )
    return replace(
        state,
        verdict=Verdict.NEEDS_WORK,
        score=score_from_penalty(state.penalty, Verdict.NEEDS_WORK),
        reason=reason,
    )
