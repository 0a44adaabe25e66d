"""ROC819: ``vllm`` installed from the package index (a CUDA build)."""

from __future__ import annotations

import re

from migrator.api import Impact, Invalid, Parsing, Severity, Valid

from .._requirement_rule import RequirementRule, Verdict
from .._requirements import Req
from ._table import _cases


class VllmCudaWheel(RequirementRule):
    """
    ## What it does
    Flags `vllm` listed as a dependency (requirements files, `pyproject.toml` and its extras,
    `setup.py`), and, through ROC867, `pip install vllm` in scripts, Dockerfiles, CI files and
    the install blocks of the project's documentation.

    ## Why it breaks on ROCm
    The package-index vLLM wheel holds pre-compiled CUDA binaries built against the CUDA torch
    it pins. For AMD GPUs vLLM published no wheel on the default index: its docs say to use the
    ROCm Docker image or to build from source (later ROCm wheels come from vLLM's own ROCm
    variant index). Installed on an AMD machine, the requirement brings a CUDA vLLM and a CUDA
    torch: the engine cannot start on the GPU.

    ## Example
    ```python
    # requirements.txt
    vllm==0.2.7
    ```

    ## Manual migration
    Run the project in AMD's `rocm/vllm` image, or build the vLLM version the project needs
    from source for ROCm (vLLM runs on ROCm since 0.2.4); keep the package-index requirement
    for NVIDIA installs only (an NVIDIA extra or requirements file).

    ## References
    - rocm-facts.md §9 (`vllm` rows)
    """

    code = "ROC819"
    name = "vllm-cuda-wheel"
    category = "dependency"
    severity = Severity.WARNING
    impact = Impact(consequence="crash-path", aggregate="project", effort_hours=2.0)
    message = (
        "`vllm` from the package index is a CUDA build (and pins a CUDA torch); on ROCm use the "
        "`rocm/vllm` image or a ROCm build of vLLM"
    )
    fact = "§9 vllm wheel; [L1][L2][L6]"
    parsing = Parsing(triggers=_cases("vllm", "vLLM"))
    valid = [
        Valid("vllm-flash-attn-notes\n", path="requirements.txt"),
        Valid("# vllm is optional\ntorch\n", path="requirements.txt"),
        Valid(
            "vllm @ https://example.org/vllm-0.6.3+rocm624-cp312-cp312-linux_x86_64.whl\n",
            path="requirements.txt",
        ),
    ]
    invalid = [
        Invalid("vllm==0.2.7\n", path="requirements.txt", line=1, column=1),
        Invalid(
            '[project]\nname = "x"\n[project.optional-dependencies]\nvllm = ["vllm>=0.18"]\n',
            path="pyproject.toml",
            line=4,
        ),
        Invalid(
            'import setuptools\nsetuptools.setup(extras_require={"vllm": ["vllm==0.27.1"]})\n',
            path="setup.py",
            line=2,
        ),
    ]

    def examine(self, req: Req) -> Verdict | None:
        if req.name != "vllm":
            return None
        if req.parsed.url is not None and _ROCM_BUILD.search(req.parsed.url):
            return None
        return Verdict(
            f"`{req.parsed.text.strip()}` from the package index is vLLM's CUDA build (CUDA "
            "binaries built against the CUDA torch it pins): on ROCm run AMD's `rocm/vllm` "
            "image or build this vLLM version from source for ROCm"
        )


#: A wheel built for ROCm (``vllm-0.6.3+rocm624...whl``).
_ROCM_BUILD = re.compile(r"rocm", re.IGNORECASE)
