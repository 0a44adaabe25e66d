"""ROC803: CuPy's CUDA wheels (``cupy-cuda12x``)."""

from __future__ import annotations

import re

from migrator.api import Applicability, Fixing, Impact, Invalid, Parsing, Severity, Valid
from migrator.api.knowledge import spec_admits

from .._requirement_rule import RequirementRule, Verdict
from .._requirements import Change, Req
from ._table import _cases, _table


class CupyCudaWheel(RequirementRule):
    """
    ## What it does
    Flags CuPy's CUDA wheels (`cupy-cuda11x`, `cupy-cuda12x`, older `cupy-cuda1NN`).

    ## Why it breaks on ROCm
    These wheels link against the CUDA runtime; on an AMD machine `import cupy` works but every
    array operation fails for lack of a CUDA driver. CuPy publishes ROCm wheels under other
    names: `cupy-rocm-5-0` (CuPy 13.x) and `cupy-rocm-7-0` (CuPy 14.x).

    ## Example
    ```python
    # requirements.txt
    cupy-cuda12x>=13.0,<14
    ```

    ## Fix
    ```python
    # requirements.txt
    cupy-rocm-5-0>=13.0,<14
    ```

    ## Fix safety
    Unsafe: the package is chosen by the CuPy major version the specifier admits (14 or
    unpinned → `cupy-rocm-7-0`, which needs ROCm 7; 13 → `cupy-rocm-5-0`). Older pins are
    reported without a fix. Some CuPy features (cuDNN, cuTENSOR, NCCL bindings) differ on ROCm.

    ## References
    - rocm-facts.md §9 (`cupy-cuda12x` row)
    """

    code = "ROC803"
    fix = Fixing(
        replaces_vendor=True,
        title="Use the CuPy ROCm wheel of the same major version",
        applicability=Applicability.UNSAFE,
    )
    name = "cupy-cuda-wheel"
    category = "dependency"
    severity = Severity.ERROR
    impact = Impact(consequence="crash-path", effort_hours=0.5)
    message = "CuPy CUDA wheel: its kernels need a CUDA driver and fail on ROCm"
    fact = "§9 cupy-cuda12x row; [K3]"
    parsing = Parsing(triggers=_cases("cupy", "CuPy"))
    valid = [
        Valid("cupy-rocm-7-0\n", path="requirements.txt"),
        Valid("cupy\n", path="requirements.txt"),
        Valid("# cupy-cuda12x\nnumpy\n", path="requirements.txt"),
    ]
    invalid = [
        Invalid(
            "cupy-cuda12x        # kernels\n",
            path="requirements.txt",
            fixed="cupy-rocm-7-0        # kernels\n",
            line=1,
            column=1,
        ),
        Invalid(
            "cupy-cuda11x>=13.0,<14\n",
            path="requirements.txt",
            fixed="cupy-rocm-5-0>=13.0,<14\n",
        ),
        Invalid("cupy-cuda12x==12.3.0\n", path="requirements.txt", fixed=None),
        Invalid(  # a floor older than the ROCm wheel's first release says nothing: raised
            "cupy-cuda12x>=8.6.0,<15\n",
            path="requirements.txt",
            fixed="cupy-rocm-7-0>=14.0,<15\n",
        ),
        Invalid(
            '[project]\nname = "x"\n[project.optional-dependencies]\ngpu = ["cupy-cuda12x>=14"]\n',
            path="pyproject.toml",
            fixed='[project]\nname = "x"\n[project.optional-dependencies]\n'
            'gpu = ["cupy-rocm-7-0>=14"]\n',
        ),
    ]

    def examine(self, req: Req) -> Verdict | None:
        table = _table("cupy")
        if not re.match(table["pattern"], req.name):
            return None
        target = None
        first_major = ""
        for major in sorted(table["by_major"], key=int, reverse=True):
            probes = [f"{major}.{minor}.{patch}" for minor in range(6) for patch in range(4)]
            if any(spec_admits(req.spec, probe) is not False for probe in probes):
                target = table["by_major"][major]
                first_major = major
                break
        if target is None:
            return Verdict(
                f"`{req.parsed.raw_name}` is a CuPy CUDA wheel; CuPy's ROCm wheels start at 13.x "
                "(`cupy-rocm-5-0`) and 14.x (`cupy-rocm-7-0`): raise the pin and switch package"
            )
        rocm = target.split("-", 2)[2].replace("-", ".")
        floor = _floor(req.spec, first_major)
        return Verdict(
            f"`{req.parsed.raw_name}` is a CuPy CUDA wheel that fails on ROCm; use `{target}` "
            f"(built for ROCm {rocm}"
            + (
                f"; its first release is {first_major}.0, so the floor becomes {floor}"
                if floor
                else ""
            )
            + ")",
            Change(name=target, spec=floor),
        )


def _floor(spec: str, major: str) -> str | None:
    """``spec`` with its lower bound raised to the ROCm package's first release (``>=8.6.0`` on
    a package that starts at 14.0 says nothing), when it admits anything older; None when it
    does not."""
    below = f"{int(major) - 1}.99.99"
    if not spec.strip() or spec_admits(spec, below) is not True:
        return None
    kept = [
        clause.strip()
        for clause in spec.split(",")
        if clause.strip() and not clause.strip().startswith((">", "~="))
    ]
    return ",".join([f">={major}.0", *kept])
