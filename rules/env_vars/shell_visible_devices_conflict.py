"""ROC714: `CUDA_VISIBLE_DEVICES` set in shell, Docker, compose or CI files next to a HIP/ROCR
device list that disagrees with it."""

from __future__ import annotations

import re

from migrator.api import Impact, Invalid, Parsing, TextRule, Valid

from ._pairs import _VisibleDevicesConflictPair
from ._settings import environment_block, find_settings
from ._text_rules import _TEXT_KINDS
from ._visible_devices import CUDA, HIP, ROCR, conflict


class ShellVisibleDevicesConflict(_VisibleDevicesConflictPair, TextRule):
    """
    ## What it does
    Flags `CUDA_VISIBLE_DEVICES` set in a shell script or Dockerfile, or in a compose/CI
    environment block, next to a `HIP_VISIBLE_DEVICES` with a different list (or a
    `ROCR_VISIBLE_DEVICES` the CUDA indices do not fit in) in the same file or block.

    ## Why it breaks on ROCm
    As for ROC704: `HIP_VISIBLE_DEVICES` takes precedence over `CUDA_VISIBLE_DEVICES` on
    ROCm, so the job runs on other GPUs than on NVIDIA; `ROCR_VISIBLE_DEVICES` renumbers the
    GPUs it keeps from 0 before the CUDA list is applied.

    ## Example
    ```python
    # launch.sh
    export CUDA_VISIBLE_DEVICES=0,1
    export HIP_VISIBLE_DEVICES=2,3
    ```

    ## Manual migration
    Give both the same list (`export HIP_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES`) or set one.

    ## References
    - ROCm/HIP `docs/reference/env_variables/gpu_isolation_hip_env.rst`
    - pytorch/pytorch `torch/cuda/__init__.py` (`_parse_visible_devices`)
    """

    code = "ROC714"
    impact = Impact(consequence="performance")
    name = "shell-visible-devices-conflict"
    parsing = Parsing(file_kinds=_TEXT_KINDS)
    valid = [
        Valid("export CUDA_VISIBLE_DEVICES=0,1\nexport HIP_VISIBLE_DEVICES=0,1\n", path="run.sh"),
        Valid(
            "export CUDA_VISIBLE_DEVICES=2\nexport HIP_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES\n",
            path="run.sh",
        ),
        Valid(
            "services:\n  a:\n    environment:\n      - CUDA_VISIBLE_DEVICES=0\n"
            "  b:\n    environment:\n      - HIP_VISIBLE_DEVICES=1\n",
            path="docker-compose.yml",
        ),
    ]
    invalid = [
        Invalid(
            "#!/bin/bash\nexport CUDA_VISIBLE_DEVICES=0,1\nexport HIP_VISIBLE_DEVICES=2,3\n",
            path="launch.sh",
            line=2,
            column=8,
        ),
        Invalid(
            "jobs:\n  t:\n    env:\n      CUDA_VISIBLE_DEVICES: 0\n      HIP_VISIBLE_DEVICES: 1\n",
            path=".github/workflows/ci.yml",
            line=4,
        ),
        Invalid(
            "export ROCR_VISIBLE_DEVICES=4\nCUDA_VISIBLE_DEVICES=4 python train.py\n",
            path="run.sh",
            line=2,
        ),
    ]

    def check(self) -> None:
        text = self.ctx.text
        found = {name: find_settings(text, name) for name in (CUDA, HIP, ROCR)}
        if not found[CUDA] or not (found[HIP] or found[ROCR]):
            return
        for cuda in found[CUDA]:
            if not _literal(cuda.value):
                continue
            start, end = environment_block(text, self.ctx.kind, cuda.start)
            values = {CUDA: cuda.value}
            for name in (HIP, ROCR):
                for setting in found[name]:
                    if start <= setting.start < end and _literal(setting.value):
                        values.setdefault(name, setting.value)
            what = conflict(values)
            if what is not None:
                self.report(
                    (cuda.start, cuda.start + len(CUDA)), message=f"`{CUDA}` conflicts: {what}"
                )
                return


def _literal(value: str) -> bool:
    """A device list written out (no variable, no command substitution)."""
    return bool(value.strip("\"' ")) and not re.search(r"[$`]", value)
