"""ROC710: ``CUDA_VISIBLE_DEVICES`` set in shell, Docker, compose or CI files without
``HIP_VISIBLE_DEVICES``."""

from __future__ import annotations

from migrator.api import Impact, Invalid, Valid

from ._pairs import _VisibleDevicesPair
from ._text_rules import _TextPaired


class ShellCudaVisibleDevicesWithoutHip(_VisibleDevicesPair, _TextPaired):
    """
    ## What it does
    Flags `CUDA_VISIBLE_DEVICES` set in shell scripts (`export`, `VAR=... cmd`), Dockerfiles
    (`ENV`), compose `environment:` entries, CI `env:` blocks and `docker run -e`, when
    `HIP_VISIBLE_DEVICES` (or `ROCR_VISIBLE_DEVICES`) is not set on the same or the next line.

    ## Why it breaks on ROCm
    Today this works: HIP (ROCm ≤ 7.x docs) accepts `CUDA_VISIBLE_DEVICES` as a legacy alias
    of `HIP_VISIBLE_DEVICES`, and PyTorch on ROCm reads it. Hence `info`: the ROCm 10 docs list
    only the HIP name, and an inherited `HIP_VISIBLE_DEVICES` overrides the CUDA name.

    ## Example
    ```python
    # launch.sh
    export CUDA_VISIBLE_DEVICES=0,1
    CUDA_VISIBLE_DEVICES=0 python train.py
    ```

    ## Fix
    ```python
    # launch.sh
    export CUDA_VISIBLE_DEVICES=0,1 HIP_VISIBLE_DEVICES=0,1
    CUDA_VISIBLE_DEVICES=0 HIP_VISIBLE_DEVICES=0 python train.py
    ```
    Compose list and map entries and `ENV NAME value` lines get a new line below;
    `docker run -e CUDA_VISIBLE_DEVICES` gets `-e HIP_VISIBLE_DEVICES`.

    ## Fix safety
    Safe: the same value is copied (only simple values: no command substitution), and
    nothing on an NVIDIA machine reads `HIP_VISIBLE_DEVICES`.

    ## References
    - ROCm/HIP `docs/reference/env_variables/gpu_isolation_hip_env.rst`
    """

    code = "ROC710"
    impact = Impact(consequence="hygiene")
    name = "shell-cuda-visible-devices-without-hip"
    valid = [
        Valid("export CUDA_VISIBLE_DEVICES=0\nexport HIP_VISIBLE_DEVICES=0\n", path="run.sh"),
        Valid("# export CUDA_VISIBLE_DEVICES=0\n", path="run.sh"),
        Valid('echo "GPUs: $CUDA_VISIBLE_DEVICES"\n', path="run.sh"),
        Valid("export MY_CUDA_VISIBLE_DEVICES=0\n", path="run.sh"),
        Valid(  # HIP set further down the same script (ROC714 compares the lists)
            "export CUDA_VISIBLE_DEVICES=0,1\nexport OMP_NUM_THREADS=8\n"
            "export HIP_VISIBLE_DEVICES=0,1\n",
            path="run.sh",
        ),
    ]
    invalid = [
        Invalid(
            "#!/bin/bash\nexport CUDA_VISIBLE_DEVICES=0,1\n",
            fixed="#!/bin/bash\nexport CUDA_VISIBLE_DEVICES=0,1 HIP_VISIBLE_DEVICES=0,1\n",
            path="launch.sh",
            line=2,
            column=8,
        ),
        Invalid(
            "CUDA_VISIBLE_DEVICES=$GPU python train.py\n",
            fixed="CUDA_VISIBLE_DEVICES=$GPU HIP_VISIBLE_DEVICES=$GPU python train.py\n",
            path="run.sh",
        ),
        Invalid(
            "services:\n  app:\n    environment:\n      - CUDA_VISIBLE_DEVICES=0\n",
            fixed="services:\n  app:\n    environment:\n      - CUDA_VISIBLE_DEVICES=0\n"
            "      - HIP_VISIBLE_DEVICES=0\n",
            path="docker-compose.yml",
        ),
        Invalid(
            'services:\n  app:\n    environment:\n      CUDA_VISIBLE_DEVICES: "0"\n',
            fixed='services:\n  app:\n    environment:\n      CUDA_VISIBLE_DEVICES: "0"\n'
            '      HIP_VISIBLE_DEVICES: "0"\n',
            path="docker-compose.yml",
        ),
        Invalid(
            "FROM x\nENV CUDA_VISIBLE_DEVICES 0\n",
            fixed="FROM x\nENV CUDA_VISIBLE_DEVICES 0\nENV HIP_VISIBLE_DEVICES 0\n",
            path="Dockerfile",
        ),
        Invalid(
            "docker run --rm \\\n  -e CUDA_VISIBLE_DEVICES \\\n  img\n",
            fixed="docker run --rm \\\n"
            "  -e CUDA_VISIBLE_DEVICES -e HIP_VISIBLE_DEVICES \\\n  img\n",
            path="run.sh",
        ),
        Invalid(
            "jobs:\n  t:\n    env:\n      CUDA_VISIBLE_DEVICES: 0\n",
            fixed="jobs:\n  t:\n    env:\n"
            "      CUDA_VISIBLE_DEVICES: 0\n      HIP_VISIBLE_DEVICES: 0\n",
            path=".github/workflows/ci.yml",
        ),
        Invalid("export CUDA_VISIBLE_DEVICES=$(pick_gpus)\n", path="run.sh"),
        Invalid(
            "export CUDA_VISIBLE_DEVICES=${GPUS:-0}\n",
            fixed="export CUDA_VISIBLE_DEVICES=${GPUS:-0} HIP_VISIBLE_DEVICES=${GPUS:-0}\n",
            path="run.sh",
        ),
    ]
