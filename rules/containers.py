"""ROC86x: containers and launch scripts built for NVIDIA GPUs.

Base images (`nvidia/cuda`, NGC), GPU access flags of `docker run` (`--gpus`,
`--runtime=nvidia`), GPU reservations in compose files, CUDA apt packages, and `pip install`
commands that fetch CUDA builds, in Dockerfiles, compose files, shell scripts, Makefiles and CI
files. Image tables: ``data/images.toml``; PyTorch/ROCm pairs: ``data/torch_rocm.toml``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from migrator.model import Applicability, Severity
from migrator.rule import Invalid, TextRule, Valid
from migrator.ruledata import load_table

from ._dependency_files import cog_file
from ._lines import line_bounds
from ._requirement_rule import RequirementRule
from ._requirements import Change, Req, render
from ._shell import Token, code_lines, command_segments, pip_requirements
from ._torch_builds import (
    LOCAL_CUDA_RE,
    companion_torch_version,
    rocm_for_specs,
    rocm_for_torch_version,
)
from .dependencies.bitsandbytes_without_rocm_binaries import BitsandbytesWithoutRocm
from .dependencies.cuda_only_package import CudaOnlyPackage
from .dependencies.cupy_cuda_wheel import CupyCudaWheel
from .dependencies.deprecated_quantization_package import DeprecatedQuantPackage
from .dependencies.flash_attn_cuda_wheel import FlashAttnCudaWheel
from .dependencies.jax_cuda_extra import JaxCudaExtra
from .dependencies.nvidia_cuda_runtime_wheel import NvidiaRuntimeWheel
from .dependencies.nvml_bindings import NvmlBindings
from .dependencies.onnxruntime_gpu import OnnxruntimeGpu
from .dependencies.pypi_triton import PypiTriton
from .dependencies.pytorch_cuda_wheel_index import cuda_index_edits, url_matches
from .dependencies.tensorflow_cuda_build import TensorflowCuda
from .dependencies.xformers_cuda_wheel import XformersCudaWheel

_DEVICE_FLAGS = (
    "--device /dev/kfd --device /dev/dri --group-add video --security-opt seccomp=unconfined"
)


def _images() -> dict[str, Any]:
    return load_table("images")


def _torch_specs(text: str) -> list[str]:
    """Specifiers of the torch requirements in this file's pip commands."""
    return [req.spec for req in pip_requirements(text) if req.name == "torch"]


def _pinned_rocm(text: str) -> str | None:
    """ROCm release of the torch pinned in this file, or None when torch is absent/unbounded."""
    specs = [spec for spec in _torch_specs(text) if spec and "$" not in spec]
    if not specs:
        return None
    found = rocm_for_specs(specs)
    newest = rocm_for_specs([])
    if found is None or found == newest:
        return None
    return found[1]


def _file_rocm(text: str) -> str | None:
    """ROCm release for index URLs: the pinned torch's, else the newest table entry."""
    specs = [spec for spec in _torch_specs(text) if spec and "$" not in spec]
    found = rocm_for_specs(specs)
    return None if found is None else found[1]


# --------------------------------------------------------------------------------------------
# Image references


@dataclass(frozen=True, slots=True)
class ImageRef:
    start: int
    end: int
    image: str
    where: str  # FROM | ARG | image


_FROM_RE = re.compile(r"^[ \t]*FROM[ \t]+(?:--\S+[ \t]+)*(?P<image>[^\s#]+)", re.IGNORECASE)
_ARG_RE = re.compile(r"^[ \t]*ARG[ \t]+\w+=(?P<q>[\"']?)(?P<image>[^\s\"'#]+)(?P=q)", re.IGNORECASE)
_YAML_IMAGE_RE = re.compile(
    r"^[ \t]*(?:-[ \t]*)?(?:image|container):[ \t]*(?P<q>[\"']?)(?P<image>[^\s\"'#]+)(?P=q)"
)


def image_refs(text: str, kind: str) -> Iterator[ImageRef]:
    """Image references: Dockerfile FROM and ARG defaults; ``image:`` / ``container:`` in YAML."""
    continued = False
    for offset, code in code_lines(text):
        if kind == "dockerfile":
            was_continued = continued
            continued = code.rstrip().endswith("\\")
            if was_continued:
                continue
            for pattern, where in ((_FROM_RE, "FROM"), (_ARG_RE, "ARG")):
                match = pattern.match(code)
                if match is not None:
                    yield ImageRef(
                        offset + match.start("image"),
                        offset + match.end("image"),
                        match.group("image"),
                        where,
                    )
        else:
            match = _YAML_IMAGE_RE.match(code)
            if match is not None:
                yield ImageRef(
                    offset + match.start("image"),
                    offset + match.end("image"),
                    match.group("image"),
                    "image",
                )


def split_image(image: str) -> tuple[str, str]:
    """(repository, tag) of an image reference (digest dropped)."""
    image = image.split("@", 1)[0]
    slash = image.rfind("/")
    colon = image.rfind(":")
    if colon > slash:
        return image[:colon], image[colon + 1 :]
    return image, ""


_CUDA_TAG_RE = re.compile(
    r"^(?P<cuda>\d+(?:\.\d+)*)-(?:cudnn\d*-)?(?P<flavor>base|runtime|devel)-(?P<os>[a-z]+)(?P<osver>[\d.]+)$"
)


