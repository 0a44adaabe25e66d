"""ROC800: NVIDIA CUDA runtime wheels (``nvidia-*-cuNN``) listed as dependencies."""

from __future__ import annotations

import re

from migrator.api import Applicability, Fixing, Impact, Invalid, Parsing, Severity, Valid

from .._requirement_rule import RequirementRule, Verdict
from .._requirements import Change, Req
from ._table import _cases, _table


class NvidiaRuntimeWheel(RequirementRule):
    """
    ## What it does
    Flags NVIDIA CUDA runtime wheels (`nvidia-cublas-cu12`, `nvidia-cudnn-cu12`,
    `nvidia-nccl-cu12`, any `nvidia-*-cuNN`) listed as dependencies.

    ## Why it breaks on ROCm
    These wheels only carry CUDA libraries. ROCm builds of PyTorch bring their own ROCm
    libraries, so on an AMD machine the CUDA wheels are gigabytes of unused downloads, and their
    pins tie the environment to one CUDA release.

    ## Example
    ```python
    # requirements.txt
    torch==2.3.1
    nvidia-cublas-cu12==12.1.3.1
    ```

    ## Fix
    ```python
    # requirements.txt
    torch==2.3.1
    ```

    ## Fix safety
    Safe: CUDA builds of PyTorch declare these wheels themselves, so dropping the explicit line
    still installs them on NVIDIA machines. In `setup.py` the list element is removed; in
    `pyproject.toml` the array element (with its own line when it has one).

    ## References
    - rocm-facts.md §9 (`nvidia-*` runtime wheels row)
    """

    code = "ROC800"
    impact = Impact(problem="nvidia-cuda-runtime-wheels", consequence="hygiene", effort_hours=0.1)
    name = "nvidia-cuda-runtime-wheel"
    category = "dependency"
    severity = Severity.INFO
    message = "NVIDIA CUDA runtime wheel: unused on ROCm, where PyTorch ships its ROCm libraries"
    fix = Fixing(title="Remove the CUDA runtime wheel", applicability=Applicability.SAFE)
    fact = "§9 nvidia-* wheels row; [K2]"
    parsing = Parsing(triggers=_cases("nvidia-", "nvidia_", "nvidia."))
    valid = [
        Valid("torch==2.3.1\nnvidia-ml-py>=12\n", path="requirements.txt"),
        Valid("# nvidia-cublas-cu12 is pulled in by torch\ntorch\n", path="requirements.txt"),
        Valid(
            '[project]\nname = "x"\ndescription = "needs nvidia-cudnn-cu12"\ndependencies = []\n',
            path="pyproject.toml",
        ),
    ]
    invalid = [
        Invalid(
            "torch==2.3.1\nnvidia-cublas-cu12==12.1.3.1\nnumpy\n",
            path="requirements.txt",
            fixed="torch==2.3.1\nnumpy\n",
            line=2,
            column=1,
        ),
        Invalid(
            "numpy==2.0.2\nnvidia-cudnn-cu12==9.5.1.17\n    # via torch\ntorch==2.7.0\n",
            path="requirements.txt",
            fixed="numpy==2.0.2\ntorch==2.7.0\n",
        ),
        Invalid(
            '[project]\nname = "x"\ndependencies = [\n    "torch>=2.3",\n'
            '    "nvidia-nccl-cu12>=2.20",  # NCCL\n    "numpy",\n]\n',
            path="pyproject.toml",
            fixed='[project]\nname = "x"\ndependencies = [\n    "torch>=2.3",\n    "numpy",\n]\n',
            line=5,
        ),
        Invalid(
            '[project]\nname = "x"\ndependencies = ["torch", "Nvidia_Cublas_CU12"]\n',
            path="pyproject.toml",
            fixed='[project]\nname = "x"\ndependencies = ["torch"]\n',
        ),
        Invalid(
            "from setuptools import setup\n\nsetup(\n    name='x',\n"
            "    install_requires=[\n        'torch',\n        'nvidia-cublas-cu12',\n    ],\n)\n",
            path="setup.py",
            fixed="from setuptools import setup\n\nsetup(\n    name='x',\n"
            "    install_requires=[\n        'torch',\n    ],\n)\n",
            line=5,
        ),
        Invalid(
            "from setuptools import setup\nreqs = ['nvidia-cudnn-cu12', 'torch']\n"
            "setup(install_requires=reqs)\n",
            path="setup.py",
            fixed="from setuptools import setup\nreqs = ['torch']\nsetup(install_requires=reqs)\n",
            line=2,
            column=9,
        ),
    ]

    def examine(self, req: Req) -> Verdict | None:
        table = _table("nvidia_runtime")
        if not re.match(table["pattern"], req.name) or req.name in table["exclude"]:
            return None
        return Verdict(
            f"`{req.parsed.raw_name}` is an NVIDIA CUDA runtime wheel: unused on ROCm, where "
            "PyTorch ships its ROCm libraries",
            Change(remove=True),
        )
