"""ROC860: ``nvidia/cuda`` base images."""

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

from ._images import _images, image_refs, split_image
from ._rocm_release import _pinned_rocm

_CUDA_TAG_RE = re.compile(
    r"^(?P<cuda>\d+(?:\.\d+)*)-(?:cudnn\d*-)?(?P<flavor>base|runtime|devel)-(?P<os>[a-z]+)(?P<osver>[\d.]+)$"
)


class CudaBaseImage(TextRule):
    """
    ## What it does
    Flags `nvidia/cuda` base images in Dockerfiles (`FROM`, and `ARG` defaults used by `FROM`),
    compose files and CI container definitions.
    In a Dockerfile stage on such an image, the lines that exist only for it (`CUDA_HOME`,
    CUDA-only variables, CUDA apt packages) are this finding's related sites, each naming
    its rule. A Dockerfile held in a Python string that the code writes out is read too.

    ## Why it breaks on ROCm
    The image carries the CUDA toolkit and runtime (and cuDNN) but no ROCm: nothing in it can
    use an AMD GPU, and extensions built in it are built for CUDA. AMD publishes ROCm
    development images per Ubuntu release, `rocm/dev-ubuntu-22.04` and `rocm/dev-ubuntu-24.04`,
    tagged by ROCm version (`6.3.4-complete` = the full ROCm stack).

    ## Example
    ```python
    # Dockerfile
    FROM nvidia/cuda:12.1.1-cudnn8-devel-ubuntu22.04
    ```

    ## Fix
    ```python
    # Dockerfile
    FROM rocm/dev-ubuntu-22.04:6.3.4-complete
    ```

    ## Fix safety
    Unsafe: the ROCm version is the one matching the torch pinned in the same file (2.3 → 6.0,
    …), else 6.3.4. Ubuntu releases without a ROCm image (20.04) move to 22.04, which changes
    apt package versions. CUDA-specific steps later in the file (CUDA apt packages, `nvcc`
    builds, `CUDA_HOME`) still need porting. Non-Ubuntu tags are reported without a fix.

    ## References
    - rocm-facts.md §9 (`FROM nvidia/cuda` row); AMD "ROCm Docker images" [C1]
    """

    code = "ROC860"
    fix = Fixing(
        replaces_vendor=True,
        title="Use AMD's ROCm development image for the same Ubuntu release",
        applicability=Applicability.UNSAFE,
    )
    name = "cuda-base-image"
    category = "container"
    severity = Severity.ERROR
    impact = Impact(
        consequence="crash-path", aggregate="file", container_image="base", effort_hours=1.0
    )
    message = "CUDA base image: it has no ROCm, so nothing in the container can use an AMD GPU"
    fact = "§9 FROM nvidia/cuda row; [B1][C1]"
    parsing = Parsing(
        triggers=("nvidia/cuda",), file_kinds=frozenset({"dockerfile", "compose", "ci-yaml"})
    )
    valid = [
        Valid("FROM rocm/dev-ubuntu-22.04:6.3.4-complete\n", path="Dockerfile"),
        Valid(
            "# was: FROM nvidia/cuda:12.1.1-devel-ubuntu22.04\nFROM ubuntu:22.04\n",
            path="Dockerfile",
        ),
        Valid(
            "FROM ubuntu:22.04\nRUN echo nvidia/cuda:12.1.1-devel-ubuntu22.04\n", path="Dockerfile"
        ),
        # strings in Python code that are no Dockerfile: a message, SQL
        Valid('print("FROM nvidia/cuda:12.1.1-devel-ubuntu22.04 is too old")\n', path="deploy.py"),
        Valid('QUERY = """\nSELECT image\nFROM nvidia/cuda\nWHERE tag = 1\n"""\n', path="q.py"),
    ]
    invalid = [
        Invalid(
            "FROM \\\n    nvidia/cuda:12.1.0-devel-ubuntu22.04 AS build\nRUN make\n",
            path="Dockerfile",
            fixed="FROM \\\n    rocm/dev-ubuntu-22.04:6.3.4-complete AS build\nRUN make\n",
            line=2,
            column=5,
        ),
        Invalid(
            "FROM nvidia/cuda:12.1.1-cudnn8-devel-ubuntu22.04\n\nRUN apt-get update\n",
            path="Dockerfile",
            fixed="FROM rocm/dev-ubuntu-22.04:6.3.4-complete\n\nRUN apt-get update\n",
            line=1,
            column=6,
        ),
        Invalid(
            "FROM --platform=linux/amd64 nvidia/cuda:12.9.1-runtime-ubuntu24.04 AS base\n"
            "RUN uv pip install torch==2.10.0 torchvision==0.25.0 \\\n"
            "    --index-url https://download.pytorch.org/whl/cu129\n",
            path="Dockerfile",
            fixed="FROM --platform=linux/amd64 rocm/dev-ubuntu-24.04:7.1-complete AS base\n"
            "RUN uv pip install torch==2.10.0 torchvision==0.25.0 \\\n"
            "    --index-url https://download.pytorch.org/whl/cu129\n",
        ),
        Invalid(
            "ARG BASE=nvidia/cuda:11.8.0-devel-ubuntu20.04\nFROM ${BASE}\n",
            path="Dockerfile.gpu",
            fixed="ARG BASE=rocm/dev-ubuntu-22.04:6.3.4-complete\nFROM ${BASE}\n",
        ),
        Invalid(  # a Dockerfile template the project's code writes out: no fix inside a string
            "import textwrap\n\nDOCKERFILE = textwrap.dedent(\n"
            '    """\n    FROM nvidia/cuda:11.8.0-cudnn8-devel-ubuntu22.04\n    RUN make\n    """\n)\n',
            path="deploy/aml.py",
            fixed=None,
            line=5,
            column=10,
        ),
        Invalid(
            "FROM nvidia/cuda:12.4.1-devel-rockylinux8\n",
            path="Dockerfile",
            fixed=None,
        ),
        Invalid(
            "jobs:\n  test:\n    runs-on: [self-hosted, gpu]\n    container:\n"
            "      image: nvidia/cuda:12.2.0-base-ubuntu22.04\n",
            path=".github/workflows/gpu.yml",
            fixed="jobs:\n  test:\n    runs-on: [self-hosted, gpu]\n    container:\n"
            "      image: rocm/dev-ubuntu-22.04:6.3.4-complete\n",
        ),
    ]

    def check(self) -> None:
        table = _images()["cuda_base"]
        text = self.ctx.text
        for ref in image_refs(text, self.ctx.kind):
            repository, tag = split_image(ref.image)
            if repository not in table["repositories"]:
                continue
            match = _CUDA_TAG_RE.match(tag)
            if match is None or match.group("os") != "ubuntu":
                self.report(
                    (ref.start, ref.end),
                    message=f"CUDA base image `{ref.image}` has no ROCm; use a ROCm image "
                    "(`rocm/dev-ubuntu-22.04` / `-24.04`), installing the distribution's "
                    "packages there",
                )
                continue
            ubuntu = match.group("osver")
            note = ""
            if ubuntu not in table["ubuntu"]:
                note = f" (no ROCm image for Ubuntu {ubuntu}: moved to {table['ubuntu_fallback']})"
                ubuntu = table["ubuntu_fallback"]
            rocm = _pinned_rocm(text) or table["default_rocm"]
            new = table["template"].format(ubuntu=ubuntu, rocm=rocm)
            self.report(
                (ref.start, ref.end),
                message=f"CUDA base image `{ref.image}` has no ROCm; use `{new}`{note}",
                fix=Rewrite(new),
            )