class CudaBaseImage(TextRule):
    """
    ## What it does
    Flags `nvidia/cuda` base images in Dockerfiles (`FROM`, and `ARG` defaults used by `FROM`),
    compose files and CI container definitions.

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
    replaces_vendor = True
    name = "cuda-base-image"
    category = "container"
    severity = Severity.ERROR
    aggregate = "file"
    message = "CUDA base image: it has no ROCm, so nothing in the container can use an AMD GPU"
    fix_title = "Use AMD's ROCm development image for the same Ubuntu release"
    applicability = Applicability.UNSAFE
    fact = "§9 FROM nvidia/cuda row; [B1][C1]"
    triggers = ("nvidia/cuda",)
    file_kinds = frozenset({"dockerfile", "compose", "ci-yaml"})
    effort_hours = 1.0
    valid = [
        Valid("FROM rocm/dev-ubuntu-22.04:6.3.4-complete\n", path="Dockerfile"),
        Valid(
            "# was: FROM nvidia/cuda:12.1.1-devel-ubuntu22.04\nFROM ubuntu:22.04\n",
            path="Dockerfile",
        ),
        Valid(
            "FROM ubuntu:22.04\nRUN echo nvidia/cuda:12.1.1-devel-ubuntu22.04\n", path="Dockerfile"
        ),
    ]
    invalid = [
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
                    ref.start,
                    ref.end,
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
                ref.start,
                ref.end,
                message=f"CUDA base image `{ref.image}` has no ROCm; use `{new}`{note}",
                replacement=new,
            )


class NgcImage(TextRule):
    """
    ## What it does
    Flags NVIDIA NGC images (`nvcr.io/nvidia/...`) used as base or service images.

    ## Why it breaks on ROCm
    NGC images are CUDA builds (PyTorch, Triton server, TensorRT, NeMo, ...): none of them can
    use an AMD GPU. For `nvcr.io/nvidia/pytorch`, AMD's counterpart is `rocm/pytorch`, tagged
    `rocmX.Y_ubuntuYY.MM_pyZ_pytorch_release_A.B.C` (it includes Apex). Other NGC images have no
    one-to-one ROCm image.

    ## Example
    ```python
    # Dockerfile
    FROM nvcr.io/nvidia/pytorch:24.01-py3
    ```

    ## Fix
    ```python
    # Dockerfile
    FROM rocm/pytorch:latest
    ```

    ## Fix safety
    Unsafe: `latest` moves; pin a `rocm/pytorch:rocmX.Y_ubuntuYY.MM_pyZ_pytorch_release_A.B.C`
    tag whose PyTorch matches the NGC release you used. NGC images also bundle NVIDIA-only
    libraries (TensorRT, DALI, Transformer Engine) that the ROCm image does not have. Other
    NGC images are reported without a fix.

    ## References
    - rocm-facts.md §9 (`FROM nvcr.io/nvidia/pytorch` row)
    """

    code = "ROC861"
    replaces_vendor = True
    name = "ngc-image"
    category = "container"
    severity = Severity.ERROR
    aggregate = "file"
    message = "NVIDIA NGC image: a CUDA build that cannot use an AMD GPU"
    fix_title = "Use AMD's `rocm/pytorch` image"
    applicability = Applicability.UNSAFE
    fact = "§9 FROM nvcr.io/nvidia/pytorch row; [R1]"
    triggers = ("nvcr.io/nvidia/",)
    file_kinds = frozenset({"dockerfile", "compose", "ci-yaml"})
    effort_hours = 2.0
    valid = [
        Valid(
            "FROM rocm/pytorch:rocm7.2_ubuntu24.04_py3.12_pytorch_release_2.7.1\n",
            path="Dockerfile",
        ),
        Valid("# FROM nvcr.io/nvidia/pytorch:24.01-py3\nFROM python:3.11\n", path="Dockerfile"),
        Valid("FROM nvcr.io/nvidia/cuda:12.1.1-devel-ubuntu22.04\n", path="Dockerfile"),
    ]
    invalid = [
        Invalid(
            "FROM nvcr.io/nvidia/pytorch:24.01-py3\nRUN pip install -e .\n",
            path="Dockerfile",
            fixed="FROM rocm/pytorch:latest\nRUN pip install -e .\n",
            line=1,
            column=6,
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
                self.report(
                    ref.start,
                    ref.end,
                    message=f"NGC PyTorch image `{ref.image}` is a CUDA build; use AMD's "
                    f"`rocm/pytorch` (pin a `{pytorch['pinned_pattern'].split(':', 1)[1]}` tag)",
                    replacement=pytorch["replacement"],
                )
            else:
                self.report(
                    ref.start,
                    ref.end,
                    message=f"NGC image `{ref.image}` is a CUDA build with no one-to-one ROCm "
                    "image; rebuild the service on a ROCm image",
                )


# --------------------------------------------------------------------------------------------
# docker run --gpus / --runtime=nvidia


def _docker_segments(text: str, kind: str) -> Iterator[list[Token]]:
    """Argument tokens of ``docker run`` / ``docker create`` (and CI container ``options:``)."""
    for segment in command_segments(text):
        values = [token.value for token in segment]
        for index, value in enumerate(values):
            base = value.rsplit("/", 1)[-1]
            if base in {"docker", "podman", "nvidia-docker"}:
                rest = values[index + 1 :]
                if rest[:1] in (["run"], ["create"]):
                    yield segment[index + 2 :]
                    break
                if rest[:2] in (["container", "run"], ["container", "create"]):
                    yield segment[index + 3 :]
                    break
        else:
            if kind == "ci-yaml" and values and values[0] in {"options:", "-", "docker_args:"}:
                yield segment[1:]


class DockerGpuFlags(TextRule):
    """
    ## What it does
    Flags `docker run --gpus ...` and `--runtime=nvidia` in shell scripts, Makefiles, CI files
    (including GitHub Actions `container.options`) and notebook `!docker` lines.

    ## Why it breaks on ROCm
    `--gpus` and the `nvidia` runtime go through the NVIDIA Container Toolkit; on an AMD host
    Docker fails with "could not select device driver". AMD GPUs are handed to a container as
    device files: `--device /dev/kfd --device /dev/dri`, with `--group-add video` and (as AMD
    recommends) `--security-opt seccomp=unconfined`.

    ## Example
    ```python
    # launch.sh
    docker run --rm --gpus all -p 8000:8000 "$IMAGE"
    ```

    ## Fix
    ```python
    # launch.sh
    docker run --rm --device /dev/kfd --device /dev/dri --group-add video \
        --security-opt seccomp=unconfined -p 8000:8000 "$IMAGE"
    ```

    ## Fix safety
    Unsafe: the container sees every AMD GPU of the host; `--gpus device=0,1` or a count is
    reported without a fix (pass specific `/dev/dri/renderD*` nodes, or set
    `HIP_VISIBLE_DEVICES`). AMD's Container Toolkit (CDI) is an alternative to device flags.

    ## References
    - rocm-facts.md §9 (`docker run --gpus all` row); AMD docker guides [C1][C2]
    """

    code = "ROC862"
    replaces_vendor = True
    name = "docker-nvidia-gpu-flags"
    category = "container"
    severity = Severity.ERROR
    aggregate = "file"
    message = "`--gpus` / `--runtime=nvidia` need the NVIDIA Container Toolkit; Docker fails on AMD"
    fix_title = "Pass the AMD GPU device files instead"
    applicability = Applicability.UNSAFE
    fact = "§9 docker run --gpus row; [C1][C2][F1]"
    triggers = ("--gpus", "--runtime", "nvidia-docker")
    file_kinds = frozenset({"shell", "ci-yaml", "dockerfile"})
    effort_hours = 0.25
    valid = [
        Valid("docker run --device /dev/kfd --device /dev/dri img\n", path="run.sh"),
        Valid("# docker run --gpus all img\necho done\n", path="run.sh"),
        Valid("python train.py --gpus 8\n", path="train.sh"),
        Valid("#SBATCH --gpus-per-node=8\nsrun python x.py\n", path="job.sh"),
    ]
    invalid = [
        Invalid(
            'IMAGE=x\ndocker run --rm --gpus all \\\n  -p 8000:8000 \\\n  "$IMAGE"\n',
            path="launch.sh",
            fixed="IMAGE=x\ndocker run --rm --device /dev/kfd --device /dev/dri --group-add video"
            ' --security-opt seccomp=unconfined \\\n  -p 8000:8000 \\\n  "$IMAGE"\n',
            line=2,
            column=17,
        ),
        Invalid(
            "run:\n\tdocker run -it --rm --runtime=nvidia --gpus=all --pid=host img\n",
            path="Makefile",
            fixed="run:\n\tdocker run -it --rm --device /dev/kfd --device /dev/dri --group-add"
            " video --security-opt seccomp=unconfined --pid=host img\n",
            count=1,
        ),
        Invalid(
            "jobs:\n  t:\n    container:\n      image: img\n"
            '      options: --shm-size "16gb" --ipc host --gpus all\n',
            path=".github/workflows/t.yml",
            fixed="jobs:\n  t:\n    container:\n      image: img\n"
            '      options: --shm-size "16gb" --ipc host --device /dev/kfd --device /dev/dri'
            " --group-add video --security-opt seccomp=unconfined\n",
        ),
        Invalid("docker run --gpus '\"device=0,1\"' img\n", path="run.sh", fixed=None),
        Invalid("nvidia-docker run img\n", path="run.sh", fixed=None),
    ]

    def check(self) -> None:
        text = self.ctx.text
        for segment in command_segments(text):
            values = [token.value for token in segment]
            if values and values[0].rsplit("/", 1)[-1] == "nvidia-docker":
                self.report(
                    segment[0].start,
                    segment[0].end,
                    message="`nvidia-docker` wraps the NVIDIA Container Toolkit; use `docker run "
                    "--device /dev/kfd --device /dev/dri --group-add video`",
                )
        for args in _docker_segments(text, self.ctx.kind):
            self._check_args(args)

    def _check_args(self, args: list[Token]) -> None:
        gpus: tuple[int, int, str] | None = None
        runtimes: list[tuple[int, int]] = []
        for index, token in enumerate(args):
            if token.value == "--":
                break
            value = None
            end = token.end
            if token.value.startswith("--gpus="):
                value = token.value.split("=", 1)[1]
            elif token.value == "--gpus" and index + 1 < len(args):
                value = args[index + 1].value
                end = args[index + 1].end
            if value is not None and gpus is None:
                gpus = (token.start, end, value)
            if token.value == "--runtime=nvidia":
                runtimes.append((token.start, token.end))
            elif token.value == "--runtime" and index + 1 < len(args):
                if args[index + 1].value == "nvidia":
                    runtimes.append((token.start, args[index + 1].end))
        text = self.ctx.text
        placed = False
        if gpus is not None:
            start, end, value = gpus
            if value == "all":
                self.report(
                    start,
                    end,
                    message="`--gpus all` needs the NVIDIA Container Toolkit; on AMD pass "
                    "`--device /dev/kfd --device /dev/dri --group-add video`",
                    replacement=_DEVICE_FLAGS,
                )
                placed = True
            else:
                self.report(
                    start,
                    end,
                    message=f"`--gpus {value}` needs the NVIDIA Container Toolkit; on AMD pass "
                    "`--device /dev/kfd` plus the `/dev/dri/renderD*` nodes of those GPUs",
                )
                placed = True  # a subset: leave the runtime flag to the manual edit as well
                for start, end in runtimes:
                    self.report(start, end)
                return
        for start, end in runtimes:
            if not placed:
                self.report(
                    start,
                    end,
                    message="`--runtime=nvidia` needs the NVIDIA Container Toolkit; on AMD pass "
                    "`--device /dev/kfd --device /dev/dri --group-add video`",
                    replacement=_DEVICE_FLAGS,
                )
                placed = True
                continue
            # Another flag already brings the devices: drop this one with its trailing blanks.
            stop = end
            while stop < len(text) and text[stop] in " \t":
                stop += 1
            self.report(
                start,
                stop,
                message="`--runtime=nvidia` needs the NVIDIA Container Toolkit; drop it on AMD",
                replacement="",
            )


# --------------------------------------------------------------------------------------------
# compose: runtime: nvidia, gpus:, deploy.resources.reservations.devices with driver nvidia


@dataclass(slots=True)
class _ComposeHit:
    anchor: int  # start of the service-level key holding the construct
    start: int  # the lines to delete
    end: int
    what: str
    subset: bool


def _last_index(node: Any) -> int:
    """End offset of the last scalar inside a YAML node."""
    import yaml

    if isinstance(node, yaml.ScalarNode):
        return int(node.end_mark.index)
    if isinstance(node, yaml.SequenceNode):
        if node.flow_style:
            return int(node.end_mark.index)
        return max([_last_index(item) for item in node.value] or [node.start_mark.index])
    if isinstance(node, yaml.MappingNode):
        if node.flow_style:
            return int(node.end_mark.index)
        return max([_last_index(value) for _, value in node.value] or [node.start_mark.index])
    return int(node.end_mark.index)


def _pair_span(text: str, key: Any, value: Any) -> tuple[int, int]:
    """Lines holding a block mapping pair (key line through the value's last line)."""
    start, _ = line_bounds(text, key.start_mark.index)
    _, end = line_bounds(text, max(_last_index(value) - 1, key.start_mark.index))
    return start, end


def _item_span(text: str, item: Any) -> tuple[int, int]:
    start, _ = line_bounds(text, item.start_mark.index)
    _, end = line_bounds(text, max(_last_index(item) - 1, item.start_mark.index))
    return start, end


def _mapping_get(node: Any, name: str) -> tuple[Any, Any] | None:
    import yaml

    if not isinstance(node, yaml.MappingNode):
        return None
    for key, value in node.value:
        if isinstance(key, yaml.ScalarNode) and key.value == name:
            return key, value
    return None


class ComposeNvidiaGpu(TextRule):
    """
    ## What it does
    Flags NVIDIA GPU access in compose files: `runtime: nvidia`, `gpus:` and
    `deploy.resources.reservations.devices` entries with `driver: nvidia` or
    `capabilities: [gpu]`.

    ## Why it breaks on ROCm
    These reservations go through the NVIDIA Container Toolkit; on an AMD host the service
    fails to start ("could not select device driver \"nvidia\""). AMD GPUs are given to a
    service as device files (`/dev/kfd`, `/dev/dri`) with the `video` group.

    ## Example
    ```python
    # docker-compose.yml
    services:
      llm:
        image: app
        deploy:
          resources:
            reservations:
              devices:
                - driver: nvidia
                  count: 1
                  capabilities: [gpu]
    ```

    ## Fix
    ```python
    # docker-compose.yml
    services:
      llm:
        image: app
        devices:
          - /dev/kfd
          - /dev/dri
        group_add:
          - video
    ```

    ## Fix safety
    Unsafe: the service sees every AMD GPU of the host (`count` / `device_ids` are not kept:
    list specific `/dev/dri/renderD*` nodes or set `HIP_VISIBLE_DEVICES`). Emptied `deploy`,
    `resources` and `reservations` keys are removed. Services that already declare `devices`
    or `group_add` are reported without a fix.

    ## References
    - rocm-facts.md §9 (`docker run --gpus all` row); AMD docker guides [C1][C2]
    """

    code = "ROC863"
    replaces_vendor = True
    name = "compose-nvidia-gpu"
    category = "container"
    severity = Severity.ERROR
    aggregate = "file"
    message = "NVIDIA GPU reservation: needs the NVIDIA Container Toolkit; fails on AMD hosts"
    fix_title = "Give the service /dev/kfd and /dev/dri with the video group"
    applicability = Applicability.UNSAFE
    fact = "§9 docker run --gpus row; [C1][C2]"
    triggers = ("nvidia", "gpu")
    file_kinds = frozenset({"compose"})
    effort_hours = 0.25
    valid = [
        Valid(
            "services:\n  app:\n    image: x\n    devices:\n      - /dev/kfd:/dev/kfd\n"
            "      - /dev/dri:/dev/dri\n",
            path="docker-compose.yml",
        ),
        Valid(
            "services:\n  app:\n    image: x\n    # runtime: nvidia\n    environment:\n"
            "      - DRIVER=nvidia\n",
            path="docker-compose.yml",
        ),
    ]
    invalid = [
        Invalid(
            "services:\n  llm:\n    image: app\n    shm_size: 8gb\n    deploy:\n      resources:\n"
            "        reservations:\n          devices:\n            - driver: nvidia\n"
            "              count: 1\n              capabilities: [gpu]\n",
            path="docker-compose.yml",
            fixed="services:\n  llm:\n    image: app\n    shm_size: 8gb\n    devices:\n"
            "      - /dev/kfd\n      - /dev/dri\n    group_add:\n      - video\n",
            line=5,
            column=5,
        ),
        Invalid(
            "services:\n  exporter:\n    image: x\n    runtime: nvidia\n    ports:\n"
            "      - 9000:9000\n",
            path="docker-compose.yml",
            fixed="services:\n  exporter:\n    image: x\n    devices:\n      - /dev/kfd\n"
            "      - /dev/dri\n    group_add:\n      - video\n    ports:\n      - 9000:9000\n",
        ),
        Invalid(
            "services:\n  app:\n    image: x\n    deploy:\n      replicas: 2\n      resources:\n"
            "        limits:\n          memory: 8g\n        reservations:\n          devices:\n"
            "          - driver: nvidia\n            count: all\n"
            "            capabilities: [ gpu ]\n"
            "    restart: always\n",
            path="compose.yaml",
            fixed="services:\n  app:\n    image: x\n    devices:\n      - /dev/kfd\n"
            "      - /dev/dri\n    group_add:\n      - video\n    deploy:\n      replicas: 2\n"
            "      resources:\n        limits:\n          memory: 8g\n    restart: always\n",
        ),
        Invalid(
            "services:\n  app:\n    image: x\n    runtime: nvidia\n    devices:\n"
            "      - /dev/fuse\n",
            path="docker-compose.yml",
            fixed=None,
        ),
    ]

    def check(self) -> None:
        import yaml

        text = self.ctx.text
        try:
            root = yaml.compose(text)
        except yaml.YAMLError:
            return
        services = _mapping_get(root, "services")
        if services is None or not isinstance(services[1], yaml.MappingNode):
            return
        for _, service in services[1].value:
            if isinstance(service, yaml.MappingNode) and service.value:
                self._service(text, service)

    def _service(self, text: str, service: Any) -> None:
        hits: list[_ComposeHit] = []
        runtime = _mapping_get(service, "runtime")
        if runtime is not None and getattr(runtime[1], "value", None) == "nvidia":
            hits.append(
                _ComposeHit(
                    runtime[0].start_mark.index,
                    *_pair_span(text, *runtime),
                    "`runtime: nvidia`",
                    False,
                )
            )
        gpus = _mapping_get(service, "gpus")
        if gpus is not None:
            hits.append(
                _ComposeHit(
                    gpus[0].start_mark.index,
                    *_pair_span(text, *gpus),
                    "`gpus:`",
                    getattr(gpus[1], "value", None) != "all",
                )
            )
        self._reservations(text, service, hits)
        if not hits:
            return
        hits.sort(key=lambda hit: (hit.anchor, hit.start))
        clash = _mapping_get(service, "devices") or _mapping_get(service, "group_add")
        indent = " " * service.value[0][0].start_mark.column
        block = (
            f"devices:\n{indent}  - /dev/kfd\n{indent}  - /dev/dri\n"
            f"{indent}group_add:\n{indent}  - video\n"
        )
        note = (
            "; the GPU count/ids are not kept: list /dev/dri/renderD* nodes to restrict"
            if any(hit.subset for hit in hits)
            else ""
        )
        group = f"service@{service.start_mark.index}"  # one finding per compose service
        for index, hit in enumerate(hits):
            message = (
                f"{hit.what} needs the NVIDIA Container Toolkit and fails on AMD hosts; give the "
                f"service `devices: [/dev/kfd, /dev/dri]` and `group_add: [video]`{note}"
            )
            if clash is not None:
                key_end = re.compile(r"[^:\s]+").match(text, hit.anchor)
                self.report(
                    hit.anchor,
                    key_end.end() if key_end else hit.anchor + 1,
                    message=message + " (merge them into the existing `devices`/`group_add`)",
                    group=group,
                )
                continue
            if index > 0:
                self.report(hit.start, hit.end, message=message, replacement="", group=group)
                continue
            # The first finding of the service also adds the device block, where the
            # service-level key that held the construct starts.
            if hit.start <= hit.anchor:
                replacement = block
            else:
                replacement = block + indent + text[hit.anchor : hit.start]
            self.report(hit.anchor, hit.end, message=message, replacement=replacement, group=group)

    def _reservations(self, text: str, service: Any, hits: list[_ComposeHit]) -> None:
        import yaml

        pairs = []
        node = service
        for name in ("deploy", "resources", "reservations", "devices"):
            pair = _mapping_get(node, name)
            if pair is None:
                return
            pairs.append(pair)
            node = pair[1]
        devices = node
        if not isinstance(devices, yaml.SequenceNode):
            return
        anchor = pairs[0][0].start_mark.index
        nvidia = []
        for item in devices.value:
            driver = _mapping_get(item, "driver")
            capabilities = _mapping_get(item, "capabilities")
            is_nvidia = driver is not None and getattr(driver[1], "value", None) == "nvidia"
            is_gpu = (
                capabilities is not None
                and isinstance(capabilities[1], yaml.SequenceNode)
                and any(getattr(cap, "value", None) == "gpu" for cap in capabilities[1].value)
            )
            if is_nvidia or is_gpu:
                count = _mapping_get(item, "count")
                subset = _mapping_get(item, "device_ids") is not None or (
                    count is not None and getattr(count[1], "value", "all") != "all"
                )
                nvidia.append((item, subset))
        if not nvidia:
            return
        subset = any(flag for _, flag in nvidia)
        what = "an NVIDIA device reservation"
        if len(nvidia) == len(devices.value):
            # The devices list empties: remove the highest key that would be left empty.
            index = len(pairs) - 1
            while index > 0 and len(pairs[index - 1][1].value) == 1:
                index -= 1
            hits.append(_ComposeHit(anchor, *_pair_span(text, *pairs[index]), what, subset))
            return
        if devices.flow_style:
            return
        for item, flag in nvidia:
            start, end = _item_span(text, item)
            hits.append(_ComposeHit(anchor, start, end, what, flag))


# --------------------------------------------------------------------------------------------
# apt-get install cuda-*


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
    aggregate = "file"
    message = "CUDA system package: unavailable or unused on a ROCm system"
    fact = "§9 FROM nvidia/cuda row; [C1]"
    triggers = ("cuda", "cudnn", "nccl", "nvinfer", "tensorrt", "cublas")
    file_kinds = frozenset({"dockerfile", "shell", "ci-yaml"})
    effort_hours = 0.5
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
                                token.start,
                                token.end,
                                message=f"CUDA system package `{token.value}`: unavailable or "
                                "unused on ROCm; install the ROCm libraries (or use a ROCm image)",
                            )
                    break


