"""ROC864: CUDA toolkit, cuDNN, NCCL and TensorRT system packages installed with apt/yum/dnf."""

from __future__ import annotations

import re

from migrator.api import Impact, Invalid, Parsing, Severity, TextRule, Valid

from .._shell import command_segments

_APT_CUDA_RE = re.compile(
    r"^(cuda(-[a-z0-9.-]+)?|libcudnn\d*(-[a-z0-9-]+)?|libnccl\d*(-[a-z0-9-]+)?|libnvinfer[a-z0-9-]*"
    r"|libcublas[a-z0-9.-]*|libcusparse[a-z0-9.-]*|libcufft[a-z0-9.-]*|libcurand[a-z0-9.-]*"
    r"|tensorrt(-[a-z0-9-]+)?|nvidia-cuda-toolkit|nvidia-container-toolkit)([=:].*)?$"
)


_INSTALLERS = {"apt-get", "apt", "yum", "dnf", "microdnf", "zypper"}


class AptCudaPackages(TextRule):
    """
    ## What it does
    Flags CUDA toolkit, cuDNN, NCCL and TensorRT system packages (`cuda-nvcc-12-9`,
    `libcudnn8`, `libnccl2`, `libnvinfer8`, ...) installed with apt/yum/dnf.

    ## Why it breaks on ROCm
    They come from NVIDIA's package repository (present only in CUDA base images) and provide
    CUDA libraries and compilers that nothing on an AMD machine can use: the install fails on a
    ROCm image, or adds unused gigabytes, and builds that rely on `nvcc` stay CUDA builds.

    ## Example
    ```python
    # Dockerfile
    RUN apt-get install -y cuda-nvcc-12-1 libcudnn8
    ```

    ## Manual migration
    Start from a ROCm image that already carries the ROCm stack
    (`rocm/dev-ubuntu-22.04:<ver>-complete`) and install the ROCm library packages you
    need (hipcc, MIOpen, RCCL, hipBLAS ...) instead.

    ## References
    - rocm-facts.md §9 (`FROM nvidia/cuda` row); AMD "ROCm Docker images" [C1]
    """

    code = "ROC864"
    name = "apt-cuda-packages"
    category = "container"
    severity = Severity.WARNING
    impact = Impact(
        consequence="crash-path", aggregate="file", container_image="part", effort_hours=0.5
    )
    message = "CUDA system package: unavailable or unused on a ROCm system"
    fact = "§9 FROM nvidia/cuda row; [C1]"
    parsing = Parsing(
        triggers=("cuda", "cudnn", "nccl", "nvinfer", "tensorrt", "cublas"),
        file_kinds=frozenset({"dockerfile", "shell", "ci-yaml"}),
    )
    valid = [
        Valid("RUN apt-get install -y rocm-dev miopen-hip\n", path="Dockerfile"),
        Valid("RUN apt-get install -y git  # cuda-nvcc-12-1 not needed\n", path="Dockerfile"),
        Valid("RUN pip install cuda-nvcc-12-1\n", path="Dockerfile"),
    ]
    invalid = [
        Invalid(
            "FROM ubuntu:22.04\nRUN apt install -y bash \\\n    cuda-cudart-dev-12-9 \\\n"
            "    cuda-nvcc-12-9 \\\n    git\n",
            path="Dockerfile",
            count=1,
            line=3,
            column=5,
        ),
        Invalid("sudo apt-get install -y libcudnn8=8.9.7.29-1+cuda12.2\n", path="setup.sh"),
    ]

    def check(self) -> None:
        for segment in command_segments(self.ctx.text):
            values = [token.value for token in segment]
            for index, value in enumerate(values):
                if value in _INSTALLERS and "install" in values[index + 1 : index + 3]:
                    start = values.index("install", index + 1) + 1
                    for token in segment[start:]:
                        if not token.value.startswith("-") and _APT_CUDA_RE.match(token.value):
                            self.report(
                                (token.start, token.end),
                                message=f"CUDA system package `{token.value}`: unavailable or "
                                "unused on ROCm; install the ROCm libraries (or use a ROCm image)",
                            )
                    break
