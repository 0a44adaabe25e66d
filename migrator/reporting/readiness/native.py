"""The third-party packages a project's GPU code imports that migrate could not clear (unknown
native dependencies, CUDA-only builds read from an environment): which of them count (imported
as a module loads from code users run, not only tests or examples) and how the verdict rule
"unknown-native" and the report's unknowns name them."""

from __future__ import annotations

from collections.abc import Sequence

from migrator.model import ImportedPackage
from migrator.reporting.readiness.layout import ProjectLayout
from migrator.reporting.readiness.roles import PERIPHERAL, tier


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


def native_reason(packages: Sequence[ImportedPackage]) -> str:
    """Why ``packages`` (the counting ones) keep a project from "ready", naming each (the
    CUDA-only ones first: they are known to break) and what to check."""
    cuda = [package for package in packages if package.status == "cuda-only"]
    shown = cuda or list(packages)
    names = ", ".join(describe(package) for package in shown[:3])
    more = f" and {len(shown) - 3} more" if len(shown) > 3 else ""
    if cuda:
        return f"the GPU code imports a CUDA-only native dependency: {names}{more}"
    return (
        f"not ready until checked: the GPU code imports native dependencies migrate does not "
        f"know, {names}{more}; {what_to_check(shown)}"
    )


def native_unknown(package: ImportedPackage, environment: str = "") -> tuple[str, str]:
    """(what, detail) of one counting package as an entry of the report's unknowns: the package,
    its status, where it is imported, what to check and the evidence read."""
    from migrator.output.packages import LABELS

    where = f", imported at `{package.sites[0][0]}:{package.sites[0][1]}`" if package.sites else ""
    evidence = f" ({'; '.join(package.evidence)})" if package.evidence else ""
    read = f" [read from `{environment}`]" if environment else ""
    detail = f"`{package.name}`, {LABELS.get(package.status, package.status)}{where}: {package.check}{evidence}{read}"
    return ("native dependency", detail)
