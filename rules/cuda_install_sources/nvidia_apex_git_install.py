"""ROC816 (nvidia-apex-git-install): flags installs of NVIDIA's apex from its git repository
(`git+https://github.com/NVIDIA/apex`) in requirement files, shell scripts, Dockerfiles and CI
files."""

from __future__ import annotations

import re

from migrator.api import Impact, Invalid, Parsing, Severity, TextRule, Valid

from .._shell import iter_lines
from ._shared import _INSTALL_KINDS

# `git+https://github.com/NVIDIA/apex` (with or without `.git`, `@ref`, `#egg=`).
_APEX_GIT = re.compile(
    r"git\+(?:https?|ssh)://(?:git@)?github\.com[/:]NVIDIA/apex(?:\.git)?(?![\w-])"
)


class NvidiaApexGitInstall(TextRule):
    """
    ## What it does
    Flags installs of NVIDIA's apex from its git repository (`git+https://github.com/NVIDIA/apex`)
    in requirement files, shell scripts, Dockerfiles and CI files.

    ## Why it breaks on ROCm
    NVIDIA/apex builds its fused kernels with nvcc for CUDA only (PyPI's `apex` is an unrelated
    package); on ROCm the build fails or leaves the fused ops out. AMD maintains the port as
    ROCm/apex, which also still has `apex.amp`.

    ## Example
    ```python
    # Dockerfile
    RUN pip install -v --no-build-isolation git+https://github.com/NVIDIA/apex.git
    ```

    ## Manual migration
    On ROCm install `git+https://github.com/ROCm/apex` (or use a `rocm/pytorch` image, which
    ships it), or replace the apex layers with their torch equivalents (ROC500-ROC504).

    ## References
    - ROCm/apex README
    """

    code = "ROC816"
    name = "nvidia-apex-git-install"
    category = "dependency"
    severity = Severity.ERROR
    impact = Impact(consequence="crash-path", effort_hours=0.5)
    message = "NVIDIA/apex builds CUDA kernels only; on ROCm install ROCm/apex"
    fact = "§5 apex.amp row; [AP2]"
    parsing = Parsing(triggers=("NVIDIA/apex",), file_kinds=_INSTALL_KINDS)
    valid = [
        Valid("pip install git+https://github.com/ROCm/apex.git\n", path="setup.sh"),
        Valid("# pip install git+https://github.com/NVIDIA/apex\n", path="setup.sh"),
        Valid("pip install git+https://github.com/NVIDIA/apex-tools\n", path="setup.sh"),
    ]
    invalid = [
        Invalid(
            "RUN pip install -v --no-build-isolation git+https://github.com/NVIDIA/apex.git\n",
            path="Dockerfile",
            column=41,
        ),
        Invalid("apex @ git+https://github.com/NVIDIA/apex@24.04.01\n", path="requirements.txt"),
    ]

    def check(self) -> None:
        for offset, _line, code in iter_lines(self.ctx.text):
            if "NVIDIA/apex" not in code:
                continue
            for match in _APEX_GIT.finditer(code):
                self.report((offset + match.start(), offset + match.end()))
