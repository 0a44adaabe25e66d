"""How every output words the third-party packages a project's GPU code imports: the concerns
(unknown native dependencies and CUDA-only builds), one line each, and one summary line."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from migrator.model import ImportedPackage, ScanResult

LABELS = {
    "unknown": "unknown native dependency",
    "cuda-only": "CUDA-only native dependency",
    "rocm": "ROCm build",
    "cuda-and-rocm": "CUDA and ROCm builds",
    "native-cpu": "native, CPU only",
    "pure-python": "pure Python",
    "known": "known",
}


def concerns(results: Sequence[ScanResult]) -> list[ImportedPackage]:
    """The packages that keep a verdict from "ready", once per name over every result."""
    seen: dict[str, ImportedPackage] = {}
    for result in results:
        for package in result.packages:
            if package.is_concern:
                seen.setdefault(package.name, package)
    return list(seen.values())


def site_text(package: ImportedPackage) -> str:
    """``app/model.py:4`` and how many more import sites."""
    if not package.sites:
        return ""
    path, line = package.sites[0]
    more = len(package.sites) - 1
    return f"{path}:{line}" + (f" (+{more} more)" if more else "")


def line(package: ImportedPackage) -> str:
    """``cpm_kernels: unknown native dependency (imported at app/model.py:4): check ...``."""
    where = site_text(package)
    evidence = f"; {'; '.join(package.evidence)}" if package.evidence else ""
    return (
        f"`{package.name}`: {LABELS.get(package.status, package.status)}"
        + (f" (imported at {where})" if where else "")
        + f": {package.check}{evidence}"
    )


def _counted(count: int, what: str) -> str:
    return f"{count} {what} dependenc{'ies' if count != 1 else 'y'}"


def summary(packages: Sequence[ImportedPackage], environment: str = "") -> str:
    """One sentence: how many CUDA-only and unknown packages, by name ("" when none)."""
    unknown = [p.name for p in packages if p.status == "unknown"]
    cuda = [p.name for p in packages if p.status == "cuda-only"]
    parts = []
    if cuda:
        parts.append(f"{_counted(len(cuda), 'CUDA-only native')} ({', '.join(cuda)})")
    if unknown:
        how = (
            "not installed in the environment read"
            if environment
            else "not in migrate's tables; read them with --python PATH"
        )
        parts.append(f"{_counted(len(unknown), 'unknown native')} ({', '.join(unknown)}: {how})")
    return "; ".join(parts)


def package_dict(package: ImportedPackage) -> dict[str, Any]:
    """The JSON form of one package (``scan --format json``, the report's JSON)."""
    return {
        "name": package.name,
        "status": package.status,
        "label": LABELS.get(package.status, package.status),
        "distribution": package.distribution or None,
        "version": package.version or None,
        "evidence": list(package.evidence),
        "check": package.check,
        "sites": [{"path": path, "line": line} for path, line in package.sites],
        "eager": package.eager,
    }
