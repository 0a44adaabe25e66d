"""ROC817 (conda-nvidia-channel): flags `conda install` / `mamba install` / `conda create` commands
that use NVIDIA's conda channel (`-c nvidia`, `--channel nvidia`, `nvidia::cuda-toolkit`) in
shell scripts, Dockerfiles and CI files."""

from __future__ import annotations

import re

from migrator.api import Impact, Invalid, Parsing, Severity, TextRule, Valid

from .._shell import iter_lines

# conda/mamba/micromamba install or create with the `nvidia` channel (`-c nvidia`,
# `--channel nvidia`, `--channel=nvidia`, `nvidia::package`).
_CONDA = re.compile(r"(?<![\w-])(?:conda|mamba|micromamba)\s+(?:install|create|update)\b")

_NVIDIA_CHANNEL = re.compile(
    r"(?:(?<![\w-])(?:-c|--channel)(?:\s+|=)nvidia(?:/label/[\w.-]+)?\b)|\bnvidia::[\w-]+"
)


#: A PyTorch package among the command's packages (``pytorch``, ``pytorch-cuda=12.1``).
_TORCH = re.compile(
    r"(?<![\w.:/-])(?:pytorch|torch|pytorch-cuda|torchvision|torchaudio)(?![\w.-]*/)"
)
#: What such a command yields, and what to do on ROCm.
_TORCH_MESSAGE = (
    "this command installs a CUDA build of torch from the `nvidia` channel (a CPU build where "
    "the solver finds no CUDA driver): neither uses an AMD GPU; on ROCm install torch from the "
    "ROCm wheel index (`pip install torch --index-url https://download.pytorch.org/whl/rocmX.Y`)"
    " or use a `rocm/pytorch` image"
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
    impact = Impact(consequence="performance", effort_hours=0.5)
    message = "conda's `nvidia` channel installs CUDA packages that cannot use an AMD GPU"
    fact = "§9 index-url row (CUDA builds); conda specifics unverified; [P17]"
    parsing = Parsing(
        triggers=("nvidia",), file_kinds=frozenset({"shell", "dockerfile", "ci-yaml"})
    )
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
                torch = _TORCH.search(code, command.end()) is not None
                self.report(
                    (offset + channel.start(), offset + channel.end()),
                    message=_TORCH_MESSAGE if torch else self.message,
                )
