"""ROC815-ROC817: CUDA software installed from a direct source rather than a package name: a
wheel URL of a CUDA build, a `git+` install of NVIDIA's apex, conda's `nvidia` channel
(category ``dependency``)."""

from __future__ import annotations

import re

from migrator.model import Severity
from migrator.rule import Invalid, TextRule, Valid
from migrator.torch_builds import CUDA_INDEX_RE

from ._shell import iter_lines

_INSTALL_KINDS = frozenset(
    {"requirements", "pyproject", "setupcfg", "conda", "shell", "dockerfile", "ci-yaml", "cog"}
)

# A wheel URL whose file name carries a CUDA local version label (`+cu124`, `+cu12torch2.5...`,
# URL-encoded `%2Bcu121`).
_CUDA_WHEEL = re.compile(
    r"https?://[^\s\"'<>]*/(?P<file>[^\s\"'<>/]*(?:\+|%2[Bb])(?:pt\d+)?(?P<label>cu\d{2,3})[^\s\"'<>/]*\.whl)"
)


class CudaWheelUrl(TextRule):
    """
    ## What it does
    Flags direct wheel URLs of CUDA builds in requirement files, `pyproject.toml`, conda files,
    shell scripts, Dockerfiles and CI files: a `.whl` whose file name carries a CUDA local
    version (`torch-2.4.0+cu121-...whl`, `flash_attn-2.7.3+cu12torch2.5cxx11abiFALSE-...whl`,
    `...%2Bcu124...whl`, PyG's `+pt24cu121`). URLs under `download.pytorch.org/whl/cuXYZ/` are left to ROC802 and
    ROC865, which report the CUDA index itself.

    ## Why it breaks on ROCm
    pip installs exactly that file, whatever GPU the machine has. A CUDA build of torch finds no
    GPU on an AMD machine and runs everything on the CPU; a CUDA build of an extension package
    (flash-attn, a quantisation kernel) fails to load its CUDA libraries at import.

    ## Example
    ```python
    # requirements.txt
    https://data.pyg.org/whl/torch-2.4.0%2Bcu121/torch_scatter-2.1.2%2Bpt24cu121-cp310-cp310-linux_x86_64.whl
    ```

    ## Manual migration
    Install the ROCm build instead (the `whl/rocmX.Y` index for torch), or build the extension
    from its ROCm source; keep the URL for NVIDIA machines behind a marker or a separate file.

    ## References
    - https://download.pytorch.org/whl/ (local version labels)
    """

    code = "ROC815"
    name = "cuda-wheel-url"
    category = "dependency"
    severity = Severity.ERROR
    message = (
        "direct wheel URL of a CUDA build: pip installs it on ROCm too, where it cannot use the GPU"
    )
    fact = "§9 index-url/local-version row; [P17][K1]"
    triggers = (".whl",)
    file_kinds = _INSTALL_KINDS
    effort_hours = 0.5
    valid = [
        Valid(
            "https://download.pytorch.org/whl/rocm6.1/torch-2.4.0%2Brocm6.1-cp310-linux_x86_64.whl\n",
            path="requirements.txt",
        ),
        Valid(
            "# https://x.org/flash_attn-2.7.3+cu12torch2.5-cp310-linux_x86_64.whl\n",
            path="requirements.txt",
        ),
        Valid("pip install ./dist/mypkg-1.0-py3-none-any.whl\n", path="setup.sh"),
        Valid(
            "https://download.pytorch.org/whl/cu121/torch-2.4.0%2Bcu121-cp310-linux_x86_64.whl\n",
            path="requirements.txt",
        ),
    ]
    invalid = [
        Invalid(
            "https://example.org/wheels/torch-2.4.0%2Bcu121-cp310-cp310-linux_x86_64.whl\n",
            path="requirements.txt",
            line=1,
            column=1,
        ),
        Invalid(
            "RUN pip install https://github.com/Dao-AILab/flash-attention/releases/download/"
            "v2.7.3/flash_attn-2.7.3+cu12torch2.5cxx11abiFALSE-cp310-cp310-linux_x86_64.whl\n",
            path="Dockerfile",
            column=17,
        ),
        Invalid(
            '[project]\nname = "x"\ndependencies = [\n'
            '  "kernels @ https://example.org/kernels-0.3+cu128torch2.9-cp312-linux_x86_64.whl",\n]\n',
            path="pyproject.toml",
            line=4,
        ),
    ]

    def check(self) -> None:
        for offset, _line, code in iter_lines(self.ctx.text):
            if ".whl" not in code:
                continue
            for match in _CUDA_WHEEL.finditer(code):
                if CUDA_INDEX_RE.search(match.group()):
                    continue  # a download.pytorch.org/whl/cuXYZ URL: ROC802/ROC865 report it
                label = match.group("label")
                self.report(
                    offset + match.start(),
                    offset + match.end(),
                    message=(
                        f"direct wheel URL of a CUDA build (`+{label}`, {match.group('file')}): "
                        "pip installs that file on ROCm too, where a CUDA torch runs on the CPU "
                        "and a CUDA extension fails to load; install the ROCm build or build "
                        "from source"
                    ),
                )


# `git+https://github.com/NVIDIA/apex` (with or without `.git`, `@ref`, `#egg=`).
_APEX_GIT = re.compile(
    r"git\+(?:https?|ssh)://(?:git@)?github\.com[/:]NVIDIA/apex(?:\.git)?(?![\w-])"
)


