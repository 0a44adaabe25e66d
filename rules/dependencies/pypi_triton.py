"""ROC807: ``triton`` from PyPI listed as a dependency."""

from __future__ import annotations

import re

from migrator.api import Applicability, Fixing, Impact, Invalid, Parsing, Severity, Valid

from .._requirement_rule import RequirementRule, Verdict
from .._requirements import Change, Req
from ._table import _cases, _table


class PypiTriton(RequirementRule):
    """
    ## What it does
    Flags `triton` from PyPI listed as a dependency.

    ## Why it breaks on ROCm
    ROCm builds of PyTorch depend on `pytorch-triton-rocm` (from
    `download.pytorch.org/whl/triton-rocm`), which provides the same `triton` module built for
    the torch release. Installing PyPI `triton` over it replaces that module with a different
    version, and `torch.compile` / Triton kernels can fail to compile or load.

    ## Example
    ```python
    # requirements.txt
    torch==2.7.0
    triton==3.3.0
    ```

    ## Fix
    ```python
    # requirements.txt
    torch==2.7.0
    ```

    ## Fix safety
    Unsafe: on NVIDIA, torch still installs the `triton` it needs. Only a bare `triton` is
    removed: a lower bound (`triton>=3.4`) is a floor NVIDIA installs must keep, and an exact
    pin or an upper bound (`triton==1.0.0`, `triton<3`) chooses the Triton of the project's own
    kernels; no environment marker tells the GPU vendor apart, so those lines stay and the
    finding says to move them to an NVIDIA-only extra by hand (unless a lock file says torch
    pulled the pin in, `# via torch`). A direct reference (`triton @ URL`) is an exact choice
    too; one to a ROCm build of Triton is the ROCm install itself and is not reported.

    ## References
    - rocm-facts.md §7 (`torch.compile` row) and §9 (`triton` row)
    """

    code = "ROC807"
    name = "pypi-triton"
    category = "dependency"
    severity = Severity.WARNING
    impact = Impact(consequence="crash-path", effort_hours=0.25)
    message = "PyPI `triton` would replace `pytorch-triton-rocm`, which ROCm torch depends on"
    fix = Fixing(
        title="Remove `triton`; ROCm torch brings `pytorch-triton-rocm`",
        applicability=Applicability.UNSAFE,
    )
    fact = "§7 torch.compile row, §9 triton row; [P17][R1]"
    parsing = Parsing(triggers=_cases("triton"))
    valid = [
        Valid("pytorch-triton-rocm\n", path="requirements.txt"),
        Valid("tritonclient[all]\n", path="requirements.txt"),
        Valid("triton-ascend==3.2.1\n", path="requirements.txt"),
        Valid(  # the ROCm build of Triton, by direct reference
            "triton @ https://repo.radeon.com/rocm/manylinux/rocm-rel-7.2/"
            "triton-3.5.1%2Brocm7.2.0.gita272dfa8-cp312-cp312-linux_x86_64.whl\n",
            path="requirements.txt",
        ),
    ]
    invalid = [
        Invalid(
            "torch==2.7.0\ntriton==3.3.0\n    # via torch\n",
            path="requirements.txt",
            fixed="torch==2.7.0\n",
            line=2,
        ),
        Invalid("triton==1.0.0\n", path="requirements.txt", fixed=None),
        Invalid(  # a direct reference is an exact choice: a manual step, never removed
            "triton @ https://example.org/triton-3.1.0-cp312-cp312-linux_x86_64.whl\n",
            path="requirements.txt",
            fixed=None,
        ),
        Invalid(
            '[project]\nname = "x"\ndependencies = ["torch", "triton", "numpy"]\n',
            path="pyproject.toml",
            fixed='[project]\nname = "x"\ndependencies = ["torch", "numpy"]\n',
        ),
        Invalid(  # a floor NVIDIA installs keep: the line stays, a manual step
            '[project]\nname = "x"\n'
            'dependencies = ["torch", "triton>=3.4.0 ; sys_platform != \'darwin\'"]\n',
            path="pyproject.toml",
            fixed=None,
        ),
    ]

    def examine(self, req: Req) -> Verdict | None:
        if req.name not in _table("triton")["names"]:
            return None
        url = req.parsed.url
        if url is not None and _ROCM_BUILD.search(url):
            return None  # a direct reference to a ROCm build of Triton: the ROCm install itself
        if (url is not None or _PINNED.search(req.parsed.spec)) and not self._via_torch(req):
            return Verdict(
                f"{self.message}; no automatic fix: `{req.parsed.text.strip()}` pins Triton for "
                "the project's own kernels, and removing it would change the Triton they get on "
                "NVIDIA too; keep the pin out of the ROCm install (an NVIDIA-only extra or "
                "requirements file) by hand"
            )
        if _FLOOR.search(req.parsed.spec) and not self._via_torch(req):
            return Verdict(
                f"{self.message}; no automatic fix: `{req.parsed.text.strip()}` is a Triton floor "
                "the project chose, and removing the line would drop it on NVIDIA too (no "
                "environment marker tells the GPU vendor apart); move it to an NVIDIA-only extra "
                "or requirements file by hand, and leave it out of the ROCm install"
            )
        return Verdict(self.message, Change(remove=True))

    def _via_torch(self, req: Req) -> bool:
        """Whether a lock file says torch pulled this pin in (``# via torch``)."""
        if req.remove is None:
            return False
        return (
            re.search(r"#\s*via\s+torch\b", self.ctx.text[req.remove[0] : req.remove[1]])
            is not None
        )


#: An exact pin or an upper bound: a Triton version chosen for the project's own kernels.
_PINNED = re.compile(r"==|<|~=")
#: A wheel built for ROCm (``triton-3.4.0+rocm7.0.2...whl``, ``repo.radeon.com``).
_ROCM_BUILD = re.compile(r"rocm|radeon", re.IGNORECASE)
#: A lower bound: a minimum Triton the project asks for, which NVIDIA installs must keep.
_FLOOR = re.compile(r">")
