"""ROC801: ``torch``/``torchvision``/``torchaudio`` pins with a CUDA local version (``+cu121``)."""

from __future__ import annotations

import re

from migrator.api import Applicability, Fixing, Impact, Invalid, Parsing, Severity, Valid
from migrator.api.knowledge import (
    LOCAL_CUDA_RE,
    rocm_for_companion,
    rocm_for_specs,
    rocm_for_torch_version,
)

from .._requirement_rule import RequirementRule, Verdict
from .._requirements import Change, Req
from ._table import _table


class TorchCudaLocalVersion(RequirementRule):
    """
    ## What it does
    Flags `torch`, `torchvision` and `torchaudio` pins with a CUDA local version label, such as
    `torch==2.3.1+cu121`.

    ## Why it breaks on ROCm
    The `+cuXYZ` label selects the CUDA build of the wheel. Installed on an AMD machine, that
    build finds no CUDA device: `torch.cuda.is_available()` is False and everything runs on
    the CPU. ROCm builds carry `+rocmX.Y` labels instead, one ROCm release per PyTorch minor.

    ## Example
    ```python
    # requirements.txt
    torch==2.3.1+cu121
    ```

    ## Fix
    ```python
    # requirements.txt
    torch==2.3.1+rocm6.0
    ```

    ## Fix safety
    Unsafe: the ROCm label comes from the PyTorch→ROCm table (2.0→5.4 … 2.14→7.14), and the
    file must also point pip at the matching `download.pytorch.org/whl/rocmX.Y` index (ROC802).
    The rewritten pin no longer installs on NVIDIA machines.

    ## References
    - rocm-facts.md §9 (index URL and local version row)
    """

    code = "ROC801"
    fix = Fixing(
        replaces_vendor=True,
        title="Pin the ROCm build (`+rocmX.Y`) of the same release",
        applicability=Applicability.UNSAFE,
    )
    name = "torch-cuda-local-version"
    category = "dependency"
    severity = Severity.ERROR
    impact = Impact(consequence="cpu-fallback", effort_hours=0.25)
    message = "CUDA build of PyTorch pinned: on ROCm it finds no GPU and runs on the CPU"
    fact = "§9 index-url/local-version row; [P17][K1]"
    parsing = Parsing(triggers=("+cu",))
    valid = [
        Valid("torch==2.3.1+rocm6.0\n", path="requirements.txt"),
        Valid("torch==2.3.1  # was 2.3.1+cu121\n", path="requirements.txt"),
        Valid("mylib==1.0+cu121\n", path="requirements.txt"),
    ]
    invalid = [
        Invalid(
            "--extra-index-url https://download.pytorch.org/whl/cu121\ntorch==2.3.1+cu121\n",
            path="requirements.txt",
            fixed="--extra-index-url https://download.pytorch.org/whl/cu121\n"
            "torch==2.3.1+rocm6.0\n",
            line=2,
            column=1,
        ),
        Invalid(
            "torch==2.6.0+cu124 ; sys_platform == 'linux'\ntorchvision==0.21.0+cu124\n",
            path="requirements.txt",
            fixed="torch==2.6.0+rocm6.2.4 ; sys_platform == 'linux'\n"
            "torchvision==0.21.0+rocm6.2.4\n",
            count=2,
        ),
        Invalid(
            '[tool.poetry.dependencies]\npython = "^3.10"\ntorch = "2.1.2+cu118"\n',
            path="pyproject.toml",
            fixed='[tool.poetry.dependencies]\npython = "^3.10"\ntorch = "2.1.2+rocm5.6"\n',
        ),
        Invalid(
            "torch==1.13.1+cu117\n",
            path="requirements.txt",
            fixed=None,
        ),
        Invalid(
            'import setuptools\nsetuptools.setup(install_requires=["torch==2.4.0+cu121"])\n',
            path="setup.py",
            fixed="import setuptools\n"
            'setuptools.setup(install_requires=["torch==2.4.0+rocm6.1"])\n',
        ),
    ]

    def examine(self, req: Req) -> Verdict | None:
        if req.name not in _table("torch_builds")["packages"]:
            return None
        spec = req.parsed.spec
        local = LOCAL_CUDA_RE.search(spec)
        if local is None:
            return None
        rocm = self._rocm(req)
        label = local.group()
        if rocm is None:
            return Verdict(
                f"`{req.parsed.raw_name}` pinned to the CUDA build `{label}`: on ROCm it finds no "
                "GPU; no ROCm build of this release is in the PyTorch→ROCm table, pick one by hand"
            )
        new_spec = LOCAL_CUDA_RE.sub(f"+rocm{rocm}", spec)
        return Verdict(
            f"`{req.parsed.raw_name}` pinned to the CUDA build `{label}`: on ROCm it finds no GPU "
            f"and runs on the CPU; the ROCm build is `+rocm{rocm}`",
            Change(spec=new_spec),
        )

    def _rocm(self, req: Req) -> str | None:
        version = re.sub(r"^[=~<>! ]+", "", req.spec.split(",")[0])
        if req.name != "torch":
            specs = [spec for spec in self.torch_specs() if spec]
            if specs:
                found = rocm_for_specs(specs)
                return None if found is None else found[1]
            return rocm_for_companion(req.name, version)
        return rocm_for_torch_version(version)
