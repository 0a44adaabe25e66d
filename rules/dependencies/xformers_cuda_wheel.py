"""ROC809: ``xformers`` listed as a dependency."""

from __future__ import annotations

from migrator.api import Impact, Invalid, Parsing, Severity, Valid
from migrator.api.knowledge import parse_version, spec_admits

from .._requirement_rule import RequirementRule, Verdict
from .._requirements import Req
from ._table import _cases, _table


class XformersCudaWheel(RequirementRule):
    """
    ## What it does
    Flags `xformers` listed as a dependency.

    ## Why it breaks on ROCm
    PyPI `xformers` wheels are CUDA builds. ROCm wheels exist from 0.0.28 (September 2024) on
    PyTorch's `whl/rocmX.Y` indexes and are labelled experimental; older releases have no ROCm
    build at all. Its `memory_efficient_attention` maps to PyTorch SDPA for most masks.

    ## Example
    ```python
    # requirements.txt
    xformers==0.0.26
    ```

    ## Manual migration
    Install `xformers>=0.0.28` from the ROCm wheel index matching your torch, or rewrite
    `xformers.ops.memory_efficient_attention` calls to `scaled_dot_product_attention` and drop
    the dependency.

    ## References
    - rocm-facts.md §4d and §9 (`xformers` row)
    """

    code = "ROC809"
    name = "xformers-cuda-wheel"
    category = "dependency"
    severity = Severity.WARNING
    impact = Impact(consequence="crash-path", effort_hours=1.0)
    message = "PyPI `xformers` wheels are CUDA builds; ROCm wheels are experimental (≥ 0.0.28)"
    fact = "§4d, §9 xformers row; [X3]"
    parsing = Parsing(triggers=_cases("xformers", "xFormers"))
    valid = [
        Valid("# xformers==0.0.26\ntorch\n", path="requirements.txt"),
        Valid("xformers; sys_platform == 'darwin'\n", path="requirements.txt"),
    ]
    invalid = [
        Invalid("xformers==0.0.26\n", path="requirements.txt", fixed=None),
        Invalid("xformers>=0.0.28\n", path="requirements.txt", fixed=None),
    ]

    def examine(self, req: Req) -> Verdict | None:
        table = _table("xformers")
        if req.name not in table["names"]:
            return None
        first = table["first_rocm"]
        if req.spec and not _admits_from(req.spec, first):
            return Verdict(
                f"`{req.parsed.raw_name}{req.parsed.spec}` predates xformers' ROCm wheels "
                f"({first}); raise it and install from the PyTorch ROCm index, or use SDPA"
            )
        return Verdict(
            f"PyPI `{req.parsed.raw_name}` wheels are CUDA builds; install the experimental ROCm "
            f"wheel (≥ {first}) from the PyTorch ROCm index, or use SDPA"
        )


def _admits_from(spec: str, first: str) -> bool:
    """Whether ``spec`` admits some release at or after ``first`` (probing nearby versions)."""
    release = parse_version(first)
    if release is None:
        return True
    probes = [first]
    for bump in range(1, 40):
        probes.append(".".join(map(str, (*release[:-1], release[-1] + bump))))
    probes += ["0.1.0", "1.0.0"]
    return any(spec_admits(spec, probe) is not False for probe in probes)