class NvidiaApexGitInstall(TextRule):
    """
    ## What it does
    Flags installs of NVIDIA's apex from its git repository (`git+https://github.com/NVIDIA/apex`)
    in requirement files, shell scripts, Dockerfiles and CI files.

    ## Why it breaks on ROCm
    NVIDIA/apex builds its fused kernels with nvcc for CUDA only (PyPI's `apex` is an unrelated
    package); on ROCm the build fails or leaves the fused ops out. AMD maintains the port as
    ROCm/apex, which also still has `apex.amp`.

    ## Example
    ```python
    # Dockerfile
    RUN pip install -v --no-build-isolation git+https://github.com/NVIDIA/apex.git
    ```

    ## Manual migration
    On ROCm install `git+https://github.com/ROCm/apex` (or use a `rocm/pytorch` image, which
    ships it), or replace the apex layers with their torch equivalents (ROC500-ROC504).

    ## References
    - ROCm/apex README
    """

    code = "ROC816"
    name = "nvidia-apex-git-install"
    category = "dependency"
    severity = Severity.ERROR
    message = "NVIDIA/apex builds CUDA kernels only; on ROCm install ROCm/apex"
    fact = "§5 apex.amp row; [AP2]"
    triggers = ("NVIDIA/apex",)
    file_kinds = _INSTALL_KINDS
    effort_hours = 0.5
    valid = [
        Valid("pip install git+https://github.com/ROCm/apex.git\n", path="setup.sh"),
        Valid("# pip install git+https://github.com/NVIDIA/apex\n", path="setup.sh"),
        Valid("pip install git+https://github.com/NVIDIA/apex-tools\n", path="setup.sh"),
    ]
    invalid = [
        Invalid(
            "RUN pip install -v --no-build-isolation git+https://github.com/NVIDIA/apex.git\n",
            path="Dockerfile",
            column=41,
        ),
        Invalid("apex @ git+https://github.com/NVIDIA/apex@24.04.01\n", path="requirements.txt"),
    ]

    def check(self) -> None:
        for offset, _line, code in iter_lines(self.ctx.text):
            if "NVIDIA/apex" not in code:
                continue
            for match in _APEX_GIT.finditer(code):
                self.report(offset + match.start(), offset + match.end())


# conda/mamba/micromamba install or create with the `nvidia` channel (`-c nvidia`,
# `--channel nvidia`, `--channel=nvidia`, `nvidia::package`).
_CONDA = re.compile(r"(?<![\w-])(?:conda|mamba|micromamba)\s+(?:install|create|update)\b")
_NVIDIA_CHANNEL = re.compile(
    r"(?:(?<![\w-])(?:-c|--channel)(?:\s+|=)nvidia(?:/label/[\w.-]+)?\b)|\bnvidia::[\w-]+"
)


class CondaNvidiaChannel(TextRule):
    """
    ## What it does
    Flags `conda install` / `mamba install` / `conda create` commands that use NVIDIA's conda
    channel (`-c nvidia`, `--channel nvidia`, `nvidia::cuda-toolkit`) in shell scripts,
    Dockerfiles and CI files.

    ## Why it breaks on ROCm
    The `nvidia` channel holds the CUDA toolkit and CUDA runtime libraries (and with
    `pytorch-cuda`, the CUDA build of PyTorch): nothing in it runs on an AMD GPU, and the
    solver picks CUDA variants of the other packages of the command.

    ## Example
    ```python
    # setup.sh
    conda install -y pytorch pytorch-cuda=12.1 -c pytorch -c nvidia
    ```

    ## Manual migration
    On ROCm install PyTorch from the `download.pytorch.org/whl/rocmX.Y` pip index (or use a
    `rocm/pytorch` image) and drop the `nvidia` channel and the CUDA packages.

    ## References
    - https://pytorch.org/get-started/locally/
    """

    code = "ROC817"
    name = "conda-nvidia-channel"
    category = "dependency"
    severity = Severity.WARNING
    message = "conda's `nvidia` channel installs CUDA packages that cannot use an AMD GPU"
    fact = "§9 index-url row (CUDA builds); conda specifics unverified; [P17]"
    triggers = ("nvidia",)
    file_kinds = frozenset({"shell", "dockerfile", "ci-yaml"})
    effort_hours = 0.5
    valid = [
        Valid("conda install -y pytorch -c pytorch\n", path="setup.sh"),
        Valid("# conda install -c nvidia cuda-toolkit\n", path="setup.sh"),
        Valid("pip install nvidia-ml-py  # -c nvidia is not conda here\n", path="setup.sh"),
    ]
    invalid = [
        Invalid(
            "conda install -y pytorch pytorch-cuda=12.1 -c pytorch -c nvidia\n",
            path="setup.sh",
            column=55,
        ),
        Invalid("RUN mamba install -y nvidia::cuda-toolkit\n", path="Dockerfile", column=22),
        Invalid(
            "jobs:\n  b:\n    steps:\n      - run: conda create -n e --channel=nvidia cuda\n",
            path=".github/workflows/b.yml",
        ),
    ]

    def check(self) -> None:
        for offset, _line, code in iter_lines(self.ctx.text):
            if "nvidia" not in code:
                continue
            command = _CONDA.search(code)
            if command is None:
                continue
            channel = _NVIDIA_CHANNEL.search(code, command.end())
            if channel is not None:
                self.report(offset + channel.start(), offset + channel.end())
