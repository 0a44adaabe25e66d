"""ROC861: NVIDIA NGC images (``nvcr.io/nvidia/...``)."""

from __future__ import annotations

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


class NgcImage(TextRule):
    """
    ## What it does
    Flags NVIDIA NGC images (`nvcr.io/nvidia/...`) used as base or service images.
    In a Dockerfile stage on such an image, the lines that exist only for it (`CUDA_HOME`,
    CUDA-only variables, CUDA apt packages) are this finding's related sites, each naming
    its rule. A Dockerfile held in a Python string that the code writes out is read too.

    ## Why it breaks on ROCm
    NGC images are CUDA builds (PyTorch, Triton server, TensorRT, NeMo, ...): none of them can
    use an AMD GPU. For `nvcr.io/nvidia/pytorch`, AMD's counterpart is `rocm/pytorch`, tagged
    `rocmX.Y_ubuntuYY.MM_pyZ_pytorch_release_A.B.C` (it includes Apex). Other NGC images have no
    one-to-one ROCm image.

    ## Example
    ```python
    # Dockerfile
    FROM nvcr.io/nvidia/pytorch:24.03-py3
    ```

    ## Fix
    ```python
    # Dockerfile
    FROM rocm/pytorch:rocm6.2_ubuntu22.04_py3.10_pytorch_release_2.3.0
    ```

    ## Fix safety
    Unsafe. Where the NGC tag's PyTorch is known and a `rocm/pytorch` tag with that PyTorch
    release is documented (`rules/data/images.toml`), the fix pins it
    (`nvcr.io/nvidia/pytorch:24.03-py3`, PyTorch 2.3 →
    `rocm/pytorch:rocm6.2_ubuntu22.04_py3.10_pytorch_release_2.3.0`). A pinned NGC release
    never becomes `latest`, which moves: without a documented tag there is no fix, and the
    message names the PyTorch to pin (`rocmX.Y_ubuntuYY.MM_pyZ_pytorch_release_A.B.C`). Only an
    unpinned NGC image (`:latest`) gets `rocm/pytorch:latest`. NGC images also bundle NVIDIA-only
    libraries (TensorRT, DALI, Transformer Engine) that the ROCm image does not have. Other
    NGC images are reported without a fix.

    ## References
    - rocm-facts.md §9 (`FROM nvcr.io/nvidia/pytorch` row)
    """

    code = "ROC861"
    fix = Fixing(
        replaces_vendor=True,
        title="Use AMD's `rocm/pytorch` image",
        applicability=Applicability.UNSAFE,
    )
    name = "ngc-image"
    category = "container"
    severity = Severity.ERROR
    impact = Impact(
        consequence="crash-path", aggregate="file", container_image="base", effort_hours=2.0
    )
    message = "NVIDIA NGC image: a CUDA build that cannot use an AMD GPU"
    fact = "§9 FROM nvcr.io/nvidia/pytorch row; [R1]"
    parsing = Parsing(
        triggers=("nvcr.io/nvidia/",), file_kinds=frozenset({"dockerfile", "compose", "ci-yaml"})
    )
    valid = [
        Valid(
            "FROM rocm/pytorch:rocm7.2_ubuntu24.04_py3.12_pytorch_release_2.7.1\n",
            path="Dockerfile",
        ),
        Valid("# FROM nvcr.io/nvidia/pytorch:24.01-py3\nFROM python:3.11\n", path="Dockerfile"),
        Valid("FROM nvcr.io/nvidia/cuda:12.1.1-devel-ubuntu22.04\n", path="Dockerfile"),
    ]
    invalid = [
        Invalid(  # a pinned release without a documented ROCm tag: never `latest`
            "FROM nvcr.io/nvidia/pytorch:24.01-py3\nRUN pip install -e .\n",
            path="Dockerfile",
            fixed=None,
            line=1,
            column=6,
        ),
        Invalid(  # unpinned stays unpinned
            "FROM nvcr.io/nvidia/pytorch:latest\n",
            path="Dockerfile",
            fixed="FROM rocm/pytorch:latest\n",
        ),
        Invalid(  # an NGC release whose PyTorch has a documented ROCm image: pinned to it
            "FROM nvcr.io/nvidia/pytorch:24.03-py3\n",
            path="Dockerfile",
            fixed="FROM rocm/pytorch:rocm6.2_ubuntu22.04_py3.10_pytorch_release_2.3.0\n",
        ),
        Invalid(
            "services:\n  triton:\n    image: nvcr.io/nvidia/tritonserver:24.05-py3\n",
            path="docker-compose.yml",
            fixed=None,
        ),
    ]

    def check(self) -> None:
        tables = _images()
        pytorch = tables["ngc_pytorch"]
        cuda = tables["cuda_base"]["repositories"]
        for ref in image_refs(self.ctx.text, self.ctx.kind):
            repository, tag = split_image(ref.image)
            if repository in cuda or not any(
                repository.startswith(prefix) for prefix in tables["ngc_other"]["prefixes"]
            ):
                continue
            if repository in pytorch["repositories"]:
                torch = pytorch["torch"].get(tag.split("-", 1)[0])
                pinned = pytorch["rocm_image"].get(torch) if torch else None
                pattern = pytorch["pinned_pattern"].split(":", 1)[1]
                ships = f" with PyTorch {torch}, which this NGC release ships" if torch else ""
                unpinned = tag in ("", "latest") and "@" not in ref.image
                replacement = pinned or (pytorch["replacement"] if unpinned else None)
                self.report(
                    (ref.start, ref.end),
                    message=f"NGC PyTorch image `{ref.image}` is a CUDA build; use AMD's "
                    + (
                        f"`{pinned}` (the same PyTorch {torch} as this NGC release)"
                        if pinned
                        else f"`rocm/pytorch` (pin a `{pattern}` tag{ships})"
                    )
                    + (
                        ""
                        if replacement
                        else "; no automatic fix: this NGC release is pinned, and `latest` "
                        "would not keep the pin"
                    ),
                    fix=Rewrite(replacement),
                )
            else:
                self.report(
                    (ref.start, ref.end),
                    message=f"NGC image `{ref.image}` is a CUDA build with no one-to-one ROCm "
                    "image; rebuild the service on a ROCm image",
                )
