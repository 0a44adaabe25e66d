"""ROC711: ``CUDA_LAUNCH_BLOCKING`` set in shell, Docker, compose or CI files without
``HIP_LAUNCH_BLOCKING``."""

from __future__ import annotations

from migrator.api import Impact, Invalid, Valid

from ._pairs import _LaunchBlockingPair
from ._text_rules import _TextPaired


class ShellCudaLaunchBlockingWithoutHip(_LaunchBlockingPair, _TextPaired):
    """
    ## What it does
    Flags `CUDA_LAUNCH_BLOCKING` set in shell scripts, Dockerfiles, compose and CI files when
    `HIP_LAUNCH_BLOCKING` (or `AMD_SERIALIZE_KERNEL`) is not set on the same or next line.

    ## Why it breaks on ROCm
    Whether HIP reads `CUDA_LAUNCH_BLOCKING` is undocumented; HIP's variable is
    `HIP_LAUNCH_BLOCKING` (same as `AMD_SERIALIZE_KERNEL`), so the requested synchronous
    launches silently stay asynchronous.

    ## Example
    ```python
    # debug.sh
    CUDA_LAUNCH_BLOCKING=1 python train.py
    ```

    ## Fix
    ```python
    # debug.sh
    CUDA_LAUNCH_BLOCKING=1 HIP_LAUNCH_BLOCKING=1 python train.py
    ```

    ## Fix safety
    Safe: the same simple value is copied and CUDA never reads the HIP variable.

    ## References
    - ROCm/HIP `docs/reference/env_variables/debug_hip_env.rst`
    """

    code = "ROC711"
    impact = Impact(consequence="hygiene")
    name = "shell-cuda-launch-blocking-without-hip"
    valid = [
        Valid("CUDA_LAUNCH_BLOCKING=1 AMD_SERIALIZE_KERNEL=3 python t.py\n", path="run.sh"),
        Valid("# CUDA_LAUNCH_BLOCKING=1 for debugging\n", path="run.sh"),
        Valid('echo "$CUDA_LAUNCH_BLOCKING"\n', path="run.sh"),
        Valid("export CUDA_LAUNCH_BLOCKING=0\n", path="run.sh"),
    ]
    invalid = [
        Invalid(
            "export CUDA_LAUNCH_BLOCKING=1\n",
            fixed="export CUDA_LAUNCH_BLOCKING=1 HIP_LAUNCH_BLOCKING=1\n",
            path="run.sh",
            column=8,
        ),
        Invalid(
            "FROM x\nENV CUDA_LAUNCH_BLOCKING=1\n",
            fixed="FROM x\nENV CUDA_LAUNCH_BLOCKING=1 HIP_LAUNCH_BLOCKING=1\n",
            path="Dockerfile",
        ),
    ]