# --------------------------------------------------------------------------------------------
# pip commands in Dockerfiles, shell scripts and CI files


class PipCudaWheelIndex(TextRule):
    """
    ## What it does
    Flags PyTorch CUDA wheel indexes (`https://download.pytorch.org/whl/cu121`) in Dockerfiles,
    shell scripts, Makefiles and CI files: `pip install --index-url ...`, `PIP_EXTRA_INDEX_URL`,
    `ARG` defaults.

    ## Why it breaks on ROCm
    The `whl/cuXYZ` index serves only CUDA builds of torch, torchvision and torchaudio, which
    find no GPU on an AMD machine: the image or environment silently runs on the CPU. ROCm
    builds are served from `https://download.pytorch.org/whl/rocmX.Y`.

    ## Example
    ```python
    # Dockerfile
    RUN pip install torch==2.3.1 --index-url https://download.pytorch.org/whl/cu121
    ```

    ## Fix
    ```python
    # Dockerfile
    RUN pip install torch==2.3.1 --index-url https://download.pytorch.org/whl/rocm6.0
    ```

    ## Fix safety
    Unsafe: the ROCm release matches the torch pinned in the same file's pip commands (the
    newest table entry when torch is unpinned or installed elsewhere). The same logic as
    ROC802 for requirement files. Nightly indexes are reported without a fix.

    ## References
    - rocm-facts.md §9 (index URL row)
    """

    code = "ROC865"
    replaces_vendor = True
    name = "pip-cuda-wheel-index"
    category = "container"
    severity = Severity.ERROR
    aggregate = "file"
    message = "PyTorch CUDA wheel index: installs CUDA builds that find no GPU on ROCm"
    fix_title = "Use the PyTorch ROCm wheel index for the pinned torch"
    applicability = Applicability.UNSAFE
    fact = "§9 index-url row; [P17][K1]"
    triggers = ("download.pytorch.org/whl/",)
    file_kinds = frozenset({"dockerfile", "shell", "ci-yaml"})
    effort_hours = 0.25
    valid = [
        Valid(
            "RUN pip install torch --index-url https://download.pytorch.org/whl/rocm6.4\n",
            path="Dockerfile",
        ),
        Valid(
            "# pip install torch --index-url https://download.pytorch.org/whl/cu121\n",
            path="setup.sh",
        ),
        Valid(
            "pip install torch --index-url https://download.pytorch.org/whl/cpu\n", path="setup.sh"
        ),
    ]
    invalid = [
        Invalid(
            "RUN uv pip install --no-cache-dir \\\n    torch==2.10.0 \\\n"
            "    torchvision==0.25.0 \\\n    --index-url https://download.pytorch.org/whl/cu129\n",
            path="Dockerfile",
            fixed="RUN uv pip install --no-cache-dir \\\n    torch==2.10.0 \\\n"
            "    torchvision==0.25.0 \\\n    --index-url https://download.pytorch.org/whl/rocm7.1\n",
            line=4,
            column=17,
        ),
        Invalid(
            "export PIP_EXTRA_INDEX_URL=https://download.pytorch.org/whl/cu118\n"
            "pip install 'torch>=2.1,<2.2'\n",
            path="env.sh",
            fixed="export PIP_EXTRA_INDEX_URL=https://download.pytorch.org/whl/rocm5.6\n"
            "pip install 'torch>=2.1,<2.2'\n",
        ),
        Invalid(
            "steps:\n  - run: pip install torch --index-url https://download.pytorch.org/whl/nightly/cu126\n",
            path=".github/workflows/nightly.yml",
            fixed=None,
        ),
    ]

    def check(self) -> None:
        text = self.ctx.text
        spans = [(offset, offset + len(code)) for offset, code in code_lines(text)]
        rocm = _file_rocm(text)
        for start, end, message, replacement in cuda_index_edits(url_matches(text, spans), rocm):
            self.report(start, end, message=message, replacement=replacement)


