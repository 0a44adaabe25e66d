"""ROC870 (pytorch-cuda-image): PyTorch's own CUDA images (``pytorch/pytorch:*-cuda*``)."""

from __future__ import annotations

import re

from migrator.api import Impact, Invalid, Parsing, Severity, TextRule, Valid

from ._images import image_refs, split_image

#: ``pytorch/pytorch:2.3.0-cuda12.1-cudnn8-runtime`` (also under docker.io/): the torch release.
_TAG = re.compile(r"^(?P<torch>\d+\.\d+(?:\.\d+)?)-cuda\d")
_REPOSITORIES = frozenset({"pytorch/pytorch", "docker.io/pytorch/pytorch"})


class PytorchCudaImage(TextRule):
    """
    ## What it does
    Flags PyTorch's Docker Hub images with CUDA (`pytorch/pytorch:<torch>-cuda<X>-cudnn<Y>-
    runtime` or `-devel`) used as a base or service image, also through an `ARG` default.
    In a Dockerfile stage on such an image, the lines that exist only for it (`CUDA_HOME`,
    CUDA-only variables, CUDA apt packages) are this finding's related sites, each naming
    its rule. A Dockerfile held in a Python string that the code writes out is read too.

    ## Why it breaks on ROCm
    These images carry a CUDA build of torch on an NVIDIA CUDA base: on an AMD GPU
    `torch.cuda.is_available()` is false, so the container's work runs on the CPU or fails.
    AMD publishes `rocm/pytorch` images with the same torch releases.

    ## Example
    ```python
    # Dockerfile
    FROM pytorch/pytorch:2.3.0-cuda12.1-cudnn8-runtime
    ```

    ## Manual migration
    Build the ROCm image from `rocm/pytorch:rocmX.Y_ubuntuYY.MM_pyZ_pytorch_release_A.B.C` with
    the same torch release (in a ROCm variant of the Dockerfile, so NVIDIA users keep theirs),
    or from a ROCm base with torch from its ROCm wheel index.

    ## References
    - rocm-facts.md §9 (`FROM pytorch/pytorch` row)
    """

    code = "ROC870"
    name = "pytorch-cuda-image"
    category = "container"
    severity = Severity.ERROR
    impact = Impact(
        consequence="crash-path", aggregate="file", container_image="base", effort_hours=2.0
    )
    message = "PyTorch's CUDA image: torch there is a CUDA build that cannot use an AMD GPU"
    fact = "§9 FROM pytorch/pytorch; [PH1][R1]"
    parsing = Parsing(
        triggers=("pytorch/pytorch",), file_kinds=frozenset({"dockerfile", "compose", "ci-yaml"})
    )
    valid = [
        Valid(
            "FROM rocm/pytorch:rocm6.2_ubuntu22.04_py3.10_pytorch_release_2.3.0\n",
            path="Dockerfile",
        ),
        Valid(
            "# FROM pytorch/pytorch:2.3.0-cuda12.1-cudnn8-runtime\nFROM python:3.11\n",
            path="Dockerfile",
        ),
        Valid("FROM pytorch/pytorch:latest-cpu\n", path="Dockerfile"),
    ]
    invalid = [
        Invalid(
            "FROM pytorch/pytorch:2.3.0-cuda12.1-cudnn8-runtime\nRUN pip install -e .\n",
            path="Dockerfile",
            line=1,
            column=6,
        ),
        Invalid(
            "ARG BASE=pytorch/pytorch:2.1.2-cuda11.8-cudnn8-devel\nFROM ${BASE}\n",
            path="Dockerfile",
            line=1,
            column=10,
        ),
        Invalid(
            "services:\n  train:\n    image: pytorch/pytorch:2.4.0-cuda12.4-cudnn9-runtime\n",
            path="docker-compose.yml",
            line=3,
        ),
    ]

    def check(self) -> None:
        for ref in image_refs(self.ctx.text, self.ctx.kind):
            repository, tag = split_image(ref.image)
            if repository not in _REPOSITORIES:
                continue
            match = _TAG.match(tag)
            if match is None:
                continue
            self.report(
                (ref.start, ref.end),
                message=f"PyTorch's CUDA image `{ref.image}` carries a CUDA build of torch; build "
                f"the ROCm variant on `rocm/pytorch` with torch {match['torch']}",
            )
