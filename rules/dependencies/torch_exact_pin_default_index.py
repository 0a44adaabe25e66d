"""ROC820: an exact ``torch`` pin resolved from the default package index (a CUDA build)."""

from __future__ import annotations

import re

from migrator.api import Impact, Invalid, Parsing, Severity, Valid
from migrator.api.knowledge import index_url_for, rocm_for_torch_version

from .._requirement_rule import RequirementRule, Verdict
from .._requirements import Req


class TorchExactPinDefaultIndex(RequirementRule):
    """
    ## What it does
    Flags an exact `torch` pin with no local version label (`torch==2.3.1`) in a dependency
    file that names no PyTorch wheel index.

    ## Why it breaks on ROCm
    On Linux the package index's torch wheel is a CUDA build (PyTorch's install commands give
    the bare `pip install torch==V` as the command of the default CUDA build; from 2.1 its
    metadata requires the `nvidia-*-cu12` runtime wheels). Installing the file into an
    environment that does not already hold the ROCm build of that very release (a fresh
    environment, or a ROCm torch of another release) replaces it with the CUDA build, which
    finds no GPU on an AMD machine: everything runs on the CPU. A ROCm build of the same
    release installed first satisfies the pin (`2.3.1+rocm6.0` matches `==2.3.1`), so the
    project itself works once the user knows which index to use.

    ## Example
    ```python
    # requirements.txt
    torch==2.3.1
    ```

    ## Manual migration
    Install the pinned release from the ROCm wheel index that serves it before the file
    (`pip install torch==2.3.1 --index-url https://download.pytorch.org/whl/rocm6.0`), and say so
    in the install instructions; or add that index to the file for ROCm installs. The index is
    taken from the table of which releases each `whl/rocmX.Y` index serves.

    ## Known problems
    Not reported where the file names a PyTorch wheel index (`download.pytorch.org/whl/...`):
    a CUDA index there is ROC802's problem. A range (`torch>=2.1`) is left alone: a ROCm torch
    installed first satisfies it.

    ## References
    - rocm-facts.md §9 (torch from the default index; index releases)
    """

    code = "ROC820"
    name = "torch-exact-pin-default-index"
    category = "dependency"
    severity = Severity.WARNING
    impact = Impact(consequence="cpu-fallback", effort_hours=0.25)
    message = (
        "exact `torch` pin from the default package index: on Linux that is the CUDA build, "
        "which finds no GPU on ROCm"
    )
    fact = "§9 torch default index, index releases; [P18]"
    parsing = Parsing(
        triggers=("torch",),
        file_kinds=frozenset({"python", "requirements", "pyproject", "setupcfg"}),
    )
    valid = [
        Valid("torch>=2.1\n", path="requirements.txt"),
        Valid(
            "--extra-index-url https://download.pytorch.org/whl/rocm6.0\ntorch==2.3.1\n",
            path="requirements.txt",
        ),
        Valid("torch==2.3.1+rocm6.0\n", path="requirements.txt"),
        Valid("torch==2.3.1 ; sys_platform == 'darwin'\n", path="requirements.txt"),
        Valid("torchvision==0.18.1\n", path="requirements.txt"),
        Valid(
            '[project]\nname = "x"\ndependencies = ["torch==2.8.0"]\n'
            '[[tool.uv.index]]\nname = "pytorch"\nurl = "https://download.pytorch.org/whl/cu126"\n',
            path="pyproject.toml",
        ),
    ]
    invalid = [
        Invalid("torch==2.3.1\ntorchvision==0.18.1\n", path="requirements.txt", line=1, column=1),
        Invalid(
            '[project]\nname = "x"\n[project.optional-dependencies]\n'
            'torch = ["torch == 2.6.0", "torchvision"]\n',
            path="pyproject.toml",
            line=4,
        ),
        Invalid(
            'import setuptools\nsetuptools.setup(install_requires=["torch==2.3.0"])\n',
            path="setup.py",
            line=2,
        ),
        Invalid("torch==1.13.1\n", path="requirements.txt", count=1),
    ]

    def examine(self, req: Req) -> Verdict | None:
        if req.name != "torch" or req.parsed.url is not None:
            return None
        match = _EXACT.fullmatch(req.spec.replace(" ", ""))
        if match is None or _INDEX.search(getattr(self.ctx, "text", "") or ""):
            return None
        version = match.group(1)
        rocm = rocm_for_torch_version(version)
        if rocm is None:
            return Verdict(
                f"`torch=={version}` from the default package index is the CUDA build on Linux, "
                "which finds no GPU on ROCm (everything runs on the CPU); no ROCm wheel index is "
                "known to serve this release: move the pin to a release a `whl/rocmX.Y` index has"
            )
        return Verdict(
            f"`torch=={version}` from the default package index is the CUDA build on Linux: "
            "where the environment does not already hold the ROCm build of this release, it is "
            "installed and finds no GPU on ROCm (everything runs on the CPU); install it first "
            f"from `{index_url_for(rocm)}` (`pip install torch=={version} --index-url "
            f"{index_url_for(rocm)}`) and say so in the install steps"
        )


#: One exact release, no local label, no wildcard (``==2.3.1``, ``===2.3.1``).
_EXACT = re.compile(r"===?(\d+(?:\.\d+){1,2})")
#: The file chooses a PyTorch wheel index itself (ROC802 reports a CUDA one).
_INDEX = re.compile(r"download\.pytorch\.org/whl")
