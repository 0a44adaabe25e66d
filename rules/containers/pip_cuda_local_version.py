"""ROC866: ``pip install torch==X+cuXYZ`` in scripts, Dockerfiles and CI files."""

from __future__ import annotations

import re

from migrator.api import (
    Applicability,
    Fixing,
    Impact,
    Invalid,
    Parsing,
    Rewrite,
    Severity,
    TextRule,
    Valid,
)
from migrator.api.knowledge import LOCAL_CUDA_RE, rocm_for_companion, rocm_for_specs

from .._requirements import Change, Req, render
from .._shell import pip_requirements


class PipCudaLocalVersion(TextRule):
    """
    ## What it does
    Flags `pip install torch==X+cuXYZ` (and torchvision/torchaudio) in Dockerfiles, shell
    scripts, Makefiles and CI files.

    ## Why it breaks on ROCm
    The `+cuXYZ` label selects the CUDA build, which finds no GPU on an AMD machine. ROCm
    builds carry `+rocmX.Y` labels, one ROCm release per PyTorch minor.

    ## Example
    ```python
    # setup.sh
    pip install torch==2.3.1+cu121 -f https://download.pytorch.org/whl/torch_stable.html
    ```

    ## Fix
    ```python
    # setup.sh
    pip install torch==2.3.1+rocm6.0 -f https://download.pytorch.org/whl/torch_stable.html
    ```

    ## Fix safety
    Unsafe: the label follows the PyTorch→ROCm table (same logic as ROC801), and the command
    must also reach the matching `whl/rocmX.Y` index (ROC865).

    ## References
    - rocm-facts.md §9 (index URL and local version row)
    """

    code = "ROC866"
    fix = Fixing(
        replaces_vendor=True,
        title="Pin the ROCm build (`+rocmX.Y`) of the same release",
        applicability=Applicability.UNSAFE,
    )
    name = "pip-cuda-local-version"
    category = "container"
    severity = Severity.ERROR
    impact = Impact(consequence="crash-path", aggregate="file", effort_hours=0.25)
    message = "CUDA build of PyTorch pinned: on ROCm it finds no GPU and runs on the CPU"
    fact = "§9 index-url/local-version row; [P17][K1]"
    parsing = Parsing(triggers=("+cu",), file_kinds=frozenset({"dockerfile", "shell", "ci-yaml"}))
    valid = [
        Valid("RUN pip install torch==2.3.1+rocm6.0\n", path="Dockerfile"),
        Valid("echo torch==2.3.1+cu121\n", path="setup.sh"),
    ]
    invalid = [
        Invalid(
            "RUN pip3 install torch==2.3.1+cu121 torchaudio==2.3.1+cu121 \\\n"
            "    -f https://download.pytorch.org/whl/torch_stable.html\n",
            path="Dockerfile",
            fixed="RUN pip3 install torch==2.3.1+rocm6.0 torchaudio==2.3.1+rocm6.0 \\\n"
            "    -f https://download.pytorch.org/whl/torch_stable.html\n",
            count=1,
            line=1,
            column=18,
        ),
        Invalid(
            'python -m pip install "torch==2.5.1+cu124"\n',
            path="install.sh",
            fixed='python -m pip install "torch==2.5.1+rocm6.2"\n',
        ),
    ]

    def check(self) -> None:
        text = self.ctx.text
        reqs = pip_requirements(text)
        specs = [req.spec for req in reqs if req.name == "torch" and req.spec]
        for req in reqs:
            if req.name not in {"torch", "torchvision", "torchaudio"}:
                continue
            local = LOCAL_CUDA_RE.search(req.parsed.spec)
            if local is None:
                continue
            rocm = self._rocm(req, specs)
            start, end = req.span()
            if rocm is None or req.offset is None:
                self.report(
                    (start, end),
                    message=f"`{req.parsed.raw_name}` pinned to the CUDA build `{local.group()}`: "
                    "on ROCm it finds no GPU; pick the ROCm build by hand",
                )
                continue
            edit = render(req, Change(spec=LOCAL_CUDA_RE.sub(f"+rocm{rocm}", req.parsed.spec)))
            assert edit is not None
            edit_start, edit_end, new = edit
            self.report(
                (req.offset + edit_start, req.offset + edit_end),
                message=f"`{req.parsed.raw_name}` pinned to the CUDA build `{local.group()}`: on "
                f"ROCm it finds no GPU and runs on the CPU; the ROCm build is `+rocm{rocm}`",
                fix=Rewrite(new),
            )

    @staticmethod
    def _rocm(req: Req, specs: list[str]) -> str | None:
        version = re.sub(r"^[=~<>! ]+", "", req.spec.split(",")[0])
        if req.name != "torch" and specs:
            found = rocm_for_specs(specs)
            return None if found is None else found[1]
        return rocm_for_companion(req.name, version)
