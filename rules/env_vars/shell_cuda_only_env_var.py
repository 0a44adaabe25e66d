"""ROC713: CUDA-only environment variables set in shell, Docker, compose or CI files."""

from __future__ import annotations

from migrator.api import Impact, Invalid, Problem, Valid

from ._pairs import _CudaOnlyPair
from ._settings import find_settings
from ._table import cuda_only_handled, cuda_only_note, cuda_only_variables
from ._text_rules import _TextVariables


class ShellCudaOnlyEnvVar(_CudaOnlyPair, _TextVariables):
    """
    ## What it does
    Flags `TORCH_CUDA_ARCH_LIST`, `TORCH_USE_CUDA_DSA`, `NVIDIA_VISIBLE_DEVICES` and
    `NVIDIA_DRIVER_CAPABILITIES` set in shell scripts, Dockerfiles, compose and CI files.

    ## Why it breaks on ROCm
    None of them has an effect on ROCm: extension builds target `PYTORCH_ROCM_ARCH` (default:
    the archs torch was built for, so nothing breaks: `TORCH_CUDA_ARCH_LIST` is reported at
    `info`, and not at all in a file that also sets `PYTORCH_ROCM_ARCH`), device-side asserts are
    compiled out of ROCm builds, and the `NVIDIA_*` variables are read only by the NVIDIA
    container toolkit (`NVIDIA_DRIVER_CAPABILITIES` only picks the driver libraries it mounts,
    so it is reported at `info`; `NVIDIA_VISIBLE_DEVICES` selects the GPUs a container sees).

    ## Example
    ```python
    # Dockerfile
    ENV TORCH_CUDA_ARCH_LIST="8.0;9.0"
    ```

    ## Manual migration
    ```python
    # Dockerfile
    ENV PYTORCH_ROCM_ARCH="gfx90a;gfx942"
    ```
    Choose the gfx targets of the GPUs you deploy on (MI210/MI250: gfx90a, MI300X: gfx942,
    MI355X: gfx950). Containers get AMD GPUs through `--device /dev/kfd --device /dev/dri`.

    ## References
    - pytorch/pytorch `torch/utils/cpp_extension.py`
    - rocm.docs.amd.com "Running ROCm Docker containers"
    """

    code = "ROC713"
    impact = Impact(container_image="part", consequence="hygiene")
    name = "shell-cuda-only-env-var"
    valid = [
        Valid('ENV PYTORCH_ROCM_ARCH="gfx942"\n', path="Dockerfile"),
        Valid("# TORCH_CUDA_ARCH_LIST=8.0\n", path="run.sh"),
        Valid('echo "$TORCH_CUDA_ARCH_LIST"\n', path="run.sh"),
        Valid(
            'ENV TORCH_CUDA_ARCH_LIST="8.0;9.0"\nENV PYTORCH_ROCM_ARCH="gfx942"\n',
            path="Dockerfile",
        ),
    ]
    invalid = [
        Invalid(
            'FROM x\nENV TORCH_CUDA_ARCH_LIST="8.0;9.0"\n', path="Dockerfile", line=2, column=5
        ),
        Invalid(
            "services:\n  a:\n    environment:\n      - NVIDIA_VISIBLE_DEVICES=all\n",
            path="docker-compose.yml",
        ),
        Invalid("TORCH_CUDA_ARCH_LIST='8.0' pip install .\n", path="build.sh"),
    ]

    def check(self) -> None:
        for name in cuda_only_variables():
            if name not in self.ctx.text:
                continue
            if cuda_only_handled(name, self.ctx.text):
                continue  # the file also sets the ROCm counterpart
            message, severity = cuda_only_note(name)
            for setting in find_settings(self.ctx.text, name):
                self.report(
                    (setting.start, setting.start + len(name)),
                    message=message,
                    problem=Problem(severity=severity),
                )