class PipCudaLocalVersion(TextRule):
    """
    ## What it does
    Flags `pip install torch==X+cuXYZ` (and torchvision/torchaudio) in Dockerfiles, shell
    scripts, Makefiles and CI files.

    ## Why it breaks on ROCm
    The `+cuXYZ` label selects the CUDA build, which finds no GPU on an AMD machine. ROCm
    builds carry `+rocmX.Y` labels, one ROCm release per PyTorch minor.

    ## Example
    ```python
    # setup.sh
    pip install torch==2.3.1+cu121 -f https://download.pytorch.org/whl/torch_stable.html
    ```

    ## Fix
    ```python
    # setup.sh
    pip install torch==2.3.1+rocm6.0 -f https://download.pytorch.org/whl/torch_stable.html
    ```

    ## Fix safety
    Unsafe: the label follows the PyTorch→ROCm table (same logic as ROC801), and the command
    must also reach the matching `whl/rocmX.Y` index (ROC865).

    ## References
    - rocm-facts.md §9 (index URL and local version row)
    """

    code = "ROC866"
    replaces_vendor = True
    name = "pip-cuda-local-version"
    category = "container"
    severity = Severity.ERROR
    aggregate = "file"
    message = "CUDA build of PyTorch pinned: on ROCm it finds no GPU and runs on the CPU"
    fix_title = "Pin the ROCm build (`+rocmX.Y`) of the same release"
    applicability = Applicability.UNSAFE
    fact = "§9 index-url/local-version row; [P17][K1]"
    triggers = ("+cu",)
    file_kinds = frozenset({"dockerfile", "shell", "ci-yaml"})
    effort_hours = 0.25
    valid = [
        Valid("RUN pip install torch==2.3.1+rocm6.0\n", path="Dockerfile"),
        Valid("echo torch==2.3.1+cu121\n", path="setup.sh"),
    ]
    invalid = [
        Invalid(
            "RUN pip3 install torch==2.3.1+cu121 torchaudio==2.3.1+cu121 \\\n"
            "    -f https://download.pytorch.org/whl/torch_stable.html\n",
            path="Dockerfile",
            fixed="RUN pip3 install torch==2.3.1+rocm6.0 torchaudio==2.3.1+rocm6.0 \\\n"
            "    -f https://download.pytorch.org/whl/torch_stable.html\n",
            count=1,
            line=1,
            column=18,
        ),
        Invalid(
            'python -m pip install "torch==2.5.1+cu124"\n',
            path="install.sh",
            fixed='python -m pip install "torch==2.5.1+rocm6.2"\n',
        ),
    ]

    def check(self) -> None:
        text = self.ctx.text
        reqs = pip_requirements(text)
        specs = [req.spec for req in reqs if req.name == "torch" and req.spec]
        for req in reqs:
            if req.name not in {"torch", "torchvision", "torchaudio"}:
                continue
            local = LOCAL_CUDA_RE.search(req.parsed.spec)
            if local is None:
                continue
            rocm = self._rocm(req, specs)
            start, end = req.span()
            if rocm is None or req.offset is None:
                self.report(
                    start,
                    end,
                    message=f"`{req.parsed.raw_name}` pinned to the CUDA build `{local.group()}`: "
                    "on ROCm it finds no GPU; pick the ROCm build by hand",
                )
                continue
            edit = render(req, Change(spec=LOCAL_CUDA_RE.sub(f"+rocm{rocm}", req.parsed.spec)))
            assert edit is not None
            edit_start, edit_end, new = edit
            self.report(
                req.offset + edit_start,
                req.offset + edit_end,
                message=f"`{req.parsed.raw_name}` pinned to the CUDA build `{local.group()}`: on "
                f"ROCm it finds no GPU and runs on the CPU; the ROCm build is `+rocm{rocm}`",
                replacement=new,
            )

    @staticmethod
    def _rocm(req: Req, specs: list[str]) -> str | None:
        version = re.sub(r"^[=~<>! ]+", "", req.spec.split(",")[0])
        if req.name != "torch" and specs:
            found = rocm_for_specs(specs)
            return None if found is None else found[1]
        torch_version = companion_torch_version(req.name, version)
        return None if torch_version is None else rocm_for_torch_version(torch_version)


