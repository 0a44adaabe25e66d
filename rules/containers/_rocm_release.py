"""The ROCm release that the torch pinned by a file (or its project) calls for."""

from __future__ import annotations

import re

from migrator.api.knowledge import rocm_for_specs, rocm_index_for

from .._shell import pip_requirements


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


_EXTRA = re.compile(
    r"(--extra-index-url|--find-links|-f|PIP_EXTRA_INDEX_URL|PIP_FIND_LINKS)(\s*=\s*|\s+)[\"']?$"
)
_UV = re.compile(r"\buv\s+(pip\s+install|add|sync)\b|\bUV_")


def index_choice(text: str, start: int) -> tuple[str | None, str]:
    """The ROCm index for the CUDA index URL at ``start`` (see ``rocm_index_for``): pip adds an
    ``--extra-index-url``/``PIP_EXTRA_INDEX_URL`` index to PyPI; uv searches it first."""
    specs = [spec for spec in _torch_specs(text) if "$" not in spec]
    line_start = text.rfind("\n", 0, start) + 1
    before = text[line_start:start]
    extra = _EXTRA.search(before) is not None and _UV.search(before) is None
    return rocm_index_for(specs, extra=extra)
