"""The ROCm release that the torch pinned by a file (or its project) calls for."""

from __future__ import annotations

from .._shell import pip_requirements
from .._torch_builds import rocm_for_specs


def _torch_specs(text: str) -> list[str]:
    """Specifiers of the torch requirements in this file's pip commands."""
    return [req.spec for req in pip_requirements(text) if req.name == "torch"]


def _pinned_rocm(text: str) -> str | None:
    """ROCm release of the torch pinned in this file, or None when torch is absent/unbounded."""
    specs = [spec for spec in _torch_specs(text) if spec and "$" not in spec]
    if not specs:
        return None
    found = rocm_for_specs(specs)
    newest = rocm_for_specs([])
    if found is None or found == newest:
        return None
    return found[1]


def _file_rocm(text: str) -> str | None:
    """ROCm release for index URLs: the pinned torch's, else the newest table entry."""
    specs = [spec for spec in _torch_specs(text) if spec and "$" not in spec]
    found = rocm_for_specs(specs)
    return None if found is None else found[1]
