"""ROC865: PyTorch CUDA wheel indexes in ``pip install`` commands and pip settings."""

from __future__ import annotations

from migrator.model import Applicability, Severity
from migrator.rule import Invalid, TextRule, Valid

from .._shell import code_lines
from .._torch_index import cuda_index_edits, url_matches
from ._rocm_release import index_choice


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
    Unsafe: the ROCm index is the newest one serving the newest torch release that the torch
    pinned in the same file's pip commands admits (the table of ROC802). Behind pip's
    `--extra-index-url` or `PIP_EXTRA_INDEX_URL` it is offered only when that torch is bounded
    to releases the index has, since pip otherwise installs PyPI's newer CUDA build (uv searches
    the extra index first). Nightly indexes are reported without a fix.

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
    fact = "§9 index-url row, index releases; [P17][P18][K1]"
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
            "RUN pip install torch==2.0.1 --index-url https://download.pytorch.org/whl/cu118\n",
            path="Dockerfile",
            fixed="RUN pip install torch==2.0.1 --index-url https://download.pytorch.org/whl/rocm5.4.2\n",
        ),
        Invalid(
            "RUN pip install torch --extra-index-url https://download.pytorch.org/whl/cu121\n",
            path="Dockerfile",
            fixed=None,
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

        def choose(start: int) -> tuple[str | None, str]:
            return index_choice(text, start)

        for start, end, message, replacement in cuda_index_edits(url_matches(text, spans), choose):
            self.report(start, end, message=message, replacement=replacement)