class PipInstallCudaPackage(TextRule):
    """
    ## What it does
    Flags `pip install` of CUDA-only or CUDA-build packages in Dockerfiles, shell scripts,
    Makefiles and CI files, and the `python_packages` and `run` commands of Cog's `cog.yaml`:
    `flash-attn`, `xformers`, `tensorrt`, `pycuda`, `cupy-cuda12x`,
    `onnxruntime-gpu`, `nvidia-*-cu12` wheels, `bitsandbytes` older than 0.49, NVML bindings and
    the other packages of the dependency rules (ROC800–ROC813).

    ## Why it breaks on ROCm
    The same as for the dependency rule each finding names: these installs fetch CUDA builds,
    or packages with no ROCm build, so the image or environment cannot use the AMD GPU for that
    feature (or fails to build).

    ## Example
    ```python
    # Dockerfile
    RUN pip install --no-cache-dir flash-attn --no-build-isolation
    ```

    ## Manual migration
    Follow the named dependency rule (`migrate explain ROC808` ...): install the ROCm
    counterpart (for flash-attn, build ROCm/flash-attention), or drop the package.

    ## References
    - rocm-facts.md §9 (package rows), §4a, §5
    """

    code = "ROC867"
    name = "pip-install-cuda-package"
    category = "container"
    severity = Severity.WARNING
    aggregate = "file"
    message = "`pip install` of a CUDA-only package"
    fact = "§9 package rows, §4a, §5; [K3][F1][B1]"
    triggers = FlashAttnCudaWheel.triggers + (
        "nvidia",
        "xformers",
        "tensorrt",
        "pycuda",
        "cuda-python",
        "cuda_python",
        "dali",
        "cupy",
        "onnxruntime",
        "jax",
        "tensorflow",
        "triton",
        "bitsandbytes",
        "nvml",
        "gptq",
        "awq",
        "grouped",
        "transformer-engine",
        "transformer_engine",
    )
    file_kinds = frozenset({"dockerfile", "shell", "ci-yaml", "cog"})
    effort_hours = 1.0
    valid = [
        Valid("RUN pip install --no-cache-dir transformers accelerate\n", path="Dockerfile"),
        Valid("# pip install flash-attn\npip install torch\n", path="setup.sh"),
        Valid("pip download flash-attn\n", path="setup.sh"),
        Valid(
            "ARG BASE=rocm/pytorch:rocm7.2_ubuntu24.04_py3.12_pytorch_release_2.7.1\n"
            "FROM ${BASE}\nRUN pip install flash-attn --no-build-isolation\n",
            path="Dockerfile",
        ),
    ]
    invalid = [
        Invalid(
            "RUN pip install --no-cache-dir flash-attn --no-build-isolation\n",
            path="Dockerfile",
            line=1,
            column=32,
        ),
        Invalid(
            'pip install "onnxruntime-gpu>=1.13.1" xformers tensorrt\n',
            path="setup.sh",
            count=1,
        ),
        Invalid(
            "build:\n  gpu: true\n  python_packages:\n    - torch==2.4.1\n"
            '    - "xformers==0.0.22"\n  run:\n    - pip install flash-attn\n',
            path="cog.yaml",
            line=5,
            column=7,
            count=1,  # one finding per file; the `run` install is a related site
        ),
    ]

    _RULES: tuple[type[RequirementRule], ...] = (
        NvidiaRuntimeWheel,
        CupyCudaWheel,
        OnnxruntimeGpu,
        JaxCudaExtra,
        TensorflowCuda,
        PypiTriton,
        FlashAttnCudaWheel,
        XformersCudaWheel,
        BitsandbytesWithoutRocm,
        CudaOnlyPackage,
        NvmlBindings,
        DeprecatedQuantPackage,
    )

    def check(self) -> None:
        reqs = pip_requirements(self.ctx.text)
        if self.ctx.kind == "cog":
            reqs = cog_file(self.ctx.text) + reqs
        if not reqs:
            return
        examiners = [rule(self.ctx) for rule in self._RULES]
        # A Dockerfile built on a ROCm image that installs flash-attn is building it from
        # source for ROCm on purpose: leave that one alone.
        rocm_based = self.ctx.kind == "dockerfile" and any(
            split_image(ref.image)[0].startswith("rocm/")
            for ref in image_refs(self.ctx.text, "dockerfile")
        )
        for req in reqs:
            if not req.on_linux:
                continue
            if rocm_based and req.name in load_table("packages")["flash_attn"]["names"]:
                continue
            for examiner in examiners:
                verdict = examiner.examine(req)
                if verdict is None:
                    continue
                start, end = req.span()
                self.report(start, end, message=f"{verdict.message} ({examiner.code})")
                break
