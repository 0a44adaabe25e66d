"""ROC802: PyTorch CUDA wheel indexes in dependency files."""

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
from migrator.api.knowledge import rocm_index_for

from .._dependency_files import conda_file, pyproject_file, requirements_file
from .._torch_index import cuda_index_edits, url_matches


class PytorchCudaWheelIndex(TextRule):
    """
    ## What it does
    Flags PyTorch CUDA wheel indexes (`https://download.pytorch.org/whl/cu121`) in
    requirements files (`--index-url`, `--extra-index-url`, `--find-links`), in
    `pyproject.toml` (uv / Poetry / PDM index tables) and in conda `pip:` sections.

    ## Why it breaks on ROCm
    The `whl/cuXYZ` index only serves CUDA builds of torch, torchvision and torchaudio. On an
    AMD machine they find no GPU and everything runs on the CPU. ROCm builds live at
    `https://download.pytorch.org/whl/rocmX.Y`, one ROCm release per PyTorch minor.

    ## Example
    ```python
    # requirements.txt
    --extra-index-url https://download.pytorch.org/whl/cu121
    torch==2.3.1
    ```

    ## Fix
    ```python
    # requirements.txt
    --extra-index-url https://download.pytorch.org/whl/rocm6.0
    torch==2.3.1
    ```

    ## Fix safety
    Unsafe: the ROCm index is the newest one serving the newest torch release the file's torch
    requirement admits, from the table of which releases each `whl/rocmX.Y` index serves
    (pytorch.org "previous versions": 2.2.0 is on `rocm5.6`, 2.2.1 on `rocm5.7`, 2.5.1 on
    `rocm6.1` and `rocm6.2`). With `--extra-index-url` pip takes the highest version from PyPI
    or the index, so the rewrite is offered only when torch is bounded to releases the ROCm
    index has (`torch==2.3.1`, `torch>=2.1,<2.2`); an unpinned torch there is reported with the
    manual step (pin it, or use `--index-url`). Other files may pin a different torch. Nightly
    indexes are reported without a fix.

    ## References
    - rocm-facts.md §9 (index URL row)
    """

    code = "ROC802"
    fix = Fixing(
        replaces_vendor=True,
        title="Use the PyTorch ROCm wheel index for the pinned torch",
        applicability=Applicability.UNSAFE,
    )
    name = "pytorch-cuda-wheel-index"
    category = "dependency"
    severity = Severity.ERROR
    impact = Impact(consequence="cpu-fallback", aggregate="project", effort_hours=0.25)
    message = "PyTorch CUDA wheel index: pip installs CUDA builds that find no GPU on ROCm"
    fact = "§9 index-url/local-version row, index releases; [P17][P18][K1]"
    parsing = Parsing(
        triggers=("download.pytorch.org/whl/",),
        file_kinds=frozenset({"requirements", "pyproject", "conda"}),
    )
    valid = [
        Valid(
            "--extra-index-url https://download.pytorch.org/whl/rocm6.0\ntorch==2.3.1\n",
            path="requirements.txt",
        ),
        Valid(
            "# use https://download.pytorch.org/whl/cu121 on NVIDIA\ntorch\n",
            path="requirements.txt",
        ),
        Valid("--index-url https://download.pytorch.org/whl/cpu\ntorch\n", path="requirements.txt"),
    ]
    invalid = [
        Invalid(
            "--extra-index-url https://download.pytorch.org/whl/cu121\ntorch==2.3.1+cu121\n",
            path="requirements.txt",
            fixed="--extra-index-url https://download.pytorch.org/whl/rocm6.0\n"
            "torch==2.3.1+cu121\n",
            line=1,
            column=19,
        ),
        Invalid(
            "-i https://download.pytorch.org/whl/cu118\ntorch>=2.1,<2.3\n",
            path="requirements.txt",
            fixed="-i https://download.pytorch.org/whl/rocm5.7\ntorch>=2.1,<2.3\n",
        ),
        Invalid(
            '[project]\nname = "x"\ndependencies = ["torch==2.6.0"]\n\n[[tool.uv.index]]\n'
            'name = "pytorch"\nurl = "https://download.pytorch.org/whl/cu124"\nexplicit = true\n',
            path="pyproject.toml",
            fixed='[project]\nname = "x"\ndependencies = ["torch==2.6.0"]\n\n[[tool.uv.index]]\n'
            'name = "pytorch"\nurl = "https://download.pytorch.org/whl/rocm6.2.4"\n'
            "explicit = true\n",
            line=7,
        ),
        Invalid(
            "name: env\ndependencies:\n  - python=3.11\n  - pip\n  - pip:\n"
            "      - --extra-index-url https://download.pytorch.org/whl/cu124\n"
            "      - torch==2.5.1\n",
            path="environment.yml",
            fixed="name: env\ndependencies:\n  - python=3.11\n  - pip\n  - pip:\n"
            "      - --extra-index-url https://download.pytorch.org/whl/rocm6.2\n"
            "      - torch==2.5.1\n",
        ),
        Invalid(
            "--extra-index-url https://download.pytorch.org/whl/cu118\ntorch==2.2.0\n",
            path="requirements.txt",
            fixed="--extra-index-url https://download.pytorch.org/whl/rocm5.6\ntorch==2.2.0\n",
        ),
        Invalid(
            "--extra-index-url https://download.pytorch.org/whl/cu121\ntorch>=2.1\n",
            path="requirements.txt",
            fixed=None,
        ),
        Invalid(
            "--extra-index-url https://download.pytorch.org/whl/nightly/cu126\n--pre\ntorch\n",
            path="requirements.txt",
            fixed=None,
        ),
        Invalid(
            "-f https://download.pytorch.org/whl/cu113/torch_stable.html\ntorch==1.12.1+cu113\n",
            path="requirements.txt",
            fixed=None,
        ),
    ]

    def check(self) -> None:
        ctx = self.ctx
        text = ctx.text
        specs: list[str]
        if ctx.kind == "requirements":
            reqs, options = requirements_file(text)
            spans = [(option.start, option.end) for option in options]
        elif ctx.kind == "pyproject":
            reqs, strings = pyproject_file(text)
            spans = [(value.start, value.end) for value in strings if value.editable]
        else:
            reqs, entries = conda_file(text)
            spans = [(entry.start, entry.end) for entry in entries if entry.section == "pip"]
        specs = [req.spec for req in reqs if req.name == "torch"]

        def choose(start: int) -> tuple[str | None, str]:
            return rocm_index_for(specs, extra=_extra_index(ctx.kind, text, start))

        for start, end, message, replacement in cuda_index_edits(url_matches(text, spans), choose):
            self.report((start, end), message=message, fix=Rewrite(replacement))


_EXTRA_OPTION = re.compile(r"(--extra-index-url|--find-links|-f)(\s*=\s*|\s+)[\"']?$")


def _extra_index(kind: str, text: str, start: int) -> bool:
    """Whether the index URL at ``start`` is added to PyPI (``--extra-index-url``,
    ``--find-links``) rather than replacing it: pip then takes the highest version of either.
    uv and Poetry index tables are searched before PyPI for the packages they have."""
    if kind == "pyproject":
        return False
    line_start = text.rfind("\n", 0, start) + 1
    return _EXTRA_OPTION.search(text[line_start:start]) is not None
